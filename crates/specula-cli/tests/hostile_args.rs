//! Hostile command lines and files, a second table (`hostile.rs` has the first, and says
//! what a row is): arguments that are not UTF-8, a value flag given one of its command's
//! own flags, files that are not regular files (FIFOs with no writer, devices that never
//! end, directories), oversized files, `bench` lists past their limits and its `--prompts`
//! files and `--methods` lists that are not ones, and numbers that
//! round (a refusal quotes them as typed; a whole-number flag takes no decimal that only
//! rounds to a whole number). Every run is
//! killed after [`common::RUN_LIMIT`], so a read that hangs fails its test.

mod common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

use common::{check_output, check_rows, generate, list_file, model_dir, row, run, run_os, scratch};
use serde_json::Value;

/// A FIFO at `path`, which nothing will ever write to: opening it for reading blocks.
fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn arguments_that_are_not_utf8_are_usage_errors_naming_them() {
    let bad = OsString::from(std::ffi::OsStr::from_bytes(b"ROMEO\xff"));
    let cases: [(&[&str], &[&str], &str); 4] = [
        // clap refusing another flag in the same command line once panicked here.
        (
            &["generate", "--gamma", "abc", "--prompt"],
            &[],
            "argument 5 (\"ROMEO\u{fffd}\", after --prompt) is not UTF-8 text",
        ),
        (
            &["generate", "--prompt"],
            &["--max-tokens", "4"],
            "argument 3 (\"ROMEO\u{fffd}\", after --prompt) is not UTF-8 text",
        ),
        (
            &[
                "plan",
                "--method",
                "speculative",
                "--draft",
                "1",
                "--target",
            ],
            &[],
            "is not UTF-8 text",
        ),
        (&["train", "--role", "draft", "--corpus"], &[], "ROMEO"),
    ];
    let mut failures = Vec::new();
    for (before, after, fragment) in cases {
        let args: Vec<OsString> = before
            .iter()
            .map(OsString::from)
            .chain(std::iter::once(bad.clone()))
            .chain(after.iter().map(OsString::from))
            .collect();
        let out = run_os(args.clone(), None);
        failures.extend(check_output(&format!("{args:?}"), &out, 2, fragment));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // With --json, the error is the usual JSON object.
    let args = ["generate", "--json", "--prompt"]
        .iter()
        .map(OsString::from)
        .chain(std::iter::once(bad))
        .collect();
    let out = run_os(args, None);
    assert_eq!(out.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&out.stderr).expect("one JSON error");
    assert_eq!(error["code"], "usage", "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("not UTF-8")),
        "{error}"
    );
}

#[test]
fn a_value_flag_given_another_flag_is_refused() {
    // `--prompt --json` once generated from the text "--json" and printed no JSON.
    let out = run(
        &["generate", "--prompt", "--json", "--max-tokens", "4"].map(str::to_owned),
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let error: Value = serde_json::from_slice(&out.stderr).expect("one JSON error");
    assert_eq!(error["code"], "usage", "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("--prompt needs a value; got the flag --json")),
        "{error}"
    );
    check_rows(&[
        row(
            &["generate", "--prompt", "--max-tokens", "4"],
            2,
            "--prompt needs a value; got the flag --max-tokens",
        ),
        generate(
            &["--stop", "--temperature=0"],
            2,
            "--stop needs a value; got the flag --temperature=0",
        ),
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "--draft",
                "1",
                "--draft",
                "1",
            ],
            2,
            "--target needs a value; got the flag --draft",
        ),
        row(
            &["train", "--role", "draft", "--corpus", "--resume"],
            2,
            "--corpus needs a value; got the flag --resume",
        ),
        // The text itself, written so that it cannot be a forgotten value.
        row(
            &[
                "generate",
                "--prompt=--json",
                "--max-tokens",
                "4",
                "--temperature",
                "0",
            ],
            0,
            "--json",
        ),
        // Text that only looks like a flag is a value, as before.
        row(
            &["generate", "--prompt", "--not-a-flag", "--max-tokens", "4"],
            0,
            "--not-a-flag",
        ),
    ]);
}

