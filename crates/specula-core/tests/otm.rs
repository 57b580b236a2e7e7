//! OTM (the exact optimal-transport LP): known facts from the SpecTr paper, exact
//! marginals of the coupling, the real sampling path under a chi-square test, and errors.
//!
//! Observed precision (release build): the coupling's marginals match `draft^{⊗k}` and
//! `target` to about 1e-15; the acceptance matches closed forms to about 1e-11 (the LP
//! solver's feasibility tolerance is 1e-10). The tests assert 1e-12 and 1e-9.

mod common;

use common::{
    assert_fits, assert_rate, chi_square_p_value, dirichlet, max_abs_diff, pair_zoo, rng,
};
use specula_core::{
    Distribution, Error, KSeq, OTM_MAX_VARIABLES, OtmPlan, Residual, Speculative, TokenOutcome,
    otm_upper_bound,
};

/// Tolerance on acceptances (LP precision).
const LP: f64 = 1e-9;
/// Tolerance on marginals (the coupling is repaired to f64 rounding).
const EXACT: f64 = 1e-12;
/// 200k draws catch a 1 % bias at V = 3..4 (see sampling_chi_square.rs).
const DRAWS: usize = 200_000;
const ALPHA: f64 = 1e-4;

fn probs(v: &[f64]) -> Distribution {
    Distribution::from_probs(v.to_vec()).unwrap()
}

/// Every drafts tuple `x^k` over `vocab` tokens, `x₁` most significant (the plan's layout).
fn tuples(vocab: usize, k: usize) -> Vec<Vec<usize>> {
    let count = vocab.pow(u32::try_from(k).unwrap());
    (0..count)
        .map(|mut index| {
            let mut digits = vec![0; k];
            for digit in digits.iter_mut().rev() {
                *digit = index % vocab;
                index /= vocab;
            }
            digits
        })
        .collect()
}

fn product(draft: &Distribution, drafts: &[usize]) -> f64 {
    drafts.iter().map(|&x| draft.prob(x)).product()
}

#[test]
fn alpha_1_is_one_minus_total_variation() {
    let mut r = rng(1);
    for n in 1..=8 {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            let plan = OtmPlan::new(&target, &draft, 1).unwrap();
            let sum_min: f64 = target
                .probs()
                .iter()
                .zip(draft.probs())
                .map(|(t, d)| t.min(*d))
                .sum();
            assert!(
                (plan.acceptance() - sum_min).abs() < LP,
                "{label} n={n}: α₁ = {} vs Σ min = {sum_min}",
                plan.acceptance()
            );
            let standard = Speculative::new(&target, &draft)
                .unwrap()
                .analysis()
                .acceptance;
            assert!((plan.acceptance() - standard).abs() < LP, "{label} n={n}");
            // Lemma 3's bound is exact at k = 1.
            assert!(
                (plan.upper_bound() - sum_min).abs() < 1e-12,
                "{label} n={n}"
            );
        }
    }
}

#[test]
fn alpha_is_monotone_bounded_and_brackets_kseq() {
    let mut r = rng(2);
    for n in [2, 3, 4, 5] {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            let mut previous = 0.0;
            for k in 1..=3 {
                let plan = OtmPlan::new(&target, &draft, k).unwrap();
                let alpha = plan.acceptance();
                let kseq = KSeq::new(&target, &draft, k, None)
                    .unwrap()
                    .plan()
                    .acceptance;
                let kf = k as f64;
                let ratio = 1.0 - (1.0 - 1.0 / kf).powi(i32::try_from(k).unwrap());
                let at = format!("{label} n={n} k={k}");
                assert!(alpha + LP >= previous, "{at}: α not monotone");
                assert!(alpha + LP >= kseq, "{at}: α = {alpha} < k-Seq {kseq}");
                assert!(kseq + LP >= ratio * alpha, "{at}: k-Seq {kseq} < {ratio}·α");
                assert!(alpha <= plan.upper_bound() + LP, "{at}: α above the bound");
                assert!((0.0..=1.0).contains(&alpha), "{at}");
                previous = alpha;
            }
        }
    }
}

