//! Mentored decoding's sampling path: it matches the closed form by chi-square, accepts
//! every draft when the budget allows it, records each test as the plan decides it, and
//! refuses bad inputs when the plan is built.

mod common;

use common::{assert_fits, assert_rate, chi_square_p_value, max_abs_diff, pair_zoo, rng};
use specula_core::{Distribution, Error, Mentored, Residual, kl_divergence};

fn probs(v: &[f64]) -> Distribution {
    Distribution::from_probs(v.to_vec()).unwrap()
}

/// Draws `x ~ draft` and runs the real sampling path `draws` times; returns token counts
/// and the number of accepted drafts.
fn run(
    target: &Distribution,
    draft: &Distribution,
    budget: f64,
    draws: usize,
    seed: u64,
) -> (Vec<u64>, u64) {
    let mut g = rng(seed);
    let mentored = Mentored::new(target, draft, budget).unwrap();
    let mut counts = vec![0u64; target.len()];
    let mut accepted = 0;
    for _ in 0..draws {
        let x = draft.sample(&mut g);
        let outcome = mentored.sample(x, &mut g);
        let test = &outcome.tests[0];
        assert_eq!(test.accepted, outcome.accepted());
        assert!(test.uniform.is_some_and(|u| (0.0..1.0).contains(&u)));
        if outcome.accepted() {
            accepted += 1;
            assert_eq!(outcome.token, x);
        } else {
            assert!(matches!(
                outcome.residual.as_ref().unwrap().residual,
                Residual::Mentored { .. } | Residual::Target
            ));
        }
        counts[outcome.token] += 1;
    }
    (counts, accepted)
}

#[test]
fn sampling_path_matches_the_closed_form() {
    let draws = 200_000;
    let cases = [
        (
            "dirichlet-like",
            vec![0.1, 0.2, 0.3, 0.4],
            vec![0.4, 0.3, 0.2, 0.1],
            0.1,
        ),
        (
            "peaked",
            vec![0.7, 0.1, 0.1, 0.05, 0.05],
            vec![0.2, 0.2, 0.2, 0.2, 0.2],
            0.3,
        ),
        (
            "target rules out",
            vec![0.5, 0.5, 0.0],
            vec![0.3, 0.3, 0.4],
            0.2,
        ),
        ("draft lacks", vec![0.3, 0.5, 0.2], vec![0.0, 0.6, 0.4], 0.5),
    ];
    for (seed, (name, t, d, budget)) in cases.into_iter().enumerate() {
        let (target, draft) = (probs(&t), probs(&d));
        let mentored = Mentored::new(&target, &draft, budget).unwrap();
        let (plan, exact) = (mentored.plan(), mentored.analysis());
        let (counts, accepted) = run(&target, &draft, budget, draws, 100 + seed as u64);
        assert_fits(name, &counts, &exact.output, 1e-4);
        assert_rate(name, accepted as usize, draws, plan.acceptance);
        // Power: moving one percentage point of mass from the last token to the first is caught.
        let mut shifted = exact.output.clone();
        let (a, b) = (0, shifted.len() - 1);
        let delta = 0.01_f64.min(shifted[b]).max(0.0);
        if delta > 0.0 {
            shifted[a] += delta;
            shifted[b] -= delta;
            assert!(
                chi_square_p_value(&counts, &shifted) < 1e-4,
                "{name}: a 1% shift went unnoticed"
            );
        }
    }
}

#[test]
fn budget_above_kl_of_the_draft_accepts_every_draft() {
    let mut r = rng(5);
    for n in [1, 3, 50] {
        for (name, target, draft) in pair_zoo(&mut r, n) {
            let full = kl_divergence(target.probs(), draft.probs());
            if !full.is_finite() {
                continue;
            }
            for budget in [full, full * 1.01 + 1e-9, full + 5.0] {
                let mentored = Mentored::new(&target, &draft, budget).unwrap();
                let (plan, exact) = (mentored.plan(), mentored.analysis());
                assert!(
                    plan.accepts_all && plan.acceptance == 1.0,
                    "{name}: {plan:?}"
                );
                assert!(max_abs_diff(&exact.output, draft.probs()) < 1e-12, "{name}");
                for (i, p) in mentored.accept_probs().into_iter().enumerate() {
                    assert_eq!(
                        p,
                        if draft.prob(i) > 0.0 { 1.0 } else { 0.0 },
                        "{name}: token {i}"
                    );
                }
                let mut g = rng(6);
                for _ in 0..50 {
                    let x = draft.sample(&mut g);
                    let outcome = mentored.sample(x, &mut g);
                    assert_eq!((outcome.token, outcome.accepted()), (x, true), "{name}");
                }
            }
        }
    }
}

#[test]
fn trace_records_the_test() {
    let (target, draft) = (probs(&[0.1, 0.2, 0.3, 0.4]), probs(&[0.4, 0.3, 0.2, 0.1]));
    let mentored = Mentored::new(&target, &draft, 0.05).unwrap();
    let plan = mentored.plan();
    let mut g = rng(9);
    for x in [0, 1, 2, 3, 0, 1] {
        let outcome = mentored.sample(x, &mut g);
        let test = &outcome.tests[0];
        let (t, d) = (target.prob(x), draft.prob(x));
        assert_eq!(
            (test.token, test.target_prob, test.draft_prob, test.ratio),
            (x, t, d, t / d)
        );
        assert_eq!(test.accept_prob, (t / (plan.alpha * d)).min(1.0));
        let u = test.uniform.unwrap();
        assert_eq!(test.accepted, u * plan.alpha * d < t);
    }
}

#[test]
fn bad_inputs_are_typed_errors() {
    let (target, draft) = (probs(&[0.5, 0.5]), probs(&[0.9, 0.1]));
    for budget in [-1e-9, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(
            matches!(
                Mentored::new(&target, &draft, budget),
                Err(Error::BadKlBudget(_))
            ),
            "{budget}"
        );
    }
    for tolerance in [0.0, 1.0, -0.5, f64::NAN] {
        assert!(matches!(
            Mentored::with_tolerance(&target, &draft, 0.1, tolerance),
            Err(Error::BadTolerance(_))
        ));
    }
    let three = probs(&[0.2, 0.3, 0.5]);
    assert!(matches!(
        Mentored::new(&target, &three, 0.1),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        Mentored::new(&three, &draft, 0.1),
        Err(Error::LengthMismatch { .. })
    ));
    // -0.0 is a valid (zero) budget.
    assert_eq!(
        Mentored::new(&target, &draft, -0.0)
            .unwrap()
            .plan()
            .acceptance,
        0.6
    );
}

/// A token the draft cannot have proposed (one outside the vocabulary included) is
/// rejected, without panicking.
#[test]
fn impossible_draft_tokens_are_rejected() {
    let (target, draft) = (probs(&[0.5, 0.5, 0.0]), probs(&[0.9, 0.1, 0.0]));
    let mentored = Mentored::new(&target, &draft, 0.1).unwrap();
    let mut g = rng(10);
    for x in [2, 3, usize::MAX] {
        for _ in 0..100 {
            let outcome = mentored.sample(x, &mut g);
            assert!(!outcome.accepted() && outcome.token < 2, "{x}");
        }
    }
}
