//! Hostile input, one table: every row is a command line (and what it reads) that once
//! crashed, hung or misled, with the exit status it must give and a fragment its one
//! `error: …` line (or, for successes, its output) must hold. Model directories are
//! copies of the bundled pair with one thing broken.
//! The tests around the table are in `hostile_plan.rs` (what `plan` prints),
//! `hostile_streams.rs` (readers going away, long generations) and `hostile_args.rs`
//! (command lines and files: non-UTF-8 arguments, FIFOs, devices, `bench` lists).

mod common;

use common::{
    Row, check_rows, edit_weights, generate, list_file, model_dir, models, patch_target_text,
    read_json, reseal, row, set_target_field, ulp_heavy_list, write_json,
};
use serde_json::Value;

#[test]
fn hostile_inputs_fail_cleanly_or_succeed_exactly() {
    let big = list_file("big", 65_000, "1", ",");
    let big_lines = list_file("big-lines", 65_000, "2", "\n");
    let too_many = list_file("too-many", (1 << 20) + 1, "1", ",");
    let ulps = ulp_heavy_list();
    let deep_300 = vec!["1"; 300].join(",");
    let deep_2000 = vec!["1"; 2000].join(",");
    let deep_64 = vec!["1"; 64].join(",");

    let huge_seq = model_dir("max-seq", |d| {
        set_target_field(d, "/config/max_seq", "1000000000")
    });
    let huge_seq_float = model_dir("max-seq-float", |d| {
        patch_target_text(d, "\"max_seq\": 256", "\"max_seq\": 1e9")
    });
    let huge_ff = model_dir("d-ff", |d| {
        set_target_field(d, "/config/d_ff", "1000000000")
    });
    let huge_params = model_dir("params", |d| {
        set_target_field(d, "/config/d_model", "2048");
        set_target_field(d, "/config/d_ff", "8192");
        set_target_field(d, "/config/n_layers", "48");
    });
    let bad_heads = model_dir("heads", |d| set_target_field(d, "/config/n_heads", "7"));
    let bad_vocab = model_dir("vocab", |d| set_target_field(d, "/config/vocab_size", "64"));
    let zero_layers = model_dir("layers", |d| set_target_field(d, "/config/n_layers", "0"));
    let wrong_role = model_dir("role", |d| set_target_field(d, "/role", "\"draft\""));
    let swapped = model_dir("swapped", |d| {
        for ext in ["json", "bpk"] {
            let (a, b) = (
                d.join(format!("draft.{ext}")),
                d.join(format!("target.{ext}")),
            );
            let tmp = d.join(format!("tmp.{ext}"));
            std::fs::rename(&a, &tmp).expect("rename");
            std::fs::rename(&b, &a).expect("rename");
            std::fs::rename(&tmp, &b).expect("rename");
        }
    });
    // Swapped files with their roles edited to match and the descriptions resealed: the
    // shapes still give it away.
    let swapped_relabelled = model_dir("swapped-relabelled", |d| {
        for ext in ["json", "bpk"] {
            let (a, b) = (
                d.join(format!("draft.{ext}")),
                d.join(format!("target.{ext}")),
            );
            let tmp = d.join(format!("tmp.{ext}"));
            std::fs::rename(&a, &tmp).expect("rename");
            std::fs::rename(&b, &a).expect("rename");
            std::fs::rename(&tmp, &b).expect("rename");
        }
        for role in ["draft", "target"] {
            let path = d.join(format!("{role}.json"));
            let mut meta = read_json(&path);
            meta["role"] = Value::String(role.to_owned());
            write_json(&path, &meta);
            reseal(&path);
        }
    });
    // An edit within every range, with the description not resealed: its digest refuses it.
    let narrower = model_dir("narrower", |d| set_target_field(d, "/config/d_ff", "1024"));
    let retrained = model_dir("retrained", |d| {
        set_target_field(d, "/training/steps", "1999")
    });
    let extra_field = model_dir("extra-field", |d| {
        let path = d.join("target.json");
        let mut meta = read_json(&path);
        meta["note"] = Value::String("not covered by the digest".into());
        write_json(&path, &meta);
    });
    let format_1 = model_dir("format-1", |d| set_target_field(d, "/format", "1"));
    let corrupt = model_dir("corrupt", |d| {
        edit_weights(d, "target", true, |b| b[..16].fill(0xAB))
    });
    let truncated = model_dir("truncated", |d| {
        edit_weights(d, "target", false, |b| b.truncate(b.len() / 2))
    });
    let truncated_rehashed = model_dir("truncated-rehashed", |d| {
        edit_weights(d, "target", true, |b| b.truncate(b.len() / 2))
    });
    let oversized = model_dir("oversized", |d| {
        edit_weights(d, "target", true, |b| b.resize(b.len() + (2 << 20), 0))
    });
    let tampered = model_dir("tampered", |d| {
        edit_weights(d, "target", false, |b| b[1000] ^= 1)
    });
    let bad_json = model_dir("bad-json", |d| {
        std::fs::write(d.join("target.json"), "{ not json").expect("write")
    });
    let huge_json = model_dir("huge-json", |d| {
        std::fs::write(d.join("target.json"), vec![b' '; (1 << 20) + 1]).expect("write")
    });
    let no_target = model_dir("missing", |d| {
        std::fs::remove_file(d.join("target.bpk")).expect("remove")
    });

    let plan = |method: &str, extra: &[&str]| -> Vec<String> {
        let mut args = vec!["plan", "--method", method];
        args.extend_from_slice(extra);
        args.iter().map(|s| (*s).to_owned()).collect()
    };
    let mut rows = vec![
        // plan: sizes and work.
        Row {
            args: plan(
                "multiround",
                &[
                    "--drafts",
                    "1000000",
                    "--target",
                    &big,
                    "--draft",
                    &big,
                    "--normalize",
                ],
            ),
            stdin: None,
            code: 2,
            fragment: "--drafts must be at most 2064 for a multi-round plan over 65000 tokens"
                .into(),
        },
        Row {
            args: plan(
                "multiround",
                &[
                    "--drafts",
                    "2000",
                    "--target",
                    &big,
                    "--draft",
                    &big_lines,
                    "--normalize",
                ],
            ),
            stdin: None,
            code: 0,
            fragment: "multi-round".into(),
        },
        Row {
            args: plan("speculative", &["--target", &too_many, "--draft", "1"]),
            stdin: None,
            code: 2,
            fragment: "--target must be at most 1048576 entries, got 1048577 entries".into(),
        },
        Row {
            args: plan("spectr", &["--target", "-", "--draft", &big, "--normalize"]),
            stdin: Some(vec!["3"; 65_000].join("\n")),
            code: 0,
            fragment: "SpecTr k-Seq".into(),
        },
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "-",
                "--draft",
                "-",
            ],
            2,
            "cannot both be read from standard input",
        ),
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "@/nonexistent/list",
                "--draft",
                "1",
            ],
            2,
            "--target: cannot read /nonexistent/list",
        ),
        // plan: numbers at the edges, echoed as given.
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "1e-320,1e-320",
                "--draft",
                "1,1",
                "--normalize",
            ],
            0,
            "0.5",
        ),
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "1e308,1e308",
                "--draft",
                "1,1",
                "--normalize",
            ],
            0,
            "0.5",
        ),
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "-1e-300,1",
                "--draft",
                "0.5,0.5",
            ],
            2,
            "--target entry 0 must be a finite probability >= 0, got -1e-300",
        ),
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "1,inf",
                "--draft",
                "0.5,0.5",
            ],
            2,
            "--target entry 1 must be a finite probability >= 0, got inf",
        ),
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "NaN,1",
                "--draft",
                "0.5,0.5",
            ],
            2,
            "--target entry 0 must be a probability >= 0, got NaN",
        ),
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "1e-320,0",
                "--draft",
                "1,1",
                "--normalize",
            ],
            0,
            "1.0",
        ),
        // generate/sample: sizes.
        generate(
            &["--method", "spectr", "--drafts", "1025", "--gamma", "1"],
            2,
            "--drafts must be a whole number from 1 to 1024 (draft sequences per round), got 1025",
        ),
        generate(
            &[
                "--method",
                "spectr",
                "--selection",
                "race",
                "--drafts",
                "128",
                "--gamma",
                "9",
            ],
            2,
            "--drafts must be at most 1024 draft nodes per round with gamma (drafts × gamma), got 128 × 9 = 1152",
        ),
        generate(
            &["--method", "spectr", "--drafts", "64", "--gamma", "16"],
            0,
            "--- spectr",
        ),
        generate(
            &["--method", "spectr", "--tree", &deep_300],
            2,
            "--tree must be the branching at each depth, 1 to 64 depths, got 300 depths",
        ),
        generate(
            &["--method", "multiround", "--tree", &deep_2000],
            2,
            "--tree must be the branching at each depth, 1 to 64 depths, got 2000 depths",
        ),
        generate(&["--method", "spectr", "--tree", &deep_64], 0, "--- spectr"),
        // One name per scheme: the ratio race is SpecTr's selection, not a method.
        generate(
            &["--method", "otm"],
            2,
            "(the optimal selection is method \"spectr\" with selection \"race\")",
        ),
        generate(
            &["--method", "spectr", "--selection", "otm"],
            2,
            "\"otm\", the exact linear program, is for plans only, and the race reaches its acceptance",
        ),
        generate(
            &["--method", "multiround", "--selection", "race"],
            2,
            "--selection",
        ),
        generate(
            &["--gamma", "65"],
            2,
            "--gamma must be a whole number from 1 to 64 (draft tokens per round), got 65",
        ),
        generate(&["--top-p", "0"], 2, "--top-p must be a number in (0, 1]"),
        generate(&["--top-p", "1.5"], 2, "--top-p must be a number in (0, 1]"),
        generate(&["--top-p", "-0"], 2, "--top-p must be a number in (0, 1]"),
        row(
            &["sample", "--prompt", "A", "--samples", "1000001"],
            2,
            "--samples must be a whole number in 1..=1000000",
        ),
        // Model directories: validated whole before anything is built from them.
        models(
            &huge_seq,
            2,
            "target.json: invalid model configuration: max_seq is 1000000000, above its limit of 4096",
        ),
        models(&huge_seq_float, 2, "target.json: invalid model description"),
        models(&huge_ff, 2, "d_ff is 1000000000, above its limit of 8192"),
        models(&huge_params, 2, "parameters, above the limit of 64000000"),
        models(&bad_heads, 2, "n_heads (7) must divide d_model (384)"),
        models(
            &bad_vocab,
            2,
            "the alphabet has 65 characters but the model 64",
        ),
        models(&zero_layers, 2, "n_layers must be at least 1"),
        models(
            &wrong_role,
            2,
            "target.json: invalid model configuration: its role is draft, but it is loaded as the target model",
        ),
        models(
            &swapped,
            2,
            "its role is target, but it is loaded as the draft",
        ),
        models(&swapped_relabelled, 2, "is larger than the target"),
        models(
            &narrower,
            2,
            "target.json: checksum mismatch for the target description",
        ),
        models(
            &retrained,
            2,
            "target.json: checksum mismatch for the target description",
        ),
        models(
            &extra_field,
            2,
            "target.json: invalid model description: unknown field `note`",
        ),
        models(
            &format_1,
            2,
            "target.json: invalid model description: format 1 predates",
        ),
        models(&corrupt, 2, "target.bpk: cannot load weights"),
        models(&truncated, 2, "target.bpk: checksum mismatch"),
        models(&truncated_rehashed, 2, "target.bpk: cannot load weights"),
        models(&oversized, 2, "target.bpk: the file is larger"),
        models(&tampered, 2, "target.bpk: checksum mismatch"),
        models(&bad_json, 2, "target.json: invalid model description"),
        models(&huge_json, 2, "target.json: the file is larger"),
        models(&no_target, 2, "target.bpk"),
        // More edges (files that are not lists are in hostile_args.rs): odd numbers,
        // huge prompts.
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "0x10,1",
                "--draft",
                "0.5,0.5",
            ],
            2,
            "--target entry 0 must be a number, got \"0x10\"",
        ),
        row(
            &[
                "plan", "--method", "spectr", "--drafts", "2.5", "--target", "0.5,0.5", "--draft",
                "0.5,0.5",
            ],
            2,
            "--drafts must be a whole number",
        ),
        row(
            &[
                "plan", "--method", "mentored", "--kl", "inf", "--target", "0.5,0.5", "--draft",
                "0.5,0.5",
            ],
            2,
            "--kl must be a finite number",
        ),
        row(
            &[
                "plan",
                "--method",
                "spectr",
                "--selection",
                "otm",
                "--drafts",
                "40",
                "--target",
                "0.5,0.5",
                "--draft",
                "0.5,0.5",
            ],
            2,
            "--drafts must be small enough for the OTM linear program",
        ),
        generate(&["--threads", "0"], 2, "--threads"),
        generate(&["--seed", "18446744073709551616"], 2, "--seed"),
        generate(&["--temperature", "1e7"], 2, "--temperature"),
        row(
            &["generate", "--prompt", "A", "--max-tokens", "65537"],
            2,
            "--max-tokens must be a whole number from 1 to 65536 (tokens to generate), got 65537",
        ),
        Row {
            args: [
                "generate",
                "--prompt",
                &"Hello there, ".repeat(8_000),
                "--max-tokens",
                "3",
                "--temperature",
                "0",
            ]
            .map(str::to_owned)
            .to_vec(),
            stdin: None,
            code: 0,
            fragment: "--- speculative".into(),
        },
        row(
            &["generate", "--prompt", "tab\there"],
            2,
            "is not in the vocabulary",
        ),
        row(&["generate", "--prompt", "caf\u{e9}"], 2, "U+00E9"),
        models("/dev/null", 2, "--models"),
        // train: flag values first, whatever the corpus.
        row(
            &[
                "train",
                "--role",
                "draft",
                "--corpus",
                "/nonexistent",
                "--batch",
                "0",
            ],
            2,
            "--batch must be a whole number",
        ),
        row(
            &[
                "train",
                "--role",
                "draft",
                "--corpus",
                "Cargo.toml",
                "--lr",
                "NaN",
            ],
            2,
            "--lr must be a number",
        ),
        row(
            &[
                "train",
                "--role",
                "target",
                "--corpus",
                "Cargo.toml",
                "--d-model",
                "4096",
            ],
            2,
            "--d-model must be a whole number in 1..=2048",
        ),
    ];
    rows.push(Row {
        args: plan(
            "multiround",
            &[
                "--drafts",
                "2",
                "--target",
                &ulps,
                "--draft",
                &ulps,
                "--normalize",
            ],
        ),
        stdin: None,
        code: 0,
        fragment: "multi-round".into(),
    });

    check_rows(&rows);
}