/// Appendix B.1 with our names: draft = Ber(0.25), target = Ber(b), token 1 = heads.
/// The plan `π(1^k, 1) = min(d₁^k, b)`, `π(0^k, 0) = min(d₀^k, 1 − b)` accepts every
/// mixed tuple (it holds both tokens), so
/// `α_k = 1 − max(0, d₁^k − b) − max(0, d₀^k − (1 − b))`,
/// which is Lemma 3's bound with W = {1} or W = {0} (the two terms are never both
/// positive, as `d₁^k + d₀^k ≤ 1`).
fn bernoulli_closed_form(b: f64, k: usize) -> f64 {
    let power = i32::try_from(k).unwrap();
    let (heads, tails) = (0.25_f64.powi(power), 0.75_f64.powi(power));
    1.0 - (heads - b).max(0.0) - (tails - (1.0 - b)).max(0.0)
}

#[test]
fn bernoulli_examples_meet_the_upper_bound_and_the_closed_form() {
    let draft = probs(&[0.75, 0.25]);
    for b in [0.1, 0.25, 0.75, 1.0] {
        let target = probs(&[1.0 - b, b]);
        for k in 1..=4 {
            let plan = OtmPlan::new(&target, &draft, k).unwrap();
            let closed = bernoulli_closed_form(b, k);
            assert!(
                (plan.acceptance() - closed).abs() < LP,
                "b={b} k={k}: α = {} vs closed form {closed}",
                plan.acceptance()
            );
            assert!((plan.upper_bound() - closed).abs() < 1e-12, "b={b} k={k}");
        }
    }
    // The closed form by hand, so a slip in it cannot hide.
    let by_hand = [
        (0.1, [0.85, 1.0, 1.0, 1.0]),
        (0.25, [1.0, 1.0, 1.0, 1.0]),
        (0.75, [0.5, 0.6875, 0.828_125, 0.933_593_75]),
        (1.0, [0.25, 0.4375, 0.578_125, 0.683_593_75]),
    ];
    for (b, expected) in by_hand {
        for (k, &e) in (1..=4).zip(&expected) {
            assert!(
                (bernoulli_closed_form(b, k) - e).abs() < 1e-15,
                "b={b} k={k}"
            );
        }
    }
    // As in Figure 5: k-Seq matches OTM at b = 1 and is strictly worse at b = 0.75.
    let one = probs(&[0.0, 1.0]);
    let three_quarters = probs(&[0.25, 0.75]);
    for k in 1..=4 {
        let kseq = KSeq::new(&one, &draft, k, None).unwrap().plan().acceptance;
        assert!(
            (kseq - bernoulli_closed_form(1.0, k)).abs() < LP,
            "b=1 k={k}"
        );
    }
    let kseq = KSeq::new(&three_quarters, &draft, 2, None)
        .unwrap()
        .plan()
        .acceptance;
    assert!(kseq < bernoulli_closed_form(0.75, 2) - 1e-3, "k-Seq {kseq}");
}

#[test]
fn uniform_example_is_optimal_for_kseq() {
    // draft = U(n), target = U(n/r) on the first n/r tokens.
    for (n, r) in [(4, 2), (6, 2), (6, 3), (8, 4)] {
        let draft = Distribution::uniform(n).unwrap();
        let target =
            Distribution::from_weights((0..n).map(|i| if i < n / r { 1.0 } else { 0.0 }).collect())
                .unwrap();
        for k in 1..=3 {
            let rf = r as f64;
            let expected = 1.0 - (1.0 - 1.0 / rf).powi(i32::try_from(k).unwrap());
            let plan = OtmPlan::new(&target, &draft, k).unwrap();
            let kseq = *KSeq::new(&target, &draft, k, None).unwrap().plan();
            let at = format!("n={n} r={r} k={k}");
            assert!(
                (plan.acceptance() - expected).abs() < LP,
                "{at}: α = {}",
                plan.acceptance()
            );
            assert!((plan.upper_bound() - expected).abs() < 1e-12, "{at}");
            assert!((kseq.acceptance - expected).abs() < LP, "{at}: k-Seq");
            assert!((kseq.rho_star - rf * expected).abs() < 1e-9, "{at}: ρ*");
        }
    }
}

