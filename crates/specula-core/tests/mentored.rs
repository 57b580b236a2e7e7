//! Mentored decoding: the KL budget is met (and used), acceptance is optimal against a
//! brute-force search, and the limits D = 0 and D ≥ KL(target ‖ draft) are right (the
//! sampling path against the closed form: mentored_sampling.rs).

mod common;

use common::{dirichlet, max_abs_diff, pair_zoo, rng};
use rand::Rng;
use rand_distr::{Distribution as _, Normal};
use specula_core::{
    DEFAULT_KL_TOLERANCE, Distribution, MIN_REJECTION, Mentored, MentoredPlan, SamplingConfig,
    Speculative, TokenAnalysis, kl_divergence,
};

fn probs(v: &[f64]) -> Distribution {
    Distribution::from_probs(v.to_vec()).unwrap()
}

/// The plan for `budget` and its closed form.
fn analysis(
    target: &Distribution,
    draft: &Distribution,
    budget: f64,
) -> (MentoredPlan, TokenAnalysis) {
    let mentored = Mentored::new(target, draft, budget).unwrap();
    (*mentored.plan(), mentored.analysis())
}

/// The plan for `budget`.
fn mentored_plan(target: &Distribution, draft: &Distribution, budget: f64) -> MentoredPlan {
    *Mentored::new(target, draft, budget).unwrap().plan()
}

/// Standard speculative sampling's closed form.
fn standard(target: &Distribution, draft: &Distribution) -> TokenAnalysis {
    Speculative::new(target, draft).unwrap().analysis()
}

/// Budgets spread over the interesting range for a pair: fractions of KL(t ‖ d) when it
/// is finite, plus absolute values (some above KL(t ‖ d)).
fn budgets(target: &Distribution, draft: &Distribution) -> Vec<f64> {
    let full = kl_divergence(target.probs(), draft.probs());
    let mut out = vec![1e-6, 1e-3, 0.05, 0.5, 2.0, 20.0];
    if full.is_finite() {
        out.extend([0.01, 0.1, 0.5, 0.9, 0.999, 1.5].map(|f| f * full));
    }
    out
}

/// Checks one plan and its closed form: a distribution, KL ≤ D(1 + 1e-3) and within the
/// tolerance of D unless every draft is accepted, and self-consistent numbers.
fn check(
    label: &str,
    target: &Distribution,
    draft: &Distribution,
    budget: f64,
) -> (MentoredPlan, Vec<f64>) {
    let mentored = Mentored::new(target, draft, budget).unwrap();
    let (plan, exact) = (*mentored.plan(), mentored.analysis());
    let out = &exact.output;
    let sum: f64 = out.iter().sum();
    assert!(
        (sum - 1.0).abs() < 1e-9 && out.iter().all(|&x| x >= 0.0),
        "{label}: output {out:?}"
    );
    assert!(
        plan.alpha >= 0.0 && plan.alpha <= 1.0 && plan.beta >= 1.0,
        "{label}: {plan:?}"
    );
    assert!(
        (plan.acceptance - exact.acceptance).abs() < 1e-9,
        "{label}: {plan:?} vs {}",
        exact.acceptance
    );
    let kl = kl_divergence(target.probs(), out);
    let full = kl_divergence(target.probs(), draft.probs());
    assert!(
        kl <= budget * (1.0 + 1e-3) + 1e-12,
        "{label}: KL {kl} > D {budget}"
    );
    if full > budget * (1.0 + 1e-9) {
        assert!(!plan.accepts_all, "{label}");
        // The rejection is kept at least MIN_REJECTION, or all of standard's when smaller.
        let standard: f64 = target
            .probs()
            .iter()
            .zip(draft.probs())
            .map(|(t, d)| (d - t).max(0.0))
            .sum();
        let floor = MIN_REJECTION.min(standard);
        assert!(
            1.0 - plan.acceptance >= floor * (1.0 - 1e-6) - 1e-16,
            "{label}: {plan:?}"
        );
        let band = budget * DEFAULT_KL_TOLERANCE + 1e-12;
        assert!(plan.kl <= budget + band, "{label}: plan KL {}", plan.kl);
        // Held at the smallest rejection, the KL may stay below the budget.
        if 1.0 - plan.acceptance > floor * (1.0 + 1e-6) + 1e-16 {
            assert!(
                kl >= budget * (1.0 - 1e-3) - 1e-12,
                "{label}: KL {kl} well below D {budget}"
            );
            assert!(
                plan.kl >= budget - 2.0 * band,
                "{label}: plan KL {}",
                plan.kl
            );
        }
    } else if full <= budget {
        assert!(
            plan.accepts_all && plan.acceptance == 1.0,
            "{label}: {plan:?}"
        );
    }
    // Rounding in `1 − Σ d·r` moves tiny output entries, so the KL of the closed form can
    // differ from the plan's in the fifth digit on extreme pairs.
    assert!(
        (plan.kl - kl).abs() <= 1e-9 + 1e-5 * budget,
        "{label}: plan KL {} vs {kl}",
        plan.kl
    );
    // r in [0, 1]; s is a distribution.
    for (i, r) in mentored.accept_probs().into_iter().enumerate() {
        assert!((0.0..=1.0).contains(&r), "{label}: r[{i}] = {r}");
    }
    // β matches α: the residual's mass Σ max(0, t/β − d) is the rejection 1 − R.
    if !plan.accepts_all {
        let mass: f64 = (target.probs().iter().zip(draft.probs()))
            .map(|(t, d)| (t / plan.beta - d).max(0.0))
            .sum();
        let rejection = 1.0 - plan.acceptance;
        assert!(
            (mass - rejection).abs() <= 1e-6 * rejection + 1e-12,
            "{label}: mass {mass} vs {rejection}"
        );
    }
    let s = mentored.residual_distribution();
    assert!(s.probs().iter().all(|&x| x >= 0.0));
    assert!((s.probs().iter().sum::<f64>() - 1.0).abs() < 1e-9);
    (plan, exact.output)
}

