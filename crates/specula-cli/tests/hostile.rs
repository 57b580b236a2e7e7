//! Hostile input, one table: every row is a command line (and what it reads) that once
//! crashed, hung or misled, with the exit status it must give and a fragment its one
//! `error: …` line (or, for successes, its output) must hold. Model directories are
//! copies of the bundled pair with one thing broken.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use specula_model::sha256_hex;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_specula"))
}

fn run(args: &[String], stdin: Option<&str>) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"));
    let mut input = child.stdin.take().expect("stdin");
    if let Some(text) = stdin {
        // A command that refuses early may close its stdin first.
        let _ = input.write_all(text.as_bytes());
    }
    drop(input);
    child.wait_with_output().expect("specula runs")
}

/// A scratch directory for this test binary.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The bundled weights, as files.
fn bundled_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../specula-model/weights")
}

/// A copy of the bundled pair in `name`, changed by `edit`.
fn model_dir(name: &str, edit: impl FnOnce(&Path)) -> String {
    let dir = scratch(name);
    for file in ["draft.json", "draft.bpk", "target.json", "target.bpk"] {
        std::fs::copy(bundled_dir().join(file), dir.join(file)).expect("copy");
    }
    edit(&dir);
    dir.display().to_string()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json")
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(value).expect("json")).expect("write");
}

/// Sets `target.json`'s `key` (a JSON pointer) to `value`, written as raw JSON.
fn set_target_field(dir: &Path, pointer: &str, raw: &str) {
    let path = dir.join("target.json");
    let mut meta = read_json(&path);
    *meta.pointer_mut(pointer).expect("field") = serde_json::from_str(raw).expect("value");
    write_json(&path, &meta);
}

/// Replaces `target.json`'s text `from` with `to` (for values serde would rewrite).
fn patch_target_text(dir: &Path, from: &str, to: &str) {
    let path = dir.join("target.json");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{from} not in target.json");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
}

/// Rewrites `role.bpk` with `edit` and, if `rehash`, records the new digest.
fn edit_weights(dir: &Path, role: &str, rehash: bool, edit: impl FnOnce(&mut Vec<u8>)) {
    let path = dir.join(format!("{role}.bpk"));
    let mut bytes = std::fs::read(&path).expect("read");
    edit(&mut bytes);
    std::fs::write(&path, &bytes).expect("write");
    if rehash {
        let meta_path = dir.join(format!("{role}.json"));
        let mut meta = read_json(&meta_path);
        meta["weights_sha256"] = Value::String(sha256_hex(&bytes));
        write_json(&meta_path, &meta);
    }
}

/// One row: arguments, standard input, exit status, and a fragment of stderr's one
/// `error:` line (status 2 or 1) or of stdout (status 0).
struct Row {
    args: Vec<String>,
    stdin: Option<String>,
    code: i32,
    fragment: String,
}

fn row(args: &[&str], code: i32, fragment: &str) -> Row {
    Row {
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        stdin: None,
        code,
        fragment: fragment.to_owned(),
    }
}

fn generate_args(extra: &[&str]) -> Vec<String> {
    let mut args = vec!["generate", "--prompt", "ROMEO:", "--max-tokens", "4"];
    args.extend_from_slice(extra);
    args.iter().map(|s| (*s).to_owned()).collect()
}

fn generate(extra: &[&str], code: i32, fragment: &str) -> Row {
    Row {
        args: generate_args(extra),
        stdin: None,
        code,
        fragment: fragment.to_owned(),
    }
}

fn models(dir: &str, code: i32, fragment: &str) -> Row {
    generate(&["--models", dir, "--temperature", "0"], code, fragment)
}

/// A list file of `n` entries, `value` each.
fn list_file(name: &str, n: usize, value: &str, separator: &str) -> String {
    let path = scratch(name).join("list.txt");
    let text = vec![value; n].join(separator);
    std::fs::write(&path, text).expect("write");
    format!("@{}", path.display())
}

