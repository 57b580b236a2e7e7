//! Closed-form output distributions of every lossless scheme equal the target, on
//! thousands of random pairs of many shapes and sizes.
//!
//! For standard speculative sampling that equality is an identity:
//! `min(target, s) + (1 − Σ min(target, s))·norm(max(0, target − s)) = target` for *every*
//! distribution `s`, so it holds whatever distribution the draft token really comes from.
//! It is kept as documentation ([`standard_output_is_the_target_identity_documented`]);
//! what can fail is checked by
//! [`a_wrong_selection_or_residual_fails_the_closed_form_check`] here and by the sampling
//! tests (sampling_chi_square.rs).
//!
//! k-Seq's and multi-round's closed forms are built the same way, the accepted mass plus
//! the rest of the target as the residual, so `output = target` holds for them whenever
//! the accepted mass stays under the target at every token: what their `output = target`
//! lines check is that condition (for k-Seq, that ρ* is large enough), and
//! [`kseq_below_rho_star_fails_the_closed_form_check`] shows the check fails where it does
//! not hold, as [`multiround_with_a_residual_that_does_not_move_fails_the_closed_form_check`]
//! does for multi-round. Their acceptances are checked against definitions the library
//! does not use.

mod common;

use common::{max_abs_diff, nudged, output_of, pair_zoo, rng};
use specula_core::{Distribution, Greedy, KSeq, MultiRound, Speculative, overlap};

const EXACT: f64 = 1e-9;

/// Documents an identity, checks nothing that can break: the standard closed form is built
/// from `min(target, draft)` and `norm(max(0, target − draft))`, which add up to the target
/// for any `draft`. Kept so that a change of the closed form's shape is noticed; the checks
/// that can fail are in [`a_wrong_selection_or_residual_fails_the_closed_form_check`].
fn standard_output_is_the_target_identity_documented(
    label: &str,
    target: &Distribution,
    draft: &Distribution,
) {
    let standard = Speculative::new(target, draft).unwrap().analysis();
    assert!(
        max_abs_diff(&standard.output, target.probs()) < EXACT,
        "standard {label}"
    );
}

/// k-Seq's acceptance from its definition, independently of the library: each of the `k`
/// drafts passes its own test with probability `b(ρ) = Σ draft·min(1, target/(ρ·draft))`,
/// and the step accepts when any one does.
fn kseq_acceptance_by_definition(t: &[f64], d: &[f64], k: usize, rho: f64) -> f64 {
    let b: f64 = t
        .iter()
        .zip(d)
        .filter(|(_, d)| **d > 0.0)
        .map(|(&t, &d)| d * (t / (rho * d)).min(1.0))
        .sum();
    1.0 - (1.0 - b).powi(i32::try_from(k).unwrap())
}

/// k-Seq's closed form rebuilt from its definition at any ρ, independently of the library:
/// the accepted mass `min(draft, target/ρ)·p_acc/b` plus the rest of the probability on
/// `norm(max(0, target − accepted))`.
fn kseq_output_by_parts(t: &[f64], d: &[f64], k: usize, rho: f64) -> Vec<f64> {
    let b: f64 = t.iter().zip(d).map(|(&t, &d)| d.min(t / rho)).sum();
    let p_acc = 1.0 - (1.0 - b).powi(i32::try_from(k).unwrap());
    let accepted: Vec<f64> = t
        .iter()
        .zip(d)
        .map(|(&t, &d)| d.min(t / rho) * p_acc / b)
        .collect();
    let rest: Vec<f64> = t
        .iter()
        .zip(&accepted)
        .map(|(&t, &a)| (t - a).max(0.0))
        .collect();
    let rest_total: f64 = rest.iter().sum();
    accepted
        .iter()
        .zip(&rest)
        .map(|(&a, &r)| a + (1.0 - p_acc) * r / rest_total)
        .collect()
}

/// Every scheme's closed form on one pair: the standard output (an identity, see the
/// module), k-Seq's and multi-round's outputs (the accepted mass stays under the target),
/// the acceptances against their definitions and greedy against its sampling path.
fn check_all_schemes(label: &str, target: &Distribution, draft: &Distribution) {
    let t = target.probs();
    standard_output_is_the_target_identity_documented(label, target, draft);
    let standard = Speculative::new(target, draft).unwrap().analysis();
    assert!(
        (standard.acceptance - overlap(t, draft.probs())).abs() < EXACT,
        "standard acceptance {label}"
    );
    for k in 1..=4 {
        let scheme = KSeq::new(target, draft, k, None).unwrap();
        let (plan, kseq) = (scheme.plan(), scheme.analysis());
        assert!(
            max_abs_diff(&kseq.output, t) < EXACT,
            "k-Seq k={k} {label}: rho={} diff={}",
            plan.rho,
            max_abs_diff(&kseq.output, t)
        );
        let by_definition = kseq_acceptance_by_definition(t, draft.probs(), k, plan.rho);
        assert!(
            (kseq.acceptance - by_definition).abs() < EXACT,
            "k-Seq acceptance k={k} {label}: {} against {by_definition} by definition",
            kseq.acceptance
        );
        let multi = MultiRound::new(target, draft, k).unwrap().analysis();
        assert!(
            max_abs_diff(&multi.output, t) < EXACT,
            "multi-round k={k} {label}"
        );
    }
    // Greedy's closed form against its own sampling path, with the draft's argmax drafted.
    let greedy = Greedy::new(target).analysis(draft.argmax());
    let verified = Greedy::new(target).sample(draft.argmax());
    let mut one_hot = vec![0.0; t.len()];
    one_hot[verified.token] = 1.0;
    assert_eq!(greedy.output, one_hot, "greedy {label}");
    assert_eq!(
        greedy.acceptance,
        f64::from(u8::from(verified.accepted())),
        "greedy acceptance {label}"
    );
}

