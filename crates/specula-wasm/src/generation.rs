//! One generation: the engine's [`Decoder`] driven round by round over the [`Models`],
//! awaiting each model call so a page (or worker) keeps running while the GPU works.

use std::cell::Cell;

use serde::Serialize;
use specula_engine::{
    Decoder, FinishReason, Metrics, MetricsSummary, RoundTrace, Step, TokenCounts,
};

use crate::backend::BackendInfo;
use crate::error::{Result, WasmError};
use crate::models::Models;
use crate::options::Generate;

/// What one round produced, for JavaScript.
#[derive(Debug, Clone, Serialize)]
pub struct RoundReport {
    /// 0-based round number.
    pub round: usize,
    /// The text emitted this round.
    pub text: String,
    /// The token ids emitted this round.
    pub tokens: Vec<u32>,
    /// Emitted tokens by source.
    pub counts: TokenCounts,
    /// Where this round's model calls ran (`"webgpu"` or `"cpu"`).
    pub backend: &'static str,
    /// Set on the round during which the models moved to the CPU: why.
    pub fallback: Option<String>,
    /// Why generation stopped, on the last round.
    pub finish: Option<FinishReason>,
    /// The engine's full record of the round (drafts, tests, uniforms, ratios).
    pub trace: RoundTrace,
}

/// The outcome of a whole generation, for JavaScript.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The prompt.
    pub prompt: String,
    /// The generated text (without the prompt).
    pub text: String,
    /// Tokens generated.
    pub tokens: usize,
    /// Why it stopped; `None` when aborted or still running.
    pub finish: Option<FinishReason>,
    /// Whether `abort()` stopped it.
    pub aborted: bool,
    /// Totals with vLLM's definitions.
    pub metrics: Metrics,
    /// The derived rates.
    pub summary: MetricsSummary,
    /// Where the models run now.
    pub backend: BackendInfo,
}

/// A running generation.
#[derive(Debug)]
pub struct Generation {
    decoder: Decoder,
    prompt: String,
    text: String,
    aborted: bool,
}

impl Generation {
    /// Encodes the prompt and sets up the decoder.
    ///
    /// # Errors
    /// [`WasmError::Prompt`] for characters outside the alphabet or a prompt plus
    /// `maxTokens` longer than the models' context; engine errors.
    pub fn start(models: &Models, options: Generate) -> Result<Self> {
        let tokenizer = models.tokenizer();
        let prompt_tokens = tokenizer.encode(&options.prompt).map_err(|e| {
            let alphabet: String = tokenizer.alphabet().iter().collect();
            WasmError::Prompt(format!(
                "prompt: {e}; the models know only these characters: {alphabet:?}"
            ))
        })?;
        let context = models.context();
        let needed = prompt_tokens.len() + options.config.max_new_tokens;
        if needed > context {
            return Err(WasmError::Prompt(format!(
                "the prompt ({} characters) plus maxTokens ({}) is {needed} characters, more than the models' context of {context}; shorten the prompt or lower maxTokens",
                prompt_tokens.len(),
                options.config.max_new_tokens
            )));
        }
        let mut config = options.config;
        config.token_text = Some(tokenizer.token_texts());
        let mut decoder = Decoder::new(config, prompt_tokens)?;
        #[cfg(target_arch = "wasm32")]
        {
            decoder = decoder.with_clock(crate::clock::PerformanceClock);
        }
        decoder.set_vocab_size(models.vocab())?;
        Ok(Self {
            decoder,
            prompt: options.prompt,
            text: String::new(),
            aborted: false,
        })
    }

    /// Runs model calls until the next round completes. `None` when generation is over
    /// (finished earlier, or `abort` was set: checked before every model call).
    ///
    /// # Errors
    /// [`WasmError::Model`] when a model fails on every backend; engine errors. The
    /// decoder then still waits for the same request, so a later call retries it.
    pub async fn next_round(
        &mut self,
        models: &mut Models,
        abort: &Cell<bool>,
    ) -> Result<Option<RoundReport>> {
        loop {
            if self.aborted || abort.get() {
                self.aborted = true;
                return Ok(None);
            }
            let response = match self.decoder.next_request()? {
                Step::Draft(request) => models.forward(request.role, &request).await?,
                Step::Target(request) => models.forward(request.role, &request).await?,
                Step::Done(_) => return Ok(None),
            };
            // An abort that arrived while the model ran: drop the response unread.
            if abort.get() {
                self.aborted = true;
                return Ok(None);
            }
            if let Some(trace) = self.decoder.supply(response)? {
                let text = models
                    .tokenizer()
                    .decode(&trace.emitted)
                    .map_err(|e| WasmError::Engine(format!("internal: {e}")))?;
                self.text.push_str(&text);
                return Ok(Some(RoundReport {
                    round: trace.round,
                    text,
                    tokens: trace.emitted.clone(),
                    counts: trace.counts,
                    backend: models.info().backend,
                    fallback: models.take_fallback(),
                    finish: trace.finish.clone(),
                    trace,
                }));
            }
        }
    }

    /// The text generated so far.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether generation is over (finished or aborted).
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.aborted || self.decoder.is_done()
    }

    /// Everything about the generation so far.
    #[must_use]
    pub fn summary(&self, models: &Models) -> Summary {
        let metrics = self.decoder.metrics().clone();
        Summary {
            prompt: self.prompt.clone(),
            text: self.text.clone(),
            tokens: self.decoder.generated().len(),
            finish: self.decoder.finish_reason().cloned(),
            aborted: self.aborted,
            summary: metrics.summary(),
            metrics,
            backend: models.info().clone(),
        }
    }
}
