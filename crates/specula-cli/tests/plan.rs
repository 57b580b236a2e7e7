//! End-to-end tests of `specula plan`: the real binary, its JSON and its table for every
//! method (its refusals are in plan_errors.rs).

mod plan_support;

use plan_support::{DRAFT, TARGET, example, specula, text};
use serde_json::Value;

const TARGET_PROBS: [f64; 4] = [0.1, 0.2, 0.3, 0.4];
const DRAFT_PROBS: [f64; 4] = [0.5, 0.3, 0.15, 0.05];

/// `Σ min(target, draft)` on the example = 0.1 + 0.2 + 0.15 + 0.05 = 0.5 (not 0.6:
/// min(0.3, 0.15) = 0.15 and min(0.4, 0.05) = 0.05).
fn overlap() -> f64 {
    TARGET_PROBS
        .iter()
        .zip(DRAFT_PROBS)
        .map(|(t, d)| t.min(d))
        .sum()
}

/// Keys every JSON report has.
const COMMON_KEYS: [&str; 11] = [
    "method",
    "target",
    "draft",
    "vocab",
    "normalized",
    "notes",
    "acceptance",
    "output",
    "klTargetOutput",
    "tvTargetOutput",
    "tvTargetDraft",
];

/// Runs `plan --json` on the spec's example with `extra` flags; asserts success.
fn plan_json(method: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "plan", "--method", method, "--target", TARGET, "--draft", DRAFT, "--json",
    ];
    args.extend_from_slice(extra);
    json_of(&args)
}

fn json_of(args: &[&str]) -> Value {
    let out = specula(args);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    assert!(stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e}): {}", text(&out.stdout)));
    assert!(json.is_object(), "{args:?}: not a JSON object");
    for key in COMMON_KEYS {
        assert!(
            json.get(key).is_some(),
            "{args:?}: missing key {key}: {json}"
        );
    }
    json
}

fn num(json: &Value, key: &str) -> f64 {
    json[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number: {}", json[key]))
}

fn vector(json: &Value, key: &str) -> Vec<f64> {
    json[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not an array: {}", json[key]))
        .iter()
        .map(|v| {
            v.as_f64()
                .unwrap_or_else(|| panic!("{key} has a non-number: {v}"))
        })
        .collect()
}

fn assert_close(actual: &[f64], expected: &[f64], tol: f64, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a - e).abs() <= tol,
            "{what}[{i}] = {a}, expected {e} (±{tol})"
        );
    }
}

/// A probability vector: entries in [0, 1], summing to 1.
fn assert_distribution(values: &[f64], what: &str) {
    assert!(
        values.iter().all(|v| (0.0..=1.0 + 1e-12).contains(v)),
        "{what}: {values:?}"
    );
    let sum: f64 = values.iter().sum();
    assert!((sum - 1.0).abs() < 1e-9, "{what} sums to {sum}");
}

/// The checks every lossless method passes: output = target, KL = TV = 0, echo of inputs.
fn assert_lossless(json: &Value) {
    assert_close(&vector(json, "output"), &TARGET_PROBS, 1e-9, "output");
    assert!(num(json, "klTargetOutput") <= 1e-9);
    assert!(num(json, "tvTargetOutput") <= 1e-9);
    assert_close(&vector(json, "target"), &TARGET_PROBS, 1e-15, "target echo");
    assert_close(&vector(json, "draft"), &DRAFT_PROBS, 1e-15, "draft echo");
    let acceptance = num(json, "acceptance");
    assert!(
        (0.0..=1.0 + 1e-12).contains(&acceptance),
        "acceptance {acceptance}"
    );
}