/// Checks every row, column and the acceptance of a plan against the definitions, and
/// returns the coupling's column sums (the output distribution) and the mass on its
/// accepting cells (`y` among the drafts), both summed here from the coupling's cells.
fn assert_valid_coupling(
    label: &str,
    plan: &OtmPlan,
    target: &Distribution,
    draft: &Distribution,
) -> (Vec<f64>, f64) {
    let v = plan.vocab();
    assert_eq!(
        plan.coupling().len(),
        v.pow(u32::try_from(plan.k() + 1).unwrap()),
        "{label}"
    );
    assert!(
        plan.coupling().iter().all(|&c| c >= 0.0),
        "{label}: negative entry"
    );
    let mut columns = vec![0.0; v];
    let mut accepted = 0.0;
    for drafts in tuples(v, plan.k()) {
        let row = plan.row(&drafts).unwrap();
        let expected = product(draft, &drafts);
        let sum: f64 = row.iter().sum();
        assert!(
            (sum - expected).abs() < EXACT,
            "{label} {drafts:?}: row {sum} vs {expected}"
        );
        for (y, &c) in row.iter().enumerate() {
            columns[y] += c;
            if drafts.contains(&y) {
                accepted += c;
            }
        }
    }
    assert!(
        max_abs_diff(&columns, target.probs()) < EXACT,
        "{label}: columns"
    );
    assert!(
        max_abs_diff(plan.output(), target.probs()) < EXACT,
        "{label}: output"
    );
    assert!(
        (accepted - plan.acceptance()).abs() < EXACT,
        "{label}: acceptance"
    );
    (columns, accepted)
}

#[test]
fn coupling_marginals_are_exact() {
    let mut r = rng(3);
    for n in [1, 2, 3, 4] {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            for k in 1..=3 {
                let plan = OtmPlan::new(&target, &draft, k).unwrap();
                let analysis = plan.analysis();
                let at = format!("{label} n={n} k={k}");
                let (columns, accepted) = assert_valid_coupling(&at, &plan, &target, &draft);
                // The analysis against sums over the coupling's cells, not the plan's own
                // copies of the same figures.
                assert!(max_abs_diff(&analysis.output, &columns) < EXACT, "{at}");
                assert!((analysis.acceptance - accepted).abs() < EXACT, "{at}");
            }
        }
    }
    // Larger shapes, near the limit's slow corner, still come back exact.
    let target = dirichlet(&mut r, 12, 5.0);
    let draft = dirichlet(&mut r, 12, 5.0);
    let plan = OtmPlan::new(&target, &draft, 3).unwrap();
    assert_valid_coupling("V=12 k=3", &plan, &target, &draft);
}

#[test]
fn upper_bound_above_the_exact_enumeration_limit_is_valid() {
    // V = 24 uses the prefix bound: still above α, and exact at k = 1.
    let mut r = rng(4);
    for c in [0.3, 1.0, 5.0] {
        let target = dirichlet(&mut r, 24, c);
        let draft = dirichlet(&mut r, 24, c);
        let plan = OtmPlan::new(&target, &draft, 2).unwrap();
        assert!(plan.acceptance() <= plan.upper_bound() + LP, "c={c}");
        let sum_min = Speculative::new(&target, &draft)
            .unwrap()
            .analysis()
            .acceptance;
        assert!((otm_upper_bound(&target, &draft, 1).unwrap() - sum_min).abs() < 1e-12);
        let huge_k = otm_upper_bound(&target, &draft, 1 << 40).unwrap();
        assert!((0.0..=1.0).contains(&huge_k));
    }
}

/// Runs the real path DRAWS times: drafts i.i.d. from `sampled_from`, then
/// `OtmPlan::sample`.
/// Returns (token counts, accepted count).
fn run(plan: &OtmPlan, sampled_from: &Distribution, seed: u64) -> (Vec<u64>, u64) {
    let mut r = rng(seed);
    let mut counts = vec![0u64; plan.vocab()];
    let mut accepted = 0;
    let mut drafts = vec![0; plan.k()];
    for _ in 0..DRAWS {
        drafts
            .iter_mut()
            .for_each(|x| *x = sampled_from.sample(&mut r));
        let outcome = plan.sample(&drafts, &mut r);
        assert_outcome_consistent(&outcome, &drafts);
        counts[outcome.token] += 1;
        accepted += u64::from(outcome.accepted());
    }
    (counts, accepted)
}

fn assert_outcome_consistent(outcome: &TokenOutcome, drafts: &[usize]) {
    assert!(outcome.tests.is_empty());
    assert_eq!(
        outcome.accepted_draft,
        drafts.iter().position(|&x| x == outcome.token)
    );
    match (&outcome.accepted_draft, &outcome.residual) {
        (Some(_), None) => {}
        (None, Some(draw)) => assert_eq!(draw.token, outcome.token),
        other => panic!("inconsistent outcome {other:?}"),
    }
}

