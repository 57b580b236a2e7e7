//! A few random command lines through the binary itself, beside the thousands the
//! in-process fuzzer (`src/argv_fuzz.rs`) reads and checks: each subcommand's flags as its
//! `--help` lists them, with hostile values (`common/hostile_values.rs`), an argument that
//! is not UTF-8 in some, and one refused flag at the end so that no line runs a model.
//! Each must end within the hostile tests' time limit with status 2 (1 for a failure that
//! is not the input's) and an `error:` on stderr (a JSON object with `--json`), nothing
//! on stdout and no panic. Lines that may run go once more into a closed pipe: they end
//! at once, cleanly, whatever they print.

mod common;

#[path = "common/hostile_values.rs"]
mod hostile_values;

use std::ffi::OsString;
use std::process::Stdio;

use common::{bin, run, run_os, scratch, wait_within};
use hostile_values::{LISTS, NAMES, NUMBERS, PATHS, not_utf8, special_files};

/// The long flags `specula SUBCOMMAND --help` lists, but `--help` (which succeeds).
fn flags_of(subcommand: &str) -> Vec<String> {
    let out = run(&[subcommand.to_owned(), "--help".to_owned()], None);
    assert_eq!(out.status.code(), Some(0), "{subcommand} --help");
    let help = String::from_utf8_lossy(&out.stdout);
    let mut flags: Vec<String> = help
        .split_whitespace()
        .filter_map(|word| word.strip_prefix("--"))
        .map(|word| word.trim_end_matches([',', '.', ')', '`', ':']))
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .map(|name| format!("--{name}"))
        .collect();
    flags.retain(|f| f != "--help");
    flags.sort();
    flags.dedup();
    flags
}

/// xorshift64: the same lines on every run.
struct Draws(u64);

impl Draws {
    fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % below as u64) as usize
    }
}

#[test]
fn random_command_lines_through_the_binary_are_refused_cleanly() {
    let special = special_files(&scratch("fuzz-special"));
    let mut values: Vec<String> = [NUMBERS, NAMES, LISTS, PATHS]
        .concat()
        .iter()
        .map(|v| (*v).to_owned())
        .collect();
    values.extend(special.iter().map(|p| p.display().to_string()));
    values.extend(special.iter().map(|p| format!("@{}", p.display())));
    let mut draws = Draws(0x5eed_1234_abcd_0001);
    let mut failures = Vec::new();
    for (subcommand, poison) in [
        ("plan", ["--method", "beam"]),
        ("generate", ["--threads", "0"]),
        ("sample", ["--threads", "0"]),
        ("bench", ["--threads", "0"]),
        ("train", ["--threads", "0"]),
    ] {
        let flags = flags_of(subcommand);
        assert!(flags.len() > 5, "{subcommand}: {flags:?}");
        for line in 0..2 {
            let mut args = vec![OsString::from(subcommand)];
            for _ in 0..3 {
                args.push(OsString::from(&flags[draws.next(flags.len())]));
                let value = &values[draws.next(values.len())];
                // `-` would read standard input: it is empty here, but not the point.
                args.push(if line == 1 && draws.next(2) == 0 {
                    not_utf8(value)
                } else {
                    OsString::from(value)
                });
            }
            args.extend(poison.iter().map(OsString::from));
            let json = args.iter().any(|a| a == "--json" || a == "--json-lines");
            let out = run_os(args.clone(), None);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let first = stderr.lines().next().unwrap_or_default();
            let shaped = if json {
                first.starts_with('{') || first.starts_with("error: ")
            } else {
                first.starts_with("error: ")
            };
            let clean = matches!(out.status.code(), Some(1 | 2))
                && shaped
                && !stderr.contains("panicked")
                && out.stdout.is_empty();
            if !clean {
                failures.push(format!("{args:?}: {:?} {stderr:?}", out.status.code()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs `args` with stdout a pipe whose reader has already gone: (status, stderr).
fn into_closed_pipe(args: &[String]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("specula runs");
    let status = wait_within(
        &mut child,
        &format!("{args:?} still ran into a closed pipe"),
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("stderr");
    (status.code(), stderr)
}

#[test]
fn lines_that_run_end_cleanly_into_a_closed_pipe() {
    // Short runs of each command that prints (train, minutes long, prints once at its
    // end): each as it is, which must succeed, then with one drawn flag and value, where
    // a refusal is as good as a run.
    let bases: [&[&str]; 5] = [
        &[
            "plan",
            "--method",
            "spectr",
            "--target",
            "0.5,0.3,0.2",
            "--draft",
            "0.2,0.3,0.5",
        ],
        &[
            "generate",
            "--prompt",
            "ROMEO:",
            "--max-tokens",
            "3",
            "--json-lines",
        ],
        &[
            "sample",
            "--prompt",
            "ROMEO:",
            "--samples",
            "3",
            "--max-tokens",
            "2",
        ],
        &[
            "bench",
            "--tokens",
            "2",
            "--repeat",
            "1",
            "--gammas",
            "1",
            "--drafts",
            "1",
            "--methods",
            "speculative",
        ],
        &["train", "--help"],
    ];
    let mut values: Vec<&str> = [NUMBERS, NAMES, LISTS].concat();
    values.retain(|v| v.trim() != "-");
    let mut draws = Draws(0x5eed_0000_c105_ed00);
    let mut failures = Vec::new();
    for base in bases {
        let subcommand = base[0];
        let flags = flags_of(subcommand);
        for line in 0..3 {
            let mut args: Vec<String> = base.iter().map(|a| (*a).to_owned()).collect();
            if line > 0 {
                args.push(flags[draws.next(flags.len())].clone());
                args.push(values[draws.next(values.len())].to_owned());
            }
            let (code, stderr) = into_closed_pipe(&args);
            if line == 0 && code != Some(0) {
                failures.push(format!("{args:?} failed: {code:?} {stderr:?}"));
            }
            let clean = match code {
                Some(0) => !stderr.contains("error"),
                Some(1 | 2) => stderr.starts_with("error: ") || stderr.starts_with('{'),
                _ => false,
            };
            if !clean || stderr.contains("panicked") {
                failures.push(format!("{args:?}: {code:?} {stderr:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