#[test]
fn files_that_are_not_regular_files_are_refused_unread() {
    let dir = scratch("fifos");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let fifo_list = format!("@{}", text(&fifo));
    let json_fifo = model_dir("fifo-json", |d| {
        std::fs::remove_file(d.join("target.json")).expect("remove");
        mkfifo(&d.join("target.json"));
    });
    let weights_fifo = model_dir("fifo-bpk", |d| {
        std::fs::remove_file(d.join("target.bpk")).expect("remove");
        mkfifo(&d.join("target.bpk"));
    });
    let endless = model_dir("dev-zero", |d| {
        std::fs::remove_file(d.join("target.bpk")).expect("remove");
        std::os::unix::fs::symlink("/dev/zero", d.join("target.bpk")).expect("symlink");
    });
    let empty = list_file("empty", 0, "1", ",");
    let plan = |list: &str, fragment: &str| {
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                list,
                "--draft",
                "1",
            ],
            2,
            fragment,
        )
    };
    let train = |corpus: &str, fragment: &str| {
        row(
            &["train", "--role", "draft", "--corpus", corpus],
            2,
            fragment,
        )
    };
    let fifo_text = text(&fifo);
    check_rows(&[
        plan(
            &fifo_list,
            &format!("--target: cannot read {fifo_text}: not a regular file"),
        ),
        plan(
            "@/dev/zero",
            "--target: cannot read /dev/zero: not a regular file",
        ),
        plan(
            "@/dev/null",
            "--target: cannot read /dev/null: not a regular file",
        ),
        plan(&format!("@{}", text(&dir)), "not a regular file"),
        plan(
            &empty,
            "--target must be probabilities separated by commas, spaces or newlines, e.g. \
             0.25,0.75, got an empty list in ",
        ),
        common::models(&json_fifo, 2, "target.json: not a regular file"),
        common::models(&weights_fifo, 2, "target.bpk: not a regular file"),
        common::models(&endless, 2, "target.bpk: not a regular file"),
        train(
            &fifo_text,
            &format!("cannot read the corpus {fifo_text}: not a regular file"),
        ),
        train(
            "/dev/zero",
            "cannot read the corpus /dev/zero: not a regular file",
        ),
        train(&text(&dir), "not a regular file"),
    ]);
}

#[test]
fn an_oversized_corpus_is_refused_unread() {
    // 16 MiB and one byte, sparse: refused by its size, before a byte is read.
    let path = scratch("big-corpus").join("corpus.txt");
    let file = std::fs::File::create(&path).expect("create");
    file.set_len((16 << 20) + 1).expect("set_len");
    check_rows(&[row(
        &["train", "--role", "draft", "--corpus", &text(&path)],
        2,
        "larger than the limit of 16777216 bytes",
    )]);
}

#[test]
fn bench_lists_and_draft_sets_past_their_limits_are_refused() {
    let seventeen = vec!["1"; 17].join(",");
    let rows: Vec<_> = [
        ("--gammas", "--gammas must have at most 16 values"),
        ("--drafts", "--drafts must have at most 16 values"),
        ("--kls", "--kls must have at most 16 values"),
        ("--ngrams", "--ngrams must have at most 16 values"),
    ]
    .into_iter()
    .map(|(flag, fragment)| row(&["bench", flag, &seventeen], 2, fragment))
    .chain([
        row(
            &["bench", "--drafts", "2,64", "--gamma", "64"],
            2,
            "--drafts must be at most 1024 draft nodes per round with --gamma (K × L), \
             got 64 × 64 = 4096",
        ),
        row(
            &["bench", "--drafts", "17", "--gamma", "64"],
            2,
            "got 17 × 64 = 1088",
        ),
    ])
    .collect();
    check_rows(&rows);
}

