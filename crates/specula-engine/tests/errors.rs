//! Every invalid setting, response or call order is a typed error, never a panic.

mod common;

use common::{mentored, pair, spectr_iid, speculative};
use specula_engine::options::limits::MAX_ROUND_NODES;
use specula_engine::{
    DecodeConfig, Decoder, DraftShape, Error, ForwardRequest, ForwardResponse, GammaPolicy,
    LanguageModel, Method, ModelError, Role, SamplingConfig, Selection, Step, generate,
    generate_autoregressive,
};

fn new_err(config: DecodeConfig, prompt: Vec<u32>) -> Error {
    Decoder::new(config, prompt).unwrap_err()
}

/// The builder's refusal of `method`: a configuration is checked when it is built.
fn method_err(method: Method) -> Error {
    DecodeConfig::builder(method).build().unwrap_err()
}

#[test]
fn invalid_settings_are_typed_errors() {
    assert_eq!(method_err(speculative(0)), Error::ZeroGamma);
    assert_eq!(method_err(mentored(0, 0.1)), Error::ZeroGamma);
    assert_eq!(method_err(spectr_iid(0, 3)), Error::NoDrafts);
    assert_eq!(method_err(spectr_iid(3, 0)), Error::ZeroDraftLength);
    let tree = |k, branching: &[usize]| Method::SpecTr {
        drafts: DraftShape::Tree {
            k,
            branching: branching.to_vec(),
        },
        selection: Selection::KSeq,
    };
    assert_eq!(method_err(tree(0, &[1])), Error::NoDrafts);
    assert_eq!(method_err(tree(4, &[])), Error::ZeroDraftLength);
    assert_eq!(
        method_err(tree(4, &[2, 0, 2])),
        Error::ZeroBranching { depth: 2 }
    );
    assert_eq!(
        method_err(tree(4, &[2, 3])),
        Error::BranchingMismatch { product: 6, k: 4 }
    );
    assert_eq!(
        method_err(tree(4, &[usize::MAX, usize::MAX, usize::MAX])),
        Error::BranchingMismatch {
            product: u128::MAX,
            k: 4
        }
    );
    assert!(matches!(
        method_err(tree(1 << 20, &[1 << 10, 1 << 10])),
        Error::TooManyDraftNodes { .. }
    ));
    assert!(matches!(
        method_err(Method::MultiRound {
            drafts: DraftShape::Iid {
                k: 1 << 17,
                length: 1
            }
        }),
        Error::TooManyDraftNodes { .. }
    ));
    assert!(matches!(
        method_err(speculative(MAX_ROUND_NODES + 1)),
        Error::TooManyDraftNodes { .. }
    ));
    assert_eq!(method_err(mentored(2, -0.1)), Error::BadKlBudget(-0.1));
    assert!(matches!(method_err(mentored(2, f64::NAN)), Error::BadKlBudget(d) if d.is_nan()));
    assert_eq!(
        method_err(mentored(2, f64::INFINITY)),
        Error::BadKlBudget(f64::INFINITY)
    );
    assert_eq!(
        method_err(Method::Speculative {
            gamma: 5,
            policy: GammaPolicy::Heuristic { max_gamma: 3 }
        }),
        Error::BadMaxGamma {
            gamma: 5,
            max_gamma: 3
        }
    );
    assert_eq!(
        method_err(Method::Speculative {
            gamma: 2,
            policy: GammaPolicy::Optimal {
                max_gamma: 8,
                cost_ratio: -1.0
            }
        }),
        Error::BadCostRatio(-1.0)
    );
    let bad_sampling = |sampling| {
        DecodeConfig::builder(speculative(2))
            .sampling(sampling)
            .build()
            .unwrap_err()
    };
    assert_eq!(
        bad_sampling(SamplingConfig {
            temperature: -1.0,
            ..SamplingConfig::default()
        }),
        Error::Core(specula_core::Error::BadTemperature(-1.0))
    );
    assert_eq!(
        bad_sampling(SamplingConfig {
            top_k: Some(0),
            ..SamplingConfig::default()
        }),
        Error::Core(specula_core::Error::BadTopK)
    );
    assert_eq!(
        bad_sampling(SamplingConfig {
            top_p: Some(0.0),
            ..SamplingConfig::default()
        }),
        Error::Core(specula_core::Error::BadTopP(0.0))
    );
    assert_eq!(
        new_err(
            DecodeConfig::builder(speculative(2)).build().unwrap(),
            vec![]
        ),
        Error::EmptyPrompt
    );
    assert_eq!(
        new_err(
            DecodeConfig::default()
                .into_builder()
                .stop_strings(vec!["x".into()])
                .build()
                .unwrap(),
            vec![0]
        ),
        Error::StopStringsNeedDetokenizer
    );
    assert_eq!(
        DecodeConfig::default()
            .into_builder()
            .stop_strings(vec!["x".into(), String::new()])
            .token_text(Some(vec!["x".into()]))
            .build()
            .unwrap_err(),
        Error::EmptyStopString { index: 1 }
    );
    // Every message is readable and mentions no bare p/q.
    let message = Error::VocabMismatch {
        draft: 3,
        target: 4,
    }
    .to_string();
    assert!(message.contains("draft") && message.contains("target"));
}

