//! Shared helpers for the statistical tests: seeded RNGs, random distribution pairs,
//! and a chi-square goodness-of-fit test.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution as _, Gamma};
use specula_core::{Bug, BugPair, BugScheme, Distribution, buggy_sample, draw_draft};
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// A seeded ChaCha RNG.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A Dirichlet(concentration, …, concentration) draw over `n` tokens, built from gammas so
/// tiny concentrations (very peaked draws) work; entries that underflow stay 0.
pub fn dirichlet(rng: &mut impl Rng, n: usize, concentration: f64) -> Distribution {
    let gamma = Gamma::new(concentration, 1.0).expect("valid gamma");
    loop {
        let w: Vec<f64> = (0..n).map(|_| gamma.sample(rng)).collect();
        if w.iter().sum::<f64>() > 0.0 {
            return Distribution::from_weights(w).expect("valid weights");
        }
    }
}

/// A distribution with support on a random subset of about `fraction` of the tokens.
pub fn sparse(rng: &mut impl Rng, n: usize, fraction: f64) -> Distribution {
    loop {
        let w: Vec<f64> = (0..n)
            .map(|_| {
                if rng.random::<f64>() < fraction {
                    rng.random::<f64>()
                } else {
                    0.0
                }
            })
            .collect();
        if w.iter().sum::<f64>() > 0.0 {
            return Distribution::from_weights(w).expect("valid weights");
        }
    }
}

/// Pairs (target, draft) of many shapes over `n` tokens: Dirichlet at several
/// concentrations, sparse, one-hot, identical, and disjoint supports.
pub fn pair_zoo(rng: &mut impl Rng, n: usize) -> Vec<(String, Distribution, Distribution)> {
    let mut pairs = Vec::new();
    for c in [0.05, 0.3, 1.0, 5.0] {
        pairs.push((
            format!("dirichlet({c})"),
            dirichlet(rng, n, c),
            dirichlet(rng, n, c),
        ));
    }
    pairs.push(("sparse".into(), sparse(rng, n, 0.3), sparse(rng, n, 0.3)));
    let a = rng.random_range(0..n);
    let b = rng.random_range(0..n);
    pairs.push((
        "one-hot".into(),
        Distribution::one_hot(n, a).unwrap(),
        Distribution::one_hot(n, b).unwrap(),
    ));
    pairs.push((
        "one-hot target".into(),
        Distribution::one_hot(n, a).unwrap(),
        dirichlet(rng, n, 1.0),
    ));
    pairs.push((
        "one-hot draft".into(),
        dirichlet(rng, n, 1.0),
        Distribution::one_hot(n, b).unwrap(),
    ));
    let same = dirichlet(rng, n, 0.5);
    pairs.push(("identical".into(), same.clone(), same));
    if n >= 2 {
        let split = rng.random_range(1..n);
        let left: Vec<f64> = (0..n)
            .map(|i| if i < split { 1.0 + i as f64 } else { 0.0 })
            .collect();
        let right: Vec<f64> = (0..n).map(|i| if i >= split { 1.0 } else { 0.0 }).collect();
        pairs.push((
            "disjoint".into(),
            Distribution::from_weights(left).unwrap(),
            Distribution::from_weights(right).unwrap(),
        ));
    }
    pairs
}

/// Largest absolute difference between two probability vectors.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Pearson's chi-square goodness-of-fit p-value of `counts` against `expected`
/// probabilities. Bins with an expected count below 5 are pooled into one; categories
/// with zero expected probability must have zero counts (else p = 0).
pub fn chi_square_p_value(counts: &[u64], expected: &[f64]) -> f64 {
    match chi_square(counts, expected) {
        None => 0.0,
        Some((_, 0)) => 1.0,
        Some((stat, df)) => ChiSquared::new(df as f64).unwrap().sf(stat),
    }
}

/// The statistic and degrees of freedom behind [`chi_square_p_value`] (0 degrees of
/// freedom when fewer than two bins are left); `None` when a category of zero expected
/// probability has counts.
pub fn chi_square(counts: &[u64], expected: &[f64]) -> Option<(f64, usize)> {
    assert_eq!(counts.len(), expected.len());
    let n: u64 = counts.iter().sum();
    let n = n as f64;
    let mut stat = 0.0;
    let mut bins = 0usize;
    let (mut pooled_obs, mut pooled_exp) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(expected) {
        let e = p * n;
        if p == 0.0 {
            if c > 0 {
                return None;
            }
            continue;
        }
        if e < 5.0 {
            pooled_obs += c as f64;
            pooled_exp += e;
        } else {
            stat += (c as f64 - e).powi(2) / e;
            bins += 1;
        }
    }
    if pooled_exp > 0.0 {
        stat += (pooled_obs - pooled_exp).powi(2) / pooled_exp;
        bins += 1;
    }
    Some((stat, bins.saturating_sub(1)))
}

