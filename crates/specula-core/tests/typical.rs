//! Typical acceptance's sampling path against its closed form, by chi-square over a zoo of
//! pairs, with a power check: the closed form differs from the target where the rule
//! accepts a draft the target would not have produced in that proportion, and the test
//! sees the difference.

mod common;

use common::{assert_fits, assert_rate, chi_square_p_value, pair_zoo, rng};
use specula_core::{Distribution, Typical, total_variation};

/// Draws `x ~ draft` and runs the real sampling path `draws` times: token counts and the
/// number of accepted drafts.
fn run(rule: &Typical<'_>, draft: &Distribution, draws: usize, seed: u64) -> (Vec<u64>, usize) {
    let mut g = rng(seed);
    let mut counts = vec![0u64; draft.len()];
    let mut accepted = 0;
    for _ in 0..draws {
        let x = draft.sample(&mut g);
        let outcome = rule.sample(x, &mut g);
        assert_eq!(outcome.tests[0].accepted, outcome.accepted());
        if outcome.accepted() {
            accepted += 1;
            assert_eq!(outcome.token, x);
        }
        counts[outcome.token] += 1;
    }
    (counts, accepted)
}

#[test]
fn the_sampling_path_follows_the_closed_form() {
    let mut g = rng(11);
    for (i, (name, target, draft)) in pair_zoo(&mut g, 12).into_iter().enumerate() {
        for (epsilon, delta) in [(0.09, 0.3), (0.3, 0.9), (0.02, 0.05)] {
            let rule = Typical::new(&target, &draft, epsilon, delta).unwrap();
            let analysis = rule.analysis();
            let (counts, accepted) = run(&rule, &draft, 40_000, 100 + i as u64);
            let label = format!("{name}, epsilon {epsilon}, delta {delta}");
            assert_fits(&label, &counts, &analysis.output, 1e-6);
            assert_rate(&label, accepted, 40_000, analysis.acceptance);
        }
    }
}

#[test]
fn the_test_sees_that_the_output_is_not_the_target() {
    // The draft puts most of its mass on a token the target finds plausible but rarer:
    // accepting it whenever drafted over-produces it.
    let target = Distribution::from_probs(vec![0.6, 0.3, 0.1]).unwrap();
    let draft = Distribution::from_probs(vec![0.1, 0.8, 0.1]).unwrap();
    let rule = Typical::new(&target, &draft, 0.2, 1.0).unwrap();
    let analysis = rule.analysis();
    assert!(total_variation(target.probs(), &analysis.output) > 0.2);
    let (counts, _) = run(&rule, &draft, 20_000, 5);
    assert!(chi_square_p_value(&counts, target.probs()) < 1e-9);
    assert_fits("lossy pair", &counts, &analysis.output, 1e-6);
}
