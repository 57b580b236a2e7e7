//! Traces are plain data that replay: every recorded decision follows from its uniform
//! and the recorded distributions, and every recorded distribution is the model's own.
//! Requests have the promised shape (one batched target request per round, a committed
//! prefix a KV cache can keep, every distinct path scored once).

mod common;

use std::collections::BTreeSet;

use common::{Recording, all_methods, mentored, pair, spectr_iid, spectr_tree, speculative};
use specula_core::{
    Distribution, DraftTest, KSeq, Mentored, MultiRound, Race, Residual, ResidualDraw, Speculative,
    Typical,
};
use specula_engine::synthetic::MarkovModel;
use specula_engine::{
    DecodeConfig, Decoder, DepthStep, Generation, Method, RoundTrace, SamplingConfig, Selection,
    Step, StepPlan, TokenSource, generate,
};

const PROMPT: [u32; 2] = [2, 3];

fn traced(method: Method, seed: u64, max_new_tokens: usize) -> Generation {
    let (mut target, mut draft) = pair(5, 1, 40, 1.5);
    let config = DecodeConfig::builder(method)
        .max_new_tokens(max_new_tokens)
        .seed(seed)
        .record_distributions(true)
        .build()
        .unwrap();
    common::run(config, &PROMPT, &mut draft, &mut target)
}

/// Two plans equal up to rounding: the same JSON, numbers within 1e-9 (relative). The
/// recorded distributions are renormalised when read back, which moves them by ulps.
fn assert_close_plans(recorded: &serde_json::Value, fresh: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match (recorded, fresh) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            assert!(
                (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
                "{at}: {a} recorded, {b} recomputed"
            );
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{at}");
            for (i, (a, b)) in a.iter().zip(b).enumerate() {
                assert_close_plans(a, b, &format!("{at}[{i}]"));
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            assert_eq!(
                a.keys().collect::<Vec<_>>(),
                b.keys().collect::<Vec<_>>(),
                "{at}"
            );
            for (key, a) in a {
                assert_close_plans(a, &b[key], &format!("{at}.{key}"));
            }
        }
        _ => assert_eq!(recorded, fresh, "{at}"),
    }
}

/// The residual a recorded draw came from, recomputed by the core scheme its description
/// names, built afresh from the recorded distributions (the target itself for
/// [`Residual::Target`]).
fn residual_of(
    draw: &ResidualDraw,
    step: &DepthStep,
    target: &Distribution,
    draft: &Distribution,
) -> Distribution {
    let k = step.candidates.len();
    match draw.residual {
        Residual::Target => target.clone(),
        Residual::TargetMinusDraft => Speculative::new(target, draft)
            .unwrap()
            .residual_distribution(),
        Residual::KSeq { .. } => KSeq::new(target, draft, k, None)
            .unwrap()
            .residual_distribution(),
        Residual::MultiRound { rounds } => MultiRound::new(target, draft, rounds)
            .unwrap()
            .residual_distribution(),
        Residual::Race { k } => Race::new(target, draft, k).unwrap().residual_distribution(),
        Residual::Mentored { .. } => {
            let plan = step.plan.as_ref().and_then(StepPlan::mentored).unwrap();
            Mentored::new(target, draft, plan.kl_budget)
                .unwrap()
                .residual_distribution()
        }
        other => panic!("no scheme records {other:?}"),
    }
}

fn check_plan<P: serde::Serialize>(recorded: Option<&P>, fresh: &P, at: &str) {
    let recorded = serde_json::to_value(recorded.expect("the step records its plan")).unwrap();
    assert_close_plans(&recorded, &serde_json::to_value(fresh).unwrap(), at);
}