#[test]
fn vocab_sizes_that_differ_are_refused() {
    let (mut target, _) = pair(5, 1, 1, 1.0);
    let (_, mut draft) = pair(4, 1, 1, 1.0);
    let mut decoder = Decoder::new(
        DecodeConfig::builder(speculative(2)).build().unwrap(),
        vec![0],
    )
    .unwrap();
    assert_eq!(
        generate(&mut decoder, &mut draft, &mut target).unwrap_err(),
        Error::VocabMismatch {
            draft: 4,
            target: 5
        }
    );
    // Driving the state machine directly: the mismatch shows at the first target response.
    let mut decoder = Decoder::new(
        DecodeConfig::builder(speculative(1)).build().unwrap(),
        vec![0],
    )
    .unwrap();
    let Step::Draft(request) = decoder.next_request().unwrap() else {
        panic!("expected a draft step")
    };
    decoder.supply(draft.forward(&request).unwrap()).unwrap();
    let Step::Target(request) = decoder.next_request().unwrap() else {
        panic!("expected a target step")
    };
    assert_eq!(
        decoder
            .supply(target.forward(&request).unwrap())
            .unwrap_err(),
        Error::VocabMismatch {
            draft: 4,
            target: 5
        }
    );
}

#[test]
fn bad_responses_are_typed_errors_and_the_decoder_can_retry() {
    let (mut target, mut draft) = pair(4, 1, 2, 1.0);
    let mut decoder = Decoder::new(
        DecodeConfig::builder(spectr_iid(2, 2)).build().unwrap(),
        vec![0],
    )
    .unwrap();
    assert_eq!(
        decoder
            .supply(ForwardResponse::new(4, vec![0.0; 4]))
            .unwrap_err(),
        Error::NoPendingRequest
    );
    let Step::Draft(request) = decoder.next_request().unwrap() else {
        panic!("expected a draft step")
    };
    let rows = request.queries.len();
    assert_eq!(
        decoder.supply(ForwardResponse::new(0, vec![])).unwrap_err(),
        Error::ZeroVocab { role: Role::Draft }
    );
    assert_eq!(
        decoder
            .supply(ForwardResponse::new(4, vec![0.0; 4 * rows + 1]))
            .unwrap_err(),
        Error::WrongResponseLength {
            role: Role::Draft,
            queries: rows,
            vocab: 4,
            expected: 4 * rows,
            got: 4 * rows + 1
        }
    );
    let mut nan = vec![0.0_f32; 4 * rows];
    nan[2] = f32::NAN;
    assert_eq!(
        decoder.supply(ForwardResponse::new(4, nan)).unwrap_err(),
        Error::InvalidLogits {
            role: Role::Draft,
            row: 0,
            source: specula_core::Error::NotANumber { index: 2 }
        }
    );
    let mut inf = vec![0.0_f32; 4 * rows];
    inf[1] = f32::INFINITY;
    assert!(matches!(
        decoder.supply(ForwardResponse::new(4, inf)).unwrap_err(),
        Error::InvalidLogits {
            source: specula_core::Error::Infinite { .. },
            ..
        }
    ));
    assert!(matches!(
        decoder
            .supply(ForwardResponse::new(4, vec![f32::NEG_INFINITY; 4 * rows]))
            .unwrap_err(),
        Error::InvalidLogits {
            source: specula_core::Error::AllZero,
            ..
        }
    ));
    // The decoder still waits for the same request: a correct answer goes through, and the
    // whole generation completes.
    assert_eq!(
        decoder.next_request().unwrap(),
        Step::Draft(request.clone())
    );
    decoder.supply(draft.forward(&request).unwrap()).unwrap();
    let Step::Draft(request) = decoder.next_request().unwrap() else {
        panic!("expected a draft step")
    };
    decoder.supply(draft.forward(&request).unwrap()).unwrap();
    let Step::Target(request) = decoder.next_request().unwrap() else {
        panic!("expected a target step")
    };
    let mut bad = target.forward(&request).unwrap();
    bad.vocab = 5;
    bad.logits.truncate(5 * request.queries.len());
    assert!(matches!(
        decoder.supply(bad).unwrap_err(),
        Error::WrongResponseLength {
            role: Role::Target,
            ..
        } | Error::VocabMismatch { .. }
    ));
    let mut nan = target.forward(&request).unwrap();
    nan.logits.iter_mut().for_each(|l| *l = f32::NAN);
    assert!(matches!(
        decoder.supply(nan).unwrap_err(),
        Error::InvalidLogits {
            role: Role::Target,
            ..
        }
    ));
    let mut trace = decoder
        .supply(target.forward(&request).unwrap())
        .unwrap()
        .expect("the target's answer ends the round");
    // The refused answers left no mark: the round is the one a decoder given only correct
    // answers draws from the same seed (the clock's readings aside).
    let mut clean = Decoder::new(
        DecodeConfig::builder(spectr_iid(2, 2)).build().unwrap(),
        vec![0],
    )
    .unwrap();
    let expected = loop {
        let answer = match clean.next_request().unwrap() {
            Step::Draft(r) => draft.forward(&r).unwrap(),
            Step::Target(r) => target.forward(&r).unwrap(),
            step => panic!("expected a model request, got {step:?}"),
        };
        if let Some(round) = clean.supply(answer).unwrap() {
            break round;
        }
    };
    trace.timing = expected.timing;
    assert_eq!(trace, expected);
    assert_eq!(
        (trace.round, trace.draft_calls, trace.target_calls),
        (0, 2, 1)
    );
    assert!(!trace.emitted.is_empty());
}

