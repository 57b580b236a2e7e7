//! One generation: the engine's [`Decoder`] driven round by round over the [`Models`],
//! awaiting each model call so a page (or worker) keeps running while the GPU works.
//!
//! Past the models' context the window slides, as in the CLI and for every method: the
//! models read at most `W` positions (the smaller `max_seq`); when the context fills,
//! both forget their caches and go on from its last `W / 2` tokens (a prompt of `W`
//! tokens or more is cropped the same way). Each stretch is one exact decode.

use std::cell::Cell;

use serde::Serialize;
use specula_engine::{
    DecodeConfig, Decoder, FinishReason, Metrics, MetricsSummary, RoundTrace, TokenCounts,
    slide_context, stretch_config, window_start,
};

use specula_host::{ModelTokenizer, TextStream};

use crate::backend::BackendInfo;
use crate::error::{Result, WasmError};
use crate::pair::{Advance, Pair};
use specula_engine::options::Resolved;

/// The token ids of a prompt.
///
/// # Errors
/// [`WasmError::Prompt`] naming the first character the tokenizer cannot encode (and a
/// character model's alphabet).
pub(crate) fn encode_prompt(tokenizer: &ModelTokenizer, prompt: &str) -> Result<Vec<u32>> {
    tokenizer
        .encode(prompt)
        .map_err(|e| match tokenizer.alphabet() {
            Some(alphabet) => {
                let alphabet: String = alphabet.iter().collect();
                WasmError::Prompt(format!(
                    "prompt: {e}; the models know only these characters: {alphabet:?}"
                ))
            }
            None => WasmError::Prompt(format!("prompt: {e}")),
        })
}

/// What one round produced, for JavaScript.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
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
    /// The whole generation's metrics up to and including this round (vLLM's
    /// definitions, over every stretch of the sliding window), so a page shows them
    /// without recounting.
    pub metrics: Metrics,
    /// The rates derived from [`Self::metrics`].
    pub summary: MetricsSummary,
}

/// The outcome of a whole generation, for JavaScript.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
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
    /// The generated tokens' text, round by round.
    stream: TextStream,
    aborted: bool,
    /// The positions the models read.
    window: usize,
    /// The tokens the current decoder started from.
    context: Vec<u32>,
    /// Tokens still to generate after the current decoder's.
    remaining: usize,
    /// The settings every stretch starts from.
    config: DecodeConfig,
    /// Stretches finished before the current one.
    stretch: u64,
    /// Their metrics, tokens and rounds.
    earlier: Metrics,
    earlier_tokens: usize,
    earlier_rounds: usize,
}

/// A decoder for one stretch of `max_new_tokens` after `context`.
fn stretch_decoder(
    config: &DecodeConfig,
    context: &[u32],
    max_new_tokens: usize,
    stretch: u64,
    vocab: usize,
) -> Result<Decoder> {
    let config = stretch_config(config, stretch, max_new_tokens);
    #[allow(unused_mut)]
    let mut decoder = Decoder::new(config, context.to_vec())?;
    #[cfg(target_arch = "wasm32")]
    {
        decoder = decoder.with_clock(crate::clock::PerformanceClock);
    }
    decoder.set_vocab_size(vocab)?;
    Ok(decoder)
}

impl Generation {
    /// Encodes the prompt and sets up the decoder.
    ///
    /// # Errors
    /// [`WasmError::Prompt`] for characters outside the alphabet; engine errors.
    pub fn start(models: &mut impl Pair, options: Resolved) -> Result<Self> {
        models.begin();
        let tokenizer = models.tokenizer();
        let prompt_tokens = encode_prompt(tokenizer, &options.prompt)?;
        let window = models.context().max(2);
        let context = window_start(&prompt_tokens, window).to_vec();
        // A GGUF model's turn ends at its end token (docs/real-models.md).
        let mut stop_tokens = options.config.stop_tokens().to_vec();
        tokenizer.add_end_token(&mut stop_tokens);
        let config = options
            .config
            .with_token_text(tokenizer.token_texts())
            .with_stop_tokens(stop_tokens);
        let total = config.max_new_tokens();
        let first = total.min(window - context.len());
        let decoder = stretch_decoder(&config, &context, first, 0, models.vocab())?;
        Ok(Self {
            decoder,
            prompt: options.prompt,
            text: String::new(),
            stream: TextStream::default(),
            aborted: false,
            window,
            context,
            remaining: total - first,
            config,
            stretch: 0,
            earlier: Metrics::default(),
            earlier_tokens: 0,
            earlier_rounds: 0,
        })
    }

