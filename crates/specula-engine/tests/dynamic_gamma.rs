//! Dynamic draft length: Hugging Face's heuristic and the walltime-optimal rule.

mod common;

use std::time::Duration;

use common::pair;
use specula_core::theory::optimal_gamma;
use specula_engine::synthetic::MarkovModel;
use specula_engine::{
    DecodeConfig, Decoder, GammaPolicy, ManualClock, Method, RoundTrace, TokenSource, generate,
};

fn models(kind: &str) -> (MarkovModel, MarkovModel) {
    match kind {
        // The draft is the target: every draft is accepted.
        "same" => {
            let (target, _) = pair(5, 1, 80, 1.0);
            let draft = target.perturbed(0, 0.0).unwrap();
            (target, draft)
        }
        // Disjoint supports: every draft is rejected.
        "disjoint" => (
            MarkovModel::from_probs(4, 0, &[0.5, 0.5, 0.0, 0.0]).unwrap(),
            MarkovModel::from_probs(4, 0, &[0.0, 0.0, 0.5, 0.5]).unwrap(),
        ),
        _ => pair(5, 1, 81, 1.5),
    }
}

fn all_accepted(round: &RoundTrace) -> bool {
    round.steps.len() == round.branching.len()
        && round
            .steps
            .iter()
            .all(|s| s.source == TokenSource::Accepted)
}

#[test]
fn heuristic_adds_two_after_a_full_acceptance_and_drops_one_otherwise() {
    for kind in ["same", "disjoint", "mixed"] {
        for method in [true, false] {
            let (mut target, mut draft) = models(kind);
            let policy = GammaPolicy::Heuristic { max_gamma: 9 };
            let m = if method {
                Method::Speculative { gamma: 4, policy }
            } else {
                Method::Mentored {
                    gamma: 4,
                    kl_budget: 0.02,
                    policy,
                }
            };
            let config = DecodeConfig::builder(m)
                .max_new_tokens(300)
                .build()
                .unwrap();
            let out = common::run(config, &[0], &mut draft, &mut target);
            let mut gamma = 4;
            let mut generated = 0;
            for round in &out.rounds {
                let remaining = 300 - generated;
                assert_eq!(round.branching.len(), gamma.min(remaining - 1), "{kind}");
                let expected = if round.branching.is_empty() {
                    gamma
                } else if all_accepted(round) {
                    (gamma + 2).min(9)
                } else {
                    (gamma - 1).max(1)
                };
                assert_eq!(round.next_gamma, Some(expected), "{kind}");
                gamma = expected;
                generated += round.emitted.len();
            }
            match kind {
                "same" => assert_eq!(gamma, 9),
                "disjoint" => assert_eq!(gamma, 1),
                _ => {}
            }
        }
    }
}

#[test]
fn optimal_rule_maximises_the_walltime_factor_from_running_estimates() {
    for (kind, measured) in [
        ("same", true),
        ("disjoint", true),
        ("mixed", true),
        ("mixed", false),
    ] {
        let (target, draft) = models(kind);
        let clock = ManualClock::new();
        let (mut target, mut draft) = if measured {
            (
                target.with_cost(clock.clone(), Duration::from_millis(20)),
                draft.with_cost(clock.clone(), Duration::from_millis(1)),
            )
        } else {
            (target, draft)
        };
        let policy = GammaPolicy::Optimal {
            max_gamma: 12,
            cost_ratio: 0.3,
        };
        let config = DecodeConfig::builder(Method::Speculative { gamma: 2, policy })
            .max_new_tokens(400)
            .build()
            .unwrap();
        let mut decoder = Decoder::new(config, vec![0]).unwrap().with_clock(clock);
        let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
        let (mut tests, mut accepted) = (0_u64, 0_u64);
        for round in &out.rounds {
            tests += round.steps.len() as u64;
            accepted += round
                .steps
                .iter()
                .filter(|s| s.source == TokenSource::Accepted)
                .count() as u64;
            let alpha = (accepted as f64 + 1.0) / (tests as f64 + 2.0);
            let c = if measured { 1.0 / 20.0 } else { 0.3 };
            let (expected, _) = optimal_gamma(alpha, c, 12).unwrap();
            assert_eq!(round.next_gamma, Some(expected as usize), "{kind}");
        }
        let last = out.rounds.last().unwrap().next_gamma.unwrap();
        match kind {
            "same" => assert_eq!(last, 12),
            "disjoint" => assert_eq!(last, 1),
            _ => {}
        }
    }
}

#[test]
fn fixed_gamma_never_changes() {
    let (mut target, mut draft) = models("mixed");
    let config = DecodeConfig::builder(common::speculative(3))
        .max_new_tokens(100)
        .build()
        .unwrap();
    let out = common::run(config, &[0], &mut draft, &mut target);
    assert!(out.rounds.iter().all(|r| r.next_gamma == Some(3)));
}
