//! The shared table of plan options (`tests/options/plan-table.json`) through `specula
//! plan --json`: each row must give the table's verdict, and a refusal the table's `code`
//! and `field`. The npm package's `plan()` runs the same table
//! (`tests/web-package/options-table.mjs`).

mod table_support;

use std::process::Command;

use serde_json::{Map, Value};
use table_support::{assert_verdict, flag};

/// The row's options (over the base pair) as flags of `specula plan`.
fn flags(base: &Map<String, Value>, options: &Map<String, Value>) -> Vec<String> {
    let mut merged = base.clone();
    merged.extend(options.clone());
    let mut args = vec!["plan".to_owned(), "--json".to_owned()];
    for (name, value) in &merged {
        match value {
            Value::Bool(true) => args.push(flag(name)),
            Value::Array(items) => {
                let list: Vec<String> = items.iter().map(Value::to_string).collect();
                args.push(format!("{}={}", flag(name), list.join(",")));
            }
            Value::String(s) => args.extend([flag(name), s.clone()]),
            Value::Number(n) => args.push(format!("{}={n}", flag(name))),
            other => panic!("{name}: {other} has no flag; mark the row cli: false"),
        }
    }
    args
}

#[test]
fn every_row_gets_the_tables_verdict_code_and_field() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/options/plan-table.json"
    );
    let text = std::fs::read_to_string(path).expect("tests/options/plan-table.json");
    let table: Value = serde_json::from_str(&text).expect("the table is JSON");
    let base = table["base"].as_object().expect("base");
    let mut checked = 0;
    for row in table["rows"].as_array().expect("rows") {
        if row["cli"] == Value::Bool(false) {
            continue;
        }
        let args = flags(base, row["options"].as_object().expect("options"));
        let out = Command::new(env!("CARGO_BIN_EXE_specula"))
            .args(&args)
            .output()
            .expect("specula runs");
        assert_verdict(&args, row, &out);
        if row["ok"] == Value::Bool(true) {
            let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
            let options = &row["options"];
            assert_eq!(report["method"], options["method"], "{args:?}");
            // SpecTr's rule is named, k-Seq by default; no other method has one.
            let selection = match (&options["method"], &options["selection"]) {
                (m, Value::Null) if m == "spectr" => Value::from("kseq"),
                (_, given) => given.clone(),
            };
            assert_eq!(report["selection"], selection, "{args:?}");
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} rows reach the CLI");
}