#[test]
fn sampling_path_fits_the_target() {
    let mut r = rng(5);
    let pairs = [
        (probs(&[0.1, 0.2, 0.3, 0.4]), probs(&[0.5, 0.3, 0.15, 0.05])),
        (probs(&[0.7, 0.0, 0.3]), probs(&[0.1, 0.6, 0.3])),
        (dirichlet(&mut r, 4, 0.7), dirichlet(&mut r, 4, 0.7)),
    ];
    for (i, (target, draft)) in pairs.iter().enumerate() {
        for k in [2, 3] {
            let plan = OtmPlan::new(target, draft, k).unwrap();
            let (counts, accepted) = run(&plan, draft, 100 + 10 * i as u64 + k as u64);
            let label = format!("OTM pair {i} k={k}");
            assert_fits(&label, &counts, target.probs(), ALPHA);
            assert_rate(&label, accepted as usize, DRAWS, plan.acceptance());
        }
    }
}

#[test]
fn sampling_test_catches_drafts_from_the_wrong_distribution() {
    // Drafts drawn from another distribution than the plan's draft bias the output;
    // the same test must notice.
    let target = probs(&[0.1, 0.2, 0.3, 0.4]);
    let draft = probs(&[0.5, 0.3, 0.15, 0.05]);
    let plan = OtmPlan::new(&target, &draft, 2).unwrap();
    let sampled_from = probs(&[0.45, 0.32, 0.17, 0.06]);
    let (counts, _) = run(&plan, &sampled_from, 9);
    let p = chi_square_p_value(&counts, target.probs());
    assert!(p < ALPHA, "a biased sampler went unnoticed (p = {p})");
}

#[test]
fn zero_probability_drafts_fall_back_to_the_target() {
    let target = probs(&[0.2, 0.3, 0.5]);
    let draft = probs(&[0.6, 0.4, 0.0]);
    let plan = OtmPlan::new(&target, &draft, 2).unwrap();
    assert!(plan.row(&[2, 0]).unwrap().iter().all(|&c| c == 0.0));
    let mut r = rng(6);
    let mut counts = [0u64; 3];
    for _ in 0..20_000 {
        let outcome = plan.sample(&[2, 0], &mut r);
        assert_outcome_consistent(&outcome, &[2, 0]);
        counts[outcome.token] += 1;
    }
    assert_fits("fallback", &counts, target.probs(), ALPHA);
}

#[test]
fn errors_are_typed() {
    let target = probs(&[0.5, 0.5]);
    let draft = probs(&[0.25, 0.75]);
    assert_eq!(OtmPlan::new(&target, &draft, 0), Err(Error::NoDrafts));
    assert_eq!(otm_upper_bound(&target, &draft, 0), Err(Error::NoDrafts));
    let three = probs(&[0.2, 0.3, 0.5]);
    let mismatch = Error::LengthMismatch {
        target: 3,
        draft: 2,
    };
    assert_eq!(OtmPlan::new(&three, &draft, 1).unwrap_err(), mismatch);
    assert_eq!(otm_upper_bound(&three, &draft, 1).unwrap_err(), mismatch);

    let plan = OtmPlan::new(&target, &draft, 2).unwrap();
    for (drafts, got) in [(&[0][..], 1), (&[], 0), (&[0, 1, 1], 3)] {
        assert_eq!(
            plan.row(drafts).unwrap_err(),
            Error::DraftCountMismatch { expected: 2, got }
        );
    }
    assert_eq!(
        plan.row(&[0, 2]).unwrap_err(),
        Error::TokenOutOfRange { token: 2, vocab: 2 }
    );
}

/// Drafts without a row in the coupling (another number than k, a token outside the
/// vocabulary) cannot be k draws from the draft: sampling draws from the target and
/// accepts none of them, without panicking.
#[test]
fn draws_without_a_row_fall_back_to_the_target() {
    let target = probs(&[0.5, 0.5]);
    let draft = probs(&[0.25, 0.75]);
    let plan = OtmPlan::new(&target, &draft, 2).unwrap();
    let mut r = rng(7);
    for drafts in [&[0][..], &[], &[0, 1, 1], &[0, 2], &[999, 999]] {
        let mut counts = [0u64; 2];
        for _ in 0..20_000 {
            let outcome = plan.sample(drafts, &mut r);
            assert!(
                !outcome.accepted() && outcome.tests.is_empty(),
                "{drafts:?}"
            );
            let draw = outcome.residual.expect("a draw from the target");
            assert_eq!(
                (draw.residual, draw.token),
                (Residual::Target, outcome.token)
            );
            counts[outcome.token] += 1;
        }
        assert_fits(&format!("{drafts:?}"), &counts, target.probs(), ALPHA);
    }
}

