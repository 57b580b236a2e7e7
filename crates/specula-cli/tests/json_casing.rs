//! One casing for every JSON the CLI prints, as the npm package spells its objects:
//! camelCase keys. The test walks the output of every subcommand that prints JSON
//! (`plan --json`, `generate --json` and `--json-lines`, `sample` and `sample --compare`,
//! `bench --json`) and the `{ code, field, message }` of a refusal with `--json`, and
//! fails on any key outside the contract.

use std::process::Command;

use serde_json::Value;

/// Runs the CLI; stdout, stderr and whether it succeeded.
fn specula(args: &[&str]) -> (String, String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"));
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// Whether `key` is camelCase: a lower-case ASCII letter, then letters and digits.
fn camel_case(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

/// Every object key in `value`, with its JSON pointer.
fn keys(value: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                out.push((format!("{at}/{key}"), key.clone()));
                keys(inner, &format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                keys(inner, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Parses `text` as one JSON value or as JSON lines, and checks every key; the number
/// of keys checked.
fn check(what: &str, text: &str) -> usize {
    let values: Vec<Value> = match serde_json::from_str(text) {
        Ok(value) => vec![value],
        Err(_) => text
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {line}"))
            })
            .collect(),
    };
    let mut found = Vec::new();
    for value in &values {
        keys(value, "", &mut found);
    }
    let bad: Vec<&(String, String)> = found.iter().filter(|(_, k)| !camel_case(k)).collect();
    assert!(bad.is_empty(), "{what}: keys outside camelCase: {bad:?}");
    found.len()
}

fn output(what: &str, args: &[&str]) -> usize {
    let (stdout, stderr, ok) = specula(args);
    assert!(ok, "{what}: {stderr}");
    check(what, &stdout)
}

#[test]
fn every_json_output_is_camel_case() {
    let prompt = ["--prompt", "ROMEO:"];
    let runs: [(&str, Vec<&str>); 7] = [
        (
            "plan --json",
            vec![
                "plan",
                "--method",
                "spectr",
                "--selection",
                "race",
                "--temperature",
                "0.5",
                "--top-k",
                "3",
                "--target",
                "0.1,0.2,0.3,0.4",
                "--draft",
                "0.5,0.3,0.15,0.05",
                "--drafts",
                "2",
                "--json",
            ],
        ),
        (
            "generate --json",
            [&["generate", "--max-tokens", "6", "--json"][..], &prompt].concat(),
        ),
        (
            "generate --json-lines",
            [
                &["generate", "--max-tokens", "6", "--json-lines"][..],
                &prompt,
            ]
            .concat(),
        ),
        (
            "generate --json, spectr with a tree",
            [
                &["generate", "--method", "spectr", "--tree", "2,1", "--json"][..],
                &prompt,
            ]
            .concat(),
        ),
        (
            "sample",
            [
                &["sample", "--samples", "3", "--max-tokens", "2"][..],
                &prompt,
            ]
            .concat(),
        ),
        (
            "sample --compare",
            [
                &[
                    "sample",
                    "--samples",
                    "40",
                    "--max-tokens",
                    "2",
                    "--compare",
                ][..],
                &prompt,
            ]
            .concat(),
        ),
        (
            "bench --json",
            vec![
                "bench", "--tokens", "4", "--repeat", "1", "--gammas", "1", "--drafts", "2",
                "--kls", "0.1", "--gamma", "2", "--json",
            ],
        ),
    ];
    for (what, args) in &runs {
        let checked = output(what, args);
        assert!(checked >= 3, "{what}: only {checked} keys");
    }
}

#[test]
fn refusals_with_json_are_camel_case_objects() {
    for args in [
        vec!["generate", "--prompt", "ROMEO:", "--gamma", "0", "--json"],
        vec!["generate", "--prompt", "ROMEO:", "--gama", "2", "--json"],
        vec![
            "plan", "--method", "spectr", "--target", "0.5,0.5", "--json",
        ],
    ] {
        let (_, stderr, ok) = specula(&args);
        assert!(!ok, "{args:?} ran");
        let error: Value = serde_json::from_str(stderr.trim())
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON object ({e}): {stderr}"));
        for key in ["code", "message"] {
            assert!(error[key].is_string(), "{args:?}: no {key} in {error}");
        }
        check(&format!("{args:?}"), stderr.trim());
    }
}

#[test]
fn the_walk_catches_a_snake_case_key() {
    let caught = std::panic::catch_unwind(|| {
        check(
            "planted",
            r#"{"rows": [{"tokensPerSecond": 1, "of_theory": 2}]}"#,
        )
    });
    assert!(caught.is_err(), "a snake_case key nested in a list passed");
    assert_eq!(check("clean", r#"{"a": {"bC": [{"d1": 0}]}}"#), 3);
}
