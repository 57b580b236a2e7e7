//! Parallel drafting: the draft and the target request run at once, and in whatever
//! order their answers arrive, a seed gives the tokens of one call at a time, which are
//! the engine's `generate` tokens (docs/parallel-draft.md, "What a seed reproduces").

use specula_engine::Role;
use specula_engine::synthetic::MarkovModel;

use super::{DraftFirst, Run, Schedule, drive, reference};
use crate::session::slot;

/// splitmix64: the same simulated timings on every run.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    }
}

/// Simulated models: a call of a model takes a random time in its `cost` range (by
/// [`slot`]); the answer that would arrive first is supplied first.
struct Timed {
    rng: Rng,
    now: f64,
    finish: [f64; 2],
    cost: [(f64, f64); 2],
    /// Answers supplied while the other model's request still ran, by model.
    overtakes: [usize; 2],
}

impl Timed {
    fn new(seed: u64, draft: (f64, f64), target: (f64, f64)) -> Self {
        Self {
            rng: Rng(seed),
            now: 0.0,
            finish: [0.0; 2],
            cost: [draft, target],
            overtakes: [0; 2],
        }
    }
}

impl Schedule for Timed {
    fn started(&mut self, role: Role) {
        let (lo, hi) = self.cost[slot(role)];
        self.finish[slot(role)] = self.now + lo + (hi - lo) * self.rng.unit();
    }

    fn pick(&mut self, running: &[Role]) -> Role {
        let role = *running
            .iter()
            .min_by(|a, b| self.finish[slot(**a)].total_cmp(&self.finish[slot(**b)]))
            .expect("a running request");
        self.now = self.finish[slot(role)];
        if running.len() == 2 {
            self.overtakes[slot(role)] += 1;
        }
        role
    }
}

/// The target's answer first whenever both run.
struct TargetFirst;

impl Schedule for TargetFirst {
    fn pick(&mut self, running: &[Role]) -> Role {
        running.last().copied().expect("a running request")
    }
}

/// Parallel drafting's options with `rest` (JSON members).
fn parallel(rest: &str) -> String {
    format!(r#"{{"prompt":[1,2],"parallelDraft":true,{rest}}}"#)
}

fn models() -> (MarkovModel, MarkovModel) {
    let target = MarkovModel::random(6, 2, 3, 2.0).unwrap();
    let draft = target.perturbed(4, 1.0).unwrap();
    (draft, target)
}

fn early_drafts(run: &Run) -> usize {
    run.rounds.iter().map(|r| r.trace.early_drafts).sum()
}

/// Runs `options` with `schedule`, by calls or by whole requests.
fn timed(
    options: &str,
    models: [&MarkovModel; 2],
    by_calls: bool,
    schedule: &mut impl Schedule,
) -> Run {
    drive(options, models, by_calls, schedule, false).expect(options)
}

#[test]
fn any_answer_order_gives_the_tokens_of_one_call_at_a_time() {
    let (mut draft, mut target) = models();
    let mut overtakes = [0; 2];
    let (mut early_fast, mut early_slow) = (0, 0);
    for gamma in [1, 2, 4] {
        for seed in 0..6 {
            let options = parallel(&format!(r#""gamma":{gamma},"seed":{seed},"maxTokens":30"#));
            let want = reference(&options, &mut draft, &mut target);
            let models = [&draft, &target];
            let by_calls = seed % 2 == 0;
            let one_at_a_time = timed(&options, models, by_calls, &mut DraftFirst);
            assert_eq!(one_at_a_time.tokens, want, "{options}");
            // Draft calls a tenth of the target's, about as long, or anything.
            let mut fast = Timed::new(seed, (0.05, 0.3), (0.8, 1.2));
            let mut slow = Timed::new(seed, (0.5, 1.5), (0.8, 1.2));
            let mut wild = Timed::new(seed + 100, (0.01, 3.0), (0.01, 3.0));
            let runs = [
                timed(&options, models, by_calls, &mut TargetFirst),
                timed(&options, models, by_calls, &mut fast),
                timed(&options, models, by_calls, &mut slow),
                timed(&options, models, !by_calls, &mut wild),
            ];
            for (i, run) in runs.iter().enumerate() {
                assert_eq!(run.tokens, want, "{options}, schedule {i}");
                assert_eq!(run.most_running, 2, "{options}, schedule {i}");
            }
            early_fast += early_drafts(&runs[1]);
            early_slow += early_drafts(&runs[2]);
            for t in [&fast, &slow, &wild] {
                overtakes[0] += t.overtakes[0];
                overtakes[1] += t.overtakes[1];
            }
        }
    }
    // Both answers overtook the other, and the timing changed how much was drafted
    // early: the tokens stayed the same anyway.
    assert!(overtakes[0] > 0 && overtakes[1] > 0, "{overtakes:?}");
    assert!(early_fast > early_slow, "{early_fast} vs {early_slow}");
}

#[test]
fn a_run_may_end_with_a_draft_request_running() {
    // A stop token ends the run with the next round's draft possibly still running; its
    // answer is not needed, and the tokens are the reference's.
    let (mut draft, mut target) = models();
    let mut left = 0;
    for seed in 0..12 {
        let options = parallel(&format!(
            r#""gamma":3,"seed":{seed},"stop":[5],"maxTokens":60"#
        ));
        let want = reference(&options, &mut draft, &mut target);
        let run = timed(
            &options,
            [&draft, &target],
            true,
            &mut Timed::new(seed, (0.5, 1.5), (0.8, 1.2)),
        );
        assert_eq!(run.tokens, want, "{options}");
        left += run.left_running;
    }
    assert!(left > 0, "no run ended with a draft running");
}

#[test]
fn refused_answers_name_their_model_while_both_run() {
    let (mut draft, mut target) = models();
    for seed in 0..4 {
        let options = parallel(&format!(r#""gamma":2,"seed":{seed},"maxTokens":20"#));
        let want = reference(&options, &mut draft, &mut target);
        let mut schedule = Timed::new(seed, (0.3, 1.5), (0.8, 1.2));
        let run = drive(&options, [&draft, &target], true, &mut schedule, true).expect(&options);
        assert_eq!(run.tokens, want, "{options}");
        assert_eq!(run.most_running, 2, "{options}");
    }
}

#[test]
fn without_parallel_drafting_one_request_runs_at_a_time() {
    let (draft, target) = models();
    for method in [
        r#""method":"speculative","gamma":3"#,
        r#""method":"spectr","tree":[2,2]"#,
        r#""method":"autoregressive""#,
    ] {
        let options = format!(r#"{{"prompt":[1,2],{method},"seed":2,"maxTokens":16}}"#);
        let run = timed(
            &options,
            [&draft, &target],
            true,
            &mut Timed::new(1, (0.5, 1.5), (0.8, 1.2)),
        );
        assert_eq!(run.most_running, 1, "{method}");
    }
}
