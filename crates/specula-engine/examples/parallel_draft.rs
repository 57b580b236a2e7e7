//! Parallel drafting against sequential drafting, timed natively with synthetic models
//! whose calls sleep: the target `TARGET_MS` per call, the draft `c × TARGET_MS`.
//! Sequential: [`generate`] without parallel drafting; parallel: [`generate_parallel`]
//! (draft and target on two threads) with it. Prints, for γ = 2..6 and c = 0.1, 0.3, 0.5,
//! the measured acceptance α, tokens per second of each, the speedup and the speedup the
//! schedule predicts for i.i.d. acceptance α (docs/parallel-draft.md).
//!
//! `cargo run --release -p specula-engine --example parallel_draft`

use std::time::{Duration, Instant};

use specula_engine::synthetic::MarkovModel;
use specula_engine::{
    DecodeConfig, Decoder, ForwardRequest, ForwardResponse, GammaPolicy, LanguageModel, Method,
    ModelError, generate, generate_parallel,
};

const TARGET_MS: f64 = 5.0;
const TOKENS: usize = 64;
const SEEDS: u64 = 4;

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
    let time = all * (g * c).max(1.0) + (1.0 - all) * (1.0 + g * c);
    let parallel = (1.0 - all) / (1.0 - alpha) / time;
    parallel / sequential
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = MarkovModel::random(32, 1, 5, 2.0)?;
    let draft = target.perturbed(6, 0.6)?;
    println!("| γ | c | α | sequential tok/s | parallel tok/s | speedup | predicted |");
    println!("|---|---|---|---|---|---|---|");
    for c in [0.1, 0.3, 0.5] {
        for gamma in 2..=6 {
            let (mut seq_tokens, mut par_tokens) = (0, 0);
            let (mut seq_time, mut par_time) = (Duration::ZERO, Duration::ZERO);
            let (mut accepted, mut tested) = (0, 0);
            for seed in 0..SEEDS {
                let config = DecodeConfig {
                    max_new_tokens: TOKENS,
                    seed,
                    ..DecodeConfig::new(Method::Speculative {
                        gamma,
                        policy: GammaPolicy::Fixed,
                    })
                };
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
                accepted += out.metrics.accepted_tokens;
                tested += out.metrics.accepted_tokens + out.metrics.resampled_tokens;
                let parallel = DecodeConfig {
                    parallel_draft: true,
                    ..config
                };
                let mut decoder = Decoder::new(parallel, vec![1])?;
                let start = Instant::now();
                let out = generate_parallel(&mut decoder, &mut slow_draft, &mut slow_target)?;
                par_time += start.elapsed();
                par_tokens += out.tokens.len();
            }
            let alpha = accepted as f64 / tested.max(1) as f64;
            let seq = seq_tokens as f64 / seq_time.as_secs_f64();
            let par = par_tokens as f64 / par_time.as_secs_f64();
            println!(
                "| {gamma} | {c} | {alpha:.2} | {seq:.0} | {par:.0} | {:.2}× | {:.2}× |",
                par / seq,
                predicted_speedup(alpha, gamma, c)
            );
        }
    }
    Ok(())
}
