//! The real sampling code paths, run many times with fixed seeds, fit the target under a
//! chi-square test; and the same test does catch the classic bug (testing against a
//! different draft distribution than the one the token came from).

mod common;

use common::{assert_fits, chi_square_p_value, dirichlet, rng};
use rand::Rng;
use specula_core::{Distribution, Greedy, KSeq, MultiRound, Speculative, TokenOutcome};

/// 200k draws: a 1 % absolute bias on a token of probability ~0.25 shifts the statistic
/// by ~40, far beyond the 1e-4 critical value (~23 at 3 degrees of freedom).
const DRAWS: usize = 200_000;
const ALPHA: f64 = 1e-4;

fn pairs() -> Vec<(Distribution, Distribution)> {
    let mut r = rng(77);
    vec![
        (
            Distribution::from_probs(vec![0.1, 0.2, 0.3, 0.4]).unwrap(),
            Distribution::from_probs(vec![0.5, 0.3, 0.15, 0.05]).unwrap(),
        ),
        (
            Distribution::from_probs(vec![0.7, 0.0, 0.3]).unwrap(),
            Distribution::from_probs(vec![0.1, 0.6, 0.3]).unwrap(),
        ),
        (dirichlet(&mut r, 6, 0.7), dirichlet(&mut r, 6, 0.7)),
    ]
}

/// Runs `scheme` DRAWS times and returns (token counts, accepted count).
fn run(
    n: usize,
    seed: u64,
    mut scheme: impl FnMut(&mut rand_chacha::ChaCha8Rng) -> TokenOutcome,
) -> (Vec<u64>, u64) {
    let mut r = rng(seed);
    let mut counts = vec![0u64; n];
    let mut accepted = 0;
    for _ in 0..DRAWS {
        let outcome = scheme(&mut r);
        counts[outcome.token] += 1;
        accepted += u64::from(outcome.accepted());
    }
    (counts, accepted)
}

fn assert_rate(label: &str, accepted: u64, expected: f64) {
    let rate = accepted as f64 / DRAWS as f64;
    let sd = (expected * (1.0 - expected) / DRAWS as f64)
        .sqrt()
        .max(1e-9);
    assert!(
        (rate - expected).abs() < 5.0 * sd + 1e-12,
        "{label}: acceptance {rate} vs {expected}"
    );
}

#[test]
fn standard_speculative_sampling_fits_the_target() {
    for (i, (target, draft)) in pairs().iter().enumerate() {
        let standard = Speculative::new(target, draft).unwrap();
        let (counts, accepted) = run(target.len(), 100 + i as u64, |r| {
            let x = draft.sample(r);
            standard.sample(x, r)
        });
        assert_fits(
            &format!("standard pair {i}"),
            &counts,
            target.probs(),
            ALPHA,
        );
        let exact = standard.analysis().acceptance;
        assert_rate(&format!("standard pair {i}"), accepted, exact);
    }
}

#[test]
fn kseq_fits_the_target_for_several_k() {
    for (i, (target, draft)) in pairs().iter().enumerate() {
        for k in [2, 3, 5] {
            let kseq = KSeq::new(target, draft, k, None).unwrap();
            let (counts, accepted) = run(target.len(), 200 + i as u64 * 10 + k as u64, |r| {
                let drafts: Vec<usize> = (0..k).map(|_| draft.sample(r)).collect();
                kseq.sample(&drafts, r)
            });
            assert_fits(
                &format!("k-Seq k={k} pair {i}"),
                &counts,
                target.probs(),
                ALPHA,
            );
            assert_rate(
                &format!("k-Seq k={k} pair {i}"),
                accepted,
                kseq.plan().acceptance,
            );
        }
    }
}

#[test]
fn multiround_fits_the_target() {
    for (i, (target, draft)) in pairs().iter().enumerate() {
        for k in [2, 4] {
            let multiround = MultiRound::new(target, draft, k).unwrap();
            let (counts, _) = run(target.len(), 300 + i as u64 * 10 + k as u64, |r| {
                let drafts: Vec<usize> = (0..k).map(|_| draft.sample(r)).collect();
                multiround.sample(&drafts, r)
            });
            assert_fits(
                &format!("multi-round k={k} pair {i}"),
                &counts,
                target.probs(),
                ALPHA,
            );
        }
    }
}

#[test]
fn greedy_always_emits_the_target_argmax() {
    let (target, draft) = &pairs()[0];
    let mut r = rng(4);
    for _ in 0..1000 {
        let x = draft.sample(&mut r);
        let outcome = Greedy::new(target).sample(x);
        assert_eq!(outcome.token, target.argmax());
        assert_eq!(outcome.accepted(), x == target.argmax());
    }
}

#[test]
fn the_test_catches_a_draft_distribution_mismatch() {
    // The classic bug: the token comes from one draft distribution (e.g. before top-k)
    // but is tested against another. The output is then biased and must be caught.
    let (target, draft) = &pairs()[0];
    let sampled_from = Distribution::from_probs(vec![0.45, 0.32, 0.17, 0.06]).unwrap();
    let standard = Speculative::new(target, draft).unwrap();
    let (counts, _) = run(target.len(), 9, |r| {
        let x = sampled_from.sample(r);
        standard.sample(x, r)
    });
    let p = chi_square_p_value(&counts, target.probs());
    assert!(p < ALPHA, "a biased sampler went unnoticed (p = {p})");
}

#[test]
fn the_test_catches_a_one_percent_bias() {
    let target = [0.25, 0.25, 0.25, 0.25];
    let biased = Distribution::from_probs(vec![0.26, 0.24, 0.25, 0.25]).unwrap();
    let mut r = rng(10);
    let mut counts = vec![0u64; 4];
    for _ in 0..DRAWS {
        counts[biased.sample(&mut r)] += 1;
    }
    assert!(chi_square_p_value(&counts, &target) < ALPHA);
    // …while an unbiased run of the same size passes.
    let fair = Distribution::from_probs(target.to_vec()).unwrap();
    let mut counts = vec![0u64; 4];
    for _ in 0..DRAWS {
        counts[fair.sample(&mut r)] += 1;
    }
    assert!(chi_square_p_value(&counts, &target) > ALPHA);
    let _ = r.random::<f64>();
}