/// The acceptance probability of each recorded test, recomputed from the recorded
/// distributions `t` and `d` with the method's own rule (not read from the trace):
/// speculative `min(1, t/d)`; k-Seq `min(1, t/(ρ·d))` with ρ from a fresh `KSeq`;
/// multi-round `min(1, rᵢ/d)` over the residuals `r₀ = t`, `rᵢ = norm(max(0, rᵢ₋₁ − d))`;
/// the race `min(1, t/r)` with `r` from a fresh `Race`; mentored `min(1, t/(α·d))`
/// with α from a fresh `Mentored`; typical 1 when `t > τ` with τ from a fresh `Typical`,
/// else 0; prompt lookup `min(1, t/1)` (its draft is a point mass). The plans the trace carries must equal the fresh
/// ones.
fn recomputed_accept_probs(method: &Method, step: &DepthStep, t: &[f64], d: &[f64]) -> Vec<f64> {
    let target = Distribution::from_probs(t.to_vec()).unwrap();
    let draft = Distribution::from_probs(d.to_vec()).unwrap();
    let (target, draft) = (&target, &draft);
    let at = method.name();
    let k = step.candidates.len();
    let tests: &[DraftTest] = &step.outcome.tests;
    let min1 = |num: f64, den: f64| if den > 0.0 { (num / den).min(1.0) } else { 0.0 };
    match method {
        Method::Speculative { .. } => tests.iter().map(|x| min1(t[x.token], d[x.token])).collect(),
        Method::SpecTr {
            selection: Selection::KSeq,
            ..
        } => {
            let plan = *KSeq::new(target, draft, k, None).unwrap().plan();
            check_plan(step.plan.as_ref().and_then(StepPlan::kseq), &plan, at);
            tests
                .iter()
                .map(|x| min1(t[x.token], plan.rho * d[x.token]))
                .collect()
        }
        Method::MultiRound { .. } => {
            let mut residual = t.to_vec();
            tests
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    if i > 0 {
                        let mass: f64 = residual.iter().zip(d).map(|(r, d)| (r - d).max(0.0)).sum();
                        if mass > specula_core::RESIDUAL_EPSILON {
                            for (r, d) in residual.iter_mut().zip(d) {
                                *r = (*r - d).max(0.0) / mass;
                            }
                        }
                    }
                    min1(residual[x.token], d[x.token])
                })
                .collect()
        }
        Method::SpecTr {
            selection: Selection::Race,
            ..
        } => {
            let plan = Race::new(target, draft, k).unwrap().into_plan();
            check_plan(step.plan.as_ref().and_then(StepPlan::race), &plan, at);
            tests
                .iter()
                .map(|x| min1(t[x.token], plan.selection[x.token]))
                .collect()
        }
        Method::Mentored { kl_budget, .. } => {
            let plan = *Mentored::new(target, draft, *kl_budget).unwrap().plan();
            check_plan(step.plan.as_ref().and_then(StepPlan::mentored), &plan, at);
            tests
                .iter()
                .map(|x| match (t[x.token], d[x.token]) {
                    (_, d) if d <= 0.0 => 0.0,
                    (t, _) if t <= 0.0 => plan.zero_target_accept,
                    _ if plan.alpha <= 0.0 => 1.0,
                    (t, d) => min1(t, plan.alpha * d),
                })
                .collect()
        }
        Method::Typical { epsilon, delta, .. } => {
            let plan = *Typical::new(target, draft, *epsilon, *delta)
                .unwrap()
                .plan();
            check_plan(step.plan.as_ref().and_then(StepPlan::typical), &plan, at);
            tests
                .iter()
                .map(|x| f64::from(u8::from(d[x.token] > 0.0 && t[x.token] > plan.threshold)))
                .collect()
        }
        // The proposal is a point mass: min(1, t/1).
        Method::Lookup { .. } => {
            assert!(tests.iter().all(|x| d[x.token] == 1.0), "{at}");
            tests.iter().map(|x| min1(t[x.token], d[x.token])).collect()
        }
        Method::Autoregressive => {
            assert!(tests.is_empty());
            Vec::new()
        }
    }
}