#[test]
fn kl_budget_is_met_and_used_on_many_pairs() {
    let mut r = rng(1);
    for n in [1, 2, 3, 5, 16, 100, 1000] {
        for round in 0..12 {
            for (name, target, draft) in pair_zoo(&mut r, n) {
                for budget in budgets(&target, &draft) {
                    check(
                        &format!("n={n} {round} {name} D={budget}"),
                        &target,
                        &draft,
                        budget,
                    );
                }
            }
        }
    }
}

#[test]
fn kl_budget_is_met_at_a_large_lm_like_vocabulary() {
    let (target, draft) = lm_like(2, 32_000, 1.0);
    for budget in budgets(&target, &draft) {
        check(&format!("lm-like D={budget}"), &target, &draft, budget);
    }
}

/// A plain reference: bisection on α over (0, 1], with the rejection, β (by its own
/// bisection) and the output built token by token at every step. O(V) per evaluation.
fn reference_acceptance(t: &[f64], d: &[f64], budget: f64) -> f64 {
    let rejection =
        |alpha: f64| -> f64 { t.iter().zip(d).map(|(a, b)| (b - a / alpha).max(0.0)).sum() };
    let beta_for = |mass: f64| -> f64 {
        let (mut lo, mut hi) = (
            1.0_f64,
            t.iter().zip(d).map(|(a, b)| a / b).fold(1.0, f64::max),
        );
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            let b: f64 = t.iter().zip(d).map(|(a, x)| (a / mid - x).max(0.0)).sum();
            if b > mass { lo = mid } else { hi = mid }
        }
        hi
    };
    let kl = |alpha: f64| -> f64 {
        let beta = beta_for(rejection(alpha));
        let out: Vec<f64> = t
            .iter()
            .zip(d)
            .map(|(&a, &b)| {
                if a / b <= alpha {
                    a / alpha
                } else if a / b >= beta {
                    a / beta
                } else {
                    b
                }
            })
            .collect();
        kl_divergence(t, &out)
    };
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if kl(mid) > budget { lo = mid } else { hi = mid }
    }
    1.0 - rejection(hi)
}

#[test]
fn matches_a_plain_bisection_reference() {
    let mut r = rng(11);
    for n in [2, 10, 200] {
        for c in [0.3, 1.0, 4.0] {
            let (target, draft) = (dirichlet(&mut r, n, c), dirichlet(&mut r, n, c));
            // The reference covers α > 0 only: no token the target rules out.
            if target
                .probs()
                .iter()
                .zip(draft.probs())
                .any(|(&a, &b)| a == 0.0 || b == 0.0)
            {
                continue;
            }
            let full = kl_divergence(target.probs(), draft.probs());
            for f in [0.02, 0.2, 0.5, 0.8] {
                let budget = f * full;
                let plan = mentored_plan(&target, &draft, budget);
                let expected = reference_acceptance(target.probs(), draft.probs(), budget);
                assert!(
                    (plan.acceptance - expected).abs() < 1e-5,
                    "n={n} c={c} D={budget}: {} vs reference {expected}",
                    plan.acceptance
                );
            }
        }
    }
}

