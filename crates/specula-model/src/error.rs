//! The crate's error type.

use thiserror::Error;

/// What went wrong building, loading, running or training a model.
#[non_exhaustive]
#[derive(Debug, Error)]
pub enum Error {
    /// A model shape that cannot be built.
    #[error("invalid model configuration: {0}")]
    BadConfig(String),
    /// A backend this build does not include.
    #[error("this build has no {0} backend; rebuild with `--features {0}`")]
    BackendNotBuilt(&'static str),
    /// Text containing a character the tokenizer does not know.
    #[error("character {ch:?} (U+{code:04X}) at position {position} is not in the vocabulary")]
    UnknownChar {
        /// The character.
        ch: char,
        /// Its code point, for characters that do not print.
        code: u32,
        /// Its index (in characters) in the text.
        position: usize,
    },
    /// A token id outside the vocabulary.
    #[error("token id {token} is outside the vocabulary of {vocab} tokens")]
    UnknownToken {
        /// The id.
        token: u32,
        /// The vocabulary size.
        vocab: usize,
    },
    /// A tokenizer built from text with no characters, or with a repeated character.
    #[error("invalid vocabulary: {0}")]
    BadVocabulary(String),
    /// A request the model cannot answer (too long, malformed).
    #[error("{0}")]
    BadRequest(RequestProblem),
    /// The device could not hand the logits back (a lost GPU, a failed mapping); the
    /// device's own message.
    #[error("reading logits back from the device failed: {0}")]
    ReadBack(String),
    /// A broken invariant of this crate (a bug, never the caller's input): what broke.
    #[error("a bug in specula-model: {0}")]
    Internal(&'static str),
    /// Weights that do not load.
    #[error("cannot load weights: {0}")]
    Weights(String),
    /// A model description (`ROLE.json`) that is not one: not JSON, a field this format
    /// does not have, an unknown format.
    #[error("invalid model description: {0}")]
    Description(String),
    /// A file that is not read: not a regular file, or larger than allowed.
    #[error("{0}")]
    Unreadable(String),
    /// A checksum that does not match.
    #[error("checksum mismatch for {name}: expected {expected}, got {actual}")]
    Checksum {
        /// Which file.
        name: String,
        /// The recorded digest.
        expected: String,
        /// The digest of the bytes.
        actual: String,
    },
    /// A training setting or corpus that cannot be used.
    #[error("training: {0}")]
    Training(String),
    /// An error about one file's contents, with the path.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: String,
        /// What is wrong with it.
        source: Box<Error>,
    },
    /// A file-system error, with the path.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// What is wrong with a forward request.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RequestProblem {
    /// A sequence with no tokens.
    #[error("the sequence is empty")]
    EmptySequence,
    /// A sequence longer than the model's context.
    #[error("a sequence of {len} tokens is longer than the model's {max_seq} positions")]
    TooLong {
        /// Its length.
        len: usize,
        /// The model's positions.
        max_seq: usize,
    },
    /// A query naming a sequence the request does not have.
    #[error("query for sequence {sequence} out of range")]
    NoSuchSequence {
        /// The index given.
        sequence: usize,
    },
    /// A query conditioning on no tokens, or on more than its sequence has.
    #[error("query prefix length {prefix_len} is outside 1..={len} for sequence {sequence}")]
    PrefixOutOfRange {
        /// The prefix length given.
        prefix_len: usize,
        /// The sequence's length.
        len: usize,
        /// Which sequence.
        sequence: usize,
    },
    /// A sequence shorter than the request's committed length.
    #[error("a sequence is shorter than the committed length")]
    ShorterThanCommitted,
    /// A synchronous answer where the device can only be read asynchronously (WebGPU in a
    /// browser).
    #[error("the device cannot be read synchronously here; use answer_async")]
    NoSyncReadBack,
}

impl Error {
    /// An [`Error::Io`] for `path`.
    #[must_use]
    pub fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.as_ref().display().to_string(),
            source,
        }
    }
}

impl From<Error> for specula_engine::ModelError {
    fn from(e: Error) -> Self {
        Self(e.to_string())
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
