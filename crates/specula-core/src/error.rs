//! The one error type of the core: every invalid input has its own variant.

use thiserror::Error;

/// Why an input was refused. Every public function that can fail returns this.
///
/// Marked `#[non_exhaustive]`: match with a wildcard arm.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// A distribution (or logit vector) with no entries.
    #[error("the distribution is empty: it needs at least one entry")]
    Empty,
    /// An entry is NaN.
    #[error("entry {index} is NaN")]
    NotANumber {
        /// Position of the offending entry.
        index: usize,
    },
    /// An entry is infinite where only finite values make sense.
    #[error("entry {index} is infinite ({value})")]
    Infinite {
        /// Position of the offending entry.
        index: usize,
        /// The value found there.
        value: f64,
    },
    /// A probability is negative.
    #[error("entry {index} is negative ({value}); probabilities must be >= 0")]
    Negative {
        /// Position of the offending entry.
        index: usize,
        /// The value found there.
        value: f64,
    },
    /// Every probability is zero (or every logit is minus infinity).
    #[error("every entry is zero: a distribution needs positive mass")]
    AllZero,
    /// Probabilities do not sum to one within the tolerance.
    #[error(
        "the probabilities sum to {sum}, not 1 (allowed deviation {tolerance}); normalise them first"
    )]
    NotNormalized {
        /// The sum found.
        sum: f64,
        /// The allowed deviation from 1.
        tolerance: f64,
    },
    /// Target and draft distributions have different vocabulary sizes.
    #[error(
        "the target has {target} entries but the draft has {draft}; both must cover the same vocabulary"
    )]
    LengthMismatch {
        /// Entries in the target distribution.
        target: usize,
        /// Entries in the draft distribution.
        draft: usize,
    },
    /// Temperature is negative, NaN or infinite.
    #[error("temperature must be finite and >= 0, got {0}")]
    BadTemperature(f64),
    /// top-p is outside (0, 1].
    #[error("top-p must be in (0, 1], got {0}")]
    BadTopP(f64),
    /// top-k is zero.
    #[error("top-k must be at least 1, got 0")]
    BadTopK,
    /// A token id is not in the vocabulary.
    #[error("token {token} is outside the vocabulary of size {vocab}")]
    TokenOutOfRange {
        /// The token id.
        token: usize,
        /// The vocabulary size.
        vocab: usize,
    },
    /// A multi-draft scheme was given no drafts (k = 0).
    #[error("the number of drafts must be at least 1, got 0")]
    NoDrafts,
    /// A plan made for `expected` drafts was given a different number of draft tokens.
    #[error("this plan was made for {expected} drafts but {got} draft tokens were given")]
    DraftCountMismatch {
        /// The plan's number of drafts.
        expected: usize,
        /// The number of draft tokens given.
        got: usize,
    },
    /// A k-Seq ρ override below ρ* (the residual would not be a distribution) or not finite.
    #[error("rho must be finite and at least rho* = {rho_star} for k-Seq to stay exact, got {rho}")]
    BadRho {
        /// The value given.
        rho: f64,
        /// The smallest valid value for this pair of distributions and k.
        rho_star: f64,
    },
    /// A KL budget that is negative, NaN or infinite.
    #[error("the KL budget D must be finite and >= 0, got {0}")]
    BadKlBudget(f64),
    /// A tolerance outside (0, 1).
    #[error("the tolerance must be in (0, 1), got {0}")]
    BadTolerance(f64),
    /// A theory parameter (acceptance rate, cost ratio, …) outside its domain.
    #[error("{name} must be {expected}, got {value}")]
    BadParameter {
        /// The parameter's name.
        name: &'static str,
        /// What values are allowed.
        expected: &'static str,
        /// The value given.
        value: f64,
    },
    /// The OTM linear program would be larger than the documented limit.
    #[error(
        "the OTM linear program would have {variables} variables (vocabulary {vocab}, k = {k}); the limit is {limit}"
    )]
    OtmTooLarge {
        /// V^(k+1), saturated at `u128::MAX`.
        variables: u128,
        /// Vocabulary size.
        vocab: usize,
        /// Number of drafts.
        k: usize,
        /// The largest number of variables accepted.
        limit: u128,
    },
    /// The LP solver failed (it should not for these feasible, bounded problems).
    #[error("the linear program solver failed: {0}")]
    LinearProgram(String),
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