/// An LM-like pair over `n` tokens: Gaussian target logits, the draft's the target's
/// plus noise of scale `noise` (small noise: ratios crowd near 1).
fn lm_like(seed: u64, n: usize, noise: f64) -> (Distribution, Distribution) {
    let mut r = rng(seed);
    let (logit, jitter) = (
        Normal::new(0.0, 2.5).unwrap(),
        Normal::new(0.0, noise).unwrap(),
    );
    let target_logits: Vec<f64> = (0..n).map(|_| logit.sample(&mut r)).collect();
    let draft_logits: Vec<f64> = target_logits
        .iter()
        .map(|l| l + jitter.sample(&mut r))
        .collect();
    let config = SamplingConfig::default();
    (
        Distribution::from_logits(&target_logits, &config).unwrap(),
        Distribution::from_logits(&draft_logits, &config).unwrap(),
    )
}

#[test]
fn crowded_ratios_are_resolved() {
    // A draft within 0.1–1% of the target: every ratio falls in the few coarse buckets
    // next to 1, and the solver has to bucket them again (from the arrays for the large
    // vocabulary, from copies for the small one).
    for (seed, n, noise) in [
        (20, 2000, 1e-3),
        (21, 2000, 1e-2),
        (22, 20_000, 1e-3),
        (23, 20_000, 1e-2),
    ] {
        let (target, draft) = lm_like(seed, n, noise);
        let full = kl_divergence(target.probs(), draft.probs());
        for f in [0.01, 0.1, 0.5, 0.9] {
            let budget = f * full;
            let (plan, _) = check(
                &format!("n={n} noise={noise} D={budget}"),
                &target,
                &draft,
                budget,
            );
            if n <= 2000 {
                let expected = reference_acceptance(target.probs(), draft.probs(), budget);
                assert!(
                    (plan.acceptance - expected).abs() < 1e-7,
                    "n={n} noise={noise}: {} vs {expected}",
                    plan.acceptance
                );
            }
        }
    }
}

#[test]
fn many_equal_ratios_are_handled() {
    // Two ratio values shared by thousands of tokens: no bucketing can split them.
    for n in [10, 6000] {
        let weights: Vec<f64> = (0..n).map(|i| if i < n / 2 { 1.0 } else { 3.0 }).collect();
        let target = Distribution::from_weights(weights).unwrap();
        let draft = Distribution::uniform(n).unwrap();
        let full = kl_divergence(target.probs(), draft.probs());
        for f in [0.1, 0.5, 0.9] {
            check(&format!("n={n} D={}", f * full), &target, &draft, f * full);
        }
    }
}

#[test]
fn acceptance_grows_with_the_budget() {
    let mut r = rng(3);
    for n in [2, 4, 30, 500] {
        for (name, target, draft) in pair_zoo(&mut r, n) {
            let full = kl_divergence(target.probs(), draft.probs());
            let top = if full.is_finite() { 1.2 * full } else { 10.0 };
            let mut last = 0.0;
            for i in 0..=60 {
                let budget = top * f64::from(i) / 60.0;
                let plan = mentored_plan(&target, &draft, budget);
                assert!(
                    plan.acceptance >= last - 1e-12,
                    "n={n} {name} D={budget}: {} < {last}",
                    plan.acceptance
                );
                last = plan.acceptance;
            }
        }
    }
}

#[test]
fn zero_budget_is_standard_speculative_sampling() {
    let mut r = rng(4);
    for n in [1, 2, 7, 64, 2000] {
        for (name, target, draft) in pair_zoo(&mut r, n) {
            let (plan, exact) = analysis(&target, &draft, 0.0);
            let standard = standard(&target, &draft);
            assert!(
                (exact.acceptance - standard.acceptance).abs() < 1e-9,
                "{name}"
            );
            assert!(
                (plan.acceptance - standard.acceptance).abs() < 1e-9,
                "{name}"
            );
            assert!(
                max_abs_diff(&exact.output, &standard.output) < 1e-9,
                "{name}"
            );
            assert!(
                plan.accepts_all || (plan.alpha == 1.0 && plan.beta == 1.0),
                "{name}: {plan:?}"
            );
        }
    }
}

