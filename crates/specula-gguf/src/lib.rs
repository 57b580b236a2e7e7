//! Llama-family GGUF files: the metadata, the model's shape, the tensors dequantized to
//! f32, and the byte-level BPE tokenizer the file carries. Everything a file can get
//! wrong is a typed [`GgufError`]; nothing is half-built.
#![deny(missing_docs)]

pub mod error;
pub mod tokenizer;

pub use error::GgufError;
pub use tokenizer::{BpeTokenizer, TokenizerSpec};
pub mod dequant;
pub mod file;

pub use dequant::TensorKind;
pub use file::{GgufFile, TensorEntry};
pub mod llama;
pub mod model;
pub mod synthetic;
pub mod writer;

pub use llama::{LlamaConfig, LlamaWeights, RopeStyle};
pub use model::GgufModel;
