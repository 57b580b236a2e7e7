//! The shared table of lab verdicts (`tests/options/lab-table.json`), through `specula
//! sample --compare`: a row's runs must be counted and tested against the exact
//! distribution of the row's kind with a verdict that is not a misfit, or be reported as
//! no test (no p-value, the reason given, never a fit), or be refused naming the row's
//! option as a flag. The "no misfit" rows are wiring checks: at their few hundred runs a
//! near miss moves the chi-square by λ ≈ 6 (the table's `about`), so the claim that the
//! runs follow the exact distribution is tested with power elsewhere: tests/sample_compare.rs
//! (3,000 runs), the engine's tests/lab.rs and src/decode.rs's window slide. The npm
//! package (`tests/web-package/app/src/lab.js`) and the page (`tests/www/lab-table.mjs`)
//! run the same rows.

// Only its flag names: the verdicts here are the lab's, not an option check's.
#[allow(dead_code)]
mod table_support;

use std::process::Command;

use serde_json::Value;
use table_support::flag;

fn table() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/options/lab-table.json"
    );
    let text = std::fs::read_to_string(path).expect("tests/options/lab-table.json");
    let json: Value = serde_json::from_str(&text).expect("the table is JSON");
    json["rows"].as_array().expect("rows").clone()
}

/// The row as a `sample --compare` command line.
fn args(row: &Value) -> Vec<String> {
    let lab = &row["lab"];
    let mut args: Vec<String> = ["sample", "--compare", "--samples"]
        .map(str::to_owned)
        .into();
    args.push(lab["runs"].to_string());
    args.extend(["--position".to_owned(), lab["position"].to_string()]);
    let options = row["options"].as_object().expect("options");
    if !options.contains_key("maxTokens") {
        // Two tokens reach either position and keep the runs short.
        args.extend(["--max-tokens".to_owned(), "2".to_owned()]);
    }
    for (name, value) in options {
        match value {
            Value::String(s) => args.extend([flag(name), s.clone()]),
            Value::Number(_) => args.extend([flag(name), value.to_string()]),
            Value::Array(items) => {
                for item in items {
                    let item = item.as_str().expect("a string");
                    args.extend([flag(name), item.to_owned()]);
                }
            }
            other => panic!("{name}: {other} has no flag"),
        }
    }
    args
}

#[test]
fn every_row_gets_the_tables_lab_verdict() {
    let rows = table();
    assert!(rows.len() >= 6, "{} rows", rows.len());
    for row in rows {
        let args = args(&row);
        let name = row["name"].as_str().expect("a name");
        let out = Command::new(env!("CARGO_BIN_EXE_specula"))
            .args(&args)
            .output()
            .expect("specula runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        if let Some(field) = row["field"].as_str() {
            assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
            let named = format!("error: {}", flag(field));
            assert!(stderr.starts_with(&named), "{name}: {stderr}");
            continue;
        }
        assert!(out.status.success(), "{name}: {stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        let counted = v["samples"].as_u64().expect("samples");
        assert_eq!(
            counted + v["unreached"].as_u64().expect("unreached"),
            row["lab"]["runs"].as_u64().expect("runs"),
            "{name}: every run counted or reported: {v}"
        );
        match row["verdict"].as_str() {
            Some("no misfit") => {
                assert_eq!(v["exact"], row["exact"], "{name}: {v}");
                let p = v["pValue"]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{name}: tested, a p-value: {v}"));
                assert!(
                    p > 1e-4,
                    "{name}: the lab's verdict is a misfit (p = {p}; a wiring check, no claim of fit)"
                );
            }
            Some("no test") => {
                assert!(
                    v["pValue"].is_null() && v["targetPValue"].is_null(),
                    "{name}: {v}"
                );
                assert_eq!(v["degreesOfFreedom"], 0, "{name}: {v}");
                assert!(
                    v["noTest"].as_str().is_some_and(|r| r.contains("too few")),
                    "{name}: {v}"
                );
            }
            other => panic!("{name}: verdict {other:?}"),
        }
    }
}
