//! The decoding options, defined once for every surface: the CLI's flags, the bindings'
//! `generate()` options, the npm package and the page all fill one [`DecodeOptions`] and
//! call [`DecodeOptions::resolve`], which checks every option against [`limits`] and
//! builds the engine's [`DecodeConfig`](crate::DecodeConfig) or says which option is
//! wrong with an [`OptionError`].
//!
//! **An option the chosen method does not use is refused** (for example `drafts` with
//! `method: "speculative"`), on every surface: a setting is never silently ignored.
//!
//! ```
//! use specula_engine::options::{DecodeOptions, Raw};
//!
//! let raw: Raw = serde_json::from_str(r#"{ "prompt": "To be", "method": "spectr", "drafts": 3 }"#)?;
//! let resolved = DecodeOptions::from_raw(raw)?.resolve()?;
//! assert_eq!(resolved.config.method().name(), "spectr");
//!
//! let raw: Raw = serde_json::from_str(r#"{ "prompt": "To be", "gamma": 0 }"#)?;
//! let error = DecodeOptions::from_raw(raw)?.resolve().unwrap_err();
//! assert_eq!(error.field, "gamma");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
#[cfg(feature = "js")]
mod js;
pub mod limits;
mod load;
mod math;
mod method_name;
mod method_options;
mod number;
mod plan;
mod prompt;
mod raw;
mod resolve;
mod sample;
mod simd;
mod threads;

use serde::Serialize;

pub use error::{OptionError, Problem};
#[cfg(feature = "js")]
pub use js::raw_from_js;
pub use load::{
    BackendChoice, DRAFT_LOAD_OPTION_NAMES, DraftBackend, DraftLoad, DraftLoadOptions, FileOptions,
    GGUF_SOURCE_NAMES, GgufSource, LOAD_OPTION_NAMES, LoadOptions, MODULE_LOAD_OPTION_NAMES,
    ModelFiles, ModuleLoad, ModuleLoadOptions, Progress, one_of,
};
pub use math::{
    RETARGET_OPTION_NAMES, RetargetInput, RetargetOptions, THEORY_OPTION_NAMES, TheoryInput,
    TheoryOptions,
};
pub use method_name::MethodName;
pub use method_options::{METHOD_OPTIONS, MethodOption};
pub use number::{RealRange, finite, show_number, whole, whole_usize};
pub use plan::{PLAN_OPTION_NAMES, PlanFailure, PlanOptions, run_plan};
use prompt::Input;
pub use prompt::{Prompt, Stop};
pub use raw::{FromRaw, Raw, object_entries, take_list};
pub use resolve::{Resolved, ResolvedTokens, sampling};
pub use sample::{
    CALLER_SIDE_SAMPLE_SETTINGS, SAMPLE_SETTING_NAMES, SampleRun, SampleSettings, check_position,
    position_error,
};
pub use simd::{CpuSimd, SimdLevel};
pub use threads::CpuThreads;

/// The names of the [`DecodeOptions`], as JavaScript spells them, in documentation order.
pub const DECODE_OPTION_NAMES: [&str; 20] = [
    "prompt",
    "method",
    "selection",
    "gamma",
    "drafts",
    "tree",
    "dynamicGamma",
    "parallelDraft",
    "kl",
    "epsilon",
    "delta",
    "ngram",
    "temperature",
    "topK",
    "topP",
    "seed",
    "maxTokens",
    "stop",
    "recordDistributions",
    "bug",
];

