//! Each test in a trace names the rule that judged it, and greedy decoding records the
//! target's most likely token where it used it, so that a page showing the trace infers
//! neither from a missing uniform nor by taking an argmax itself.

mod common;

use common::{all_methods, pair, typical};
use specula_core::{Distribution, TestRule};
use specula_engine::{DecodeConfig, Generation, Method, SamplingConfig, TokenSource};

fn traced(method: Method, temperature: f64, seed: u64) -> Generation {
    let (mut target, mut draft) = pair(5, 1, 40, 1.5);
    let config = DecodeConfig::builder(method)
        .max_new_tokens(24)
        .seed(seed)
        .record_distributions(true)
        .sampling(SamplingConfig {
            temperature,
            top_k: None,
            top_p: None,
        })
        .build()
        .expect("a valid config");
    common::run(config, &[2, 3], &mut draft, &mut target)
}

/// The most likely token of recorded probabilities, as the engine's distributions find it.
fn argmax(probs: &[f64]) -> u32 {
    let index = Distribution::from_probs(probs.to_vec()).unwrap().argmax();
    u32::try_from(index).unwrap()
}

#[test]
fn greedy_tests_are_argmax_tests_and_name_the_target_argmax() {
    for method in all_methods() {
        let g = traced(method.clone(), 0.0, 5);
        let mut tests = 0;
        for round in &g.rounds {
            for step in &round.steps {
                let best = argmax(step.target_probs.as_deref().unwrap());
                assert_eq!(step.target_argmax, Some(best), "{method:?}");
                for test in &step.outcome.tests {
                    tests += 1;
                    assert_eq!(test.rule, TestRule::Argmax, "{method:?}");
                    assert_eq!(test.accepted, test.token as u32 == best, "{method:?}");
                }
                if step.source == TokenSource::Resampled {
                    assert_eq!(step.token, best, "{method:?}: a rejection emits the argmax");
                }
            }
            if let Some(bonus) = &round.bonus {
                let best = argmax(bonus.target_probs.as_deref().unwrap());
                assert_eq!(bonus.target_argmax, Some(best), "{method:?}");
                assert_eq!(bonus.token, best, "{method:?}");
            }
        }
        if method.needs_draft() {
            assert!(tests > 0, "{method:?}: no test ran");
        }
    }
}

#[test]
fn sampled_tests_are_coins_or_thresholds_and_name_no_argmax() {
    for method in all_methods() {
        let g = traced(method.clone(), 0.9, 7);
        let expected = if matches!(method, Method::Typical { .. }) {
            TestRule::Threshold
        } else {
            TestRule::Coin
        };
        for round in &g.rounds {
            for step in &round.steps {
                assert_eq!(step.target_argmax, None, "{method:?}");
                for test in &step.outcome.tests {
                    assert_eq!(test.rule, expected, "{method:?}");
                    // A coin has its uniform; a threshold has none.
                    assert_eq!(
                        test.uniform.is_some(),
                        expected == TestRule::Coin,
                        "{method:?}"
                    );
                }
            }
            if let Some(bonus) = &round.bonus {
                assert_eq!(bonus.target_argmax, None, "{method:?}");
                assert!(bonus.uniform.is_some(), "{method:?}");
            }
        }
    }
    // Typical acceptance's threshold is the rule a page shows as "target > τ".
    let g = traced(typical(3, 0.3, 0.3), 0.9, 3);
    assert!(
        g.rounds
            .iter()
            .flat_map(|r| &r.steps)
            .flat_map(|s| &s.outcome.tests)
            .any(|t| t.rule == TestRule::Threshold)
    );
}

#[test]
fn residual_parts_carry_the_mass_left_over() {
    for method in all_methods() {
        let g = traced(method.clone(), 0.9, 11);
        for step in g.rounds.iter().flat_map(|r| &r.steps) {
            let (Some(parts), Some(residual)) = (&step.residual_parts, &step.residual_probs) else {
                continue;
            };
            let excess: Vec<f64> = parts
                .base
                .iter()
                .zip(&parts.sub)
                .map(|(b, s)| (b - s).max(0.0))
                .collect();
            let mass: f64 = excess.iter().sum();
            assert!((parts.left_over - mass).abs() < 1e-12, "{method:?}");
            if mass > 1e-9 {
                for (x, r) in excess.iter().zip(residual) {
                    assert!((x / parts.left_over - r).abs() < 1e-9, "{method:?}");
                }
            }
        }
    }
}