/// Two tokens: α in [0.625, 1] gives KL = ½ ln(½α²/(α − ½)), so α = e^{2D} − √(e^{4D} − e^{2D}).
#[test]
fn two_token_closed_form() {
    let (target, draft) = (probs(&[0.5, 0.5]), probs(&[0.8, 0.2]));
    for budget in [0.01_f64, 0.1, 0.2] {
        let e = (2.0 * budget).exp();
        let alpha = e - (e * e - e).sqrt();
        let plan = mentored_plan(&target, &draft, budget);
        assert!(
            (plan.alpha - alpha).abs() < 1e-6,
            "D={budget}: {} vs {alpha}",
            plan.alpha
        );
        let rejection = 0.8 - 0.5 / alpha;
        assert!(
            (plan.beta - 0.5 / (rejection + 0.2)).abs() < 1e-5,
            "D={budget}: {plan:?}"
        );
        assert!(
            (plan.acceptance - (1.0 - rejection)).abs() < 1e-6,
            "D={budget}: {plan:?}"
        );
    }
}

/// A token the target rules out: α alone stops at acceptance 0.6 with KL 0, so every
/// budget uses α = 0 and accepts the third token sometimes. With rejection mass A the
/// output is ((0.6 + A)/2, (0.6 + A)/2, 0.4 − A), so KL = −ln(0.6 + A) and A = e^{−D} − 0.6.
#[test]
fn tokens_the_target_rules_out_are_accepted_once_everything_else_is() {
    let (target, draft) = (probs(&[0.5, 0.5, 0.0]), probs(&[0.3, 0.3, 0.4]));
    for budget in [0.05_f64, 0.2, 0.4] {
        let rejection = (-budget).exp() - 0.6;
        let (plan, exact) = analysis(&target, &draft, budget);
        assert_eq!(plan.alpha, 0.0, "{plan:?}");
        assert!(
            (plan.acceptance - (1.0 - rejection)).abs() < 1e-6,
            "D={budget}: {plan:?}"
        );
        assert!(
            (plan.zero_target_accept - (1.0 - rejection / 0.4)).abs() < 1e-6,
            "{plan:?}"
        );
        let expected = [
            (0.6 + rejection) / 2.0,
            (0.6 + rejection) / 2.0,
            0.4 - rejection,
        ];
        assert!(
            max_abs_diff(&exact.output, &expected) < 1e-6,
            "{:?}",
            exact.output
        );
        assert!(plan.acceptance > standard(&target, &draft).acceptance);
    }
}

#[test]
fn infinite_ratios_are_handled() {
    // Token 0 has target mass the draft lacks: KL(t ‖ d) = ∞, so no budget accepts all.
    let (target, draft) = (probs(&[0.3, 0.5, 0.2]), probs(&[0.0, 0.6, 0.4]));
    for budget in [1e-4, 0.1, 1.0, 10.0, 200.0] {
        let (plan, out) = check(&format!("D={budget}"), &target, &draft, budget);
        assert!(!plan.accepts_all && plan.acceptance < 1.0 && plan.beta.is_finite());
        assert!(out[0] > 0.0);
    }
    // Disjoint supports: only a rejection can emit target tokens; A = e^{−D}.
    let (target, draft) = (probs(&[0.6, 0.4, 0.0]), probs(&[0.0, 0.0, 1.0]));
    for budget in [0.1_f64, 1.0, 10.0] {
        let (plan, _) = check(&format!("disjoint D={budget}"), &target, &draft, budget);
        assert!(
            (plan.acceptance - (1.0 - (-budget).exp())).abs() < 1e-6,
            "{plan:?}"
        );
    }
    // e^{−30} is below the smallest rejection kept: the plan stops there, under budget.
    let (plan, out) = check("disjoint D=30", &target, &draft, 30.0);
    assert!(
        (1.0 - plan.acceptance - MIN_REJECTION).abs() < 1e-15,
        "{plan:?}"
    );
    assert!(kl_divergence(target.probs(), &out) < 30.0);
}

#[test]
fn a_looser_tolerance_is_honoured() {
    let mut r = rng(7);
    for _ in 0..50 {
        let (target, draft) = (dirichlet(&mut r, 40, 0.5), dirichlet(&mut r, 40, 0.5));
        let budget = 0.3 * kl_divergence(target.probs(), draft.probs());
        let exact = Mentored::with_tolerance(&target, &draft, budget, 0.05)
            .unwrap()
            .analysis();
        let kl = kl_divergence(target.probs(), &exact.output);
        assert!(
            kl <= budget * (1.0 + 1e-9) && kl >= budget * 0.95 * (1.0 - 1e-9),
            "{kl} vs {budget}"
        );
    }
}