#[test]
fn speculative_json_is_exact() {
    let json = plan_json("speculative", &[]);
    assert_eq!(json["method"], "speculative");
    assert_eq!(json["vocab"], 4);
    assert_eq!(json["normalized"], false);
    assert!((overlap() - 0.5).abs() < 1e-15);
    assert!((num(&json, "acceptance") - overlap()).abs() < 1e-12); // Σ min(target, draft)
    assert_lossless(&json);
    assert!((num(&json, "tvTargetDraft") - (1.0 - overlap())).abs() < 1e-12);
    assert_close(
        &vector(&json, "acceptProbs"),
        &[0.2, 2.0 / 3.0, 1.0, 1.0],
        1e-12,
        "acceptProbs",
    );
    // norm(max(0, target − draft)) = (0, 0, 0.15, 0.35) / 0.5
    assert_close(
        &vector(&json, "residual"),
        &[0.0, 0.0, 0.3, 0.7],
        1e-12,
        "residual",
    );
    assert!(json.get("drafts").is_none());
    assert!(json.get("rho").is_none());
    assert!(json.get("selection").is_none());
    assert_eq!(json["temperature"], 1.0);
}

#[test]
fn greedy_is_speculative_at_temperature_zero_and_reports_infinite_kl_as_null() {
    let json = plan_json("speculative", &["--temperature", "0"]);
    assert_eq!(json["method"], "speculative");
    assert_eq!(json["temperature"], 0.0);
    // Both one-hot on their argmax: draft 0 ≠ target 3, so the draft is rejected.
    assert_eq!(num(&json, "acceptance"), 0.0);
    let target_argmax = [0.0, 0.0, 0.0, 1.0];
    assert_close(&vector(&json, "target"), &target_argmax, 0.0, "target");
    assert_close(&vector(&json, "draft"), &[1.0, 0.0, 0.0, 0.0], 0.0, "draft");
    assert_close(&vector(&json, "output"), &target_argmax, 0.0, "output");
    // Exact with respect to the temperature-0 target; the two argmaxes share nothing.
    assert_eq!(num(&json, "tvTargetOutput"), 0.0);
    assert!(json["klTargetDraft"].is_null(), "KL is +inf → null");
    assert_eq!(num(&json, "tvTargetDraft"), 1.0);
    assert_close(
        &vector(&json, "acceptProbs"),
        &target_argmax,
        0.0,
        "acceptProbs",
    );
    assert_close(&vector(&json, "residual"), &target_argmax, 0.0, "residual");
}

#[test]
fn every_method_plans_the_processed_pair() {
    let json = plan_json("multiround", &["--temperature", "0.5", "--top-k", "3"]);
    assert_eq!(
        (json["temperature"].as_f64(), json["topK"].as_u64()),
        (Some(0.5), Some(3))
    );
    // Top-k drops token 0 of the target and token 3 of the draft; squared and rescaled.
    let target = vector(&json, "target");
    assert_eq!(target[0], 0.0);
    assert!((target[3] - 16.0 / 29.0).abs() < 1e-12, "{target:?}");
    assert_close(
        &vector(&json, "output"),
        &target,
        1e-9,
        "lossless on the processed pair",
    );
}

#[test]
fn kseq_json_is_lossless_with_rho_at_least_one() {
    let speculative = num(&plan_json("speculative", &[]), "acceptance");
    let json = plan_json("spectr", &[]);
    assert_eq!(json["method"], "spectr");
    assert_eq!(json["selection"], "kseq", "the default selection");
    assert_eq!(json["drafts"], 4, "default --drafts");
    assert_lossless(&json);
    let (rho, rho_star) = (num(&json, "rho"), num(&json, "rhoStar"));
    assert!(
        rho >= 1.0 && rho_star >= 1.0 && rho <= 4.0,
        "rho {rho}, rho* {rho_star}"
    );
    assert_eq!(rho, rho_star);
    assert!(num(&json, "overlap") > 0.0);
    assert!(num(&json, "acceptance") >= speculative - 1e-12);
    assert_distribution(&vector(&json, "residual"), "residual");
    assert_eq!(vector(&json, "acceptProbs").len(), 4);
}

