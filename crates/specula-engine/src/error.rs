//! The one error type of the engine: every invalid setting, response or call order has
//! its own variant; nothing the caller passes in makes the engine panic.

use thiserror::Error;

use crate::request::Role;

/// What a [`LanguageModel`](crate::LanguageModel) reports when it cannot answer a request.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct ModelError(pub String);

/// Why the engine refused a setting, a model response or a call.
///
/// Marked `#[non_exhaustive]`: match with a wildcard arm.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// The token-level math refused an input (for example an invalid [`SamplingConfig`]).
    ///
    /// [`SamplingConfig`]: specula_core::SamplingConfig
    #[error("math core: {0}")]
    Core(#[from] specula_core::Error),
    /// Decoding needs at least one prompt token to condition on.
    #[error("the prompt is empty: give at least one token")]
    EmptyPrompt,
    /// A drafting method (speculative, mentored, typical, lookup) with γ = 0 drafts per
    /// round.
    #[error("the draft length gamma must be at least 1, got 0")]
    ZeroGamma,
    /// A dynamic-γ policy whose cap is below the starting γ.
    #[error("max_gamma ({max_gamma}) must be at least the starting gamma ({gamma})")]
    BadMaxGamma {
        /// The starting γ.
        gamma: usize,
        /// The cap given.
        max_gamma: usize,
    },
    /// A draft-to-target cost ratio that is negative, NaN or infinite.
    #[error("the draft/target cost ratio must be finite and >= 0, got {0}")]
    BadCostRatio(f64),
    /// SpecTr or multi-round decoding with K = 0 draft sequences.
    #[error("the number of draft sequences K must be at least 1, got 0")]
    NoDrafts,
    /// Draft sequences of length L = 0 (or an empty tree branching list).
    #[error("the draft length L must be at least 1, got 0")]
    ZeroDraftLength,
    /// A prefix tree with a depth that has no children.
    #[error("tree branching at depth {depth} is 0; every depth needs at least one child")]
    ZeroBranching {
        /// The depth (1-based) whose branching factor is 0.
        depth: usize,
    },
    /// A prefix tree whose branching factors do not multiply to K.
    #[error("the tree branching factors multiply to {product}, not K = {k}")]
    BranchingMismatch {
        /// ∏ kᵢ (saturated at `u128::MAX`).
        product: u128,
        /// The K given.
        k: usize,
    },
    /// A draft set too large to score in one request.
    #[error("the draft set has {nodes} nodes; the limit is {limit}")]
    TooManyDraftNodes {
        /// Nodes the draft set would have (saturated).
        nodes: u128,
        /// The largest number accepted.
        limit: usize,
    },
    /// A mentored-decoding KL budget that is negative, NaN or infinite.
    #[error("the KL budget D must be finite and >= 0, got {0}")]
    BadKlBudget(f64),
    /// A typical-acceptance ceiling ε outside `[0, 1]` (or NaN).
    #[error("typical acceptance's epsilon must be in [0, 1], got {0}")]
    BadTypicalEpsilon(f64),
    /// A typical-acceptance scale δ that is negative, NaN or infinite.
    #[error("typical acceptance's delta must be finite and >= 0, got {0}")]
    BadTypicalDelta(f64),
    /// Prompt lookup with n-grams of length 0.
    #[error("the n-gram length of prompt lookup must be at least 1, got 0")]
    ZeroNgram,
    /// Stop strings without a way to turn tokens into text.
    #[error("stop strings need a detokenizer: set `token_text` or use `Decoder::with_detokenizer`")]
    StopStringsNeedDetokenizer,
    /// A deliberate bug asked of a method it cannot be planted in: bugs go into the
    /// lossless drafting methods with a draft model (speculative, SpecTr, multi-round).
    #[error(
        "the bug {bug} applies to the lossless drafting methods (speculative, spectr, \
         multiround), not to {method}"
    )]
    BugNotApplicable {
        /// The bug asked for.
        bug: specula_core::Bug,
        /// The method's name.
        method: &'static str,
    },
    /// Parallel drafting asked of a method other than standard speculative decoding
    /// with a fixed γ (the next round's drafts are drawn before this round's outcome is
    /// known, so γ cannot depend on it).
    #[error(
        "parallel drafting applies to standard speculative decoding with a fixed gamma, not to {method}"
    )]
    ParallelDraftNotApplicable {
        /// The method's name (`"speculative with a dynamic gamma"` for that case).
        method: &'static str,
    },
    /// An empty stop string (it would match before any token).
    #[error("stop string {index} is empty")]
    EmptyStopString {
        /// Its position in the list.
        index: usize,
    },
    /// The token→text table does not cover the vocabulary.
    #[error("the token text table has {entries} entries but the vocabulary has {vocab}")]
    TokenTextLength {
        /// Entries in the table.
        entries: usize,
        /// The vocabulary size.
        vocab: usize,
    },
    /// The draft and target models (or two responses) disagree on the vocabulary size.
    #[error(
        "the draft model has a vocabulary of {draft} but the target model has {target}; both must be the same"
    )]
    VocabMismatch {
        /// The draft model's vocabulary size.
        draft: usize,
        /// The target model's vocabulary size.
        target: usize,
    },
    /// A model reported a vocabulary of size 0.
    #[error("the {role} model reported a vocabulary of size 0")]
    ZeroVocab {
        /// Which model.
        role: Role,
    },
    /// A token id (in the prompt, or produced by a model) outside the vocabulary.
    #[error("token {token} is outside the vocabulary of size {vocab}")]
    TokenOutOfRange {
        /// The token id.
        token: u32,
        /// The vocabulary size.
        vocab: usize,
    },
    /// A response whose logits do not hold one row of `vocab` entries per query.
    #[error(
        "the {role} model returned {got} logits; the request needs {expected} ({queries} queries × vocabulary {vocab})"
    )]
    WrongResponseLength {
        /// Which model.
        role: Role,
        /// Queries in the request.
        queries: usize,
        /// The vocabulary size of the response.
        vocab: usize,
        /// `queries × vocab`.
        expected: usize,
        /// The number of logits returned.
        got: usize,
    },
    /// A logit row that is not a valid distribution (NaN, `+inf`, all `-inf`).
    #[error("the {role} model returned invalid logits in row {row}: {source}")]
    InvalidLogits {
        /// Which model.
        role: Role,
        /// The row (query index) at fault.
        row: usize,
        /// What was wrong with it.
        source: specula_core::Error,
    },
    /// A response supplied when no request is outstanding (call
    /// [`next_request`](crate::Decoder::next_request) first), or after generation finished.
    #[error("a response was supplied but no request is outstanding")]
    NoPendingRequest,
    /// A vocabulary larger than `u32` token ids can address.
    #[error(
        "the {role} model reported a vocabulary of {vocab}; token ids are u32, so at most 2^32"
    )]
    VocabTooLarge {
        /// Which model.
        role: Role,
        /// The size reported.
        vocab: usize,
    },
    /// The method needs a draft model and none was given to the driver.
    #[error("this method needs a draft model")]
    MissingDraftModel,
    /// A model failed to answer.
    #[error("the {role} model failed: {source}")]
    Model {
        /// Which model.
        role: Role,
        /// Its error.
        source: ModelError,
    },
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