#[test]
fn lossless_on_thousands_of_small_and_medium_pairs() {
    let mut r = rng(20261121);
    let mut checked = 0;
    for n in [2, 3, 4, 5, 8, 16, 64, 256] {
        for _ in 0..40 {
            for (label, target, draft) in pair_zoo(&mut r, n) {
                check_all_schemes(&format!("{label} V={n}"), &target, &draft);
                checked += 1;
            }
        }
    }
    assert!(checked >= 2000, "only {checked} pairs");
}

#[test]
fn lossless_at_large_vocabularies() {
    let mut r = rng(50257);
    for n in [5_000, 32_000, 50_000] {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            check_all_schemes(&format!("{label} V={n}"), &target, &draft);
        }
    }
}

/// The `output = target` check of k-Seq has power: rebuilt from its definition, k-Seq's
/// output equals the library's and the target at ρ*, and at a ρ halfway between 1 and ρ*
/// (the acceptance scaled past the target at some token) it misses the target by far more
/// than the check's tolerance.
#[test]
fn kseq_below_rho_star_fails_the_closed_form_check() {
    let mut caught = 0;
    for (at, target, draft, k) in near_miss_cases(41) {
        let (t, d) = (target.probs(), draft.probs());
        let scheme = KSeq::new(&target, &draft, k, None).unwrap();
        let rho_star = scheme.plan().rho_star;
        let right = kseq_output_by_parts(t, d, k, rho_star);
        assert!(
            max_abs_diff(&right, &scheme.analysis().output) < EXACT,
            "{at}"
        );
        assert!(max_abs_diff(&right, t) < EXACT, "{at}");
        let below = kseq_output_by_parts(t, d, k, 1.0 + (rho_star - 1.0) / 2.0);
        assert!(
            max_abs_diff(&below, t) > 1e3 * EXACT,
            "{at}: ρ below ρ* went unnoticed ({})",
            max_abs_diff(&below, t)
        );
        caught += 1;
    }
    assert_eq!(caught, 24);
}

/// The 24 cases the closed-form checks' power is shown on: the Dirichlet pairs of the zoo
/// (concentrations 1 and 5) over 3 to 64 tokens, each with k = 2, 3 and 4 drafts.
fn near_miss_cases(seed: u64) -> Vec<(String, Distribution, Distribution, usize)> {
    let mut r = rng(seed);
    let mut cases = Vec::new();
    for n in [3, 5, 16, 64] {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            if ["dirichlet(1)", "dirichlet(5)"].contains(&label.as_str()) {
                for k in 2..=4 {
                    let at = format!("{label} V={n} k={k}");
                    cases.push((at, target.clone(), draft.clone(), k));
                }
            }
        }
    }
    cases
}

/// Multi-round's closed form rebuilt from its definition, independently of the library:
/// round i tests its draft against `rᵢ` (accepting `min(rᵢ, draft)`), reached when every
/// earlier round rejected; `moved` says whether a rejection moves the residual on,
/// `rᵢ₊₁ = norm(max(0, rᵢ − draft))`, or leaves every round testing against the target.
fn multiround_output_by_parts(t: &[f64], d: &[f64], k: usize, moved: bool) -> Vec<f64> {
    let mut out = vec![0.0; t.len()];
    let (mut current, mut reach) = (t.to_vec(), 1.0);
    for _ in 0..k {
        let mut beta = 0.0;
        for ((o, &r), &dx) in out.iter_mut().zip(&current).zip(d) {
            *o += reach * r.min(dx);
            beta += r.min(dx);
        }
        reach *= 1.0 - beta;
        let rest: Vec<f64> = current
            .iter()
            .zip(d)
            .map(|(r, dx)| (r - dx).max(0.0))
            .collect();
        let mass: f64 = rest.iter().sum();
        if moved && mass > 1e-12 {
            current = rest.iter().map(|r| r / mass).collect();
        }
    }
    let rest: Vec<f64> = current
        .iter()
        .zip(d)
        .map(|(r, dx)| (r - dx).max(0.0))
        .collect();
    let mass: f64 = rest.iter().sum();
    let last = if moved || mass <= 1e-12 {
        current
    } else {
        rest.iter().map(|r| r / mass).collect()
    };
    out.iter().zip(&last).map(|(o, r)| o + reach * r).collect()
}