/// Acceptance and KL(target ‖ output) of an arbitrary scheme (r, s).
fn objective(t: &[f64], d: &[f64], r: &[f64], s: &[f64]) -> (f64, f64) {
    let acceptance: f64 = d.iter().zip(r).map(|(a, b)| a * b).sum();
    let out: Vec<f64> = (0..t.len())
        .map(|i| d[i] * r[i] + s[i] * (1.0 - acceptance))
        .collect();
    (acceptance, kl_divergence(t, &out))
}

fn normalise(v: &mut [f64]) {
    let sum: f64 = v.iter().sum();
    if sum > 0.0 {
        v.iter_mut().for_each(|x| *x /= sum);
    } else {
        v.fill(1.0 / v.len() as f64);
    }
}

/// The best feasible acceptance a derivative-free search finds in the original
/// variables: random points, then a random-walk hill climb with shrinking steps from the
/// best feasible one (the standard scheme, KL 0, is always feasible).
fn brute_force(t: &[f64], d: &[f64], budget: f64, r: &mut impl Rng) -> f64 {
    let n = t.len();
    let mut best_r: Vec<f64> = t
        .iter()
        .zip(d)
        .map(|(a, b)| if *b > 0.0 { (a / b).min(1.0) } else { 0.0 })
        .collect();
    let mut best_s: Vec<f64> = t.iter().zip(d).map(|(a, b)| (a - b).max(0.0)).collect();
    normalise(&mut best_s);
    let mut best = objective(t, d, &best_r, &best_s).0;
    for _ in 0..4000 {
        let rr: Vec<f64> = (0..n).map(|_| r.random::<f64>()).collect();
        let mut ss: Vec<f64> = (0..n).map(|_| -r.random::<f64>().ln()).collect();
        normalise(&mut ss);
        let (acc, kl) = objective(t, d, &rr, &ss);
        if kl <= budget && acc > best {
            (best, best_r, best_s) = (acc, rr, ss);
        }
    }
    let normal = Normal::new(0.0, 1.0).unwrap();
    let mut step = 0.3;
    for i in 0..30_000 {
        if i % 1000 == 999 {
            step *= 0.7;
        }
        let rr: Vec<f64> = best_r
            .iter()
            .map(|x| (x + step * normal.sample(r)).clamp(0.0, 1.0))
            .collect();
        let mut ss: Vec<f64> = best_s
            .iter()
            .map(|x| (x + step * normal.sample(r)).max(0.0))
            .collect();
        normalise(&mut ss);
        let (acc, kl) = objective(t, d, &rr, &ss);
        if kl <= budget && acc > best {
            (best, best_r, best_s) = (acc, rr, ss);
        }
    }
    best
}

#[test]
fn acceptance_is_optimal_against_a_brute_force_search() {
    let mut r = rng(8);
    let mut close = 0;
    let mut cases = 0;
    for n in [2, 3, 4] {
        for round in 0..6 {
            let mut pairs: Vec<(String, Distribution, Distribution)> = vec![(
                "dirichlet".into(),
                dirichlet(&mut r, n, 1.0),
                dirichlet(&mut r, n, 1.0),
            )];
            if round < 2 {
                pairs.extend(
                    pair_zoo(&mut r, n)
                        .into_iter()
                        .filter(|(name, ..)| name == "sparse" || name == "one-hot target"),
                );
            }
            for (name, target, draft) in pairs {
                let full = kl_divergence(target.probs(), draft.probs());
                for budget in [0.02, 0.2, if full.is_finite() { 0.7 * full } else { 1.0 }] {
                    let label = format!("n={n} {name} D={budget}");
                    let (plan, _) = check(&label, &target, &draft, budget);
                    let found = brute_force(target.probs(), draft.probs(), budget, &mut r);
                    assert!(
                        found <= plan.acceptance + 1e-4,
                        "{label}: search found {found} > {}",
                        plan.acceptance
                    );
                    cases += 1;
                    if found >= plan.acceptance - 5e-3 {
                        close += 1;
                    }
                }
            }
        }
    }
    // The search is strong enough to mean something: it usually gets near the optimum.
    assert!(
        close * 10 >= cases * 9,
        "search reached the solver's acceptance in only {close}/{cases} cases"
    );
}
