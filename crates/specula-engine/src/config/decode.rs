//! [`DecodeConfig`]: built only through [`DecodeConfig::new`], [`DecodeConfigBuilder`] or
//! deserialisation, each of which runs every check, so a configuration that exists is
//! valid and the decoder never checks it again.

use serde::{Deserialize, Deserializer, Serialize};
use specula_core::{Bug, SamplingConfig};

use super::{GammaPolicy, Method};
use crate::error::{Error, Result};
use crate::options::limits::MAX_ROUND_NODES;
use crate::options::{MethodName, MethodOption};

/// New tokens generated when [`DecodeConfigBuilder::max_new_tokens`] is not called.
pub const DEFAULT_MAX_NEW_TOKENS: usize = 32;

/// Everything a [`Decoder`](crate::Decoder) needs besides the prompt: checked when built,
/// read through its getters.
///
/// Build one with [`DecodeConfig::new`] (method, sampling and length) or
/// [`DecodeConfig::builder`] (every setting); both refuse a bad setting with its typed
/// [`Error`]. Deserialising one runs the same checks. The fields no check reads (seed,
/// length, stop tokens, token text, recorded distributions) can also be replaced on a
/// built configuration (`with_seed` and so on); any other change goes through
/// [`into_builder`](Self::into_builder) and is checked again.
///
/// ```
/// use specula_engine::{DecodeConfig, Error, GammaPolicy, Method, SamplingConfig};
///
/// let speculative = |gamma| Method::Speculative { gamma, policy: GammaPolicy::Fixed };
/// let config = DecodeConfig::builder(speculative(4))
///     .sampling(SamplingConfig::greedy())
///     .max_new_tokens(10)
///     .seed(7)
///     .build()?;
/// assert_eq!((config.max_new_tokens(), config.seed()), (10, 7));
/// assert_eq!(
///     DecodeConfig::new(speculative(0), SamplingConfig::default(), 10),
///     Err(Error::ZeroGamma)
/// );
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DecodeConfig {
    // The field docs are the TypeScript declarations' (ts-rs); each getter says the same.
    /// The decoding method.
    method: Method,
    /// Temperature, top-k and top-p, applied identically to both models' logits;
    /// temperature 0 makes every method greedy.
    sampling: SamplingConfig,
    /// Stop after this many generated tokens.
    max_new_tokens: usize,
    /// Stop right after emitting any of these tokens (the stop token is emitted).
    #[serde(default)]
    stop_tokens: Vec<u32>,
    /// Stop right after the token that completes any of these strings in the generated
    /// text (needs `token_text` or a detokenizer).
    #[serde(default)]
    stop_strings: Vec<String>,
    /// The text of each token id, used to detect stop strings.
    #[serde(default)]
    token_text: Option<Vec<String>>,
    /// Seed of the decoder's ChaCha8 random number generator.
    #[serde(default)]
    seed: u64,
    /// Whether traces carry full draft and target distributions (large: V floats each).
    #[serde(default)]
    record_distributions: bool,
    /// A deliberate mistake to plant in the decoder, for teaching (a bug lab) and for
    /// measuring the power of exactness tests: the output then no longer follows the
    /// target. `None` (the default, left out of serialised configs) decodes correctly.
    /// Only the lossless drafting methods take one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bug: Option<Bug>,
    /// Draft the next round while the target verifies this one (PEARL's post-verify):
    /// standard speculative decoding with a fixed γ only. The decoder then issues
    /// [`Step::Parallel`](crate::Step::Parallel); docs/parallel-draft.md has the schedule
    /// and why it stays exact. `false` (the default, left out of serialised configs)
    /// drafts each round after the last one was verified.
    #[serde(default, skip_serializing_if = "is_false")]
    parallel_draft: bool,
}

/// A configuration as written, before its checks: what deserialising reads. (The hand
/// written `Deserialize` below does what `#[serde(try_from = "RawDecodeConfig")]` would,
/// without an attribute ts-rs warns about.)
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDecodeConfig {
    method: Method,
    sampling: SamplingConfig,
    max_new_tokens: usize,
    #[serde(default)]
    stop_tokens: Vec<u32>,
    #[serde(default)]
    stop_strings: Vec<String>,
    #[serde(default)]
    token_text: Option<Vec<String>>,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    record_distributions: bool,
    #[serde(default)]
    bug: Option<Bug>,
    #[serde(default)]
    parallel_draft: bool,
}