#[test]
fn numbers_are_quoted_as_typed_and_whole_ones_read_exactly() {
    // `range` is the message's range and what follows it.
    let whole = |flag: &str, text: &str, range: &str| {
        let fragment = format!("{flag} must be a whole number from {range}, got {text}");
        let mut args = vec!["generate", "--prompt", "ROMEO:", flag, text];
        if flag != "--max-tokens" {
            args.extend(["--max-tokens", "4"]);
        }
        row(&args, 2, &fragment)
    };
    let plan = |extra: &[&str], fragment: &str| {
        let mut args = vec![
            "plan", "--method", "spectr", "--target", "0.5,0.5", "--draft", "0.5,0.5",
        ];
        args.extend_from_slice(extra);
        row(&args, 2, fragment)
    };
    check_rows(&[
        // Beyond 2^53 an integer rounds: 2^64 once read 18446744073709552000, 2^53 + 1
        // read 2^53.
        whole(
            "--seed",
            "18446744073709551616",
            "0 to 9007199254740991 (2^53 - 1)",
        ),
        whole(
            "--seed",
            "9007199254740993",
            "0 to 9007199254740991 (2^53 - 1)",
        ),
        whole("--seed", "-1", "0 to 9007199254740991 (2^53 - 1)"),
        // Decimals that read as whole numbers are not whole numbers.
        whole(
            "--gamma",
            "4.0000000000000001",
            "1 to 64 (draft tokens per round)",
        ),
        whole(
            "--max-tokens",
            "4.0000000000000001",
            "1 to 65536 (tokens to generate)",
        ),
        whole(
            "--top-k",
            "1.50",
            "1 to 1048576 (leave it out for no top-k)",
        ),
        whole(
            "--seed",
            "9007199254740990.6",
            "0 to 9007199254740991 (2^53 - 1)",
        ),
        generate(
            &["--method", "spectr", "--tree", "2,2.0000000000000001"],
            2,
            "--tree entry 1 must be a whole number from 1 to 1024 (children per node), got \
             2.0000000000000001",
        ),
        // 1e309 once read Infinity.
        generate(&["--temperature", "1e309"], 2, "got 1e309"),
        row(
            &["generate", "--prompt", "ROMEO:", "--max-tokens", "1e309"],
            2,
            "got 1e309",
        ),
        row(
            &[
                "sample",
                "--prompt",
                "ROMEO:",
                "--compare",
                "--position",
                "2.0000000000000001",
            ],
            2,
            "--position must be 1 or 2 (the first or second generated token), got \
             2.0000000000000001",
        ),
        row(
            &[
                "sample",
                "--prompt",
                "ROMEO:",
                "--max-tokens",
                "8.0000000000000001",
            ],
            2,
            "--max-tokens must be a whole number from 1 to 65536 (tokens to generate), got \
             8.0000000000000001",
        ),
        plan(
            &["--drafts", "2.0000000000000001"],
            "--drafts must be a whole number from 1 to 1000000, got 2.0000000000000001",
        ),
        plan(&["--rho", "0.50"], "got 0.50"),
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "0.5,1e309",
                "--draft",
                "0.5,0.5",
            ],
            2,
            "--target entry 1 must be a finite probability >= 0, got 1e309",
        ),
        row(
            &[
                "plan",
                "--method",
                "spectr",
                "--selection",
                "otm",
                "--target",
                "0.5,0.5",
                "--draft",
                "0.5,0.5",
                "--drafts",
                "4e1",
            ],
            2,
            "got 4e1, which over 2 tokens needs 2199023255552",
        ),
        // clap quotes what is no number at all.
        generate(
            &["--seed", "2^64"],
            2,
            "invalid value '2^64' for '--seed <S>'",
        ),
    ]);
    // Whole numbers written otherwise are still whole numbers.
    check_rows(&[row(
        &[
            "plan", "--method", "spectr", "--target", "0.5,0.5", "--draft", "0.5,0.5", "--drafts",
            "2.0",
        ],
        0,
        "k = 2 drafts",
    )]);
}