#[test]
fn traces_replay_from_their_uniforms_and_distributions() {
    let (mut checked, mut decided) = (0, 0);
    for method in all_methods() {
        for seed in 0..10 {
            let out = traced(method.clone(), seed, 40);
            let name = method.name();
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
                    // Candidates are the draft nodes at this depth, tested in order; each
                    // decision follows from its uniform and the acceptance probability the
                    // method's rule gives on the recorded distributions.
                    let (t, d) = (step.target_probs.as_ref(), step.draft_probs.as_ref());
                    let accept = recomputed_accept_probs(&method, step, t.unwrap(), d.unwrap());
                    assert_eq!(accept.len(), step.outcome.tests.len());
                    for (test, &p) in step.outcome.tests.iter().zip(&accept) {
                        let node = &round.drafts[step.candidates[test.draft_index]];
                        assert_eq!(node.depth, step.depth);
                        assert_eq!(node.token as usize, test.token);
                        assert_eq!(test.draft_prob, d.unwrap()[test.token], "{name}");
                        assert!(
                            (test.accept_prob - p).abs() <= 1e-12,
                            "{name}: recorded accept_prob {} but the rule gives {p}",
                            test.accept_prob
                        );
                        match test.uniform {
                            Some(u) => {
                                if (u - p).abs() > 1e-12 {
                                    assert_eq!(test.accepted, u < p, "{name}: u = {u}, p = {p}");
                                    decided += 1;
                                }
                            }
                            // Typical acceptance's test is deterministic: p is 0 or 1.
                            None => {
                                assert!(matches!(method, Method::Typical { .. }), "{name}");
                                assert_eq!(test.accepted, p == 1.0, "{name}");
                                decided += 1;
                            }
                        }
                        checked += 1;
                    }
                    assert_eq!(step.token as usize, step.outcome.token);
                    match &step.outcome.residual {
                        None => assert_eq!(step.source, TokenSource::Accepted),
                        Some(draw) => {
                            assert_eq!(step.source, TokenSource::Resampled);
                            if let Some(u) = draw.uniform {
                                let residual = residual_of(draw, step, &target, &draft);
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
                    if let Some(plan) = step.plan.as_ref().and_then(StepPlan::kseq) {
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
    assert!(
        decided * 10 > checked * 9,
        "{decided} of {checked} decisions checked"
    );
}

#[test]
fn traces_serialize_to_json_with_target_and_draft_names() {
    let out = traced(spectr_tree(&[2, 2]), 1, 12);
    let json = serde_json::to_value(&out).unwrap();
    let round = &json["rounds"][0];
    assert_eq!(round["method"], "spectr");
    assert!(round["drafts"][0]["draftProb"].is_number());
    assert!(round["steps"][0]["outcome"]["tests"].is_array());
    assert!(round["steps"][0]["targetProbs"].is_array());
    assert_eq!(round["steps"][0]["plan"]["kind"], "kseq");
    assert!(round["steps"][0]["plan"]["rho"].is_number());
    let text = serde_json::to_string(&json).unwrap();
    assert!(!text.contains("\"p\"") && !text.contains("\"q\""));
    // Mentored steps carry their plan.
    let out = traced(mentored(2, 0.1), 1, 6);
    let json = serde_json::to_value(&out.rounds[0]).unwrap();
    assert_eq!(json["steps"][0]["plan"]["kind"], "mentored");
    assert!(json["steps"][0]["plan"]["kl"].is_number());
    // Without distributions the trace stays small.
    let (mut target, mut draft) = pair(5, 1, 40, 1.5);
    let config = DecodeConfig::builder(speculative(3))
        .max_new_tokens(5)
        .build()
        .unwrap();
    let out = common::run(config, &[0], &mut draft, &mut target);
    let text = serde_json::to_string(&out.rounds).unwrap();
    assert!(!text.contains("targetProbs") && !text.contains("draftProbs"));
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
        let config = DecodeConfig::builder(method.clone())
            .max_new_tokens(30)
            .seed(7)
            .record_distributions(true)
            .build()
            .unwrap();
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
                Step::Parallel { .. } => unreachable!("parallel drafting is off"),
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
        let config = DecodeConfig::builder(method.clone())
            .max_new_tokens(200)
            .build()
            .unwrap();
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
        let mut duplicates = 0;
        for (request, round) in target.requests.iter().zip(&out.rounds) {
            assert_eq!(request.committed_len, committed.len(), "{name}");
            assert_eq!(round.committed_len, committed.len());
            // Every sequence starts with the committed tokens, which never change.
            for seq in &request.sequences {
                assert_eq!(&seq[..committed.len()], &committed[..], "{name}");
            }
            let round_depth = round.branching.len();
            assert!(round_depth <= depth, "{name}");
            // Every node of the draft set is scored, identical paths once: one query per
            // distinct path (and the committed prefix), asking for exactly those prefixes.
            let paths = draft_paths(round);
            let distinct: BTreeSet<&Vec<u32>> = paths.iter().collect();
            duplicates += paths.len() - distinct.len();
            assert_eq!(
                request.queries.len(),
                1 + distinct.len(),
                "{name}: one query per distinct path"
            );
            let asked: BTreeSet<Vec<u32>> = request
                .queries
                .iter()
                .map(|query| request.prefix(query).unwrap().to_vec())
                .collect();
            let expected: BTreeSet<Vec<u32>> = std::iter::once(Vec::new())
                .chain(distinct.iter().map(|p| (*p).clone()))
                .map(|p| [&committed[..], &p[..]].concat())
                .collect();
            assert_eq!(asked, expected, "{name}");
            // The sequences are the distinct deepest paths (the committed tokens alone when
            // the round drafts nothing).
            let leaves: BTreeSet<&Vec<u32>> = distinct
                .iter()
                .copied()
                .filter(|p| p.len() == round_depth)
                .collect();
            assert_eq!(request.sequences.len(), leaves.len().max(1), "{name}");
            assert!(leaves.len() <= k, "{name}");
            // The round's draft requests: one per depth, one query per distinct path one
            // shorter, at the right position.
            for d in 1..=round_depth {
                let dr = draft_requests.next().unwrap();
                assert_eq!(dr.committed_len, committed.len());
                assert!(
                    dr.queries
                        .iter()
                        .all(|query| query.prefix_len == committed.len() + d - 1),
                    "{name}"
                );
                let parents = distinct.iter().filter(|p| p.len() == d - 1).count().max(1);
                assert_eq!(dr.queries.len(), parents, "{name}: depth {d}");
            }
            committed.extend_from_slice(&round.emitted);
        }
        assert!(draft_requests.next().is_none());
        if k > 1 {
            assert!(
                duplicates > 0,
                "{name}: no identical paths to merge were drawn"
            );
        }
    }
}

/// The token path of every draft node of a round (its ancestors' tokens, then its own).
fn draft_paths(round: &RoundTrace) -> Vec<Vec<u32>> {
    let mut paths: Vec<Vec<u32>> = Vec::with_capacity(round.drafts.len());
    for node in &round.drafts {
        let mut path = node.parent.map_or_else(Vec::new, |p| paths[p].clone());
        path.push(node.token);
        paths.push(path);
    }
    paths
}

/// The models' own conditional after `context`, computed here from their logits.
fn own(model: &MarkovModel, context: &[u32]) -> Vec<f64> {
    model
        .distribution(context, &SamplingConfig::default())
        .unwrap()
        .into_probs()
}

#[test]
fn drafts_are_sampled_from_the_distribution_used_to_test_them() {
    // Every recorded distribution is checked against the models themselves (their
    // conditionals after the node's own prefix, computed in the test): each draft node's,
    // and each step's draft and target distributions and the probabilities its tests use.
    let (target_model, draft_model) = pair(5, 1, 40, 1.5);
    for method in [
        speculative(3),
        spectr_iid(4, 2),
        spectr_tree(&[2, 2]),
        mentored(3, 0.2),
        common::race_tree(&[2, 2]),
    ] {
        let name = method.name();
        let out = traced(method, 3, 30);
        let mut committed = PROMPT.to_vec();
        for round in &out.rounds {
            assert_eq!(round.committed_len, committed.len());
            let paths = draft_paths(round);
            for (node, path) in round.drafts.iter().zip(&paths) {
                let context = [&committed[..], &path[..path.len() - 1]].concat();
                let expected = own(&draft_model, &context);
                assert_eq!(node.draft_probs.as_ref(), Some(&expected), "{name}");
                assert_eq!(node.draft_prob, expected[node.token as usize], "{name}");
            }
            let mut context = committed.clone();
            for step in &round.steps {
                let target = own(&target_model, &context);
                let draft = own(&draft_model, &context);
                assert_eq!(step.target_probs.as_ref(), Some(&target), "{name}");
                assert_eq!(step.draft_probs.as_ref(), Some(&draft), "{name}");
                for test in &step.outcome.tests {
                    assert_eq!(test.draft_prob, draft[test.token], "{name}");
                    assert_eq!(test.target_prob, target[test.token], "{name}");
                }
                // The residual a rejection drew from, computed by the core from the two
                // recorded distributions; none when a draft was accepted.
                let residual = step.outcome.residual.as_ref().map(|draw| {
                    let t = Distribution::from_probs(target.clone()).unwrap();
                    let d = Distribution::from_probs(draft.clone()).unwrap();
                    residual_of(draw, step, &t, &d).into_probs()
                });
                match (&step.residual_probs, &residual) {
                    (Some(got), Some(want)) => {
                        // The recorded distributions are renormalised when read back.
                        assert!(
                            got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12),
                            "{name}: {got:?} != {want:?}"
                        );
                    }
                    (got, want) => assert_eq!(got.is_some(), want.is_some(), "{name}"),
                }
                if let (Some(r), Some(draw)) = (&step.residual_probs, &step.outcome.residual) {
                    assert!(r[draw.token] > 0.0, "{name}: the replacement has mass");
                }
                context.push(step.token);
            }
            if let Some(bonus) = &round.bonus {
                let target = own(&target_model, &context);
                assert_eq!(bonus.target_probs.as_ref(), Some(&target), "{name}");
            }
            committed.extend_from_slice(&round.emitted);
        }
        assert_eq!(&committed[PROMPT.len()..], &out.tokens[..]);
    }
}

#[test]
fn the_decoder_can_move_between_threads_and_steps_serialize() {
    fn assert_send<T: Send>() {}
    assert_send::<Decoder>();
    let mut decoder = Decoder::new(
        DecodeConfig::builder(speculative(2)).build().unwrap(),
        vec![1, 2],
    )
    .unwrap();
    let json = serde_json::to_value(decoder.next_request().unwrap()).unwrap();
    assert_eq!(json["draft"]["role"], "draft");
    assert_eq!(json["draft"]["committed_len"], 2);
    assert_eq!(json["draft"]["queries"][0]["prefix_len"], 2);
}
