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
    BadRequest(String),
    /// Weights or metadata that do not load.
    #[error("cannot load weights: {0}")]
    Weights(String),
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