/// The noncentrality `λ = n·Σ(q − p)²/p` of [`chi_square_p_value`] at `n` draws when the
/// counts come from `q` but are tested against `p`, over the test's own bins (expected
/// counts below 5 pooled); the statistic is then about `df + λ`. Infinite when `q` puts
/// mass where `p` has none (the test then rejects outright).
pub fn noncentrality(n: usize, p: &[f64], q: &[f64]) -> f64 {
    assert_eq!(p.len(), q.len());
    let n = n as f64;
    let (mut lambda, mut pooled_p, mut pooled_q) = (0.0, 0.0, 0.0);
    for (&p, &q) in p.iter().zip(q) {
        if p == 0.0 {
            if q > 0.0 {
                return f64::INFINITY;
            }
        } else if p * n < 5.0 {
            pooled_p += p;
            pooled_q += q;
        } else {
            lambda += n * (q - p).powi(2) / p;
        }
    }
    // A pooled bin still expected below 5 counts is left out: the chi-square
    // approximation does not hold there, so λ is not credited with it.
    if pooled_p * n >= 5.0 {
        lambda += n * (pooled_q - pooled_p).powi(2) / pooled_p;
    }
    lambda
}

/// The chi-square statistic a test at level `alpha` with `df` degrees of freedom rejects
/// above.
pub fn critical_value(df: usize, alpha: f64) -> f64 {
    ChiSquared::new(df as f64).unwrap().inverse_cdf(1.0 - alpha)
}

/// Asserts a chi-square p-value is not suspiciously small.
pub fn assert_fits(label: &str, counts: &[u64], expected: &[f64], alpha: f64) {
    let p = chi_square_p_value(counts, expected);
    assert!(
        p > alpha,
        "{label}: chi-square p = {p:.3e} <= {alpha:e}\ncounts   = {counts:?}\nexpected = {expected:?}"
    );
}

/// Asserts that `accepted` successes in `draws` trials fit the probability `expected`:
/// within five standard deviations (plus rounding).
pub fn assert_rate(label: &str, accepted: usize, draws: usize, expected: f64) {
    let rate = accepted as f64 / draws as f64;
    let sd = (expected * (1.0 - expected) / draws as f64).sqrt();
    assert!(
        (rate - expected).abs() < 5.0 * sd + 1e-12,
        "{label}: empirical acceptance {rate} vs {expected}"
    );
}

/// The output distribution of one selection-and-test step, in closed form, from its parts:
/// a draft of token `x` is chosen with probability `selection[x]` and accepted with
/// probability `accept[x]`; otherwise a token is drawn from `residual`. Computed here, not
/// by the library, so that a selection the library's closed forms do not assume can be fed
/// in.
pub fn output_of(selection: &[f64], accept: &[f64], residual: &[f64]) -> Vec<f64> {
    assert_eq!(selection.len(), accept.len());
    assert_eq!(selection.len(), residual.len());
    let accepted: Vec<f64> = selection.iter().zip(accept).map(|(s, a)| s * a).collect();
    let rejection = 1.0 - accepted.iter().sum::<f64>();
    accepted
        .iter()
        .zip(residual)
        .map(|(a, r)| a + rejection * r)
        .collect()
}

/// `0.9·p + 0.1·uniform`: a selection distribution slightly off the one a scheme assumes.
pub fn nudged(p: &[f64]) -> Vec<f64> {
    let n = p.len() as f64;
    p.iter().map(|&x| 0.9 * x + 0.1 / n).collect()
}

/// Counts per token of `draws` tokens from standard speculative sampling with `bug`,
/// through the real paths: the drafts from `pair.draft` ([`draw_draft`]), the tests
/// against `pair.tested_target` and `pair.tested_draft` ([`buggy_sample`]).
pub fn buggy_speculative_counts(bug: Bug, pair: &BugPair<'_>, draws: usize, seed: u64) -> Vec<u64> {
    let mut r = rng(seed);
    let mut counts = vec![0_u64; pair.target.len()];
    for _ in 0..draws {
        let drawn = draw_draft(Some(bug), pair.draft, &mut r);
        let sample = buggy_sample(
            bug,
            BugScheme::Speculative,
            pair.tested_target,
            pair.tested_draft,
            &[drawn],
            &mut r,
        )
        .unwrap();
        counts[sample.outcome.token] += 1;
    }
    counts
}