#[test]
fn bench_prompts_files_and_methods_lists_are_refused() {
    let dir = scratch("bench-prompts");
    let write = |name: &str, contents: &str| {
        let path = dir.join(name);
        std::fs::write(&path, contents).expect("write");
        text(&path)
    };
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    // 1 MiB and one byte, sparse: refused by its size, before a byte is read.
    let big = dir.join("big.json");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len((1 << 20) + 1))
        .expect("a sparse file");
    let many = serde_json::to_string(&vec!["ROMEO:\n"; 65]).expect("json");
    // 280 characters: past the bundled pair's 256 positions on their own.
    let long = serde_json::to_string(&["ROMEO:\n".repeat(40)]).expect("json");
    let prompts = |path: &str, fragment: &str| {
        row(
            &["bench", "--prompts", path, "--tokens", "4", "--repeat", "1"],
            2,
            fragment,
        )
    };
    let named = |name: &str, contents: &str, why: &str| {
        let path = write(name, contents);
        prompts(&path, &format!("--prompts: {}", why.replace("{}", &path)))
    };
    let methods = |list: &str, fragment: &str| {
        row(
            &["bench", "--methods", list, "--tokens", "4", "--repeat", "1"],
            2,
            fragment,
        )
    };
    let every = "autoregressive, speculative, spectr, multiround, mentored, typical, lookup";
    check_rows(&[
        named("text.json", "ROMEO:\n", "{} is not JSON: "),
        named(
            "object.json",
            r#"{"prompts": ["ROMEO:\n"]}"#,
            r#"{} must hold a JSON array of prompts (strings), e.g. ["ROMEO:\n"]; it holds an object"#,
        ),
        named(
            "string.json",
            r#""ROMEO:\n""#,
            "{} must hold a JSON array of prompts (strings)",
        ),
        named(
            "empty.json",
            "[]",
            "{} holds an empty array: give at least one prompt",
        ),
        named(
            "numbers.json",
            r#"["ROMEO:\n", 3]"#,
            "entry 1 in {} must be a string (a prompt); it is a number",
        ),
        named(
            "blank.json",
            r#"["ROMEO:\n", ""]"#,
            "prompt 1 in {} is empty",
        ),
        named(
            "many.json",
            &many,
            "{} holds 65 prompts; at most 64 are decoded in one run",
        ),
        prompts(
            &text(&fifo),
            &format!("--prompts: cannot read {}: not a regular file", text(&fifo)),
        ),
        prompts(
            "/dev/zero",
            "--prompts: cannot read /dev/zero: not a regular file",
        ),
        prompts(&text(&dir), "not a regular file"),
        prompts(&text(&big), "larger than the limit of 1048576 bytes"),
        prompts(
            &text(&dir.join("missing.json")),
            &format!(
                "--prompts: cannot read {}: ",
                text(&dir.join("missing.json"))
            ),
        ),
        // These need the models' tokenizer and positions: refused once the pair loads.
        named(
            "glyph.json",
            r#"["ROMEO: \u2603"]"#,
            "prompt 0: character '☃'",
        ),
        named(
            "long.json",
            &long,
            "prompt 0 is 280 characters long, and the models read 256 positions",
        ),
        methods(
            "greedy",
            &format!("--methods must be one of {every}, got \"greedy\""),
        ),
        methods("speculative,,lookup", "--methods: entry 1 is empty"),
        methods(
            " ",
            &format!(
                "--methods is empty: give comma-separated method names, e.g. speculative; the methods are {every}"
            ),
        ),
        row(
            &["bench", "--methods", "lookup", "--parallel-draft"],
            2,
            "--parallel-draft decodes each speculative γ again; --methods leaves speculative out",
        ),
    ]);
}