impl RawDecodeConfig {
    /// The configuration, checked.
    fn check(self) -> Result<DecodeConfig> {
        DecodeConfigBuilder {
            draft: DecodeConfig {
                method: self.method,
                sampling: self.sampling,
                max_new_tokens: self.max_new_tokens,
                stop_tokens: self.stop_tokens,
                stop_strings: self.stop_strings,
                token_text: self.token_text,
                seed: self.seed,
                record_distributions: self.record_distributions,
                bug: self.bug,
                parallel_draft: self.parallel_draft,
            },
        }
        .build()
    }
}

impl<'de> Deserialize<'de> for DecodeConfig {
    /// Reads the fields as serialised, then runs every check of
    /// [`DecodeConfigBuilder::build`]; a refused setting is a deserialisation error with
    /// its message.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let raw = RawDecodeConfig::deserialize(deserializer)?;
        raw.check().map_err(serde::de::Error::custom)
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Default for DecodeConfig {
    /// Autoregressive decoding with the builder's defaults (valid by construction).
    fn default() -> Self {
        Self::unchecked(Method::Autoregressive)
    }
}

impl DecodeConfig {
    /// `method` with `sampling`, generating at most `max_new_tokens`; every other setting
    /// as [`builder`](Self::builder) leaves it.
    ///
    /// # Errors
    /// As [`DecodeConfigBuilder::build`].
    pub fn new(method: Method, sampling: SamplingConfig, max_new_tokens: usize) -> Result<Self> {
        Self::builder(method)
            .sampling(sampling)
            .max_new_tokens(max_new_tokens)
            .build()
    }

    /// A builder for `method` with the defaults: temperature 1, no top-k or top-p,
    /// [`DEFAULT_MAX_NEW_TOKENS`] new tokens, no stop conditions or token text, seed 0,
    /// no distributions in traces, no bug, no parallel drafting.
    pub fn builder(method: Method) -> DecodeConfigBuilder {
        DecodeConfigBuilder {
            draft: Self::unchecked(method),
        }
    }

    /// A builder holding this configuration's settings, to change some and build again.
    pub fn into_builder(self) -> DecodeConfigBuilder {
        DecodeConfigBuilder { draft: self }
    }

    /// The defaults of [`builder`](Self::builder), not yet checked.
    fn unchecked(method: Method) -> Self {
        Self {
            method,
            sampling: SamplingConfig::default(),
            max_new_tokens: DEFAULT_MAX_NEW_TOKENS,
            stop_tokens: Vec::new(),
            stop_strings: Vec::new(),
            token_text: None,
            seed: 0,
            record_distributions: false,
            bug: None,
            parallel_draft: false,
        }
    }

    /// The decoding method.
    #[must_use]
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// Temperature, top-k and top-p, applied identically to both models' logits;
    /// temperature 0 makes every method greedy.
    #[must_use]
    pub fn sampling(&self) -> SamplingConfig {
        self.sampling
    }

    /// The most tokens generated: decoding stops after this many.
    #[must_use]
    pub fn max_new_tokens(&self) -> usize {
        self.max_new_tokens
    }

    /// Decoding stops right after emitting any of these tokens (the stop token is
    /// emitted).
    #[must_use]
    pub fn stop_tokens(&self) -> &[u32] {
        &self.stop_tokens
    }

    /// Decoding stops right after the token that completes any of these strings in the
    /// generated text (the decoder needs [`token_text`](Self::token_text) or a
    /// detokenizer for them). None is empty.
    #[must_use]
    pub fn stop_strings(&self) -> &[String] {
        &self.stop_strings
    }

    /// The text of each token id, used to detect stop strings.
    #[must_use]
    pub fn token_text(&self) -> Option<&[String]> {
        self.token_text.as_deref()
    }

