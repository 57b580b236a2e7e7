//! Parallel drafting (PEARL's post-verify): the next round's drafts are drawn while the
//! target verifies. Sequence-level exactness as in exactness.rs (the joint of the first
//! three tokens against exact enumeration, 100k seeded runs), with power: a planted
//! mistake in the schedule must fail at p < 1e-6. Greedy output equals autoregressive
//! greedy output; the threaded driver gives the single-threaded driver's tokens; the
//! metrics count the rounds whose drafts were ready early.

mod common;

use std::time::Duration;

use common::{chi_square_p, pair, speculative};
use specula_core::Bug;
use specula_engine::synthetic::{MarkovModel, exact_joint, sequence_index};
use specula_engine::{
    DecodeConfig, Decoder, Error, ForwardRequest, ForwardResponse, GammaPolicy, LanguageModel,
    Method, ModelError, ParallelBug, Role, SamplingConfig, Step, TokenSource, generate,
    generate_autoregressive, generate_parallel,
};

const RUNS: u64 = 100_000;
const LENGTH: usize = 3;
const EXACT_P: f64 = 1e-4;
const BUG_P: f64 = 1e-6;

fn parallel(gamma: usize, seed: u64, max_new_tokens: usize) -> DecodeConfig {
    DecodeConfig::builder(speculative(gamma))
        .max_new_tokens(max_new_tokens)
        .seed(seed)
        .parallel_draft(true)
        .build()
        .unwrap()
}

fn joint_counts(
    gamma: usize,
    (core_bug, bug): (Option<Bug>, Option<ParallelBug>),
    prompt: &[u32],
    draft: &mut MarkovModel,
    target: &mut MarkovModel,
) -> Vec<u64> {
    let vocab = target.vocab();
    let mut counts = vec![0_u64; vocab.pow(LENGTH as u32)];
    for seed in 0..RUNS {
        // Decoding past the tested tokens lets every round up to them draft early.
        let config = parallel(gamma, seed, LENGTH + 2 * gamma)
            .into_builder()
            .bug(core_bug)
            .build()
            .unwrap();
        let mut decoder = Decoder::new(config, prompt.to_vec()).unwrap();
        if let Some(bug) = bug {
            decoder = decoder.with_parallel_bug(bug);
        }
        let out = generate(&mut decoder, draft, target).unwrap();
        counts[sequence_index(&out.tokens[..LENGTH], vocab)] += 1;
    }
    counts
}

fn lenient_p(counts: &[u64], probs: &[f64]) -> f64 {
    if counts.iter().zip(probs).any(|(&o, &p)| p == 0.0 && o > 0) {
        return 0.0;
    }
    chi_square_p(counts, probs)
}

/// γ = 1 (early drafts tested at positions 2 and 3) and γ = 2 (at position 3), order-2
/// models so that the context the early drafts were drawn from matters.
#[test]
fn parallel_drafting_samples_the_target_joint() {
    let (mut target, mut draft) = pair(4, 2, 11, 1.5);
    let prompt = [1, 2];
    let truth = exact_joint(&target, &prompt, LENGTH, &SamplingConfig::default()).unwrap();
    let draft_joint = exact_joint(&draft, &prompt, LENGTH, &SamplingConfig::default()).unwrap();
    for gamma in [1, 2] {
        let counts = joint_counts(gamma, (None, None), &prompt, &mut draft, &mut target);
        let p = chi_square_p(&counts, &truth);
        println!("gamma {gamma}: chi-square p-value {p:.4}");
        assert!(p > EXACT_P, "gamma {gamma}: p-value {p}");
        let wrong = lenient_p(&counts, &draft_joint);
        assert!(
            wrong < BUG_P,
            "gamma {gamma}: cannot tell target from draft ({wrong})"
        );
        // Power: trusting the first early draft puts the draft's distribution at γ + 1.
        let counts = joint_counts(
            gamma,
            (None, Some(ParallelBug::TrustEarlyDraft)),
            &prompt,
            &mut draft,
            &mut target,
        );
        let p = lenient_p(&counts, &truth);
        println!("gamma {gamma}, trust-early-draft: p-value {p:e}");
        assert!(
            p < BUG_P,
            "gamma {gamma} trusting the early draft: p-value {p}"
        );
        // Keeping the early drafts after a rejection is not a mistake: each is still
        // tested against the distribution it was drawn from.
        let counts = joint_counts(
            gamma,
            (None, Some(ParallelBug::KeepAfterRejection)),
            &prompt,
            &mut draft,
            &mut target,
        );
        let p = chi_square_p(&counts, &truth);
        println!("gamma {gamma}, keep-after-rejection: p-value {p:.4}");
        assert!(
            p > EXACT_P,
            "gamma {gamma} keeping early drafts: p-value {p}"
        );
        // The engine's own planted bugs reach the early drafts too (their draws and tests).
        for bug in [Bug::SharedUniform, Bug::ResampleFromTarget] {
            let counts = joint_counts(gamma, (Some(bug), None), &prompt, &mut draft, &mut target);
            let p = lenient_p(&counts, &truth);
            println!("gamma {gamma}, {bug}: p-value {p:e}");
            assert!(p < BUG_P, "gamma {gamma} with {bug}: p-value {p}");
        }
    }
}

