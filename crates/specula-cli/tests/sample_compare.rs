//! `specula sample --compare` with the bundled pair: the first character of many runs
//! fits its exact distribution for lossless methods (the target's, prompt lookup's
//! included), for mentored decoding and typical acceptance (their closed forms) and for
//! a planted bug (the bug's closed form); the test has the power to tell the lossy rule
//! and the bug from the target, and a near miss (TV ≈ 0.05) from the target or from the
//! closed form at the same runs and level. Seeds are fixed, so every p-value is the same
//! on every run.

use std::process::Command;

use serde_json::Value;
use specula_engine::lab;
use statrs::distribution::{ChiSquared, ContinuousCDF};

const PROMPT: &str = "ROMEO:\nI";
/// A prompt that repeats itself, so that prompt lookup drafts its first character.
const LOOKUP_PROMPT: &str = "ROMEO:\nAy.\nROMEO:\nAy.\nRO";

fn compare(extra: &[&str]) -> Value {
    compare_after(PROMPT, extra)
}

/// As [`compare`], after `prompt`.
fn compare_after(prompt: &str, extra: &[&str]) -> Value {
    compare_runs(prompt, "3000", extra)
}

/// As [`compare_after`], with `samples` runs.
fn compare_runs(prompt: &str, samples: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "sample",
        "--prompt",
        prompt,
        "--max-tokens",
        "2",
        "--samples",
        samples,
        "--seed",
        "1",
        "--compare",
    ];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(&args)
        .output()
        .expect("specula runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key}: {v}"))
}

fn floats(v: &Value, key: &str) -> Vec<f64> {
    let items = v[key].as_array().unwrap_or_else(|| panic!("{key}: {v}"));
    items
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// The noncentrality `λ = n·Σ(q − p)²/p` of the lab's chi-square at `n` runs drawn from
/// `q` but tested against `p`, over the test's bins (those expecting fewer than 5 counts
/// pooled into one, as `lab::chi_square` pools them): the statistic is then about df + λ.
fn noncentrality(n: f64, p: &[f64], q: &[f64]) -> f64 {
    let (mut lambda, mut pooled_p, mut pooled_q) = (0.0, 0.0, 0.0);
    for (&p, &q) in p.iter().zip(q) {
        if p * n < 5.0 {
            pooled_p += p;
            pooled_q += q;
        } else if p > 0.0 {
            lambda += n * (q - p).powi(2) / p;
        }
    }
    if pooled_p > 0.0 {
        lambda += n * (pooled_q - pooled_p).powi(2) / pooled_p;
    }
    lambda
}

/// The closed form's near miss: the same settings sampled at temperature 0.88, its counts
/// tested against the closed form at temperature 1 (`fit`'s `expected`) by the lab's own
/// chi-square, at the same 3,000 runs and level (p = 1e-4).
fn a_near_miss_is_told_from(extra: &[&str], fit: &Value) {
    let near = compare(&[extra, &["--temperature", "0.88"]].concat());
    assert_eq!(near["exact"], fit["exact"], "{extra:?}: {near}");
    let (p, q) = (floats(fit, "expected"), floats(&near, "expected"));
    let tv = p.iter().zip(&q).map(|(p, q)| (p - q).abs()).sum::<f64>() / 2.0;
    let lambda = noncentrality(3000.0, &p, &q);
    let counts: Vec<u64> = near["counts"]
        .as_array()
        .expect("counts")
        .iter()
        .map(|c| c.as_u64().expect("a count"))
        .collect();
    let (stat, df, p_value) = lab::chi_square(&counts, &p);
    let critical = ChiSquared::new(df as f64).unwrap().inverse_cdf(1.0 - 1e-4);
    eprintln!(
        "{extra:?} at temperature 0.88: TV {tv:.4}, λ {lambda:.1}, χ² {stat:.1} at {df} df, \
         critical {critical:.1} at p = 1e-4"
    );
    assert!(tv < 0.07 && lambda > 50.0, "{extra:?}: TV {tv}, λ {lambda}");
    assert!(
        p_value.is_some_and(|p| p < 1e-4),
        "{extra:?}: temperature 0.88 passed as the closed form: χ² {stat} at {df} df"
    );
}

/// Power at these runs and level: [`a_near_miss_is_told_from_the_target`] at the first
/// character, and cache-reset at the second
/// ([`the_second_character_under_cache_reset_fits_its_closed_form`]).
#[test]
fn lossless_methods_follow_the_target() {
    for extra in [
        &["--method", "speculative", "--gamma", "3"][..],
        &["--method", "spectr", "--tree", "2,2"],
        // The second character under parallel drafting at γ = 1: when the first draft is
        // accepted, round 1 tests the draft drawn early in place of a bonus token.
        &[
            "--method",
            "speculative",
            "--gamma",
            "1",
            "--parallel-draft",
            "--position",
            "2",
        ],
    ] {
        let v = compare(extra);
        assert_eq!(v["exact"], "target", "{extra:?}");
        assert_eq!(
            v["counts"]
                .as_array()
                .map(|c| c.iter().filter_map(Value::as_u64).sum::<u64>()),
            Some(3000)
        );
        assert!(num(&v, "pValue") > 1e-4, "{extra:?}: {v}");
        assert!(num(&v, "tv") < 0.05, "{extra:?}: {v}");
    }
}

/// Power of the closed-form fits at these runs and level: each setting sampled at
/// temperature 0.88 is rejected against its closed form at temperature 1
/// ([`a_near_miss_is_told_from`]). Computed over the test's bins and measured: mentored
/// TV 0.068, λ 66, χ² 60.1 at 9 degrees of freedom against the critical value 33.7
/// (power ≈ 0.998); typical TV 0.044, λ 54, χ² 51.1 at 7 against 29.9 (power ≈ 0.99);
/// shared-uniform TV 0.057, λ 59, χ² 53.4 at 8 against 31.8 (power ≈ 0.99).
#[test]
fn a_lossy_rule_and_a_bug_follow_their_closed_forms_not_the_target() {
    for (extra, exact) in [
        (&["--method", "mentored", "--kl", "0.5"][..], "mentored"),
        (
            &["--method", "typical", "--epsilon", "0.3", "--delta", "1"],
            "typical",
        ),
        (
            &["--method", "speculative", "--bug", "shared-uniform"],
            "shared-uniform",
        ),
    ] {
        let v = compare(extra);
        assert_eq!(v["exact"], exact);
        assert!(num(&v, "tvExactTarget") > 0.05, "{extra:?}: {v}");
        assert!(
            num(&v, "pValue") > 1e-4,
            "{extra:?}: fits its closed form: {v}"
        );
        assert!(
            num(&v, "targetPValue") < 1e-6,
            "{extra:?}: told from the target: {v}"
        );
        a_near_miss_is_told_from(extra, &v);
    }
}

#[test]
fn a_bug_without_a_closed_form_here_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args([
            "sample",
            "--prompt",
            PROMPT,
            "--method",
            "spectr",
            "--bug",
            "shared-uniform",
            "--samples",
            "10",
            "--compare",
        ])
        .output()
        .expect("specula runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--method must be \"speculative\" for the closed form of bug"),
        "{stderr}"
    );
}

