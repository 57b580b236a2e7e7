//! Shared helpers of the hostile-input tests (hostile*.rs): running the CLI, scratch
//! directories, broken copies of the bundled pair, list files, and the table's rows and
//! their check.
#![allow(dead_code)]

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use specula_model::{ModelMeta, sha256_hex};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_specula"))
}

/// A run still going after this is hung (a FIFO opened for reading, a device read to
/// its end that has none): it is killed and the test fails instead of hanging. Rows take
/// seconds; the bound is generous for a loaded machine.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

pub fn run(args: &[String], stdin: Option<&str>) -> Output {
    run_os(args.iter().map(OsString::from).collect(), stdin)
}

/// [`run`] with arguments that need not be UTF-8.
pub fn run_os(args: Vec<OsString>, stdin: Option<&str>) -> Output {
    let mut child = bin()
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"));
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.unwrap_or_default().to_owned();
    // On threads of their own, so that a child that never reads its input or never
    // ends cannot block the test before the limit below is checked.
    let writer = std::thread::spawn(move || {
        // A command that refuses early may close its stdin first.
        let _ = input.write_all(text.as_bytes());
    });
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let status = wait_within(&mut child, &format!("specula {args:?} still ran"));
    let _ = writer.join();
    Output {
        status,
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    }
}

/// Waits for `child` at most [`RUN_LIMIT`]: past it the child is killed and the test
/// fails, saying `what` ("… still ran") and the limit.
pub fn wait_within(child: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if start.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} after {RUN_LIMIT:?}; killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A scratch directory for this test binary.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(env!("CARGO_CRATE_NAME"))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The bundled weights, as files.
pub fn bundled_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../specula-model/weights")
}

/// A copy of the bundled pair in `name`, changed by `edit`.
pub fn model_dir(name: &str, edit: impl FnOnce(&Path)) -> String {
    let dir = scratch(name);
    for file in ["draft.json", "draft.bpk", "target.json", "target.bpk"] {
        std::fs::copy(bundled_dir().join(file), dir.join(file)).expect("copy");
    }
    edit(&dir);
    dir.display().to_string()
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json")
}

pub fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(value).expect("json")).expect("write");
}

/// Sets `target.json`'s `key` (a JSON pointer) to `value`, written as raw JSON.
pub fn set_target_field(dir: &Path, pointer: &str, raw: &str) {
    let path = dir.join("target.json");
    let mut meta = read_json(&path);
    *meta.pointer_mut(pointer).expect("field") = serde_json::from_str(raw).expect("value");
    write_json(&path, &meta);
}

/// Replaces `target.json`'s text `from` with `to` (for values serde would rewrite).
pub fn patch_target_text(dir: &Path, from: &str, to: &str) {
    let path = dir.join("target.json");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{from} not in target.json");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
}

/// Recomputes the description digest of `path` (a `ROLE.json`), as a careful forger would.
pub fn reseal(path: &Path) {
    let mut meta: ModelMeta = serde_json::from_value(read_json(path)).expect("a description");
    meta.seal();
    write_json(path, &serde_json::to_value(&meta).expect("json"));
}

/// Rewrites `role.bpk` with `edit` and, if `rehash`, records the new digest (and reseals
/// the description, so that only the weights can give the edit away).
pub fn edit_weights(dir: &Path, role: &str, rehash: bool, edit: impl FnOnce(&mut Vec<u8>)) {
    let path = dir.join(format!("{role}.bpk"));
    let mut bytes = std::fs::read(&path).expect("read");
    edit(&mut bytes);
    std::fs::write(&path, &bytes).expect("write");
    if rehash {
        let meta_path = dir.join(format!("{role}.json"));
        let mut meta = read_json(&meta_path);
        meta["weights_sha256"] = Value::String(sha256_hex(&bytes));
        write_json(&meta_path, &meta);
        reseal(&meta_path);
    }
}

/// One row: arguments, standard input, exit status, and a fragment of stderr's one
/// `error:` line (status 2 or 1) or of stdout (status 0).
pub struct Row {
    pub args: Vec<String>,
    pub stdin: Option<String>,
    pub code: i32,
    pub fragment: String,
}

pub fn row(args: &[&str], code: i32, fragment: &str) -> Row {
    Row {
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        stdin: None,
        code,
        fragment: fragment.to_owned(),
    }
}

pub fn generate_args(extra: &[&str]) -> Vec<String> {
    let mut args = vec!["generate", "--prompt", "ROMEO:", "--max-tokens", "4"];
    args.extend_from_slice(extra);
    args.iter().map(|s| (*s).to_owned()).collect()
}

pub fn generate(extra: &[&str], code: i32, fragment: &str) -> Row {
    Row {
        args: generate_args(extra),
        stdin: None,
        code,
        fragment: fragment.to_owned(),
    }
}

pub fn models(dir: &str, code: i32, fragment: &str) -> Row {
    generate(&["--models", dir, "--temperature", "0"], code, fragment)
}

/// A list file of `n` entries, `value` each.
pub fn list_file(name: &str, n: usize, value: &str, separator: &str) -> String {
    let path = scratch(name).join("list.txt");
    let text = vec![value; n].join(separator);
    std::fs::write(&path, text).expect("write");
    format!("@{}", path.display())
}

/// 65,000 weights whose normalised sum, added in order, is a few ulps above 1.
pub fn ulp_heavy_list() -> String {
    let path = scratch("ulps").join("list.txt");
    let text: Vec<String> = (0..65_000_u64)
        .map(|i| ((i * 7919) % 997 + 1).to_string())
        .collect();
    std::fs::write(&path, text.join(",")).expect("write");
    format!("@{}", path.display())
}

/// Runs every row and fails with each one that exits with another status, or whose
/// stderr is not one short `error:` line holding its fragment (its stdout, for status 0).
pub fn check_rows(rows: &[Row]) {
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|row| {
            let out = run(&row.args, row.stdin.as_deref());
            check_output(&format!("{:?}", row.args), &out, row.code, &row.fragment)
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What is wrong with `out` for a row expecting status `code` and `fragment` (see
/// [`check_rows`]), or `None`.
pub fn check_output(summary: &str, out: &Output, code: i32, fragment: &str) -> Option<String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.code() != Some(code) {
        return Some(format!(
            "{summary}: exit {:?}, expected {code}; stderr {stderr:?}",
            out.status.code(),
        ));
    }
    if code == 0 {
        if !stdout.contains(fragment) {
            return Some(format!("{summary}: stdout lacks {fragment:?}"));
        }
        if stdout.contains("-0.0") {
            return Some(format!("{summary}: stdout has -0.0"));
        }
        return None;
    }
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.len() != 1 || !lines[0].starts_with("error: ") || !lines[0].contains(fragment) {
        return Some(format!(
            "{summary}: stderr {stderr:?} is not one error line with {fragment:?}"
        ));
    }
    if lines.iter().any(|l| l.len() > 400) {
        return Some(format!("{summary}: an error line over 400 characters"));
    }
    None
}