#[test]
fn kseq_honours_drafts_and_a_valid_rho_override() {
    let json = plan_json(
        "spectr",
        &["--selection", "kseq", "--drafts", "3", "--rho", "2.5"],
    );
    assert_eq!(json["drafts"], 3);
    assert_eq!(num(&json, "rho"), 2.5);
    assert!(num(&json, "rhoStar") <= 2.5);
    assert_lossless(&json);
    let k1 = plan_json("spectr", &["--drafts", "1"]);
    assert!(
        (num(&k1, "acceptance") - overlap()).abs() < 1e-12,
        "k = 1 is standard SD"
    );
}

#[test]
fn multiround_json_is_lossless() {
    let json = plan_json("multiround", &[]);
    assert_eq!(json["method"], "multiround");
    assert_eq!(json["drafts"], 4);
    assert_lossless(&json);
    assert!(num(&json, "acceptance") >= overlap() - 1e-12);
    assert_distribution(&vector(&json, "residual"), "residual");
    let five = plan_json("multiround", &["--drafts", "5"]);
    assert_eq!(five["drafts"], 5);
    assert!(num(&five, "acceptance") >= num(&json, "acceptance") - 1e-12);
}

#[test]
fn otm_beats_kseq_and_stays_under_its_bound() {
    for k in ["1", "2", "3"] {
        let otm = plan_json("spectr", &["--selection", "otm", "--drafts", k]);
        let kseq = plan_json("spectr", &["--drafts", k]);
        assert_eq!(
            (&otm["method"], &otm["selection"]),
            (&"spectr".into(), &"otm".into())
        );
        assert_eq!(otm["drafts"].to_string(), k);
        assert_close(&vector(&otm, "output"), &TARGET_PROBS, 1e-9, "otm output");
        let (acceptance, bound) = (num(&otm, "acceptance"), num(&otm, "upperBound"));
        assert!(
            acceptance >= num(&kseq, "acceptance") - 1e-9,
            "k = {k}: otm {acceptance} < kseq {}",
            num(&kseq, "acceptance")
        );
        assert!(
            bound >= acceptance - 1e-9,
            "k = {k}: bound {bound} < {acceptance}"
        );
        assert!(bound <= 1.0 + 1e-12);
    }
    let k1 = plan_json("spectr", &["--selection", "otm", "--drafts", "1"]);
    assert!(
        (num(&k1, "acceptance") - overlap()).abs() < 1e-9,
        "α₁ = 1 − TV"
    );
    assert_eq!(
        plan_json("spectr", &["--selection", "otm"])["drafts"],
        4,
        "default --drafts"
    );
}

#[test]
fn mentored_with_zero_budget_is_speculative() {
    let speculative = plan_json("speculative", &[]);
    let json = plan_json("mentored", &["--kl", "0"]);
    assert_eq!(json["method"], "mentored");
    assert_eq!(num(&json, "klBudget"), 0.0);
    assert!(
        (num(&json, "acceptance") - num(&speculative, "acceptance")).abs() < 1e-9,
        "{} vs {}",
        num(&json, "acceptance"),
        overlap()
    );
    assert_close(&vector(&json, "output"), &TARGET_PROBS, 1e-9, "output");
    assert_eq!(json["acceptsAll"], false);
}

#[test]
fn mentored_respects_the_kl_budget() {
    let mut last = overlap() - 1e-9;
    for budget in [0.001, 0.01, 0.05, 0.2, 0.5] {
        let flag = budget.to_string();
        let json = plan_json("mentored", &["--kl", &flag]);
        let kl = num(&json, "klTargetOutput");
        assert!(kl <= budget * (1.0 + 1e-3), "D = {budget}: KL {kl}");
        let (alpha, beta) = (num(&json, "alpha"), num(&json, "beta"));
        assert!(
            (0.0..=1.0).contains(&alpha) && beta >= 1.0,
            "alpha {alpha}, beta {beta}"
        );
        let acceptance = num(&json, "acceptance");
        assert!(
            acceptance >= last,
            "D = {budget}: acceptance {acceptance} fell below {last}"
        );
        last = acceptance;
        assert_distribution(&vector(&json, "output"), "output");
        assert_distribution(&vector(&json, "residual"), "residual");
        let accept = vector(&json, "acceptProbs");
        assert_eq!(accept.len(), 4);
        assert!(accept.iter().all(|r| (0.0..=1.0).contains(r)));
        // Σ draft·r = acceptance
        let from_probs: f64 = accept.iter().zip(DRAFT_PROBS).map(|(r, d)| r * d).sum();
        assert!(
            (from_probs - acceptance).abs() < 1e-6,
            "{from_probs} vs {acceptance}"
        );
    }
}

