//! Hostile input to `plan`: weights that rescale to the exact distribution, no `-0` in
//! its output, and acceptance at most one when rounding sums above it.

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
