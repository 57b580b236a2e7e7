//! Hostile input to `plan`: weights that rescale to the exact distribution, no `-0` in
//! its output, acceptance at most one when rounding sums above it, and what the
//! tolerances let through (a sum within 1e-6 of 1, a ρ just below ρ*) reported as notes.

mod common;

use common::{run, ulp_heavy_list};
use serde_json::Value;

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
    assert_eq!(report["klBudget"], serde_json::json!(0.0));
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

/// `plan` without `--json`: its text on stdout.
fn plan_text(args: &[&str]) -> String {
    let mut all = vec!["plan".to_owned()];
    all.extend(args.iter().map(|s| (*s).to_owned()));
    let out = run(&all, None);
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_sum_the_tolerance_rescales_is_reported_not_silent() {
    let short = [
        "--method",
        "speculative",
        "--target",
        "0.5,0.4999995",
        "--draft",
        "0.5,0.5",
    ];
    let report = plan_json(&short);
    assert_eq!(report["normalized"], Value::Bool(false));
    let notes = report["notes"].as_array().expect("notes");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["kind"], "rescaled");
    assert_eq!(notes[0]["field"], "target");
    // The sum as f64 adds it: 0.5 + 0.4999995 is 0.9999994999999999.
    let sum = 0.5 + 0.4999995;
    assert_eq!(notes[0]["given"], sum);
    assert_eq!(notes[0]["used"], 1.0);
    let message = notes[0]["message"].as_str().expect("message");
    assert!(
        message.starts_with(&format!("--target sums to {sum}, not 1")),
        "{message}"
    );
    assert!(
        message.contains("--normalize rescales any positive sum"),
        "{message}"
    );
    let text = plan_text(&short);
    assert!(text.contains(&format!("note: {message}")), "{text}");
    // Decimals that sum to 1 up to rounding, and an asked-for rescale: no note.
    let exact = plan_json(&[
        "--method",
        "speculative",
        "--target",
        "0.1,0.2,0.3,0.4",
        "--draft",
        "0.5,0.3,0.15,0.05",
    ]);
    assert_eq!(exact["notes"], serde_json::json!([]));
    let asked = plan_json(&[
        "--method",
        "speculative",
        "--target",
        "1,3",
        "--draft",
        "1,1",
        "--normalize",
    ]);
    assert_eq!(asked["notes"], serde_json::json!([]));
    assert!(
        !plan_text(&[
            "--method",
            "speculative",
            "--temperature",
            "0",
            "--target",
            "0.1,0.9",
            "--draft",
            "0.5,0.5"
        ])
        .contains("note:")
    );
}

#[test]
fn a_rho_raised_to_rho_star_is_reported_not_silent() {
    let pair = [
        "--method",
        "spectr",
        "--drafts",
        "3",
        "--target",
        "0.1,0.2,0.3,0.4",
        "--draft",
        "0.5,0.3,0.15,0.05",
    ];
    let rho_star = plan_json(&pair)["rhoStar"].as_f64().expect("rhoStar");
    let below = (rho_star * (1.0 - 1e-13)).to_string();
    let mut args = pair.to_vec();
    args.extend(["--rho", &below]);
    let report = plan_json(&args);
    assert_eq!(report["rho"].as_f64(), Some(rho_star));
    let notes = report["notes"].as_array().expect("notes");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["kind"], "rhoRaised");
    assert_eq!(notes[0]["field"], "rho");
    assert_eq!(notes[0]["given"].to_string(), below);
    assert_eq!(notes[0]["used"].as_f64(), Some(rho_star));
    let message = notes[0]["message"].as_str().expect("message");
    assert!(
        message.starts_with(&format!("--rho {below} is below rho* = ")),
        "{message}"
    );
    assert!(plan_text(&args).contains(&format!("note: {message}")));
    // ρ* as printed is ρ* exactly: no note.
    let rho = rho_star.to_string();
    let mut exact = pair.to_vec();
    exact.extend(["--rho", &rho]);
    assert_eq!(plan_json(&exact)["notes"], serde_json::json!([]));
}