    /// Seed of the decoder's ChaCha8 random number generator.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Whether traces carry full draft and target distributions (large: V floats each).
    #[must_use]
    pub fn record_distributions(&self) -> bool {
        self.record_distributions
    }

    /// A deliberate mistake planted in the decoder, for teaching (a bug lab) and for
    /// measuring the power of exactness tests: the output then no longer follows the
    /// target. `None` (the default, left out of serialised configs) decodes correctly.
    /// Only the lossless drafting methods take one.
    #[must_use]
    pub fn bug(&self) -> Option<Bug> {
        self.bug
    }

    /// Whether the next round is drafted while the target verifies this one (PEARL's
    /// post-verify): standard speculative decoding with a fixed γ only. The decoder then
    /// issues [`Step::Parallel`](crate::Step::Parallel); docs/parallel-draft.md has the
    /// schedule and why it stays exact. `false` (the default, left out of serialised
    /// configs) drafts each round after the last one was verified.
    #[must_use]
    pub fn parallel_draft(&self) -> bool {
        self.parallel_draft
    }

    /// This configuration with another seed (no check reads it).
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// This configuration generating at most `max_new_tokens` (no check reads it).
    #[must_use]
    pub fn with_max_new_tokens(mut self, max_new_tokens: usize) -> Self {
        self.max_new_tokens = max_new_tokens;
        self
    }

    /// This configuration with these stop tokens (no check reads them).
    #[must_use]
    pub fn with_stop_tokens(mut self, stop_tokens: impl Into<Vec<u32>>) -> Self {
        self.stop_tokens = stop_tokens.into();
        self
    }

    /// This configuration with this token text table (no check reads it).
    #[must_use]
    pub fn with_token_text(mut self, token_text: impl Into<Option<Vec<String>>>) -> Self {
        self.token_text = token_text.into();
        self
    }

    /// This configuration with full distributions in traces or not (no check reads it).
    #[must_use]
    pub fn with_record_distributions(mut self, record: bool) -> Self {
        self.record_distributions = record;
        self
    }

    /// Every rule a configuration must meet; nothing here depends on the models.
    fn check(&self) -> Result<()> {
        self.sampling.validate()?;
        check_method(&self.method)?;
        if let Some(bug) = self.bug
            && !MethodName::from(&self.method).takes(MethodOption::Bug)
        {
            return Err(Error::BugNotApplicable {
                bug,
                method: self.method.name(),
            });
        }
        if self.parallel_draft
            && !matches!(
                self.method,
                Method::Speculative {
                    policy: GammaPolicy::Fixed,
                    ..
                }
            )
        {
            return Err(Error::ParallelDraftNotApplicable {
                method: match self.method {
                    Method::Speculative { .. } => "speculative with a dynamic gamma",
                    _ => self.method.name(),
                },
            });
        }
        if let Some(index) = self.stop_strings.iter().position(String::is_empty) {
            return Err(Error::EmptyStopString { index });
        }
        Ok(())
    }
}

/// The method's own settings: γ, the draft set, the γ policy, the KL budget, typical
/// acceptance's ε and δ, the n-gram length, each round within [`MAX_ROUND_NODES`].
fn check_method(method: &Method) -> Result<()> {
    match method {
        Method::Autoregressive => {}
        Method::Speculative { gamma, policy } => {
            check_gamma(*gamma)?;
            policy.validate(*gamma)?;
        }
        Method::SpecTr { drafts, .. } | Method::MultiRound { drafts } => {
            drafts.validate()?;
        }
        Method::Mentored {
            gamma,
            kl_budget,
            policy,
        } => {
            check_gamma(*gamma)?;
            if !(kl_budget.is_finite() && *kl_budget >= 0.0) {
                return Err(Error::BadKlBudget(*kl_budget));
            }
            policy.validate(*gamma)?;
        }
        Method::Typical {
            gamma,
            epsilon,
            delta,
            policy,
        } => {
            check_gamma(*gamma)?;
            if !(0.0..=1.0).contains(epsilon) {
                return Err(Error::BadTypicalEpsilon(*epsilon));
            }
            if !(delta.is_finite() && *delta >= 0.0) {
                return Err(Error::BadTypicalDelta(*delta));
            }
            policy.validate(*gamma)?;
        }
        Method::Lookup { gamma, ngram } => {
            check_gamma(*gamma)?;
            if *gamma > MAX_ROUND_NODES {
                return Err(Error::TooManyDraftNodes {
                    nodes: *gamma as u128,
                    limit: MAX_ROUND_NODES,
                });
            }
            if *ngram == 0 {
                return Err(Error::ZeroNgram);
            }
        }
    }
    Ok(())
}

fn check_gamma(gamma: usize) -> Result<()> {
    if gamma == 0 {
        Err(Error::ZeroGamma)
    } else {
        Ok(())
    }
}

/// The settings of a [`DecodeConfig`] before their checks: from
/// [`DecodeConfig::builder`] or [`DecodeConfig::into_builder`], finished by
/// [`build`](Self::build).
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct DecodeConfigBuilder {
    /// The settings so far, unchecked until `build`.
    draft: DecodeConfig,
}

impl DecodeConfigBuilder {
    /// The decoding method.
    pub fn method(mut self, method: Method) -> Self {
        self.draft.method = method;
        self
    }

