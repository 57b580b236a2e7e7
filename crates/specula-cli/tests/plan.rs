//! End-to-end tests of `specula plan`: the real binary, its JSON, its table and its errors.

use std::process::{Command, Output};

use serde_json::Value;

const TARGET: &str = "0.1,0.2,0.3,0.4";
const DRAFT: &str = "0.5,0.3,0.15,0.05";
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
const COMMON_KEYS: [&str; 10] = [
    "method",
    "target",
    "draft",
    "vocab",
    "normalized",
    "acceptance",
    "output",
    "klTargetOutput",
    "tvTargetOutput",
    "tvTargetDraft",
];

fn specula(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

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

/// Asserts a refused input: non-zero exit, exactly one stderr line, starting with
/// `error: ` and containing `needle`, nothing on stdout, no panic.
fn assert_error(args: &[&str], needle: &str) {
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
fn example<'a>(method: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "plan", "--method", method, "--target", TARGET, "--draft", DRAFT,
    ];
    args.extend_from_slice(extra);
    args
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
}

#[test]
fn greedy_json_is_one_hot_and_reports_infinite_kl_as_null() {
    let json = plan_json("greedy", &[]);
    assert_eq!(json["method"], "greedy");
    // argmax draft = 0 ≠ argmax target = 3
    assert_eq!(num(&json, "acceptance"), 0.0);
    assert_close(
        &vector(&json, "output"),
        &[0.0, 0.0, 0.0, 1.0],
        0.0,
        "output",
    );
    assert!(json["klTargetOutput"].is_null(), "KL is +inf → null");
    assert!((num(&json, "tvTargetOutput") - 0.6).abs() < 1e-12);
    assert_close(
        &vector(&json, "acceptProbs"),
        &[0.0, 0.0, 0.0, 1.0],
        0.0,
        "acceptProbs",
    );
}

