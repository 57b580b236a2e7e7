//! The lab's calls on the loaded pair (bundled or GGUF): `Engine.exact(options, settings)` works out
//! the exact distribution of a generated position from both models at the prompt
//! (`specula_engine::lab`), and `fit(counts, expected, target)` tests many runs' counts
//! against it. The runs themselves are ordinary generations (`start` / `nextRound`, with
//! the request's seeds), so what is counted is the real sampling path.

use serde::Serialize;
use specula_engine::lab::Fit;
use specula_engine::lab::{self, Exact, LabLogits, LabRequest, RUN_TOKENS};
use specula_engine::options::{DecodeOptions, SampleSettings, raw_from_js};
use specula_engine::{ForwardRequest, Role};
use wasm_bindgen::JsValue;

use crate::error::{Result, WasmError};
use crate::generation::encode_prompt;
use crate::models::Models;

/// `exact()`'s answer: the distribution, and the checked request the runs follow.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct LabExact {
    /// The exact distribution and the target's.
    #[serde(flatten)]
    pub exact: Exact,
    /// The runs to make.
    pub runs: u64,
    /// The first run's seed; run `i` uses `firstSeed + i`.
    pub first_seed: u64,
    /// The tokens each run generates (the `maxTokens` of every run).
    pub run_tokens: usize,
}

/// What the package's `sample()` resolves to (and hands `onProgress`), put together by
/// its worker: [`LabExact`] and the [`Fit`] of the counts so far, with the counts.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SampleResult {
    /// The exact distribution and the runs.
    #[serde(flatten)]
    pub exact: LabExact,
    /// The counts' test.
    #[serde(flatten)]
    pub fit: Fit,
    /// How often each token (by id: `tokenTexts`) came at `position`.
    pub counts: Vec<u64>,
    /// The runs made so far.
    pub done: u64,
    /// Runs that ended at the model's end token before `position` (a GGUF model's end of
    /// turn): not in `counts`; the exact distribution is conditioned on the same.
    pub unreached: u64,
}

/// Reads the lab's options: `options` as for `generate()` less `maxTokens` and `stop`,
/// and `settings` (`{ runs, position }`) by the engine's [`SampleSettings`].
///
/// # Errors
/// `invalid_option` naming the option at fault.
pub(crate) fn request(options: &JsValue, settings: &JsValue) -> Result<LabRequest> {
    let options = DecodeOptions::from_raw(raw_from_js(options))?;
    let settings = SampleSettings::from_raw(raw_from_js(settings))?;
    Ok(lab::lab_request(options, settings.position, settings.runs)?)
}

fn rows(logits: Vec<f32>, vocab: usize) -> Vec<Vec<f64>> {
    logits
        .chunks(vocab)
        .map(|row| row.iter().map(|&x| f64::from(x)).collect())
        .collect()
}

/// The exact distribution of `request`'s position, from the loaded models.
///
/// # Errors
/// `bad_prompt` for a prompt outside the alphabet or too long to generate two tokens
/// `invalid_option` for a combination without a closed
/// form; `model_failed` when a model fails.
pub(crate) async fn exact(models: &mut Models, request: &LabRequest) -> Result<LabExact> {
    let prompt = encode_prompt(models.tokenizer(), &request.resolved.prompt)?;
    // What the models read of the prompt, as a generation crops it.
    let window = models.context();
    let prompt = specula_engine::window_start(&prompt, window).to_vec();
    let slides = lab::slides_between(prompt.len(), window);
    let config = &request.resolved.config;
    let vocab = models.vocab();
    // A GGUF model's runs stop at its end token (as every generation does).
    let end = models.tokenizer().end_token();
    // The models cache what they read: start from nothing, as every run does.
    models.reset();
    let mut answer = async |role: Role, committed: usize, sequences: Vec<Vec<u32>>| {
        let response = models
            .forward(
                role,
                &ForwardRequest::last_positions(role, committed, sequences),
            )
            .await?;
        Ok::<_, WasmError>(rows(response.logits, vocab))
    };
    let first = |mut rows: Vec<Vec<f64>>| rows.pop().unwrap_or_default();
    let mut logits = LabLogits {
        target: first(answer(Role::Target, prompt.len(), vec![prompt.clone()]).await?),
        draft: first(answer(Role::Draft, prompt.len(), vec![prompt.clone()]).await?),
        end_token: end,
        ..LabLogits::default()
    };
    logits.slides = slides;
    let (after, alone) = lab::needs(config, request.position, slides);
    if after {
        // Rows only for the first tokens the target can emit: every token of the bundled
        // pair's 65, a top-k's worth of a BPE vocabulary (bounded by the engine).
        logits.first_tokens = lab::first_tokens(config, &logits.target).map_err(refused)?;
        let contexts = lab::contexts_for_second(&prompt, &logits.first_tokens, false, window);
        let shared = lab::shared_positions(prompt.len(), window);
        logits.after_prompt = answer(Role::Target, shared, contexts).await?;
    }
    if alone {
        let contexts = lab::contexts_for_second(&prompt, &logits.first_tokens, true, window);
        logits.alone = answer(Role::Target, 0, contexts).await?;
    }
    models.reset();
    Ok(LabExact {
        exact: lab::exact(config, request.position, &logits).map_err(refused)?,
        runs: request.runs,
        first_seed: request.first_seed,
        run_tokens: RUN_TOKENS,
    })
}

/// A refusal of the lab's arithmetic: a failure of the models (`model_failed`, as while
/// decoding) when their logits are at fault, otherwise the option it names.
fn refused(error: specula_engine::options::OptionError) -> WasmError {
    match lab::model_fault(&error) {
        Some(message) => WasmError::Model(message),
        None => error.into(),
    }
}
