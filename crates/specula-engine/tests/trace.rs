//! Traces are plain data that replay: every recorded decision follows from its uniform
//! and the recorded distributions. Requests have the promised shape (one batched target
//! request per round, a committed prefix a KV cache can keep).

mod common;

use common::{Recording, all_methods, mentored, pair, spectr_iid, spectr_tree, speculative};
use specula_core::Distribution;
use specula_engine::{DecodeConfig, Decoder, Generation, Method, Step, TokenSource, generate};

fn traced(method: Method, seed: u64, max_new_tokens: usize) -> Generation {
    let (mut target, mut draft) = pair(5, 1, 40, 1.5);
    let config = DecodeConfig {
        max_new_tokens,
        seed,
        record_distributions: true,
        ..DecodeConfig::new(method)
    };
    common::run(config, &[2, 3], &mut draft, &mut target)
}

#[test]
fn traces_replay_from_their_uniforms_and_distributions() {
    let mut checked = 0;
    for method in all_methods() {
        for seed in 0..10 {
            let out = traced(method.clone(), seed, 40);
            for round in &out.rounds {
                for node in &round.drafts {
                    let probs = node
                        .draft_probs
                        .as_ref()
                        .expect("distributions were asked for");
                    assert_eq!(probs[node.token as usize], node.draft_prob);
                    if let Some(parent) = node.parent {
                        assert_eq!(round.drafts[parent].depth + 1, node.depth);
                    } else {
                        assert_eq!(node.depth, 1);
                    }
                }
                for step in &round.steps {
                    let target =
                        Distribution::from_probs(step.target_probs.clone().unwrap()).unwrap();
                    let draft =
                        Distribution::from_probs(step.draft_probs.clone().unwrap()).unwrap();
                    // Candidates are the draft nodes at this depth, tested in order.
                    for test in &step.outcome.tests {
                        let node = &round.drafts[step.candidates[test.draft_index]];
                        assert_eq!(node.depth, step.depth);
                        assert_eq!(node.token as usize, test.token);
                        if let Some(u) = test.uniform
                            && (u - test.accept_prob).abs() > 1e-12
                        {
                            assert_eq!(test.accepted, u < test.accept_prob, "{}", method.name());
                        }
                        checked += 1;
                    }
                    assert_eq!(step.token as usize, step.outcome.token);
                    match &step.outcome.residual {
                        None => assert_eq!(step.source, TokenSource::Accepted),
                        Some(draw) => {
                            assert_eq!(step.source, TokenSource::Resampled);
                            if let Some(u) = draw.uniform {
                                let residual = draw.residual.distribution(&target, &draft).unwrap();
                                assert_eq!(
                                    residual.sample_with_uniform(u),
                                    draw.token,
                                    "{}",
                                    method.name()
                                );
                            }
                        }
                    }
                    for &s in &step.survivors {
                        assert!(step.candidates.contains(&s));
                        assert_eq!(round.drafts[s].token, step.token);
                    }
                    if let Some(plan) = &step.kseq {
                        assert_eq!(plan.k, step.candidates.len());
                    }
                }
                if let Some(bonus) = &round.bonus {
                    let target =
                        Distribution::from_probs(bonus.target_probs.clone().unwrap()).unwrap();
                    let u = bonus.uniform.unwrap();
                    assert_eq!(target.sample_with_uniform(u) as u32, bonus.token);
                }
                // Emitted tokens are the selected ones, in order, cut at a stop.
                let selected: Vec<u32> = round
                    .steps
                    .iter()
                    .map(|s| s.token)
                    .chain(round.bonus.as_ref().map(|b| b.token))
                    .collect();
                assert_eq!(&selected[..round.emitted.len()], &round.emitted[..]);
            }
        }
    }
    assert!(checked > 1000);
}

#[test]
fn traces_serialize_to_json_with_target_and_draft_names() {
    let out = traced(spectr_tree(&[2, 2]), 1, 12);
    let json = serde_json::to_value(&out).unwrap();
    let round = &json["rounds"][0];
    assert_eq!(round["method"], "spectr_tree");
    assert!(round["drafts"][0]["draft_prob"].is_number());
    assert!(round["steps"][0]["outcome"]["tests"].is_array());
    assert!(round["steps"][0]["target_probs"].is_array());
    assert!(round["steps"][0]["kseq"]["rho"].is_number());
    let text = serde_json::to_string(&json).unwrap();
    assert!(!text.contains("\"p\"") && !text.contains("\"q\""));
    // Mentored steps carry their plan.
    let out = traced(mentored(2, 0.1), 1, 6);
    let json = serde_json::to_value(&out.rounds[0]).unwrap();
    assert!(json["steps"][0]["mentored"]["kl"].is_number());
    // Without distributions the trace stays small.
    let (mut target, mut draft) = pair(5, 1, 40, 1.5);
    let config = DecodeConfig {
        max_new_tokens: 5,
        ..DecodeConfig::new(speculative(3))
    };
    let out = common::run(config, &[0], &mut draft, &mut target);
    let text = serde_json::to_string(&out.rounds).unwrap();
    assert!(!text.contains("target_probs") && !text.contains("draft_probs"));
}