#[test]
fn mentored_with_a_large_budget_accepts_everything() {
    // KL(target ‖ draft) ≈ 0.80 nats.
    let json = plan_json("mentored", &["--kl", "1"]);
    assert_eq!(json["acceptsAll"], true);
    assert!((num(&json, "acceptance") - 1.0).abs() < 1e-9);
    assert_close(
        &vector(&json, "output"),
        &DRAFT_PROBS,
        1e-9,
        "output = draft",
    );
    assert!(num(&json, "klTargetDraft") <= 1.0);
}

#[test]
fn normalize_rescales_weights() {
    let json = json_of(&[
        "plan",
        "--method",
        "speculative",
        "--target",
        "1,2,3,4",
        "--draft",
        "10, 6, 3, 1",
        "--normalize",
        "--json",
    ]);
    assert_eq!(json["normalized"], true);
    assert_close(&vector(&json, "target"), &TARGET_PROBS, 1e-15, "target");
    assert_close(&vector(&json, "draft"), &DRAFT_PROBS, 1e-15, "draft");
    assert!((num(&json, "acceptance") - overlap()).abs() < 1e-12);
}

#[test]
fn table_mode_is_readable_for_every_method() {
    for (method, extra, needles) in [
        ("speculative", &[][..], &["accept", "residual"][..]),
        (
            "speculative",
            &["--temperature", "0"],
            &["greedy verification", "applied to both", "inf"],
        ),
        (
            "spectr",
            &["--drafts", "3"],
            &["selection kseq", "rho*", "k = 3 drafts"],
        ),
        ("multiround", &[], &["k = 4 drafts", "residual"]),
        (
            "spectr",
            &["--selection", "otm"],
            &["selection otm", "upper bound"],
        ),
        (
            "spectr",
            &["--selection", "race", "--drafts", "3"],
            &["upper bound", "k = 3 drafts", "residual"],
        ),
        (
            "mentored",
            &["--kl", "0.1"],
            &["alpha", "beta", "KL budget D"],
        ),
        (
            "typical",
            &["--epsilon", "0.2", "--delta", "0.5"],
            &[
                "H(target), nats",
                "threshold min(eps, delta e^-H)",
                "residual",
            ],
        ),
    ] {
        let out = specula(&example(method, extra));
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{method}: {}", text(&out.stderr));
        assert!(out.stderr.is_empty());
        assert!(stdout.starts_with(&format!("method: {method}")), "{stdout}");
        for needle in [
            "token",
            "target",
            "draft",
            "output",
            "acceptance",
            "KL(target || output)",
            "TV(target, output)",
        ]
        .iter()
        .chain(needles)
        {
            assert!(
                stdout.contains(needle),
                "{method}: no {needle:?} in\n{stdout}"
            );
        }
        // One row per token, with the target probability printed (one-hot at
        // temperature 0).
        let greedy = [0.0, 0.0, 0.0, 1.0];
        let shown = if extra.contains(&"--temperature") {
            &greedy
        } else {
            &TARGET_PROBS
        };
        for (x, t) in shown.iter().enumerate() {
            let row = format!("{x:>5}  {t:>10.6}");
            assert!(
                stdout.contains(&row),
                "{method}: no row {row:?} in\n{stdout}"
            );
        }
        assert!(
            serde_json::from_str::<Value>(&stdout).is_err(),
            "table, not JSON"
        );
        if method == "speculative" && extra.is_empty() {
            let line = stdout.lines().find(|l| l.starts_with("acceptance"));
            assert!(
                line.is_some_and(|l| l.trim_end().ends_with("0.500000")),
                "acceptance line: {line:?}"
            );
        }
    }
}
