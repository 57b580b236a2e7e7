//! Parallel drafting against sequential drafting, with synthetic models whose calls cost
//! the target `TARGET_MS`, the draft `c × TARGET_MS`, two ways:
//! - simulated: the sans-IO decoder driven on a virtual clock, each model a worker busy
//!   for its call's cost (noise-free; exactly the schedule's overlap);
//! - timed: the calls sleep; sequential is [`generate`] without parallel drafting,
//!   parallel is [`generate_parallel`] (draft and target on two threads) with it.
//!
//! For γ = 2..6 and c = 0.1, 0.3, 0.5 it prints the measured acceptance α, both speedups
//! and the speedup the schedule predicts for i.i.d. acceptance α (docs/parallel-draft.md).
//!
//! `cargo run --release -p specula-engine --example parallel_draft`

use std::time::{Duration, Instant};

use specula_engine::synthetic::MarkovModel;
use specula_engine::{
    DecodeConfig, Decoder, ForwardRequest, ForwardResponse, GammaPolicy, LanguageModel, Method,
    ModelError, Role, Step, generate, generate_parallel,
};

const TARGET_MS: f64 = 5.0;
/// Tokens and seeds per cell of the timed runs (slow: every call sleeps).
const TOKENS: usize = 64;
const SEEDS: u64 = 4;
/// Tokens and seeds per cell of the simulation (fast: no sleeping).
const SIM_TOKENS: usize = 256;
const SIM_SEEDS: u64 = 200;

/// A model whose every call sleeps for `cost` first.
struct Sleepy {
    inner: MarkovModel,
    cost: Duration,
}

impl LanguageModel for Sleepy {
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn forward(&mut self, request: &ForwardRequest) -> Result<ForwardResponse, ModelError> {
        std::thread::sleep(self.cost);
        self.inner.forward(request)
    }
}

/// Expected tokens per unit of target time, sequential and parallel, for i.i.d.
/// acceptance `alpha`, draft length `gamma` and cost ratio `c`.
fn predicted_speedup(alpha: f64, gamma: usize, c: f64) -> f64 {
    let g = gamma as f64;
    let all = alpha.powi(gamma as i32);
    let sequential = (1.0 - alpha.powi(gamma as i32 + 1)) / (1.0 - alpha) / (g * c + 1.0);
    // After a rejection with γc > 1 the draft call running when the target answers is
    // waited for: it ends at the first multiple of c past 1.
    let stale = if g * c > 1.0 {
        (1.0 / c - 1e-9).ceil() * c - 1.0
    } else {
        0.0
    };
    let time = all * (g * c).max(1.0) + (1.0 - all) * (1.0 + stale + g * c);
    let parallel = (1.0 - all) / (1.0 - alpha) / time;
    parallel / sequential
}

/// Virtual time (in target calls) to decode with `decoder`, each model a worker that is
/// busy for its call's cost (the draft `c`, the target 1) and takes a request as soon as
/// the decoder has one for it; answers are supplied in the order they finish.
fn simulate(
    decoder: &mut Decoder,
    draft: &mut MarkovModel,
    target: &mut MarkovModel,
    c: f64,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut now = 0.0_f64;
    // The call each worker runs: when it finishes, and its answer.
    let mut running: [Option<(f64, ForwardResponse)>; 2] = [None, None];
    loop {
        loop {
            let step = decoder.next_request()?;
            let (jobs, more) = match step {
                Step::Done(_) => return Ok(now),
                Step::Parallel { target, draft } => {
                    (vec![(Role::Target, target), (Role::Draft, draft)], true)
                }
                Step::Draft(request) => (vec![(Role::Draft, request)], false),
                Step::Target(request) => (vec![(Role::Target, request)], false),
            };
            let mut started = false;
            for (role, request) in jobs {
                let slot = usize::from(role == Role::Target);
                if running[slot].is_none() {
                    let (cost, answer) = match role {
                        Role::Draft => (c, draft.forward(&request)?),
                        Role::Target => (1.0, target.forward(&request)?),
                    };
                    running[slot] = Some((now + cost, answer));
                    started = true;
                }
            }
            if !started && !more {
                break;
            }
        }
        let slot = match (&running[0], &running[1]) {
            (Some((d, _)), Some((t, _))) => usize::from(t <= d),
            (Some(_), None) => 0,
            _ => 1,
        };
        let (at, answer) = running[slot].take().ok_or("no call is running")?;
        now = at;
        let role = if slot == 1 { Role::Target } else { Role::Draft };
        decoder.supply_to(role, answer)?;
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = MarkovModel::random(32, 1, 5, 2.0)?;
    let draft = target.perturbed(6, 0.6)?;
    println!(
        "| γ | c | α | simulated speedup | sequential tok/s | parallel tok/s | timed speedup | predicted |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for c in [0.1, 0.3, 0.5] {
        for gamma in 2..=6 {
            let (mut seq_tokens, mut par_tokens) = (0, 0);
            let (mut seq_time, mut par_time) = (Duration::ZERO, Duration::ZERO);
            let (mut accepted, mut tested) = (0, 0);
            let (mut seq_virtual, mut par_virtual) = (0.0, 0.0);
            let config = |seed, max_new_tokens| {
                DecodeConfig::builder(Method::Speculative {
                    gamma,
                    policy: GammaPolicy::Fixed,
                })
                .max_new_tokens(max_new_tokens)
                .seed(seed)
                .build()
            };
            for seed in 0..SIM_SEEDS {
                let sequential = config(seed, SIM_TOKENS)?;
                let mut decoder = Decoder::new(sequential.clone(), vec![1])?;
                seq_virtual += simulate(&mut decoder, &mut draft.clone(), &mut target.clone(), c)?;
                let m = decoder.metrics();
                accepted += m.accepted_tokens;
                tested += m.accepted_tokens + m.resampled_tokens;
                let with_parallel = sequential.into_builder().parallel_draft(true).build()?;
                let mut decoder = Decoder::new(with_parallel, vec![1])?;
                par_virtual += simulate(&mut decoder, &mut draft.clone(), &mut target.clone(), c)?;
            }
            for seed in 0..SEEDS {
                let config = config(seed, TOKENS)?;
                let mut slow_draft = Sleepy {
                    inner: draft.clone(),
                    cost: Duration::from_secs_f64(TARGET_MS * c / 1000.0),
                };
                let mut slow_target = Sleepy {
                    inner: target.clone(),
                    cost: Duration::from_secs_f64(TARGET_MS / 1000.0),
                };
                let mut decoder = Decoder::new(config.clone(), vec![1])?;
                let start = Instant::now();
                let out = generate(&mut decoder, &mut slow_draft, &mut slow_target)?;
                seq_time += start.elapsed();
                seq_tokens += out.tokens.len();
                let parallel = config.into_builder().parallel_draft(true).build()?;
                let mut decoder = Decoder::new(parallel, vec![1])?;
                let start = Instant::now();
                let out = generate_parallel(&mut decoder, &mut slow_draft, &mut slow_target)?;
                par_time += start.elapsed();
                par_tokens += out.tokens.len();
            }
            let alpha = accepted as f64 / tested.max(1) as f64;
            let seq = seq_tokens as f64 / seq_time.as_secs_f64();
            let par = par_tokens as f64 / par_time.as_secs_f64();
            // Both decode the same number of tokens per seed.
            println!(
                "| {gamma} | {c} | {alpha:.2} | {:.2}× | {seq:.0} | {par:.0} | {:.2}× | {:.2}× |",
                seq_virtual / par_virtual,
                par / seq,
                predicted_speedup(alpha, gamma, c)
            );
        }
    }
    Ok(())
}
