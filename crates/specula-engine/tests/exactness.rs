//! Sequence-level exactness (SpecTr's Theorem 2): the joint distribution of the first
//! three generated tokens equals the target model's, checked against exact enumeration
//! with a chi-square over seeded runs; greedy output equals plain greedy decoding.

mod common;

use common::{
    all_methods, chi_square_p, multiround_iid, multiround_tree, otm_iid, otm_tree, pair, run,
    spectr_iid, spectr_tree, speculative,
};
use specula_engine::synthetic::{MarkovModel, exact_joint, sequence_index};
use specula_engine::{DecodeConfig, Method, SamplingConfig, TokenSource};

const RUNS: u64 = 100_000;
const LENGTH: usize = 3;

/// Counts of the first `LENGTH` generated tokens over `RUNS` seeds.
fn joint_counts(
    method: &Method,
    sampling: SamplingConfig,
    prompt: &[u32],
    draft: &mut MarkovModel,
    target: &mut MarkovModel,
) -> Vec<u64> {
    let vocab = target.vocab();
    let mut counts = vec![0_u64; vocab.pow(LENGTH as u32)];
    for seed in 0..RUNS {
        let config = DecodeConfig {
            sampling,
            max_new_tokens: LENGTH,
            seed,
            ..DecodeConfig::new(method.clone())
        };
        let out = run(config, prompt, draft, target);
        assert_eq!(out.tokens.len(), LENGTH);
        counts[sequence_index(&out.tokens, vocab)] += 1;
    }
    counts
}

fn assert_exact(method: Method, sampling: SamplingConfig, vocab: usize, order: usize, seed: u64) {
    let (mut target, mut draft) = pair(vocab, order, seed, 1.5);
    let prompt = [1, 2];
    let truth = exact_joint(&target, &prompt, LENGTH, &sampling).unwrap();
    let counts = joint_counts(&method, sampling, &prompt, &mut draft, &mut target);
    let p_value = chi_square_p(&counts, &truth);
    assert!(
        p_value > 1e-4,
        "{}: chi-square p-value {p_value}",
        method.name()
    );
    // Power: the same counts are far from the draft model's joint.
    let draft_joint = exact_joint(&draft, &prompt, LENGTH, &sampling).unwrap();
    let wrong = chi_square_p_lenient(&counts, &draft_joint);
    assert!(
        wrong < 1e-6,
        "{}: the test cannot tell target from draft (p-value {wrong})",
        method.name()
    );
}

/// Chi-square that tolerates observations in zero-probability cells (as +inf statistic).
fn chi_square_p_lenient(counts: &[u64], probs: &[f64]) -> f64 {
    if counts
        .iter()
        .zip(probs)
        .any(|(&o, &prob)| prob == 0.0 && o > 0)
    {
        return 0.0;
    }
    chi_square_p(counts, probs)
}

#[test]
fn speculative_joint_matches_target() {
    assert_exact(speculative(2), SamplingConfig::default(), 4, 1, 11);
}

#[test]
fn speculative_joint_matches_target_with_temperature_and_top_k() {
    let sampling = SamplingConfig {
        temperature: 0.7,
        top_k: Some(3),
        top_p: None,
    };
    assert_exact(speculative(3), sampling, 4, 1, 12);
}

#[test]
fn spectr_iid_joint_matches_target() {
    assert_exact(spectr_iid(3, 2), SamplingConfig::default(), 4, 1, 13);
}

#[test]
fn spectr_tree_joint_matches_target() {
    assert_exact(spectr_tree(&[2, 2]), SamplingConfig::default(), 4, 1, 14);
}

#[test]
fn spectr_tree_joint_matches_target_with_top_p_and_order_two() {
    let sampling = SamplingConfig {
        temperature: 1.2,
        top_k: None,
        top_p: Some(0.9),
    };
    assert_exact(spectr_tree(&[3, 1, 2]), sampling, 3, 2, 15);
}

#[test]
fn multiround_iid_joint_matches_target() {
    assert_exact(multiround_iid(3, 2), SamplingConfig::default(), 4, 1, 16);
}

#[test]
fn multiround_tree_joint_matches_target() {
    assert_exact(
        multiround_tree(&[2, 2]),
        SamplingConfig::default(),
        4,
        1,
        17,
    );
}

#[test]
fn otm_iid_joint_matches_target() {
    assert_exact(otm_iid(3, 2), SamplingConfig::default(), 4, 1, 24);
}

#[test]
fn otm_tree_joint_matches_target_with_top_k_and_order_two() {
    let sampling = SamplingConfig {
        temperature: 0.9,
        top_k: Some(3),
        top_p: None,
    };
    assert_exact(otm_tree(&[2, 1, 2]), sampling, 4, 2, 25);
}

#[test]
fn autoregressive_joint_matches_target() {
    assert_exact(Method::Autoregressive, SamplingConfig::default(), 4, 1, 18);
}

#[test]
fn mentored_with_zero_budget_is_lossless() {
    assert_exact(
        common::mentored(2, 0.0),
        SamplingConfig::default(),
        4,
        1,
        19,
    );
}

#[test]
fn a_resampled_token_never_matches_a_candidate() {
    // Algorithm 3 filters the drafts by the selected token however it was selected, but
    // for k-Seq at rho* and for multi-round rejection the residual has mass only on tokens
    // that would have been accepted had they been drafted, so a resample ends the round
    // (unless the residual was degenerate and the target was sampled instead).
    for (method, seed) in [
        (spectr_iid(6, 3), 21),
        (multiround_iid(6, 3), 22),
        (spectr_tree(&[3, 2, 2]), 23),
    ] {
        let (mut target, mut draft) = pair(3, 1, seed, 2.0);
        let mut resampled = 0;
        for seed in 0..200 {
            let config = DecodeConfig {
                max_new_tokens: 8,
                seed,
                ..DecodeConfig::new(method.clone())
            };
            let out = run(config, &[0], &mut draft, &mut target);
            for round in &out.rounds {
                for step in &round.steps {
                    if step.source == TokenSource::Resampled {
                        resampled += 1;
                        let fallback = step
                            .outcome
                            .residual
                            .as_ref()
                            .is_some_and(|r| r.residual == specula_core::Residual::Target);
                        assert!(step.survivors.is_empty() || fallback, "{}", method.name());
                    }
                }
            }
        }
        assert!(
            resampled > 50,
            "{}: only {resampled} resamples",
            method.name()
        );
    }
}

#[test]
fn greedy_output_equals_plain_greedy_decoding() {
    let sampling = SamplingConfig::greedy();
    for seed in 0..4 {
        let (mut target, mut draft) = pair(6, 2, 100 + seed, 2.0);
        for prompt in [&[0_u32][..], &[3, 1, 4], &[5, 5]] {
            // Plain greedy decoding: argmax of the target's conditional, token by token.
            let mut context = prompt.to_vec();
            for _ in 0..30 {
                let dist = target.distribution(&context, &sampling).unwrap();
                context.push(dist.argmax() as u32);
            }
            let expected = &context[prompt.len()..];
            for method in all_methods() {
                let config = DecodeConfig {
                    sampling,
                    max_new_tokens: 30,
                    seed,
                    ..DecodeConfig::new(method.clone())
                };
                let out = run(config, prompt, &mut draft, &mut target);
                assert_eq!(
                    out.tokens,
                    expected,
                    "{} differs from greedy",
                    method.name()
                );
                for round in &out.rounds {
                    for step in &round.steps {
                        assert!(step.outcome.tests.iter().all(|t| t.uniform.is_none()));
                    }
                }
            }
        }
    }
}