#[test]
fn kseq_json_is_lossless_with_rho_at_least_one() {
    let speculative = num(&plan_json("speculative", &[]), "acceptance");
    let json = plan_json("kseq", &[]);
    assert_eq!(json["method"], "kseq");
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
    let json = plan_json("kseq", &["--drafts", "3", "--rho", "2.5"]);
    assert_eq!(json["drafts"], 3);
    assert_eq!(num(&json, "rho"), 2.5);
    assert!(num(&json, "rhoStar") <= 2.5);
    assert_lossless(&json);
    let k1 = plan_json("kseq", &["--drafts", "1"]);
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
        let otm = plan_json("otm", &["--drafts", k]);
        let kseq = plan_json("kseq", &["--drafts", k]);
        assert_eq!(otm["method"], "otm");
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
    let k1 = plan_json("otm", &["--drafts", "1"]);
    assert!(
        (num(&k1, "acceptance") - overlap()).abs() < 1e-9,
        "α₁ = 1 − TV"
    );
    assert_eq!(plan_json("otm", &[])["drafts"], 4, "default --drafts");
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
        ("greedy", &[], &["accept", "inf"]),
        ("kseq", &["--drafts", "3"], &["rho*", "k = 3 drafts"]),
        ("multiround", &[], &["k = 4 drafts", "residual"]),
        ("otm", &[], &["upper bound"]),
        (
            "race",
            &["--drafts", "3"],
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
        // One row per token, with the target probability printed.
        for (x, t) in TARGET_PROBS.iter().enumerate() {
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
        if method == "speculative" {
            let line = stdout.lines().find(|l| l.starts_with("acceptance"));
            assert!(
                line.is_some_and(|l| l.trim_end().ends_with("0.500000")),
                "acceptance line: {line:?}"
            );
        }
    }
}

#[test]
fn bad_numbers_are_refused() {
    let draft = ["--draft", DRAFT];
    let cases: [(&str, &str); 7] = [
        (
            "0.1,abc,0.3,0.4",
            "--target entry 1 must be a number, got \"abc\"",
        ),
        (
            "nan,0.2,0.3,0.4",
            "--target entry 0 must be a probability >= 0, got NaN",
        ),
        (
            "inf,0.2,0.3,0.4",
            "--target entry 0 must be a finite probability >= 0, got Infinity",
        ),
        (
            "-0.1,0.4,0.3,0.4",
            "--target entry 0 must be a finite probability >= 0, got -0.1",
        ),
        (
            "",
            "--target must be comma-separated probabilities, e.g. 0.25,0.75, got an empty list",
        ),
        (
            "0.1,,0.5,0.4",
            "--target entry 1 must be a number, got an empty entry",
        ),
        ("0.1,0.2,0.3,0.3", "normalize to rescale them"),
    ];
    for (target, needle) in cases {
        let mut args = vec!["plan", "--method", "speculative", "--target", target];
        args.extend_from_slice(&draft);
        assert_error(&args, needle);
    }
    assert_error(
        &[
            "plan",
            "--method",
            "speculative",
            "--target",
            "0,0,0,0",
            "--draft",
            DRAFT,
            "--normalize",
        ],
        "zero",
    );
    assert_error(
        &[
            "plan",
            "--method",
            "speculative",
            "--target",
            TARGET,
            "--draft",
            "0.5,0.5,0.5,0.5",
        ],
        "--draft must be probabilities that sum to 1 (within 1e-6), or set normalize to rescale them, got a sum of 2",
    );
}

#[test]
fn not_normalized_message_names_the_flag_and_the_fix() {
    assert_error(
        &[
            "plan",
            "--method",
            "kseq",
            "--target",
            "0.2,0.2,0.3,0.4",
            "--draft",
            DRAFT,
        ],
        "--target must be probabilities that sum to 1 (within 1e-6), or set normalize to rescale them, got a sum of 1.1",
    );
}

#[test]
fn length_mismatch_is_refused() {
    assert_error(
        &[
            "plan",
            "--method",
            "speculative",
            "--target",
            TARGET,
            "--draft",
            "0.5,0.5",
        ],
        "--draft must be as many entries as target (4), got 2 entries",
    );
}

#[test]
fn bad_method_parameters_are_refused() {
    assert_error(
        &example("kseq", &["--drafts", "0"]),
        "--drafts must be a whole number from 1 to 1000000, got 0",
    );
    assert_error(&example("otm", &["--drafts", "-2"]), "--drafts");
    assert_error(&example("multiround", &["--drafts", "two"]), "--drafts");
    assert_error(
        &example("kseq", &["--drafts", "99999999"]),
        "from 1 to 1000000",
    );
    assert_error(
        &example("mentored", &["--kl", "-1"]),
        "--kl must be a finite number >= 0",
    );
    assert_error(&example("mentored", &["--kl=-0.5"]), "--kl");
    assert_error(&example("mentored", &["--kl", "NaN"]), "--kl");
    assert_error(&example("mentored", &["--kl", "inf"]), "--kl");
    assert_error(
        &example("mentored", &["--kl", "lots"]),
        "invalid value 'lots' for '--kl <D>'",
    );
    assert_error(&example("mentored", &[]), "--kl");
    assert_error(&example("kseq", &["--rho", "1"]), "rho*");
    assert_error(&example("kseq", &["--drafts", "3", "--rho", "0.5"]), "rho*");
    assert_error(&example("kseq", &["--rho", "nan"]), "--rho");
    assert_error(&example("kseq", &["--rho", "x"]), "--rho");
}

#[test]
fn otm_too_large_is_refused() {
    assert_error(
        &example("otm", &["--drafts", "60"]),
        "--drafts must be small enough for the OTM linear program",
    );
    assert_error(&example("otm", &["--drafts", "1000"]), "more than 2^128");
    let wide = vec!["0.001"; 1000].join(",");
    assert_error(
        &[
            "plan", "--method", "otm", "--target", &wide, "--draft", &wide, "--drafts", "5",
        ],
        "got 5, which over 1000 tokens needs 1000000000000000000",
    );
}

#[test]
fn flags_that_do_not_apply_are_refused() {
    for (method, flag, value) in [
        ("speculative", "--rho", "2"),
        ("speculative", "--drafts", "2"),
        ("speculative", "--kl", "0.1"),
        ("greedy", "--drafts", "2"),
        ("multiround", "--rho", "2"),
        ("otm", "--rho", "2"),
        ("otm", "--kl", "0.1"),
        ("kseq", "--kl", "0.1"),
        ("mentored", "--drafts", "2"),
        ("mentored", "--rho", "2"),
    ] {
        let mut args = example(method, &[flag, value]);
        if method == "mentored" {
            args.extend_from_slice(&["--kl", "0.1"]);
        }
        assert_error(&args, "does not apply");
    }
}

#[test]
fn clap_usage_errors_do_not_panic() {
    for args in [
        &[
            "plan", "--method", "bogus", "--target", TARGET, "--draft", DRAFT,
        ][..],
        &["plan", "--target", TARGET, "--draft", DRAFT],
        &["plan", "--method", "speculative", "--draft", DRAFT],
        &["frobnicate"],
        &[],
    ] {
        let out = specula(args);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        let errors = stderr.lines().filter(|l| l.starts_with("error:")).count();
        assert!(errors == 1 || args.is_empty(), "{args:?}: {stderr}");
    }
}

#[test]
fn help_documents_the_rules() {
    let out = specula(&["plan", "--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for needle in [
        "--normalize",
        "--drafts",
        "--kl",
        "--rho",
        "mentored",
        "otm",
        "null",
        "rho*",
    ] {
        assert!(help.contains(needle), "help lacks {needle:?}:\n{help}");
    }
}