    /// Temperature, top-k and top-p, applied identically to both models' logits.
    pub fn sampling(mut self, sampling: SamplingConfig) -> Self {
        self.draft.sampling = sampling;
        self
    }

    /// The most tokens to generate.
    pub fn max_new_tokens(mut self, max_new_tokens: usize) -> Self {
        self.draft.max_new_tokens = max_new_tokens;
        self
    }

    /// Tokens that stop decoding right after they are emitted.
    pub fn stop_tokens(mut self, stop_tokens: impl Into<Vec<u32>>) -> Self {
        self.draft.stop_tokens = stop_tokens.into();
        self
    }

    /// Strings that stop decoding right after the token that completes one; none may be
    /// empty.
    pub fn stop_strings(mut self, stop_strings: Vec<String>) -> Self {
        self.draft.stop_strings = stop_strings;
        self
    }

    /// The text of each token id, to detect stop strings (`None` for none).
    pub fn token_text(mut self, token_text: impl Into<Option<Vec<String>>>) -> Self {
        self.draft.token_text = token_text.into();
        self
    }

    /// Seed of the decoder's random number generator.
    pub fn seed(mut self, seed: u64) -> Self {
        self.draft.seed = seed;
        self
    }

    /// Whether traces carry full draft and target distributions.
    pub fn record_distributions(mut self, record: bool) -> Self {
        self.draft.record_distributions = record;
        self
    }

    /// A deliberate mistake to plant in the decoder (`None` for none); only the lossless
    /// drafting methods take one.
    pub fn bug(mut self, bug: impl Into<Option<Bug>>) -> Self {
        self.draft.bug = bug.into();
        self
    }

    /// Whether to draft the next round while the target verifies this one: standard
    /// speculative decoding with a fixed γ only.
    pub fn parallel_draft(mut self, parallel: bool) -> Self {
        self.draft.parallel_draft = parallel;
        self
    }

    /// Checks every setting and returns the configuration.
    ///
    /// # Errors
    /// [`Error::Core`] for an invalid [`SamplingConfig`]; for the method's settings
    /// [`Error::ZeroGamma`], [`Error::BadKlBudget`], [`Error::BadTypicalEpsilon`],
    /// [`Error::BadTypicalDelta`], [`Error::ZeroNgram`], the errors of
    /// [`DraftShape::validate`](super::DraftShape::validate) and
    /// [`GammaPolicy::validate`] (a round beyond [`MAX_ROUND_NODES`] draft nodes is
    /// [`Error::TooManyDraftNodes`]); [`Error::BugNotApplicable`] for a bug the method
    /// does not take (see [`METHOD_OPTIONS`](crate::options::METHOD_OPTIONS)),
    /// [`Error::ParallelDraftNotApplicable`] for parallel drafting other than with
    /// fixed-γ speculative decoding, [`Error::EmptyStopString`].
    pub fn build(self) -> Result<DecodeConfig> {
        self.draft.check()?;
        Ok(self.draft)
    }
}