#[test]
fn greedy_parallel_drafting_is_greedy_decoding() {
    let mut early_rounds = 0;
    for (seed, gamma) in [(3, 1), (4, 3), (5, 5)] {
        let (mut target, mut draft) = pair(12, 2, seed, 0.3);
        let greedy = SamplingConfig {
            temperature: 0.0,
            ..SamplingConfig::default()
        };
        let config = parallel(gamma, seed, 40)
            .into_builder()
            .sampling(greedy)
            .build()
            .unwrap();
        let mut decoder = Decoder::new(config.clone(), vec![1, 2]).unwrap();
        let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
        let reference = config
            .into_builder()
            .method(Method::Autoregressive)
            .parallel_draft(false)
            .build()
            .unwrap();
        let mut decoder = Decoder::new(reference, vec![1, 2]).unwrap();
        let expected = generate_autoregressive(&mut decoder, &mut target).unwrap();
        assert_eq!(out.tokens, expected.tokens, "gamma {gamma}");
        early_rounds += out.metrics.early_rounds;
    }
    assert!(early_rounds > 10, "{early_rounds}");
}

/// A model that sleeps before answering, so the two threads interleave differently.
struct Slow {
    inner: MarkovModel,
    cost: Duration,
}

impl LanguageModel for Slow {
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn forward(&mut self, request: &ForwardRequest) -> Result<ForwardResponse, ModelError> {
        std::thread::sleep(self.cost);
        self.inner.forward(request)
    }
}

#[test]
fn the_threaded_driver_gives_the_same_tokens() {
    for (seed, gamma, draft_micros, target_micros) in
        [(1, 2, 50, 400), (2, 4, 300, 100), (3, 3, 200, 200)]
    {
        let (target, draft) = pair(6, 2, seed, 1.0);
        let config = parallel(gamma, seed, 60);
        let mut decoder = Decoder::new(config.clone(), vec![1, 2]).unwrap();
        let expected = generate(&mut decoder, &mut draft.clone(), &mut target.clone()).unwrap();
        let mut slow_draft = Slow {
            inner: draft.clone(),
            cost: Duration::from_micros(draft_micros),
        };
        let mut slow_target = Slow {
            inner: target.clone(),
            cost: Duration::from_micros(target_micros),
        };
        let mut decoder = Decoder::new(config.clone(), vec![1, 2]).unwrap();
        let out = generate_parallel(&mut decoder, &mut slow_draft, &mut slow_target).unwrap();
        assert_eq!(out.tokens, expected.tokens, "seed {seed}");
        assert_eq!(out.finish, expected.finish);
        assert_eq!(out.metrics.emitted_tokens, expected.metrics.emitted_tokens);
        assert_eq!(
            out.metrics.accepted_tokens,
            expected.metrics.accepted_tokens
        );
        // Without parallel drafting the threads take turns: the sequential output.
        let sequential = config.into_builder().parallel_draft(false).build().unwrap();
        let mut decoder = Decoder::new(sequential.clone(), vec![1, 2]).unwrap();
        let expected = generate(&mut decoder, &mut draft.clone(), &mut target.clone()).unwrap();
        let mut decoder = Decoder::new(sequential, vec![1, 2]).unwrap();
        let out = generate_parallel(&mut decoder, &mut slow_draft, &mut slow_target).unwrap();
        assert_eq!(out.tokens, expected.tokens);
    }
}

#[test]
fn the_metrics_count_the_rounds_drafted_early() {
    let (mut target, mut draft) = pair(5, 1, 9, 0.3);
    let mut decoder = Decoder::new(parallel(3, 9, 200), vec![1]).unwrap();
    let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
    let m = &out.metrics;
    // A round is drafted early exactly when the round before accepted every draft.
    let all_accepted = out
        .rounds
        .iter()
        .filter(|r| r.counts.accepted == r.branching.len() && r.bonus.is_none())
        .count() as u64;
    let last_all = out.rounds.last().is_some_and(|r| r.bonus.is_none()) as u64;
    assert!(m.early_rounds > 0);
    assert_eq!(m.early_rounds, all_accepted - last_all);
    for pair in out.rounds.windows(2) {
        let before = &pair[0];
        let early = before.bonus.is_none() && before.counts.accepted == before.branching.len();
        assert_eq!(pair[1].early_drafts > 0, early);
        if early {
            // The sequential driver draws every early draft before running the target.
            assert_eq!(pair[1].early_drafts, pair[1].branching.len());
            assert!(!pair[0].sources.contains(&TokenSource::Bonus));
        }
    }
    assert_eq!(
        m.emitted_tokens,
        m.accepted_tokens + m.resampled_tokens + m.bonus_tokens
    );
    // Without the option nothing is drafted early.
    let mut decoder = Decoder::new(
        parallel(3, 9, 200)
            .into_builder()
            .parallel_draft(false)
            .build()
            .unwrap(),
        vec![1],
    )
    .unwrap();
    let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
    assert_eq!((out.metrics.early_rounds, out.metrics.early_drafts), (0, 0));
}