/// Refused before any allocation or solving: a plan of 100^6 variables (or of k =
/// usize::MAX) could not be built at all, so getting the error back is the proof. How fast
/// the refusal is is a benchmark figure (`cargo bench -p specula-core --bench schemes`,
/// "otm refusal"), not a timed test.
#[test]
fn too_large_problems_are_refused_before_solving() {
    let mut r = rng(8);
    let big_target = dirichlet(&mut r, 100, 1.0);
    let big_draft = dirichlet(&mut r, 100, 1.0);
    assert_eq!(
        OtmPlan::new(&big_target, &big_draft, 5).unwrap_err(),
        Error::OtmTooLarge {
            variables: 100u128.pow(6),
            vocab: 100,
            k: 5,
            limit: OTM_MAX_VARIABLES
        }
    );
    let target = probs(&[0.5, 0.5]);
    match OtmPlan::new(&target, &target, usize::MAX) {
        Err(Error::OtmTooLarge { variables, .. }) => assert_eq!(variables, u128::MAX),
        other => panic!("expected OtmTooLarge, got {other:?}"),
    }
    // The largest accepted shape of the form V^(k+1) = limit (V = 8, k = 5) is allowed.
    let u8 = Distribution::uniform(8).unwrap();
    assert_eq!(8u128.pow(6), OTM_MAX_VARIABLES);
    assert!(OtmPlan::new(&u8, &u8, 5).is_ok());
    // One vocabulary: every problem is tiny, whatever k.
    let one = Distribution::uniform(1).unwrap();
    assert!((OtmPlan::new(&one, &one, 12).unwrap().acceptance() - 1.0).abs() < LP);
}

/// Lemma 3's bound over prefixes only: the tokens sorted by increasing target/draft (draft-less
/// tokens last), the largest `draft(W)^k − target(W)` over each prefix W (and W = ∅).
fn prefix_bound(target: &Distribution, draft: &Distribution, k: usize) -> f64 {
    let (t, d) = (target.probs(), draft.probs());
    let ratio = |i: usize| {
        if d[i] > 0.0 {
            t[i] / d[i]
        } else {
            f64::INFINITY
        }
    };
    let mut order: Vec<usize> = (0..t.len()).collect();
    order.sort_by(|&a, &b| ratio(a).total_cmp(&ratio(b)));
    let (mut worst, mut dm, mut tm) = (0.0_f64, 0.0, 0.0);
    for i in order {
        dm += d[i];
        tm += t[i];
        worst = worst.max(dm.min(1.0).powi(k as i32) - tm);
    }
    1.0 - worst
}

/// With i.i.d. drafts the bound is attained: the LP's optimum α_k equals it. And the best
/// subset is always a prefix of the tokens sorted by target/draft (if W holds a and not b,
/// optimality gives target(a)/draft(a) < k·draft(W)^(k−1) < target(b)/draft(b)), so the
/// prefix scan used above [`specula_core::OTM_EXACT_BOUND_VOCAB`] loses nothing.
#[test]
fn the_bound_is_attained_and_its_best_subset_is_a_prefix() {
    let mut r = rng(11);
    for n in [2, 3, 4, 5] {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            for k in 1..=3 {
                let plan = OtmPlan::new(&target, &draft, k).unwrap();
                let at = format!("{label} n={n} k={k}");
                assert!(
                    (plan.acceptance() - plan.upper_bound()).abs() < LP,
                    "{at}: α = {} but the bound is {}",
                    plan.acceptance(),
                    plan.upper_bound()
                );
                let prefix = prefix_bound(&target, &draft, k);
                assert!(
                    (prefix - plan.upper_bound()).abs() < 1e-12,
                    "{at}: prefix {prefix}"
                );
            }
        }
    }
    // Up to the all-subsets limit, at sizes the LP cannot take.
    for n in [8, 13, 20] {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            for k in [2, 4, 8] {
                let all = otm_upper_bound(&target, &draft, k).unwrap();
                let prefix = prefix_bound(&target, &draft, k);
                assert!(
                    (prefix - all).abs() < 1e-12,
                    "{label} n={n} k={k}: prefix {prefix}, all subsets {all}"
                );
            }
        }
    }
}