/// The `output = target` check of multi-round has power: rebuilt from its definition, the
/// output equals the library's and the target, and with a residual that does not move
/// after a rejection (every round tests against the target, the last draw from
/// `norm(max(0, target − draft))`) it misses the target by far more than the check's
/// tolerance.
#[test]
fn multiround_with_a_residual_that_does_not_move_fails_the_closed_form_check() {
    let mut caught = 0;
    for (at, target, draft, k) in near_miss_cases(43) {
        let (t, d) = (target.probs(), draft.probs());
        let right = multiround_output_by_parts(t, d, k, true);
        let library = MultiRound::new(&target, &draft, k).unwrap().analysis();
        assert!(max_abs_diff(&right, &library.output) < EXACT, "{at}");
        assert!(max_abs_diff(&right, t) < EXACT, "{at}");
        let stale = multiround_output_by_parts(t, d, k, false);
        assert!(
            max_abs_diff(&stale, t) > 1e3 * EXACT,
            "{at}: a residual that does not move went unnoticed ({})",
            max_abs_diff(&stale, t)
        );
        caught += 1;
    }
    assert_eq!(caught, 24);
}

/// With one draft ρ* is 1 (k-Seq's own branch for k = 1), and then k-Seq's closed form is
/// standard speculative sampling's term for term, so the two agree exactly.
#[test]
fn kseq_with_one_draft_is_standard_speculative_sampling() {
    let mut r = rng(11);
    for n in [2, 7, 100] {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            let standard = Speculative::new(&target, &draft).unwrap().analysis();
            let scheme = KSeq::new(&target, &draft, 1, None).unwrap();
            let (plan, kseq) = (scheme.plan(), scheme.analysis());
            assert_eq!(plan.rho, 1.0, "{label}");
            assert!(
                (standard.acceptance - kseq.acceptance).abs() < 1e-12,
                "{label}"
            );
            assert!(
                max_abs_diff(&standard.output, &kseq.output) < 1e-12,
                "{label}"
            );
        }
    }
}

/// Past ρ* the accepted mass only shrinks, so the output stays the target (the closed
/// form's condition); what can fail is that the acceptance does not grow.
#[test]
fn larger_rho_than_rho_star_stays_lossless_but_accepts_less() {
    let mut r = rng(5);
    for (label, target, draft) in pair_zoo(&mut r, 12) {
        for k in 2..=4 {
            let scheme = KSeq::new(&target, &draft, k, None).unwrap();
            let (plan, best) = (scheme.plan(), scheme.analysis());
            for factor in [1.0 + 1e-9, 1.5, 3.0] {
                let looser = KSeq::new(&target, &draft, k, Some(plan.rho_star * factor))
                    .unwrap()
                    .analysis();
                assert!(
                    max_abs_diff(&looser.output, target.probs()) < EXACT,
                    "{label} k={k}"
                );
                assert!(
                    looser.acceptance <= best.acceptance + 1e-12,
                    "{label} k={k}"
                );
            }
        }
    }
}

/// The standard closed form's check, `output = target`, fed the sampling path's own parts
/// (the acceptance probability `Speculative::sample` reports for each token and the
/// residual it draws from): it holds when the draft token comes from the draft, and it
/// fails, by far more than its tolerance, when the token comes from a slightly different
/// distribution (the classic bug: drafting before top-k, testing after) or when the
/// residual is the wrong one.
#[test]
fn a_wrong_selection_or_residual_fails_the_closed_form_check() {
    let mut r = rng(31);
    let mut caught = 0;
    for n in [3, 5, 16, 64] {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            if !["dirichlet(1)", "dirichlet(5)"].contains(&label.as_str()) {
                continue;
            }
            let at = format!("{label} V={n}");
            let t = target.probs();
            let standard = Speculative::new(&target, &draft).unwrap();
            let accept: Vec<f64> = (0..n)
                .map(|x| standard.sample(x, &mut r).tests[0].accept_prob)
                .collect();
            let residual = standard.residual_distribution();
            let right = output_of(draft.probs(), &accept, residual.probs());
            assert!(max_abs_diff(&right, t) < EXACT, "{at}: right parts");
            assert!(
                max_abs_diff(&right, &standard.analysis().output) < EXACT,
                "{at}: the closed form"
            );
            let wrong_selection = output_of(&nudged(draft.probs()), &accept, residual.probs());
            assert!(
                max_abs_diff(&wrong_selection, t) > 1e3 * EXACT,
                "{at}: drafts from another distribution went unnoticed ({})",
                max_abs_diff(&wrong_selection, t)
            );
            // norm(max(0, draft − target)): the residual with the roles swapped.
            let swapped = Speculative::new(&draft, &target)
                .unwrap()
                .residual_distribution();
            let wrong_residual = output_of(draft.probs(), &accept, swapped.probs());
            assert!(
                max_abs_diff(&wrong_residual, t) > 1e3 * EXACT,
                "{at}: a wrong residual went unnoticed ({})",
                max_abs_diff(&wrong_residual, t)
            );
            caught += 1;
        }
    }
    assert_eq!(caught, 8);
}