/// Decoding options as given, each type-checked but not yet range-checked; every field
/// may be left out but the prompt. [`limits`] has each default and limit.
///
/// The prompt and the stop list are text for the surfaces with a tokenizer
/// ([`resolve`](Self::resolve): the CLI, npm `generate()`, the page) and token ids for npm
/// `decode()` over models of the caller's ([`resolve_tokens`](Self::resolve_tokens));
/// every other option means the same on both.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct DecodeOptions {
    /// What to continue (required): text (at least one character) for `generate()` and
    /// the CLI, token ids (at least one) for `decode()`.
    #[cfg_attr(feature = "ts", ts(optional, type = "string | Array<number>"))]
    pub prompt: Option<Prompt>,
    /// One of [`MethodName::ALL`]; default `"speculative"`.
    pub method: Option<String>,
    /// SpecTr's selection rule at each depth: `"kseq"` (the default) or `"race"` (the
    /// ratio race, which reaches the optimal selection's acceptance).
    pub selection: Option<String>,
    /// Draft tokens per round: γ for speculative, mentored and typical decoding, the most
    /// tokens prompt lookup proposes, the draft length L for the multi-draft methods
    /// (default [`limits::DEFAULT_GAMMA`]).
    pub gamma: Option<f64>,
    /// K, the draft sequences of the multi-draft methods (default
    /// [`limits::DEFAULT_DRAFTS`]).
    pub drafts: Option<f64>,
    /// Children per node at each depth of a prefix tree of drafts (multi-draft methods),
    /// instead of `drafts` i.i.d. sequences of length `gamma`.
    pub tree: Option<Vec<f64>>,
    /// Adapt γ between rounds (speculative, mentored and typical): +2 after a round that
    /// accepted every draft, −1 otherwise.
    pub dynamic_gamma: Option<bool>,
    /// Draft the next round while the target verifies this one (speculative only, with
    /// a fixed γ; default [`limits::DEFAULT_PARALLEL_DRAFT`]): the same distribution,
    /// faster when the two models run concurrently. docs/parallel-draft.md.
    pub parallel_draft: Option<bool>,
    /// The KL budget D of mentored decoding, in nats per position (required there).
    pub kl: Option<f64>,
    /// Typical acceptance's ceiling ε on its threshold, in `[0, 1]` (typical only;
    /// default [`limits::DEFAULT_TYPICAL_EPSILON`]).
    pub epsilon: Option<f64>,
    /// Typical acceptance's scale δ of `exp(−H(target))` in its threshold, from 0 to
    /// [`limits::MAX_TYPICAL_DELTA`] (typical only; default
    /// [`limits::DEFAULT_TYPICAL_DELTA`]).
    pub delta: Option<f64>,
    /// The longest context suffix prompt lookup searches for, 1 to
    /// [`limits::MAX_NGRAM`] (lookup only; default [`limits::DEFAULT_NGRAM`]).
    pub ngram: Option<f64>,
    /// Sampling temperature; 0 is greedy (default [`limits::DEFAULT_TEMPERATURE`]).
    pub temperature: Option<f64>,
    /// Keep the k most likely tokens.
    pub top_k: Option<f64>,
    /// Keep the smallest set of tokens with at least this much probability.
    pub top_p: Option<f64>,
    /// Seed of the decoder's random numbers (default [`limits::DEFAULT_SEED`]).
    pub seed: Option<f64>,
    /// Tokens to generate (default [`limits::DEFAULT_MAX_TOKENS`]).
    pub max_tokens: Option<f64>,
    /// Stop once the generated text contains any of these strings (`generate()`, the
    /// CLI), or right after emitting any of these token ids (`decode()`).
    #[cfg_attr(feature = "ts", ts(optional, type = "Array<string> | Array<number>"))]
    pub stop: Option<Stop>,
    /// Put full distributions in the traces (for teaching pages).
    pub record_distributions: Option<bool>,
    /// A deliberate bug to plant in the decoder (one of `specula_core::Bug::ALL`, by
    /// name), for the lossless methods with a draft model (speculative, spectr,
    /// multiround).
    pub bug: Option<String>,
}

impl DecodeOptions {
    /// Reads the options from an object of raw values: every name must be one of
    /// [`DECODE_OPTION_NAMES`] and every value of its option's type (null means "not
    /// given"); the prompt is text and `stop` an array of strings.
    ///
    /// # Errors
    /// [`OptionError`] naming the first unknown option or the first value of a wrong type.
    pub fn from_raw(raw: Raw) -> Result<Self, OptionError> {
        Self::read(raw, Input::Text)
    }

    /// As [`from_raw`](Self::from_raw), for `decode()`: the prompt is an array of token
    /// ids and `stop` an array of stop token ids.
    ///
    /// # Errors
    /// As [`from_raw`](Self::from_raw).
    pub fn from_raw_tokens(raw: Raw) -> Result<Self, OptionError> {
        Self::read(raw, Input::Tokens)
    }

    fn read(raw: Raw, input: Input) -> Result<Self, OptionError> {
        let mut o = Self::default();
        for (key, value) in object_entries(raw, "an object such as { prompt }")? {
            match key.as_str() {
                "prompt" => o.prompt = prompt::take_prompt(value, input)?,
                "method" => o.method = String::take(&key, value)?,
                "selection" => o.selection = String::take(&key, value)?,
                "gamma" => o.gamma = f64::take(&key, value)?,
                "drafts" => o.drafts = f64::take(&key, value)?,
                "tree" => {
                    o.tree = take_list(&key, value, "an array of whole numbers such as [2, 2, 1]")?
                }
                "dynamicGamma" => o.dynamic_gamma = bool::take(&key, value)?,
                "parallelDraft" => o.parallel_draft = bool::take(&key, value)?,
                "kl" => o.kl = f64::take(&key, value)?,
                "epsilon" => o.epsilon = f64::take(&key, value)?,
                "delta" => o.delta = f64::take(&key, value)?,
                "ngram" => o.ngram = f64::take(&key, value)?,
                "temperature" => o.temperature = f64::take(&key, value)?,
                "topK" => o.top_k = f64::take(&key, value)?,
                "topP" => o.top_p = f64::take(&key, value)?,
                "seed" => o.seed = f64::take(&key, value)?,
                "maxTokens" => o.max_tokens = f64::take(&key, value)?,
                "stop" => o.stop = prompt::take_stop(value, input)?,
                "recordDistributions" => o.record_distributions = bool::take(&key, value)?,
                "bug" => o.bug = String::take(&key, value)?,
                _ => return Err(OptionError::unknown(key, &DECODE_OPTION_NAMES)),
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod plan_names_tests;
#[cfg(test)]
mod plan_tests;
#[cfg(test)]
mod tests;