/// Prompt lookup after a prompt that repeats itself: the first character is drafted
/// (copied from the earlier "ROMEO:") and still follows the target. Power at these runs
/// and level on this prompt: [`a_near_miss_is_told_from_the_target`].
#[test]
fn prompt_lookup_follows_the_target() {
    let v = compare_after(LOOKUP_PROMPT, &["--method", "lookup", "--gamma", "4"]);
    assert_eq!(v["exact"], "target");
    assert!(num(&v, "pValue") > 1e-4, "{v}");
    assert!(num(&v, "tv") < 0.05, "{v}");
}

/// The near miss of the lossless checks' first character, on both of their prompts, at
/// the same 3,000 runs and level (p = 1e-4): unprocessed-target at temperature 0.9 (the
/// tests and the residual use the target's raw softmax while the drafts come from the
/// processed draft). Computed over the test's bins: TV 0.058 and λ 64 after "ROMEO:\nI",
/// TV 0.044 and λ 69 after the lookup prompt (power ≈ 0.99 at both); measured: χ² 78 at
/// 7 degrees of freedom against the critical value 29.9, and χ² 103 at 8 against 31.8.
#[test]
fn a_near_miss_is_told_from_the_target() {
    for prompt in [PROMPT, LOOKUP_PROMPT] {
        let v = compare_after(
            prompt,
            &[
                "--method",
                "speculative",
                "--gamma",
                "3",
                "--temperature",
                "0.9",
                "--bug",
                "unprocessed-target",
            ],
        );
        assert_eq!(v["exact"], "unprocessed-target", "{v}");
        assert!(num(&v, "tvExactTarget") < 0.06, "a near miss: {v}");
        assert!(num(&v, "targetPValue") < 1e-4, "{prompt:?}: {v}");
    }
}

