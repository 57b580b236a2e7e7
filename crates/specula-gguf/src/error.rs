//! What a GGUF file can get wrong, each case naming the key, tensor or type at fault.

use thiserror::Error;

/// Why a GGUF file (or a pair of them) was refused. Every case is the file's fault, not
/// the caller's code: the bindings report them all as `bad_weights` with this message.
#[non_exhaustive]
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum GgufError {
    /// Bytes that are not a GGUF container, or a container cut short or inconsistent.
    #[error("not a readable GGUF file: {0}")]
    Container(String),
    /// A model family this crate does not run (`general.architecture`).
    #[error("architecture {0:?} (general.architecture) is not supported; supported: llama")]
    UnsupportedArchitecture(String),
    /// A metadata key the model needs that is missing or has the wrong type.
    #[error("metadata key {key}: {problem}")]
    Metadata {
        /// The key, such as `llama.block_count`.
        key: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A tensor whose type this crate cannot dequantize.
    #[error("tensor {tensor}: type {ty} is not supported (supported: {supported})")]
    UnsupportedTensorType {
        /// The tensor's name.
        tensor: String,
        /// The type's name.
        ty: String,
        /// The supported types.
        supported: &'static str,
    },
    /// A tensor that is missing, or whose shape or data does not fit the model.
    #[error("tensor {tensor}: {problem}")]
    Tensor {
        /// The tensor's name.
        tensor: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A tokenizer the file describes that cannot be built.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A model larger than the memory it would be loaded into.
    #[error("the model needs {needed} bytes, more than the {available} bytes available")]
    TooLarge {
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
}

impl GgufError {
    /// A [`GgufError::Metadata`] for `key`.
    pub fn metadata(key: &str, problem: impl Into<String>) -> Self {
        Self::Metadata {
            key: key.to_owned(),
            problem: problem.into(),
        }
    }

    /// A [`GgufError::Tensor`] for `tensor`.
    pub fn tensor(tensor: &str, problem: impl Into<String>) -> Self {
        Self::Tensor {
            tensor: tensor.to_owned(),
            problem: problem.into(),
        }
    }
}

/// The crate's result type.
pub type Result<T, E = GgufError> = std::result::Result<T, E>;
