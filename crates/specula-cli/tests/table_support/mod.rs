//! What the shared option tables' CLI tests (options_table.rs, plan_table.rs) have in
//! common: the flag of an option and the check of one row's verdict.

use std::process::Output;

use serde_json::Value;

/// `topK` → `--top-k`.
pub fn flag(name: &str) -> String {
    let mut flag = String::from("--");
    for ch in name.chars() {
        if ch.is_ascii_uppercase() {
            flag.push('-');
            flag.push(ch.to_ascii_lowercase());
        } else {
            flag.push(ch);
        }
    }
    flag
}

/// The command `args` must have succeeded when the row says `ok`, and otherwise exited
/// with status 2 and printed one JSON error with the row's `code` and `field`.
pub fn assert_verdict(args: &[String], row: &Value, out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    if row["ok"] == Value::Bool(true) {
        assert!(out.status.success(), "{args:?}: {stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    let error: Value = serde_json::from_str(stderr.trim())
        .unwrap_or_else(|e| panic!("{args:?}: stderr is not one JSON error ({e}): {stderr}"));
    assert_eq!(error["code"], row["code"], "{args:?}: {error}");
    assert_eq!(error["field"], row["field"], "{args:?}: {error}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{args:?}"
    );
}