/// Cache-reset's second character is TV 0.033 from the target's (λ 99 at 3,000 runs):
/// measured χ² 185 at 23 degrees of freedom against the target, over the critical value
/// 57.1 at p = 1e-4, the level at which the target's second character is checked.
#[test]
fn the_second_character_under_cache_reset_fits_its_closed_form() {
    let v = compare(&[
        "--method",
        "speculative",
        "--gamma",
        "2",
        "--bug",
        "cache-reset",
        "--position",
        "2",
    ]);
    assert_eq!(v["exact"], "cache-reset", "{v}");
    assert!(num(&v, "pValue") > 1e-4, "{v}");
    assert!(num(&v, "tvExactTarget") > 0.03, "{v}");
    assert!(num(&v, "targetPValue") < 1e-4, "{v}");
    // The same runs without the bug follow the target's second character.
    let v = compare(&["--method", "speculative", "--gamma", "2", "--position", "2"]);
    assert_eq!(v["exact"], "target", "{v}");
    assert!(num(&v, "pValue") > 1e-4, "{v}");
}

#[test]
fn the_second_character_of_a_lossy_rule_is_refused_naming_the_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args([
            "sample",
            "--prompt",
            PROMPT,
            "--max-tokens",
            "2",
            "--samples",
            "10",
            "--compare",
            "--method",
            "mentored",
            "--kl",
            "0.5",
            "--position",
            "2",
        ])
        .output()
        .expect("specula runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--position"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args([
            "sample",
            "--prompt",
            PROMPT,
            "--samples",
            "1",
            "--position",
            "2",
        ])
        .output()
        .expect("specula runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "--position without --compare is refused"
    );
}

/// A prompt that leaves room for one token in the bundled pair's 256-position window:
/// each run emits its first character from the target (nothing can be drafted), slides
/// the window to its last half, and emits the second after the slid context. The exact
/// distributions follow the same policy, so a planted bug cannot act and both positions
/// fit the target. What this checks is the policy the exact distributions follow
/// (`exact` is the target); at 800 runs the p-values are a wiring check, and the slide's
/// sampling is tested with power in src/decode.rs
/// (`every_method_samples_the_sliding_policy_exactly`, 20,000 samples).
#[test]
fn a_prompt_that_fills_the_window_is_compared_as_the_decoder_slides_it() {
    let prompt: String = "ROMEO:\nBut soft, what light through yonder window breaks?\n"
        .repeat(6)
        .chars()
        .take(255)
        .collect();
    // 800 runs, fewer than elsewhere: each run reads the 255-token prompt afresh.
    let v = compare_runs(
        &prompt,
        "800",
        &["--method", "autoregressive", "--position", "2"],
    );
    assert_eq!(v["exact"], "target", "{v}");
    assert!(num(&v, "pValue") > 1e-4, "{v}");
    assert!(num(&v, "tv") < 0.05, "{v}");
    let v = compare_runs(
        &prompt,
        "800",
        &["--method", "speculative", "--bug", "shared-uniform"],
    );
    assert_eq!(
        v["exact"], "target",
        "nothing is drafted before the slide: {v}"
    );
    assert!(num(&v, "pValue") > 1e-4, "{v}");
}

/// Settings under which the counts cannot be tested, or the runs cannot reach the
/// position: refused, or reported without a p-value and with the reason, never p = 1.
#[test]
fn no_test_is_never_reported_as_a_fit() {
    // One run: every bin pools into one, so there is no chi-square test.
    let out = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args([
            "sample",
            "--prompt",
            PROMPT,
            "--max-tokens",
            "2",
            "--samples",
            "1",
            "--compare",
        ])
        .output()
        .expect("specula runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!(v["pValue"].is_null() && v["targetPValue"].is_null(), "{v}");
    assert_eq!(v["degreesOfFreedom"], 0);
    assert!(v["noTest"].as_str().unwrap().contains("too few"), "{v}");
    // Runs that cannot draft at the first position or reach the second, or that a stop
    // string cuts short: refused naming the flag.
    for (extra, flag) in [
        (&["--max-tokens", "1"][..], "--max-tokens"),
        (&["--max-tokens", "1", "--position", "2"], "--max-tokens"),
        (&["--max-tokens", "2", "--stop", "\n"], "--stop"),
    ] {
        let args = [
            &["sample", "--prompt", PROMPT, "--samples", "10", "--compare"][..],
            extra,
        ]
        .concat();
        let out = Command::new(env!("CARGO_BIN_EXE_specula"))
            .args(&args)
            .output()
            .expect("specula runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}
