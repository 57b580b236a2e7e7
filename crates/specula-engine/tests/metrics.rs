//! Metrics add up, follow vLLM's definitions, and match the theory where it is exact.

mod common;

use std::time::Duration;

use common::{all_methods, pair, run, speculative};
use specula_core::{overlap, theory};
use specula_engine::synthetic::MarkovModel;
use specula_engine::{
    DecodeConfig, Decoder, ManualClock, Method, Metrics, SamplingConfig, TokenSource, generate,
    generate_autoregressive,
};

#[test]
fn emitted_tokens_are_accepted_plus_resampled_plus_bonus() {
    let (mut target, mut draft) = pair(5, 1, 3, 1.5);
    for method in all_methods() {
        for seed in 0..20 {
            let config = DecodeConfig::builder(method.clone())
                .max_new_tokens(37)
                .seed(seed)
                .build()
                .unwrap();
            let out = run(config, &[1], &mut draft, &mut target);
            let m = &out.metrics;
            let name = method.name();
            assert_eq!(out.tokens.len(), 37, "{name}");
            let mut emitted = Vec::new();
            let (mut drafted, mut draft_calls) = (0, 0);
            for round in &out.rounds {
                assert_eq!(round.emitted.len(), round.counts.total(), "{name}");
                assert_eq!(round.emitted.len(), round.sources.len(), "{name}");
                let count = |s| round.sources.iter().filter(|&&x| x == s).count();
                assert_eq!(
                    round.counts.accepted,
                    count(TokenSource::Accepted),
                    "{name}"
                );
                assert_eq!(
                    round.counts.resampled,
                    count(TokenSource::Resampled),
                    "{name}"
                );
                assert_eq!(round.counts.bonus, count(TokenSource::Bonus), "{name}");
                // Selected = emitted + truncated; at most one non-accepted token per round.
                let selected = round.steps.len() + usize::from(round.bonus.is_some());
                assert_eq!(selected, round.emitted.len() + round.truncated, "{name}");
                assert!(round.counts.resampled + round.counts.bonus <= 1, "{name}");
                assert_eq!(round.target_calls, 1);
                // Prompt lookup proposes without a draft model.
                let calls = match method {
                    Method::Lookup { .. } => 0,
                    _ => round.branching.len(),
                };
                assert_eq!(round.draft_calls, calls, "{name}");
                let nodes: usize = round
                    .branching
                    .iter()
                    .scan(1, |w, &b| {
                        *w *= b;
                        Some(*w)
                    })
                    .sum();
                assert_eq!(round.drafts.len(), nodes, "{name}");
                drafted += round.drafts.len() as u64;
                draft_calls += round.draft_calls as u64;
                emitted.extend_from_slice(&round.emitted);
            }
            assert_eq!(emitted, out.tokens, "{name}");
            assert_eq!(m.emitted_tokens, 37);
            assert_eq!(
                m.emitted_tokens,
                m.accepted_tokens + m.resampled_tokens + m.bonus_tokens,
                "{name}"
            );
            assert_eq!(m.rounds, out.rounds.len() as u64);
            assert_eq!(m.target_calls, m.rounds);
            assert_eq!(m.draft_calls, draft_calls);
            assert_eq!(m.drafted_tokens, drafted);
            assert_eq!(m.accepted_length_histogram.iter().sum::<u64>(), m.rounds);
            let weighted: u64 = m
                .accepted_length_histogram
                .iter()
                .enumerate()
                .map(|(n, &c)| n as u64 * c)
                .sum();
            assert_eq!(weighted, m.accepted_tokens);
            assert_eq!(
                m.accepted_per_position.iter().sum::<u64>(),
                m.accepted_tokens
            );
            let block = m.block_efficiency().unwrap();
            assert!((block - 37.0 / m.rounds as f64).abs() < 1e-12);
            let mean_len = m.mean_acceptance_length().unwrap();
            assert!((mean_len - (1.0 + m.accepted_tokens as f64 / m.rounds as f64)).abs() < 1e-12);
            if m.drafted_tokens > 0 {
                let rate = m.acceptance_rate().unwrap();
                assert!((rate - m.accepted_tokens as f64 / m.drafted_tokens as f64).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn autoregressive_is_one_bonus_token_per_target_call() {
    let (mut target, _) = pair(5, 1, 4, 1.0);
    let mut decoder = Decoder::new(
        DecodeConfig::default()
            .into_builder()
            .max_new_tokens(25)
            .build()
            .unwrap(),
        vec![0],
    )
    .unwrap();
    let out = generate_autoregressive(&mut decoder, &mut target).unwrap();
    let m = &out.metrics;
    assert_eq!(
        (
            m.rounds,
            m.target_calls,
            m.bonus_tokens,
            m.drafted_tokens,
            m.draft_calls
        ),
        (25, 25, 25, 0, 0)
    );
    assert_eq!(m.block_efficiency(), Some(1.0));
    assert_eq!(m.mean_acceptance_length(), Some(1.0));
    assert_eq!(m.acceptance_rate(), None);
    assert_eq!(target.calls(), 25);
}

/// Order-0 models: the same target and draft distributions at every position, so every
/// draft is accepted independently with probability α = Σ min(target, draft).
fn constant_pair() -> (MarkovModel, MarkovModel, f64) {
    let target = MarkovModel::from_probs(4, 0, &[0.4, 0.3, 0.2, 0.1]).unwrap();
    let draft = MarkovModel::from_probs(4, 0, &[0.25, 0.25, 0.25, 0.25]).unwrap();
    let sampling = SamplingConfig::default();
    let t = target.distribution(&[], &sampling).unwrap();
    let d = draft.distribution(&[], &sampling).unwrap();
    let alpha = overlap(t.probs(), d.probs());
    (target, draft, alpha)
}

#[test]
fn block_efficiency_matches_theory_when_acceptance_is_constant() {
    let (mut target, mut draft, alpha) = constant_pair();
    assert!((alpha - 0.8).abs() < 1e-6);
    for gamma in [1_usize, 3, 6] {
        let config = DecodeConfig::builder(speculative(gamma))
            .max_new_tokens(60_000)
            .seed(gamma as u64)
            .build()
            .unwrap();
        let out = run(config, &[0], &mut draft, &mut target);
        let m = &out.metrics;
        let expected = theory::expected_tokens_per_round(alpha, gamma as u32).unwrap();
        let block = m.block_efficiency().unwrap();
        assert!(
            (block / expected - 1.0).abs() < 0.02,
            "gamma {gamma}: block efficiency {block}, theory {expected}"
        );
        // Position i is accepted iff the first i + 1 drafts all are: rate α^(i+1).
        for (i, rate) in m.per_position_acceptance().iter().enumerate() {
            let theory = alpha.powi(i as i32 + 1);
            assert!(
                (rate - theory).abs() < 0.02,
                "gamma {gamma}, position {i}: {rate} vs {theory}"
            );
        }
        // vLLM's mean acceptance length is 1 + E[accepted] = the block efficiency here.
        assert!((m.mean_acceptance_length().unwrap() / expected - 1.0).abs() < 0.02);
    }
}

#[test]
fn per_position_and_histogram_use_vllm_definitions() {
    let (mut target, mut draft, _) = constant_pair();
    let config = DecodeConfig::builder(speculative(4))
        .max_new_tokens(2_000)
        .build()
        .unwrap();
    let out = run(config, &[0], &mut draft, &mut target);
    let m = &out.metrics;
    // Histogram entry n counts rounds with n accepted drafts.
    let mut hist = [0_u64; 5];
    for round in &out.rounds {
        hist[round.counts.accepted] += 1;
    }
    assert_eq!(
        &m.accepted_length_histogram[..],
        &hist[..m.accepted_length_histogram.len()]
    );
    // Position i + 1 is drafted in exactly the rounds that draft at least i + 1 tokens (the
    // full rounds draft positions 1..=4; the last rounds may draft fewer), and accepted in
    // exactly the rounds that accept at least i + 1 drafts.
    let full = out.rounds.iter().filter(|r| r.branching.len() == 4).count() as u64;
    assert!(full > 0);
    assert_eq!(m.drafted_per_position[3], full);
    assert_eq!(m.drafted_per_position.len(), 4);
    for i in 0..4 {
        let drafted = out.rounds.iter().filter(|r| r.branching.len() > i).count() as u64;
        let accepted = out.rounds.iter().filter(|r| r.counts.accepted > i).count() as u64;
        assert_eq!(m.drafted_per_position[i], drafted, "position {}", i + 1);
        assert_eq!(
            m.accepted_per_position.get(i).copied().unwrap_or(0),
            accepted,
            "position {}",
            i + 1
        );
    }
}

#[test]
fn wall_time_is_split_into_draft_target_and_selection() {
    let clock = ManualClock::new();
    let (target, draft) = pair(5, 1, 9, 1.0);
    let mut target = target.with_cost(clock.clone(), Duration::from_millis(10));
    let mut draft = draft.with_cost(clock.clone(), Duration::from_millis(1));
    let config = DecodeConfig::builder(common::spectr_iid(2, 3))
        .max_new_tokens(50)
        .build()
        .unwrap();
    let mut decoder = Decoder::new(config, vec![0])
        .unwrap()
        .with_clock(clock.clone());
    let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
    let m = &out.metrics;
    assert_eq!(m.timing.draft_nanos, m.draft_calls * 1_000_000);
    assert_eq!(m.timing.target_nanos, m.target_calls * 10_000_000);
    assert_eq!(
        m.timing.selection_nanos, 0,
        "the manual clock does not move during selection"
    );
    for round in &out.rounds {
        assert_eq!(
            round.timing.draft_nanos,
            round.draft_calls as u64 * 1_000_000
        );
        assert_eq!(round.timing.target_nanos, 10_000_000);
    }
    let tps = m.tokens_per_second().unwrap();
    assert!((tps - 50.0 / (m.timing.total_nanos() as f64 * 1e-9)).abs() < 1e-9);
}

/// A clock that advances by one tick every time it is read, on top of the time the models
/// spend (a shared [`ManualClock`]): so every span the decoder measures between two of its
/// own reads, selection included, is known exactly.
#[derive(Clone)]
struct TickingClock {
    time: ManualClock,
    tick: Duration,
}

impl specula_engine::Clock for TickingClock {
    fn now(&self) -> Duration {
        let now = self.time.now();
        self.time.advance(self.tick);
        now
    }
}

/// Selection time is measured between the decoder's own clock reads, with an injected
/// clock instead of the wall clock: every request the decoder hands out and every response
/// it takes in costs exactly one tick of selection time on each side of the model call,
/// and each model call is charged its cost plus the one tick between the two reads around
/// it. (The wall-clock `StdClock` is the same trait; how long selection really takes is a
/// benchmark figure: `cargo bench -p specula-engine --bench overhead`.)
#[test]
fn selection_time_is_measured_between_model_calls() {
    let time = ManualClock::new();
    let tick = Duration::from_nanos(7);
    let (target, draft) = pair(64, 0, 10, 1.0);
    let mut target = target.with_cost(time.clone(), Duration::from_micros(500));
    let mut draft = draft.with_cost(time.clone(), Duration::from_micros(40));
    let config = DecodeConfig::builder(common::spectr_iid(4, 4))
        .max_new_tokens(200)
        .build()
        .unwrap();
    let mut decoder = Decoder::new(config, vec![0])
        .unwrap()
        .with_clock(TickingClock { time, tick });
    let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
    let m = &out.metrics;
    let calls = m.draft_calls + m.target_calls;
    let tick = 7;
    assert_eq!(m.timing.selection_nanos, 2 * tick * calls);
    assert_eq!(m.timing.draft_nanos, m.draft_calls * (40_000 + tick));
    assert_eq!(m.timing.target_nanos, m.target_calls * (500_000 + tick));
    for round in &out.rounds {
        let calls = round.draft_calls as u64 + 1;
        assert_eq!(round.timing.selection_nanos, 2 * tick * calls);
    }
    assert_eq!(
        m.selection_nanos_per_token(),
        Some(m.timing.selection_nanos as f64 / 200.0)
    );
    let json = serde_json::to_value(m.summary()).unwrap();
    assert_eq!(
        json["blockEfficiency"].as_f64(),
        Some(200.0 / m.rounds as f64)
    );
}

#[test]
fn methods_report_their_names() {
    let names: Vec<&str> = all_methods().iter().map(Method::name).collect();
    for name in [
        "autoregressive",
        "speculative",
        "spectr",
        "multiround",
        "mentored",
    ] {
        assert!(names.contains(&name), "{name}: {names:?}");
    }
}

/// The summary's α and c are the counts' and timings' ratios, and absent until measured.
#[test]
fn tested_acceptance_and_cost_ratio_follow_their_definitions() {
    let mut m = Metrics::default();
    assert_eq!(m.summary().tested_acceptance, None);
    assert_eq!(m.summary().cost_ratio, None);
    m.accepted_tokens = 6;
    m.resampled_tokens = 2;
    m.drafted_tokens = 12;
    m.draft_calls = 8;
    m.target_calls = 2;
    m.timing.draft_nanos = 8_000;
    m.timing.target_nanos = 10_000;
    let summary = m.summary();
    // 6 accepted of 8 tested positions, though 12 were drafted.
    assert_eq!(summary.tested_acceptance, Some(0.75));
    assert_eq!(summary.acceptance_rate, Some(0.5));
    // 1,000 ns per draft call against 5,000 ns per target call.
    assert_eq!(summary.cost_ratio, Some(0.2));
    m.timing.target_nanos = 0;
    assert_eq!(m.summary().cost_ratio, None);
}
