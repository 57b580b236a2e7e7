//! Facts about k-Seq from the SpecTr paper, and the ρ* search against plain bisection.

mod common;

use common::{pair_zoo, rng};
use specula_core::{Distribution, Error, KSeq, KSeqPlan, Speculative, overlap_at};

/// k-Seq's parameters for the pair, as its constructor computes them.
fn kseq_plan(
    target: &Distribution,
    draft: &Distribution,
    k: usize,
    rho: Option<f64>,
) -> Result<KSeqPlan, Error> {
    KSeq::new(target, draft, k, rho).map(|kseq| *kseq.plan())
}

/// `f(ρ) = p_acc(ρ) − ρ·b(ρ)` on the full vocabulary.
fn excess(t: &[f64], d: &[f64], k: usize, rho: f64) -> f64 {
    let b = overlap_at(t, d, rho);
    1.0 - (1.0 - b).clamp(0.0, 1.0).powi(k as i32) - rho * b
}

/// The paper's definition, by plain bisection over [1, k] on the full vocabulary.
fn reference_rho_star(t: &[f64], d: &[f64], k: usize) -> f64 {
    let f = |rho: f64| excess(t, d, k, rho);
    let (mut lo, mut hi) = (1.0, k as f64);
    for _ in 0..200 {
        let m = 0.5 * (lo + hi);
        if f(m) > 0.0 { lo = m } else { hi = m }
    }
    hi
}

#[test]
fn uniform_pairs_match_the_closed_form() {
    // draft = U(n), target = U(n/r): ρ* = r(1 − (1 − 1/r)^k), acceptance 1 − (1 − 1/r)^k.
    for (n, r) in [(8usize, 2usize), (12, 3), (12, 4), (64, 8), (1000, 10)] {
        let draft = Distribution::uniform(n).unwrap();
        let support = n / r;
        let target =
            Distribution::from_weights((0..n).map(|i| f64::from(u8::from(i < support))).collect())
                .unwrap();
        let rf = r as f64;
        for k in 1..=8 {
            let plan = kseq_plan(&target, &draft, k, None).unwrap();
            let miss = (1.0 - 1.0 / rf).powi(k as i32);
            assert!(
                (plan.rho_star - rf * (1.0 - miss)).abs() < 1e-9,
                "n={n} r={r} k={k}: {}",
                plan.rho_star
            );
            assert!(
                (plan.acceptance - (1.0 - miss)).abs() < 1e-9,
                "n={n} r={r} k={k}"
            );
        }
    }
}

#[test]
fn fast_rho_star_matches_plain_bisection() {
    let mut r = rng(3);
    for n in [2, 3, 10, 100, 2000] {
        for _ in 0..5 {
            for (label, target, draft) in pair_zoo(&mut r, n) {
                for k in [2, 3, 4, 8, 16] {
                    let plan = kseq_plan(&target, &draft, k, None).unwrap();
                    let (t, d) = (target.probs(), draft.probs());
                    let reference = reference_rho_star(t, d, k);
                    // Where f is very flat near its root, float noise moves the root
                    // itself; then both answers must agree on f to rounding level.
                    let close = (plan.rho_star - reference).abs() <= 1e-12 * reference;
                    let f_fast = excess(t, d, k, plan.rho_star);
                    assert!(
                        close || f_fast.abs() < 1e-14,
                        "{label} V={n} k={k}: fast {} (f = {f_fast:e}) vs reference {reference} (f = {:e})",
                        plan.rho_star,
                        excess(t, d, k, reference)
                    );
                    assert!(plan.rho_star >= 1.0 && plan.rho_star <= k as f64);
                }
            }
        }
    }
}

#[test]
fn acceptance_grows_with_k_and_beats_standard() {
    let mut r = rng(9);
    for (label, target, draft) in pair_zoo(&mut r, 30) {
        let standard = Speculative::new(&target, &draft)
            .unwrap()
            .analysis()
            .acceptance;
        let mut previous = 0.0;
        for k in 1..=10 {
            let a = kseq_plan(&target, &draft, k, None).unwrap().acceptance;
            assert!(a + 1e-12 >= previous, "{label} k={k}");
            assert!(a + 1e-12 >= standard, "{label} k={k}");
            previous = a;
        }
    }
}

#[test]
fn rho_below_rho_star_is_refused() {
    let target = Distribution::from_probs(vec![0.1, 0.2, 0.3, 0.4]).unwrap();
    let draft = Distribution::from_probs(vec![0.5, 0.3, 0.15, 0.05]).unwrap();
    let plan = kseq_plan(&target, &draft, 3, None).unwrap();
    assert!(plan.rho_star > 1.0);
    for bad in [plan.rho_star * 0.99, 0.5, f64::NAN, f64::INFINITY, -1.0] {
        match kseq_plan(&target, &draft, 3, Some(bad)) {
            Err(Error::BadRho { rho_star, .. }) => assert_eq!(rho_star, plan.rho_star),
            other => panic!("rho {bad}: expected BadRho, got {other:?}"),
        }
    }
    assert!(matches!(
        kseq_plan(&target, &draft, 0, None),
        Err(Error::NoDrafts)
    ));
}
