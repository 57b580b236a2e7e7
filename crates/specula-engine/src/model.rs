//! The language-model interface used by the synchronous driver.
//!
//! The [`Decoder`](crate::Decoder) itself never calls a model: it hands out
//! [`ForwardRequest`]s and takes [`ForwardResponse`]s, so an asynchronous caller (a
//! browser awaiting a WebGPU read-back) drives it directly. This trait is for callers that
//! can answer synchronously, through [`generate`](crate::generate).

use crate::error::ModelError;
use crate::request::{ForwardRequest, ForwardResponse};

/// A model that returns next-token logits for the queried positions of token sequences.
///
/// Implementations return raw logits; the engine applies temperature, top-k and top-p
/// (identically for both models) and the softmax.
pub trait LanguageModel {
    /// The vocabulary size: every row of logits has this many entries.
    fn vocab_size(&self) -> usize;

    /// Answers every query of `request` (ideally in one batched forward pass), one row of
    /// [`vocab_size`](Self::vocab_size) logits per query, in query order.
    ///
    /// The first `request.committed_len` tokens of every sequence are final: a KV cache
    /// may keep them and discard whatever it cached beyond them.
    ///
    /// # Errors
    /// Whatever stops the model from answering, as a [`ModelError`].
    fn forward(&mut self, request: &ForwardRequest) -> Result<ForwardResponse, ModelError>;
}

impl<M: LanguageModel + ?Sized> LanguageModel for &mut M {
    fn vocab_size(&self) -> usize {
        (**self).vocab_size()
    }

    fn forward(&mut self, request: &ForwardRequest) -> Result<ForwardResponse, ModelError> {
        (**self).forward(request)
    }
}

impl<M: LanguageModel + ?Sized> LanguageModel for Box<M> {
    fn vocab_size(&self) -> usize {
        (**self).vocab_size()
    }

    fn forward(&mut self, request: &ForwardRequest) -> Result<ForwardResponse, ModelError> {
        (**self).forward(request)
    }
}
