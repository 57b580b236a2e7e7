//! The shared table of decoding options (`tests/options/table.json`), through the CLI:
//! each row as `specula generate` flags must give the table's verdict, and a refusal
//! the table's `code` and `field` (with `--json`, the error object on stderr). The npm
//! package runs the same table (`tests/web-package/options-table.mjs`), so the two
//! surfaces cannot disagree.

mod table_support;

use std::process::Command;

use serde_json::Value;
use table_support::{assert_verdict, flag};

fn table() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/options/table.json"
    );
    let text = std::fs::read_to_string(path).expect("tests/options/table.json");
    let json: Value = serde_json::from_str(&text).expect("the table is JSON");
    json["rows"].as_array().expect("rows").clone()
}

/// A number as a flag value: whole numbers without a fraction (`4`, not `4.0`).
fn number(value: &Value) -> String {
    match value.as_f64() {
        Some(x) if x.fract() == 0.0 && x.abs() < 1e16 => format!("{}", x as i64),
        _ => value.to_string(),
    }
}

/// The row's options as flags of `specula generate`.
fn flags(options: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut args = vec!["generate".to_owned(), "--json".to_owned()];
    if !options.contains_key("maxTokens") {
        // Accepted rows generate: two tokens keep the table quick.
        args.extend(["--max-tokens".to_owned(), "2".to_owned()]);
    }
    for (name, value) in options {
        match value {
            Value::Bool(true) => args.push(flag(name)),
            Value::Array(items) if name == "stop" => {
                for item in items {
                    args.extend([flag(name), item.as_str().expect("a string").to_owned()]);
                }
            }
            Value::Array(items) => {
                let list: Vec<String> = items.iter().map(number).collect();
                args.extend([flag(name), list.join(",")]);
            }
            Value::String(s) => args.extend([flag(name), s.clone()]),
            Value::Number(_) => args.extend([flag(name), number(value)]),
            other => panic!("{name}: {other} has no flag; mark the row cli: false"),
        }
    }
    args
}

#[test]
fn every_row_gets_the_tables_verdict_code_and_field() {
    let mut checked = 0;
    for row in table() {
        if row["cli"] == Value::Bool(false) {
            continue;
        }
        let args = flags(row["options"].as_object().expect("options"));
        let out = Command::new(env!("CARGO_BIN_EXE_specula"))
            .args(&args)
            .output()
            .expect("specula runs");
        assert_verdict(&args, &row, &out);
        checked += 1;
    }
    assert!(checked >= 35, "only {checked} rows reach the CLI");
}
