//! `specula plan --bug`: the bug lab's exact output distribution and total variation,
//! checked against values worked out by hand on the example pair, and its refusals.

use std::process::{Command, Output};

use serde_json::Value;

const TARGET: &str = "0.1,0.2,0.3,0.4";
const DRAFT: &str = "0.5,0.3,0.15,0.05";
const TARGET_PROBS: [f64; 4] = [0.1, 0.2, 0.3, 0.4];

fn specula(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"))
}

fn plan(extra: &[&str]) -> Output {
    let mut args = vec!["plan", "--target", TARGET, "--draft", DRAFT];
    args.extend_from_slice(extra);
    specula(&args)
}

fn bug_json(bug: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--method", "speculative", "--bug", bug, "--json"];
    args.extend_from_slice(extra);
    let out = plan(&args);
    assert!(
        out.status.success(),
        "{bug}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
}

/// Worked by hand: accepted mass per token `min(target, draft)` = (0.1, 0.2, 0.15, 0.05),
/// rejection 0.5, residual `norm(max(0, target − draft))` = (0, 0, 0.3, 0.7).
#[test]
fn each_bug_gives_its_hand_computed_output_and_tv() {
    let cases: [(&str, [f64; 4], f64); 3] = [
        // The rejected half is drawn from the target: 0.5 · target added to the accepted.
        ("resample-from-target", [0.15, 0.3, 0.3, 0.25], 0.15),
        // Token 0 always proposed, accepted with 0.1/0.5; the rest from the residual.
        ("argmax-draft", [0.2, 0.0, 0.24, 0.56], 0.26),
        // u in [F(x-1), F(x)) accepts below t/d: 0.2, 1/6, 0.15, 0.05 (0.8 - 0.5 cut at 2/3).
        (
            "shared-uniform",
            [
                0.2,
                1.0 / 6.0,
                0.15 + 0.3 * (0.5 - 1.0 / 15.0),
                0.05 + 0.7 * (0.5 - 1.0 / 15.0),
            ],
            0.1,
        ),
    ];
    for (bug, output, tv) in cases {
        let json = bug_json(bug, &[]);
        let got = floats(&json["output"]);
        assert!(
            close(&got, &output),
            "{bug}: output {got:?}, want {output:?}"
        );
        let got_tv = json["tv"].as_f64().expect("tv");
        assert!((got_tv - tv).abs() < 1e-12, "{bug}: tv {got_tv}, want {tv}");
        assert_eq!(json["tvTargetOutput"], json["tv"]);
        assert_eq!(json["bug"]["name"], bug);
        assert!(close(&floats(&json["target"]), &TARGET_PROBS));
    }
}

#[test]
fn processing_bugs_act_only_when_there_is_processing() {
    // Temperature 1 and no filter: the tested and the processed distributions coincide.
    for bug in ["unprocessed-target", "filtered-draft"] {
        let json = bug_json(bug, &[]);
        assert!(json["tv"].as_f64().unwrap() < 1e-12, "{bug}: {json}");
    }
    let json = bug_json("unprocessed-target", &["--temperature", "0.5"]);
    assert!(json["tv"].as_f64().unwrap() > 0.01, "{json}");
    assert_eq!(json["temperature"], 0.5);
    // The report's target is the processed one: sharper than the raw target.
    let target = floats(&json["target"]);
    assert!(
        target[3] > 0.4 && (target.iter().sum::<f64>() - 1.0).abs() < 1e-12,
        "{target:?}"
    );
    let json = bug_json("filtered-draft", &["--top-k", "2"]);
    assert!(json["tv"].as_f64().unwrap() > 0.01, "{json}");
    assert_eq!(json["topK"], 2);
}

#[test]
fn the_table_names_the_bug_and_its_settings() {
    let out = plan(&[
        "--method",
        "speculative",
        "--bug",
        "filtered-draft",
        "--top-p",
        "0.9",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("bug") && text.contains("filtered-draft"),
        "{text}"
    );
    assert!(
        text.contains("temperature 1.000000, top-p 0.900000"),
        "{text}"
    );
}

#[test]
fn bugs_outside_the_token_level_plan_are_refused() {
    let rows: [(&[&str], &str); 6] = [
        (
            &["--method", "spectr", "--bug", "argmax-draft"],
            "--bug does not apply to method \"spectr\"",
        ),
        (
            &["--method", "speculative", "--bug", "cache-reset"],
            "--bug must be a token-level bug: cache-reset acts only over a sequence",
        ),
        (
            &["--method", "speculative", "--bug", "typo"],
            "--bug must be one of",
        ),
        (
            &[
                "--method",
                "speculative",
                "--bug",
                "argmax-draft",
                "--temperature",
                "0",
            ],
            "--bug must be left out at temperature 0 (greedy verification is unaffected by the bugs",
        ),
        (
            &[
                "--method",
                "speculative",
                "--bug",
                "argmax-draft",
                "--top-k",
                "0",
            ],
            "--top-k must be a whole number from 1 to 1048576 (leave it out for no top-k), got 0",
        ),
        (
            &[
                "--method",
                "speculative",
                "--bug",
                "argmax-draft",
                "--top-p",
                "0",
            ],
            "--top-p must be a number in (0, 1]",
        ),
    ];
    for (args, needle) in rows {
        let out = plan(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}
