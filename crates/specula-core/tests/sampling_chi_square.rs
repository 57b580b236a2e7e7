//! The real sampling code paths, run many times with fixed seeds, fit the target under a
//! chi-square test; and the same test does catch the classic bug (testing against a
//! different draft distribution than the one the token came from).

mod common;

use common::{
    assert_fits, chi_square, chi_square_p_value, critical_value, dirichlet, max_abs_diff,
    noncentrality, rng,
};
use rand::Rng;
use specula_core::{
    Bug, BugScheme, Distribution, DraftDraw, Greedy, KSeq, MultiRound, Speculative, TokenOutcome,
    buggy_sample, draw_draft, total_variation,
};

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

/// Multi-round's output when its drafts come from `selection` but are tested against
/// `draft` (the residuals moved by `draft`, as the code does), from its definition:
/// round i accepts `x` with probability `min(1, rᵢ(x)/draft(x))`, `rᵢ₊₁ = norm(max(0, rᵢ −
/// draft))`, and the last residual is drawn after k rejections.
fn multiround_output(target: &[f64], draft: &[f64], selection: &[f64], k: usize) -> Vec<f64> {
    let mut out = vec![0.0; target.len()];
    let (mut current, mut reach) = (target.to_vec(), 1.0);
    for _ in 0..k {
        let mut accepted = 0.0;
        for (x, o) in out.iter_mut().enumerate() {
            if draft[x] > 0.0 {
                let a = selection[x] * (current[x] / draft[x]).min(1.0);
                *o += reach * a;
                accepted += a;
            }
        }
        reach *= 1.0 - accepted;
        let rest: Vec<f64> = current
            .iter()
            .zip(draft)
            .map(|(r, d)| (r - d).max(0.0))
            .collect();
        let mass: f64 = rest.iter().sum();
        if mass > 1e-12 {
            current = rest.iter().map(|r| r / mass).collect();
        }
    }
    out.iter()
        .zip(&current)
        .map(|(o, r)| o + reach * r)
        .collect()
}

/// Multi-round's `fits the target` check, run at the same draws and level on wrong
/// variants of the real path: drafts drawn from `0.9·draft + 0.1·uniform` but tested
/// against the draft (a near miss: drafting before a filter, testing after), and the
/// planted bug resample-from-target (`buggy_sample`: the last draw from the target
/// instead of the k-th residual). The near miss is rejected wherever it moves the output
/// by λ ≥ 60 (4 of the 6 cases; on pair 1 it moves it by TV 0.003, λ 11), the planted bug
/// everywhere. Measured at 200k draws: the nearest, pair 0 at k = 2 (TV 0.008, λ 86, so
/// power ≈ 0.9998), gives χ² 99 at 3 degrees of freedom against the critical value 21.1
/// at p = 1e-4; resample-from-target gives χ² above 16,000 in every case.
#[test]
fn multiround_with_a_wrong_selection_or_a_planted_bug_misfits_the_target() {
    let mut rejected = 0;
    for (i, (target, draft)) in pairs().iter().enumerate() {
        let n = target.len() as f64;
        let nudged: Vec<f64> = draft.probs().iter().map(|d| 0.9 * d + 0.1 / n).collect();
        let from = Distribution::from_probs(nudged.clone()).unwrap();
        for k in [2, 4] {
            let seed = 300 + i as u64 * 10 + k as u64;
            let multiround = MultiRound::new(target, draft, k).unwrap();
            let (near, _) = run(target.len(), seed, |r| {
                let drafts: Vec<usize> = (0..k).map(|_| from.sample(r)).collect();
                multiround.sample(&drafts, r)
            });
            let bug = Bug::ResampleFromTarget;
            let (planted, _) = run(target.len(), seed, |r| {
                let drafts: Vec<DraftDraw> =
                    (0..k).map(|_| draw_draft(Some(bug), draft, r)).collect();
                buggy_sample(bug, BugScheme::MultiRound, target, draft, &drafts, r)
                    .unwrap()
                    .outcome
            });
            let right = multiround_output(target.probs(), draft.probs(), draft.probs(), k);
            assert!(
                max_abs_diff(&right, target.probs()) < 1e-9,
                "pair {i} k={k}"
            );
            let expected = multiround_output(target.probs(), draft.probs(), &nudged, k);
            let lambda = noncentrality(DRAWS, target.probs(), &expected);
            let tv = total_variation(target.probs(), &expected);
            for (what, counts) in [("nudged drafts", near), ("resample-from-target", planted)] {
                let (stat, df) = chi_square(&counts, target.probs()).unwrap_or((f64::INFINITY, 1));
                let critical = critical_value(df, ALPHA);
                let label = format!(
                    "multi-round k={k} pair {i}, {what} (nudged: TV {tv:.4}, λ {lambda:.0}): χ² {stat:.1} at {df} df, critical {critical:.1}"
                );
                eprintln!("{label}");
                if what == "nudged drafts" && lambda < 60.0 {
                    continue;
                }
                assert!(stat > critical, "{label}: passed");
                rejected += 1;
            }
        }
    }
    assert_eq!(rejected, 10);
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