    /// Starts the next stretch: the context's last `window / 2` tokens, read afresh.
    fn slide(&mut self, models: &mut impl Pair) -> Result<()> {
        self.context.extend_from_slice(self.decoder.generated());
        slide_context(&mut self.context, self.window);
        self.earlier.add(self.decoder.metrics());
        self.earlier_tokens += self.decoder.generated().len();
        self.earlier_rounds += self.decoder.metrics().rounds as usize;
        self.stretch += 1;
        let next = self.remaining.min(self.window - self.context.len());
        self.remaining -= next;
        models.reset();
        self.decoder = stretch_decoder(
            &self.config,
            &self.context,
            next,
            self.stretch,
            models.vocab(),
        )?;
        Ok(())
    }

    /// Runs model calls until the next round completes. `None` when generation is over
    /// (finished earlier, or `abort` was set: checked before every model call).
    ///
    /// # Errors
    /// [`WasmError::Model`] when a model fails on every backend; engine errors. The
    /// decoder then still waits for the same request, so a later call retries it.
    pub async fn next_round(
        &mut self,
        models: &mut impl Pair,
        abort: &Cell<bool>,
    ) -> Result<Option<RoundReport>> {
        loop {
            if self.aborted || abort.get() {
                self.aborted = true;
                return Ok(None);
            }
            let trace = match models.advance(&mut self.decoder, abort).await? {
                Advance::Done => return Ok(None),
                Advance::Aborted => {
                    self.aborted = true;
                    return Ok(None);
                }
                Advance::Supplied(trace) => trace,
            };
            if let Some(trace) = trace {
                // Round numbers run on over the stretches (each decoder counts from 0).
                let round = self.earlier_rounds + trace.round;
                // Before a slide, which moves the decoder's metrics into `earlier`.
                let mut metrics = self.earlier.clone();
                metrics.add(self.decoder.metrics());
                let mut finish = trace.finish.clone();
                match finish {
                    Some(FinishReason::MaxNewTokens) if self.remaining > 0 => {
                        self.slide(models)?;
                        finish = None;
                    }
                    // A stop token or string ends the whole generation.
                    Some(_) => self.remaining = 0,
                    None => {}
                }
                let text = self
                    .stream
                    .push(models.tokenizer(), &trace.emitted, finish.is_some())
                    .ok_or_else(|| WasmError::Internal("cannot decode emitted tokens".into()))?;
                self.text.push_str(&text);
                return Ok(Some(RoundReport {
                    round,
                    text,
                    tokens: trace.emitted.clone(),
                    counts: trace.counts,
                    backend: models.backend(),
                    fallback: models.take_fallback(),
                    finish,
                    trace,
                    summary: metrics.summary(),
                    metrics,
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
        self.aborted || (self.decoder.is_done() && self.remaining == 0)
    }

    /// Everything about the generation so far, its models running as `backend` says.
    #[must_use]
    pub fn summary(&self, backend: &BackendInfo) -> Summary {
        let mut metrics = self.earlier.clone();
        metrics.add(self.decoder.metrics());
        Summary {
            prompt: self.prompt.clone(),
            text: self.text.clone(),
            tokens: self.earlier_tokens + self.decoder.generated().len(),
            finish: self.decoder.finish_reason().cloned(),
            aborted: self.aborted,
            summary: metrics.summary(),
            metrics,
            backend: backend.clone(),
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use burn::tensor::Device;

    use super::*;
    use crate::backend::{BackendChoice, BackendInfo, DraftBackend};
    use crate::models::Models;
    use crate::untrained::{Size, untrained_bundles};
    use specula_engine::options::DecodeOptions;

    /// Runs a future to completion, polling again whenever it is pending (the CPU models
    /// answer at once; a test's remote target may ask for a few polls).
    pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return out;
            }
        }
    }

    /// The greedy text of `method` after `prompt`, and the rounds' finish reasons.
    /// A greedy run; `method` may carry SpecTr's selection as `spectr:race`.
    fn greedy(method: &str, prompt: &str, max_tokens: usize) -> (String, Summary) {
        let (method, selection) = match method.split_once(':') {
            Some((m, s)) => (m, Some(s.to_owned())),
            None => (method, None),
        };
        let bundles = untrained_bundles(7, Size::Test).expect("bundles");
        let info = BackendInfo::cpu(BackendChoice::Cpu, None);
        let mut models =
            Models::build(bundles, &Device::flex(), info, DraftBackend::Same).expect("models");
        let name: specula_engine::options::MethodName = method.parse().expect("a method");
        let options = DecodeOptions {
            prompt: Some(prompt.into()),
            method: Some(method.into()),
            selection,
            gamma: name.drafts().then_some(3.0),
            drafts: name.multi_draft().then_some(2.0),
            kl: (method == "mentored").then_some(0.0),
            temperature: Some(0.0),
            max_tokens: Some(max_tokens as f64),
            ..DecodeOptions::default()
        }
        .resolve()
        .expect("options");
        let mut generation = Generation::start(&mut models, options).expect("starts");
        let abort = Cell::new(false);
        let mut rounds = Vec::new();
        while let Some(round) = block_on(generation.next_round(&mut models, &abort)).expect("round")
        {
            rounds.push(round);
        }
        assert!(generation.is_over());
        let finishes = rounds.iter().filter(|r| r.finish.is_some()).count();
        assert_eq!(finishes, 1, "{method}: one round says why it ended");
        let numbers: Vec<usize> = rounds.iter().map(|r| r.round).collect();
        assert_eq!(numbers, (0..rounds.len()).collect::<Vec<_>>(), "{method}");
        let summary = generation.summary(models.info());
        assert_eq!(summary.metrics.rounds as usize, rounds.len(), "{method}");
        // Each round carries the run's metrics so far, over every stretch.
        let mut emitted = 0;
        for r in &rounds {
            emitted += r.tokens.len();
            assert_eq!(r.metrics.emitted_tokens as usize, emitted, "{method}");
            assert_eq!(r.summary, r.metrics.summary(), "{method}");
        }
        let last = rounds.last().expect("a round");
        assert_eq!(last.metrics, summary.metrics, "{method}");
        (generation.text().to_owned(), summary)
    }

    #[test]
    fn the_window_slides_alike_for_every_method() {
        // The test models read 128 positions: 300 characters slide the window twice.
        let prompt = "ROMEO:";
        let (reference, summary) = greedy("autoregressive", prompt, 300);
        assert_eq!(reference.chars().count(), 300);
        assert_eq!(summary.tokens, 300);
        assert_eq!(summary.finish, Some(FinishReason::MaxNewTokens));
        for method in [
            "speculative",
            "spectr",
            "spectr:race",
            "multiround",
            "mentored",
            "typical",
            "lookup",
        ] {
            assert_eq!(greedy(method, prompt, 300).0, reference, "{method}");
        }
        // The policy: after the first slide the models read the last 64 characters.
        let first: String = prompt.chars().chain(reference.chars()).take(128).collect();
        let cropped: String = first.chars().skip(64).collect();
        let fresh = greedy("autoregressive", &cropped, 20).0;
        let after: String = reference
            .chars()
            .skip(128 - prompt.len())
            .take(20)
            .collect();
        assert_eq!(fresh, after);
    }
}