#[test]
fn same_seed_same_trace_and_manual_driving_equals_the_driver() {
    for method in all_methods() {
        let a = traced(method.clone(), 7, 30);
        let b = traced(method.clone(), 7, 30);
        assert_eq!(a, b);
        let c = traced(method.clone(), 8, 30);
        assert_ne!(a.tokens, c.tokens, "{}", method.name());
        // Drive the state machine by hand, as an asynchronous caller would.
        let (mut target, mut draft) = pair(5, 1, 40, 1.5);
        let config = DecodeConfig {
            max_new_tokens: 30,
            seed: 7,
            record_distributions: true,
            ..DecodeConfig::new(method.clone())
        };
        let mut decoder = Decoder::new(config, vec![2, 3]).unwrap();
        let mut rounds = Vec::new();
        let finish = loop {
            let response = match decoder.next_request().unwrap() {
                Step::Draft(request) => {
                    // Asking twice gives the same request.
                    assert_eq!(
                        decoder.next_request().unwrap(),
                        Step::Draft(request.clone())
                    );
                    specula_engine::LanguageModel::forward(&mut draft, &request).unwrap()
                }
                Step::Target(request) => {
                    specula_engine::LanguageModel::forward(&mut target, &request).unwrap()
                }
                Step::Done(reason) => break reason,
            };
            rounds.extend(decoder.supply(response).unwrap());
        };
        assert_eq!(finish, a.finish);
        assert_eq!(rounds, a.rounds);
        assert_eq!(decoder.generated(), &a.tokens[..]);
    }
}

#[test]
fn requests_batch_every_position_and_keep_a_committed_prefix() {
    let shapes: [(Method, usize, usize); 5] = [
        (speculative(4), 4, 1),
        (spectr_iid(3, 2), 2, 3),
        (spectr_tree(&[2, 3]), 2, 6),
        (Method::Autoregressive, 0, 1),
        (mentored(2, 0.1), 2, 1),
    ];
    for (method, depth, k) in shapes {
        let (target, draft) = pair(6, 1, 50, 1.0);
        let mut target = Recording::new(target);
        let mut draft = Recording::new(draft);
        let config = DecodeConfig {
            max_new_tokens: 200,
            ..DecodeConfig::new(method.clone())
        };
        let mut decoder = Decoder::new(config, vec![4, 4, 4]).unwrap();
        let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
        let name = method.name();
        assert_eq!(
            target.requests.len(),
            out.rounds.len(),
            "{name}: one target request per round"
        );
        assert_eq!(draft.requests.len() as u64, out.metrics.draft_calls);
        let mut committed: Vec<u32> = vec![4, 4, 4];
        let mut draft_requests = draft.requests.iter();
        for (request, round) in target.requests.iter().zip(&out.rounds) {
            assert_eq!(request.committed_len, committed.len(), "{name}");
            assert_eq!(round.committed_len, committed.len());
            // Every sequence starts with the committed tokens, which never change.
            for seq in &request.sequences {
                assert_eq!(&seq[..committed.len()], &committed[..], "{name}");
            }
            let round_depth = round.branching.len();
            if round_depth == depth {
                // Every node of the draft set is scored, identical paths once.
                assert!(request.queries.len() <= 1 + round.drafts.len());
                assert!(request.sequences.len() <= k, "{name}");
                if k == 1 {
                    assert_eq!(
                        request.queries.len(),
                        depth + 1,
                        "{name}: gamma + 1 positions"
                    );
                }
            }
            let mut positions: Vec<usize> = request
                .queries
                .iter()
                .map(|query| query.prefix_len)
                .collect();
            positions.sort_unstable();
            assert_eq!(positions[0], committed.len());
            assert!(*positions.last().unwrap() <= committed.len() + round_depth);
            // The round's draft requests: one per depth, at the right position.
            for d in 1..=round_depth {
                let dr = draft_requests.next().unwrap();
                assert_eq!(dr.committed_len, committed.len());
                assert!(
                    dr.queries
                        .iter()
                        .all(|query| query.prefix_len == committed.len() + d - 1),
                    "{name}"
                );
                assert!(dr.queries.len() <= k);
            }
            committed.extend_from_slice(&round.emitted);
        }
        assert!(draft_requests.next().is_none());
    }
}

#[test]
fn drafts_are_sampled_from_the_distribution_used_to_test_them() {
    // The draft probability on every test equals the draft distribution recorded at that
    // step, which is the one the draft model's logits gave (same sampling config).
    for method in [
        speculative(3),
        spectr_iid(4, 2),
        spectr_tree(&[2, 2]),
        mentored(3, 0.2),
    ] {
        let out = traced(method, 3, 30);
        for round in &out.rounds {
            for step in &round.steps {
                let draft = step.draft_probs.as_ref().unwrap();
                for test in &step.outcome.tests {
                    assert_eq!(test.draft_prob, draft[test.token]);
                }
                for &c in &step.candidates {
                    assert_eq!(round.drafts[c].draft_probs.as_ref(), Some(draft));
                }
            }
        }
    }
}

#[test]
fn the_decoder_can_move_between_threads_and_steps_serialize() {
    fn assert_send<T: Send>() {}
    assert_send::<Decoder>();
    let mut decoder = Decoder::new(DecodeConfig::new(speculative(2)), vec![1, 2]).unwrap();
    let json = serde_json::to_value(decoder.next_request().unwrap()).unwrap();
    assert_eq!(json["draft"]["role"], "draft");
    assert_eq!(json["draft"]["committed_len"], 2);
    assert_eq!(json["draft"]["queries"][0]["prefix_len"], 2);
}