/// The sans-IO protocol: both requests at once, answers in either order, a stale
/// draft's answer dropped, wrong roles refused.
#[test]
fn answers_come_in_either_order() {
    let (mut target, mut draft) = pair(6, 1, 21, 1.0);
    let config = parallel(2, 21, 40);
    let mut decoder = Decoder::new(config.clone(), vec![1]).unwrap();
    let expected = generate(&mut decoder, &mut draft, &mut target).unwrap();
    let mut decoder = Decoder::new(config, vec![1]).unwrap();
    let mut parallel_steps = 0;
    loop {
        match decoder.next_request().unwrap() {
            Step::Done(_) => break,
            Step::Parallel {
                target: t,
                draft: d,
            } => {
                parallel_steps += 1;
                // Target first: the draft request stays outstanding.
                let answer = target.forward(&t).unwrap();
                assert!(matches!(
                    decoder.supply_to(Role::Target, ForwardResponse::new(6, vec![])),
                    Err(Error::WrongResponseLength { .. })
                ));
                let trace = decoder.supply_to(Role::Target, answer).unwrap();
                assert!(trace.is_some());
                let answer = draft.forward(&d).unwrap();
                assert_eq!(decoder.supply_to(Role::Draft, answer).unwrap(), None);
            }
            Step::Draft(request) => {
                let answer = draft.forward(&request).unwrap();
                decoder.supply_to(Role::Draft, answer).unwrap();
            }
            Step::Target(request) => {
                let answer = target.forward(&request).unwrap();
                decoder.supply_to(Role::Target, answer).unwrap();
            }
        }
    }
    assert!(parallel_steps > 0);
    assert!(matches!(
        decoder.supply_to(Role::Draft, ForwardResponse::new(6, vec![0.0; 6])),
        Err(Error::NoPendingRequest)
    ));
    // Answering the target first changes no token.
    assert_eq!(decoder.generated(), &expected.tokens[..]);
}

#[test]
fn only_fixed_gamma_speculative_decoding_drafts_in_parallel() {
    let refused = [
        Method::Autoregressive,
        common::spectr_iid(2, 2),
        common::mentored(2, 0.1),
        common::lookup(3, 2),
        Method::Speculative {
            gamma: 2,
            policy: GammaPolicy::Heuristic { max_gamma: 8 },
        },
    ];
    for method in refused {
        assert!(matches!(
            DecodeConfig::builder(method).parallel_draft(true).build(),
            Err(Error::ParallelDraftNotApplicable { .. })
        ));
    }
}

/// The shared options table's `parallelDraft` rows (tests/options/table.json), through
/// the options every surface resolves: accepted with speculative decoding, refused with
/// the other methods, with a dynamic γ and for a value that is not a boolean.
#[test]
fn the_options_table_rows_of_parallel_draft() {
    use specula_engine::options::{DecodeOptions, Raw};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/options/table.json"
    );
    let table: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut rows = 0;
    for row in table["rows"].as_array().unwrap() {
        if row["options"].get("parallelDraft").is_none() {
            continue;
        }
        rows += 1;
        let raw: Raw = serde_json::from_value(row["options"].clone()).unwrap();
        let verdict = DecodeOptions::from_raw(raw).and_then(|o| o.resolve());
        if row["ok"] == true {
            let resolved = verdict.unwrap_or_else(|e| panic!("{row}: {e:?}"));
            let wanted = row["options"]["parallelDraft"] == true;
            assert_eq!(resolved.config.parallel_draft(), wanted);
        } else {
            let error = verdict.expect_err(&row.to_string());
            assert_eq!(row["code"], "invalid_option");
            assert_eq!(error.field, row["field"].as_str().unwrap(), "{row}");
        }
    }
    assert!(rows >= 8);
}

/// A model that panics on its third call.
struct Panicky {
    inner: MarkovModel,
    calls: usize,
}

impl LanguageModel for Panicky {
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn forward(&mut self, request: &ForwardRequest) -> Result<ForwardResponse, ModelError> {
        self.calls += 1;
        assert!(self.calls < 3, "a model bug");
        self.inner.forward(request)
    }
}

/// A failing or panicking model ends the threaded run with a model error naming it.
#[test]
fn the_threaded_driver_reports_a_failing_model() {
    let (mut target, draft) = pair(5, 1, 2, 1.0);
    let mut draft = Panicky {
        inner: draft,
        calls: 0,
    };
    let mut decoder = Decoder::new(parallel(3, 2, 50), vec![1]).unwrap();
    let error = generate_parallel(&mut decoder, &mut draft, &mut target).unwrap_err();
    assert!(
        matches!(
            error,
            Error::Model {
                role: Role::Draft,
                ..
            }
        ),
        "{error:?}"
    );
}
