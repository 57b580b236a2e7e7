//! What the `plan` tests (plan.rs, plan_errors.rs) share: the spec's example pair,
//! running the binary, and the check of a refused input.
#![allow(dead_code)]

use std::process::{Command, Output};

pub const TARGET: &str = "0.1,0.2,0.3,0.4";
pub const DRAFT: &str = "0.5,0.3,0.15,0.05";

pub fn specula(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"))
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts a refused input: non-zero exit, exactly one stderr line, starting with
/// `error: ` and containing `needle`, nothing on stdout, no panic.
pub fn assert_error(args: &[&str], needle: &str) {
    let out = specula(args);
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success(),
        "{args:?} succeeded: {}",
        text(&out.stdout)
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: exit status, stderr {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{args:?}: expected one stderr line, got {stderr:?}"
    );
    assert!(lines[0].starts_with("error: "), "{args:?}: {stderr:?}");
    assert!(
        lines[0].contains(needle),
        "{args:?}: {stderr:?} does not mention {needle:?}"
    );
    assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
}

/// `plan` on the example with a method and extra flags, for [`assert_error`].
pub fn example<'a>(method: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "plan", "--method", method, "--target", TARGET, "--draft", DRAFT,
    ];
    args.extend_from_slice(extra);
    args
}