/// 65,000 weights whose normalised sum, added in order, is a few ulps above 1.
fn ulp_heavy_list() -> String {
    let path = scratch("ulps").join("list.txt");
    let text: Vec<String> = (0..65_000_u64)
        .map(|i| ((i * 7919) % 997 + 1).to_string())
        .collect();
    std::fs::write(&path, text.join(",")).expect("write");
    format!("@{}", path.display())
}

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
    // Swapped files with their roles edited to match: the shapes still give it away.
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
        }
    });
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
            fragment: "multi-round is too large".into(),
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
            fragment: "the limit is 1048576".into(),
        },
        Row {
            args: plan("kseq", &["--target", "-", "--draft", &big, "--normalize"]),
            stdin: Some(vec!["3"; 65_000].join("\n")),
            code: 0,
            fragment: "SpecTr k-Seq".into(),
        },
        row(
            &[
                "plan", "--method", "greedy", "--target", "-", "--draft", "-",
            ],
            2,
            "cannot both be read from standard input",
        ),
        row(
            &[
                "plan",
                "--method",
                "greedy",
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
            "entry 0 is negative (-1e-300)",
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
            "entry 1 is infinite (inf)",
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
            "entry 0 is NaN",
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
            &["--method", "spectr", "--drafts", "4096", "--gamma", "16"],
            2,
            "65536 draft nodes per round; the limit is 1024",
        ),
        generate(
            &["--method", "otm", "--drafts", "128", "--gamma", "9"],
            2,
            "1152 draft nodes per round; the limit is 1024",
        ),
        generate(
            &["--method", "spectr", "--drafts", "64", "--gamma", "16"],
            0,
            "--- spectr",
        ),
        generate(
            &["--method", "spectr", "--tree", &deep_300],
            2,
            "--tree has 300 levels; the limit is 64",
        ),
        generate(
            &["--method", "multiround", "--tree", &deep_2000],
            2,
            "--tree has 2000 levels; the limit is 64",
        ),
        generate(&["--method", "spectr", "--tree", &deep_64], 0, "--- spectr"),
        generate(
            &["--gamma", "65"],
            2,
            "--gamma must be a whole number in 1..=64",
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
        models(&huge_seq_float, 2, "target.json: cannot load weights"),
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
        models(&corrupt, 2, "target.bpk: cannot load weights"),
        models(&truncated, 2, "target.bpk: checksum mismatch"),
        models(&truncated_rehashed, 2, "target.bpk: cannot load weights"),
        models(
            &oversized,
            2,
            "target.bpk: cannot load weights: the file is larger",
        ),
        models(&tampered, 2, "target.bpk: checksum mismatch"),
        models(&bad_json, 2, "target.json: cannot load weights"),
        models(
            &huge_json,
            2,
            "target.json: cannot load weights: the file is larger",
        ),
        models(&no_target, 2, "target.bpk"),
        // More edges: empty and binary list files, odd numbers, huge prompts.
        row(
            &[
                "plan",
                "--method",
                "greedy",
                "--target",
                "@/dev/null",
                "--draft",
                "1",
            ],
            2,
            "--target is empty",
        ),
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
            "entry 0 (\"0x10\") is not a number",
        ),
        row(
            &[
                "plan", "--method", "kseq", "--drafts", "1e6", "--target", "0.5,0.5", "--draft",
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
                "plan", "--method", "otm", "--drafts", "40", "--target", "0.5,0.5", "--draft",
                "0.5,0.5",
            ],
            2,
            "OTM is too large",
        ),
        generate(&["--threads", "0"], 2, "--threads"),
        generate(&["--seed", "18446744073709551616"], 2, "--seed"),
        generate(&["--temperature", "1e7"], 2, "--temperature"),
        row(
            &["generate", "--prompt", "A", "--max-tokens", "65537"],
            2,
            "--max-tokens must be a whole number in 1..=65536",
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

    let mut failures = Vec::new();
    for row in &rows {
        let out = run(&row.args, row.stdin.as_deref());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let summary = format!("{:?}", row.args);
        if out.status.code() != Some(row.code) {
            failures.push(format!(
                "{summary}: exit {:?}, expected {}; stderr {stderr:?}",
                out.status.code(),
                row.code
            ));
            continue;
        }
        if row.code == 0 {
            if !stdout.contains(&row.fragment) {
                failures.push(format!("{summary}: stdout lacks {:?}", row.fragment));
            }
            if stdout.contains("-0.0") {
                failures.push(format!("{summary}: stdout has -0.0"));
            }
            continue;
        }
        let lines: Vec<&str> = stderr.lines().collect();
        if lines.len() != 1 || !lines[0].starts_with("error: ") || !lines[0].contains(&row.fragment)
        {
            failures.push(format!(
                "{summary}: stderr {stderr:?} is not one error line with {:?}",
                row.fragment
            ));
        }
        if lines.iter().any(|l| l.len() > 400) {
            failures.push(format!("{summary}: an error line over 400 characters"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `plan --json` for `args`, parsed.
fn plan_json(args: &[&str]) -> Value {
    let mut all = vec!["plan"];
    all.extend_from_slice(args);
    all.push("--json");
    let owned: Vec<String> = all.iter().map(|s| (*s).to_owned()).collect();
    let out = run(&owned, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn rescaling_tiny_and_huge_weights_gives_the_exact_distribution() {
    for weights in ["1e-320,1e-320", "1e308,1e308", "5e-324,5e-324"] {
        let report = plan_json(&[
            "--method",
            "speculative",
            "--target",
            weights,
            "--draft",
            "1,3",
            "--normalize",
        ]);
        assert_eq!(report["target"], serde_json::json!([0.5, 0.5]), "{weights}");
    }
}

#[test]
fn negative_zero_is_printed_as_zero() {
    let report = plan_json(&[
        "--method", "mentored", "--kl", "-0", "--target", "-0,1", "--draft", "0.5,0.5",
    ]);
    let text = report.to_string();
    assert!(!text.contains("-0"), "{text}");
    assert_eq!(report["kl_budget"], serde_json::json!(0.0));
    let out = run(
        &[
            "plan",
            "--method",
            "speculative",
            "--target",
            "-0,1",
            "--draft",
            "0.5,0.5",
        ]
        .map(str::to_owned),
        None,
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(!table.contains("-0"), "{table}");
}

#[test]
fn acceptance_is_at_most_one_when_rounding_sums_above_it() {
    let ulps = ulp_heavy_list();
    for method in ["multiround", "speculative"] {
        let mut args = vec!["--method", method, "--target", &ulps, "--draft", &ulps];
        if method == "multiround" {
            args.extend_from_slice(&["--drafts", "2"]);
        }
        args.push("--normalize");
        let report = plan_json(&args);
        let acceptance = report["acceptance"].as_f64().expect("acceptance");
        assert!(acceptance <= 1.0, "{method}: acceptance {acceptance:e}");
        assert!(acceptance > 1.0 - 1e-9, "{method}: acceptance {acceptance}");
    }
}

#[test]
fn sample_stops_when_its_reader_goes_away() {
    let mut child = bin()
        .args(["sample", "--prompt", "A", "--samples", "1000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("one line");
    assert!(first.starts_with("{\"tokens\""), "{first}");
    // The reader is gone (its end of the pipe dropped): the run must end by itself, long
    // before the million samples (hours) it was asked for. Two minutes is a bound on a
    // hang, not a timing: the fixed run stops at the next sample.
    let mut waited = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if waited >= 1200 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("sample still running two minutes after its reader went away");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    };
    assert!(status.success(), "{status}");
}

#[test]
fn generate_stops_when_its_reader_goes_away() {
    let mut child = bin()
        .args(["generate", "--prompt", "A", "--max-tokens", "250"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut byte = [0_u8; 1];
    std::io::Read::read_exact(&mut stdout, &mut byte).expect("one byte");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{:?}", out.status);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `generate --temperature 0 --json` tokens.
fn greedy_tokens(prompt: &str, max_tokens: usize, method: &[&str]) -> Vec<u64> {
    let mut args: Vec<String> = [
        "generate",
        "--prompt",
        prompt,
        "--max-tokens",
        &max_tokens.to_string(),
        "--temperature",
        "0",
        "--json",
    ]
    .map(str::to_owned)
    .to_vec();
    args.extend(method.iter().map(|s| (*s).to_owned()));
    let out = run(&args, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{method:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    json["tokens"]
        .as_array()
        .expect("tokens")
        .iter()
        .map(|t| t.as_u64().expect("token"))
        .collect()
}

#[test]
fn long_generations_slide_the_window_alike_for_every_method() {
    // "ROMEO:" and 300 characters: the 256 positions fill after 250, and both models
    // go on from the last 128 characters.
    let reference = greedy_tokens("ROMEO:", 300, &["--method", "autoregressive"]);
    assert_eq!(reference.len(), 300);
    let methods: [&[&str]; 5] = [
        &["--method", "speculative", "--gamma", "5"],
        &["--method", "spectr", "--drafts", "3", "--gamma", "4"],
        &["--method", "multiround", "--tree", "2,2,1"],
        &["--method", "otm", "--drafts", "2", "--gamma", "3"],
        &["--method", "mentored", "--kl", "0"],
    ];
    for method in methods {
        assert_eq!(
            greedy_tokens("ROMEO:", 300, method),
            reference,
            "{method:?}"
        );
    }
    // The policy itself: after the slide, the continuation is that of the last 128
    // characters read afresh.
    let text = |tokens: &[u64]| -> String {
        let json = run(
            &[
                "generate",
                "--prompt",
                "ROMEO:",
                "--max-tokens",
                "300",
                "--temperature",
                "0",
                "--json",
            ]
            .map(str::to_owned),
            None,
        );
        let value: Value = serde_json::from_slice(&json.stdout).expect("json");
        let all = value["text"].as_str().expect("text").to_owned();
        assert_eq!(all.chars().count(), tokens.len());
        all
    };
    let generated: Vec<char> = text(&reference).chars().collect();
    let context: String = "ROMEO:"
        .chars()
        .chain(generated[..250].iter().copied())
        .collect::<Vec<char>>()[128..]
        .iter()
        .collect();
    let fresh = greedy_tokens(&context, 50, &["--method", "autoregressive"]);
    assert_eq!(
        fresh,
        reference[250..],
        "the slide is not a fresh read of 128"
    );
}
