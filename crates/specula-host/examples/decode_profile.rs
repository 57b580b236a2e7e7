//! Profiling aid: decodes with the bundled pair and reports the mean target call time by
//! the number of positions each call computed, autoregressive against speculative (γ = 4):
//! `cargo run --release -p specula-host --example decode_profile`.
use std::collections::BTreeMap;
use std::time::Instant;

use specula_engine::{DecodeConfig, Decoder, GammaPolicy, LanguageModel, Method, Step};
use specula_host::bundled;
use specula_model::ModelRole;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut target = bundled::load(ModelRole::Target)?;
    let mut draft = bundled::load(ModelRole::Draft)?;
    let tokenizer = specula_model::bundled::tokenizer()?;
    let prompt = tokenizer.encode("ROMEO:\n")?;
    let methods = [
        Method::Autoregressive,
        Method::Speculative {
            gamma: 4,
            policy: GammaPolicy::Fixed,
        },
    ];
    // (method, positions) -> (calls, seconds); rounds of both methods in turn.
    let mut table: BTreeMap<(usize, u64), (u64, f64)> = BTreeMap::new();
    let mut draft_time = [0.0_f64; 2];
    for seed in 0..12 {
        for (i, method) in methods.iter().enumerate() {
            let config = DecodeConfig::builder(method.clone())
                .max_new_tokens(200)
                .seed(seed)
                .build()?;
            let mut decoder = Decoder::new(config, prompt.clone())?;
            decoder.set_vocab_size(target.vocab_size())?;
            loop {
                let response = match decoder.next_request()? {
                    Step::Draft(request) | Step::Parallel { draft: request, .. } => {
                        let t = Instant::now();
                        let r = draft.forward(&request)?;
                        draft_time[i] += t.elapsed().as_secs_f64();
                        r
                    }
                    Step::Target(request) => {
                        let before = target.stats().positions;
                        let t = Instant::now();
                        let r = target.forward(&request)?;
                        let dt = t.elapsed().as_secs_f64();
                        let e = table
                            .entry((i, target.stats().positions - before))
                            .or_default();
                        e.0 += 1;
                        e.1 += dt;
                        r
                    }
                    Step::Done(_) => break,
                };
                decoder.supply(response)?;
            }
        }
    }
    for ((i, positions), (calls, seconds)) in table {
        println!(
            "{:<14} {positions:>3} positions: {calls:>5} calls, mean {:.3} ms",
            ["autoregressive", "speculative"][i],
            seconds / calls as f64 * 1e3
        );
    }
    println!(
        "draft time: {:.3} s / {:.3} s",
        draft_time[0], draft_time[1]
    );
    Ok(())
}
