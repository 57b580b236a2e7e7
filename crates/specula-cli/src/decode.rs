//! Runs one generation over the pair, reporting emitted tokens as they arrive.

use std::time::{Duration, Instant};

use specula_engine::{DecodeConfig, Decoder, FinishReason, LanguageModel, Metrics, StdClock, Step};

use crate::error::CliError;
use crate::models::Pair;

/// One finished generation.
#[derive(Debug, Clone)]
pub struct Run {
    /// Generated tokens (without the prompt).
    pub tokens: Vec<u32>,
    /// Why it stopped.
    pub finish: FinishReason,
    /// The engine's totals (timed with the wall clock).
    pub metrics: Metrics,
    /// Wall time of the whole generation.
    pub wall: Duration,
    /// Whether `on_tokens` stopped the run early (its reader went away).
    pub stopped: bool,
}

/// Decodes `prompt` with `config`, calling `on_tokens` with each batch of new tokens;
/// the run stops early (with [`Run::stopped`]) when `on_tokens` returns `false`.
///
/// # Errors
/// Usage errors for settings the engine refuses; failures when a model fails.
pub fn run(
    pair: &mut Pair,
    config: DecodeConfig,
    prompt: &[u32],
    mut on_tokens: impl FnMut(&[u32]) -> bool,
) -> Result<Run, CliError> {
    let started = Instant::now();
    let mut decoder = Decoder::new(config, prompt.to_vec())
        .map_err(|e| CliError::usage(e.to_string()))?
        .with_clock(StdClock::new());
    decoder
        .set_vocab_size(pair.target.vocab_size())
        .map_err(|e| CliError::usage(e.to_string()))?;
    let mut shown = 0;
    let mut stopped = false;
    let finish = loop {
        let step = decoder
            .next_request()
            .map_err(|e| CliError::failure(e.to_string()))?;
        let response = match step {
            Step::Draft(request) => pair.draft.forward(&request),
            Step::Target(request) => pair.target.forward(&request),
            Step::Done(reason) => break reason,
        }
        .map_err(|e| CliError::failure(format!("model: {e}")))?;
        decoder
            .supply(response)
            .map_err(|e| CliError::failure(e.to_string()))?;
        let generated = decoder.generated();
        if generated.len() > shown {
            let go_on = on_tokens(&generated[shown..]);
            shown = generated.len();
            if !go_on {
                stopped = true;
                break FinishReason::MaxNewTokens;
            }
        }
    };
    Ok(Run {
        tokens: decoder.generated().to_vec(),
        finish,
        metrics: decoder.metrics().clone(),
        wall: started.elapsed(),
        stopped,
    })
}