#[test]
fn prompt_tokens_and_token_tables_are_checked_against_the_vocabulary() {
    let (mut target, mut draft) = pair(4, 1, 3, 1.0);
    let mut decoder = Decoder::new(
        DecodeConfig::builder(speculative(2)).build().unwrap(),
        vec![0, 9],
    )
    .unwrap();
    assert_eq!(
        generate(&mut decoder, &mut draft, &mut target).unwrap_err(),
        Error::TokenOutOfRange { token: 9, vocab: 4 }
    );
    let config = DecodeConfig::builder(speculative(2))
        .stop_strings(vec!["ab".into()])
        .token_text(Some(vec!["a".into(), "b".into()]))
        .build()
        .unwrap();
    let mut decoder = Decoder::new(config, vec![0]).unwrap();
    assert_eq!(
        generate(&mut decoder, &mut draft, &mut target).unwrap_err(),
        Error::TokenTextLength {
            entries: 2,
            vocab: 4
        }
    );
}

/// A model that answers with the wrong number of logits, or NaNs, or fails.
struct Faulty {
    vocab: usize,
    mode: u8,
}

impl LanguageModel for Faulty {
    fn vocab_size(&self) -> usize {
        self.vocab
    }

    fn forward(&mut self, request: &ForwardRequest) -> Result<ForwardResponse, ModelError> {
        let n = request.queries.len() * self.vocab;
        match self.mode {
            0 => Ok(ForwardResponse::new(
                self.vocab,
                vec![0.0; n.saturating_sub(1)],
            )),
            1 => Ok(ForwardResponse::new(self.vocab, vec![f32::NAN; n])),
            _ => Err(ModelError("out of memory".into())),
        }
    }
}

#[test]
fn faulty_models_are_typed_errors() {
    let (mut target, mut draft) = pair(4, 1, 4, 1.0);
    for mode in 0..3 {
        let mut faulty = Faulty { vocab: 4, mode };
        let mut decoder = Decoder::new(
            DecodeConfig::builder(speculative(2)).build().unwrap(),
            vec![0],
        )
        .unwrap();
        let as_draft = generate(&mut decoder, &mut faulty, &mut target).unwrap_err();
        let mut decoder = Decoder::new(
            DecodeConfig::builder(speculative(2)).build().unwrap(),
            vec![0],
        )
        .unwrap();
        let as_target = generate(&mut decoder, &mut draft, &mut faulty).unwrap_err();
        match mode {
            0 => {
                assert!(matches!(
                    as_draft,
                    Error::WrongResponseLength {
                        role: Role::Draft,
                        ..
                    }
                ));
                assert!(matches!(
                    as_target,
                    Error::WrongResponseLength {
                        role: Role::Target,
                        ..
                    }
                ));
            }
            1 => {
                assert!(matches!(
                    as_draft,
                    Error::InvalidLogits {
                        role: Role::Draft,
                        ..
                    }
                ));
                assert!(matches!(
                    as_target,
                    Error::InvalidLogits {
                        role: Role::Target,
                        ..
                    }
                ));
            }
            _ => {
                assert_eq!(
                    as_draft,
                    Error::Model {
                        role: Role::Draft,
                        source: ModelError("out of memory".into())
                    }
                );
                assert!(
                    as_target
                        .to_string()
                        .contains("target model failed: out of memory")
                );
            }
        }
    }
    // A drafting method needs a draft model.
    let mut decoder = Decoder::new(
        DecodeConfig::builder(speculative(2)).build().unwrap(),
        vec![0],
    )
    .unwrap();
    assert_eq!(
        generate_autoregressive(&mut decoder, &mut target).unwrap_err(),
        Error::MissingDraftModel
    );
}

