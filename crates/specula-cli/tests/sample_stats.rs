//! `specula sample` used for what it is for: continuations from the speculative methods
//! and from autoregressive decoding, with the bundled models, come from one distribution
//! (a two-sample chi-square over the first two characters, top-k 8), and the same test
//! rejects every method with a deliberate bug planted (`--bug`), and lossy mentored
//! decoding.
//!
//! Power: with n = 5,000 samples on each side the homogeneity test's noncentrality
//! is λ ≈ (n/2)·Σ(p_bug − p)²/p, a quarter of that of the bundled-pair test at 10k runs
//! (specula-host's `bundled_exactness.rs`, whose prompt this is and whose comments
//! derive it), and the statistic is about df + λ against a critical value near 95 at
//! p = 1e-6 (about 36 cells). The near misses' effects scale with how much the two
//! models disagree, so the prompt is the one chosen there for the strongest near
//! misses: at `BRAKENBURY:\nHad ` the first characters are 0.51 apart in total
//! variation under top-k 8 (at `ROMEO:\nWhat` they came within 0.04, and mentored
//! decoding once passed there with p = 3e-5; at `ROMEO:\nHow`, 0.21 apart, the residual
//! bugs of SpecTr and OTM stayed out of reach).

use std::collections::HashMap;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;
use statrs::distribution::{ChiSquared, ContinuousCDF};

const SAMPLES: &str = "5000";
/// Every run samples with these settings.
const SAMPLING: [&str; 2] = ["--top-k", "8"];
/// Every run's prompt.
const PROMPT: &str = "BRAKENBURY:\nHad ";
/// Cells expected below this (under the pooled sample) are merged into one.
const MIN_EXPECTED: f64 = 5.0;

/// The continuations' texts, counted.
fn sample(method: &[&str], seed: &str) -> HashMap<String, u64> {
    let mut args = vec![
        "sample",
        "--prompt",
        PROMPT,
        "--max-tokens",
        "2",
        "--samples",
        SAMPLES,
        "--seed",
        seed,
    ];
    args.extend_from_slice(&SAMPLING);
    args.extend_from_slice(method);
    let out = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut counts = HashMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        *counts
            .entry(line["text"].as_str().unwrap().to_owned())
            .or_insert(0) += 1;
    }
    counts
}

/// p-value of the chi-square test that two samples come from one distribution.
fn homogeneity_p(a: &HashMap<String, u64>, b: &HashMap<String, u64>) -> f64 {
    let (na, nb) = (
        a.values().sum::<u64>() as f64,
        b.values().sum::<u64>() as f64,
    );
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut cells = Vec::new();
    let mut rare = (0.0, 0.0);
    for key in keys {
        let (x, y) = (
            *a.get(key).unwrap_or(&0) as f64,
            *b.get(key).unwrap_or(&0) as f64,
        );
        // The smaller sample's expected count decides whether the cell stands alone.
        if (x + y) * na.min(nb) / (na + nb) < MIN_EXPECTED {
            rare = (rare.0 + x, rare.1 + y);
        } else {
            cells.push((x, y));
        }
    }
    cells.push(rare);
    let stat: f64 = cells
        .iter()
        .map(|&(x, y)| {
            let total = x + y;
            let (ea, eb) = (total * na / (na + nb), total * nb / (na + nb));
            (x - ea).powi(2) / ea + (y - eb).powi(2) / eb
        })
        .sum();
    assert!(cells.len() >= 30, "only {} cells", cells.len());
    1.0 - ChiSquared::new((cells.len() - 1) as f64).unwrap().cdf(stat)
}

/// 5,000 autoregressive continuations, drawn once for every test.
fn reference() -> &'static HashMap<String, u64> {
    static REFERENCE: OnceLock<HashMap<String, u64>> = OnceLock::new();
    REFERENCE.get_or_init(|| sample(&["--method", "autoregressive"], "0"))
}

/// `method`'s samples are homogeneous with the autoregressive ones; with each of `bugs`
/// planted (the same flags and seed, `--bug NAME`) they are not.
fn assert_lossless(method: &[&str], bugs: &[&str]) {
    let p_value = homogeneity_p(reference(), &sample(method, "100000"));
    assert!(p_value > 1e-4, "{method:?}: p-value {p_value}");
    for &bug in bugs {
        let mut flags = method.to_vec();
        flags.extend_from_slice(&["--bug", bug]);
        let p_value = homogeneity_p(reference(), &sample(&flags, "100000"));
        assert!(p_value < 1e-6, "{flags:?} passed: p-value {p_value}");
    }
}

/// λ at n = 5,000: resample-from-target 490, shared-uniform 430, filtered-draft 420;
/// cache-reset emits pairs autoregressive decoding never does (24 % of the samples).
#[test]
fn speculative_samples_match_autoregressive_samples() {
    assert_lossless(
        &["--method", "speculative", "--gamma", "2"],
        &[
            "resample-from-target",
            "shared-uniform",
            "filtered-draft",
            "cache-reset",
        ],
    );
}

/// λ at n = 5,000: resample-from-target 390.
#[test]
fn spectr_samples_match_autoregressive_samples() {
    assert_lossless(
        &["--method", "spectr", "--drafts", "4", "--gamma", "3"],
        &["resample-from-target"],
    );
}

/// λ at n = 5,000: resample-from-target 440, shared-uniform 430; cache-reset emits pairs
/// autoregressive decoding never does (21 % of the samples).
#[test]
fn multiround_tree_samples_match_autoregressive_samples() {
    assert_lossless(
        &["--method", "multiround", "--tree", "2,2"],
        &["resample-from-target", "shared-uniform", "cache-reset"],
    );
}

/// λ at n = 5,000: shared-uniform 630.
#[test]
fn spectr_race_samples_match_autoregressive_samples() {
    assert_lossless(
        &[
            "--method",
            "spectr",
            "--selection",
            "race",
            "--drafts",
            "4",
            "--gamma",
            "3",
        ],
        &["shared-uniform"],
    );
}

/// Mentored decoding keeps KL(target ‖ output) ≤ D at each position, and spends all of
/// it where the models disagree by more: at this prompt the first characters' KL is far
/// above D = 0.05, so the output moves by exactly D there (the second character comes
/// from the target: with two characters asked for, the round drafts one), which is
/// λ = 270 at n = 5,000.
#[test]
fn lossy_mentored_samples_do_not_match() {
    let lossy = sample(&["--method", "mentored", "--kl", "0.05"], "100000");
    let p_value = homogeneity_p(reference(), &lossy);
    assert!(
        p_value < 1e-6,
        "mentored D = 0.05 passed: p-value {p_value}"
    );
}