#[test]
fn a_finished_decoder_refuses_responses() {
    let (mut target, mut draft) = pair(4, 1, 5, 1.0);
    let mut decoder = Decoder::new(
        DecodeConfig::builder(speculative(2))
            .max_new_tokens(3)
            .build()
            .unwrap(),
        vec![0],
    )
    .unwrap();
    generate(&mut decoder, &mut draft, &mut target).unwrap();
    assert!(decoder.is_done());
    assert!(matches!(decoder.next_request().unwrap(), Step::Done(_)));
    assert_eq!(
        decoder
            .supply(ForwardResponse::new(4, vec![0.0; 4]))
            .unwrap_err(),
        Error::NoPendingRequest
    );
}

#[test]
fn a_retried_response_continues_exactly_as_a_first_good_one() {
    let (mut target, mut draft) = pair(5, 1, 6, 1.5);
    let config = DecodeConfig::builder(spectr_iid(3, 3))
        .max_new_tokens(20)
        .seed(3)
        .build()
        .unwrap();
    let mut clean = Decoder::new(config.clone(), vec![1]).unwrap();
    let expected = generate(&mut clean, &mut draft, &mut target).unwrap();
    let mut decoder = Decoder::new(config, vec![1]).unwrap();
    let mut rounds = Vec::new();
    let mut errors = 0;
    loop {
        let response = match decoder.next_request().unwrap() {
            Step::Draft(request) | Step::Parallel { draft: request, .. } => {
                draft.forward(&request).unwrap()
            }
            Step::Target(request) => {
                // Every row but the root's is invalid: the selection fails at depth 2,
                // after drawing the uniforms of depth 1, whenever a draft survives depth 1.
                let good = target.forward(&request).unwrap();
                let mut bad = good.clone();
                bad.logits[good.vocab..]
                    .iter_mut()
                    .for_each(|l| *l = f32::NAN);
                match decoder.supply(bad) {
                    Ok(trace) => {
                        rounds.extend(trace);
                        continue;
                    }
                    Err(e) => {
                        assert!(matches!(
                            e,
                            Error::InvalidLogits {
                                role: Role::Target,
                                ..
                            }
                        ));
                        errors += 1;
                        good
                    }
                }
            }
            Step::Done(_) => break,
        };
        rounds.extend(decoder.supply(response).unwrap());
    }
    assert!(errors > 0);
    assert_eq!(decoder.generated(), &expected.tokens[..]);
    assert_eq!(rounds, expected.rounds);
}

#[test]
fn a_refused_response_does_not_fix_the_vocabulary() {
    // Found by tests/supply_fuzz.rs: a response of the right shape refused for a
    // non-finite logit used to leave its vocabulary learned, so the real model's
    // response was then a vocabulary mismatch.
    let (mut target, mut draft) = pair(6, 1, 1, 1.0);
    let config = DecodeConfig::builder(Method::Autoregressive)
        .max_new_tokens(1)
        .sampling(SamplingConfig {
            temperature: 0.0,
            ..SamplingConfig::default()
        })
        .build()
        .unwrap();
    let mut decoder = Decoder::new(config, vec![0]).unwrap();
    let Ok(Step::Target(_)) = decoder.next_request() else {
        panic!("autoregressive decoding asks the target first")
    };
    let refused = decoder.supply(ForwardResponse::new(
        5,
        vec![0.0, 0.0, 0.0, 0.0, f32::INFINITY],
    ));
    assert!(refused.is_err(), "{refused:?}");
    let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
    assert_eq!(out.tokens.len(), 1);
}
