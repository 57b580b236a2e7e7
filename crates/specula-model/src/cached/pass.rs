//! What [`CachedLm`](super::CachedLm) needs of a forward path: one pass over new positions
//! after cached keys and values, and the few operations on those keys and values that the
//! branch cache takes. Each path (burn's tensors here, the host buffers of `specula-host`)
//! has its own types, so keys and values of one path can never reach the other.

use std::fmt::Debug;
use std::future::Future;

use crate::config::ModelConfig;
use crate::error::Result;

/// Keys and values of a batch of rows, every layer, in one path's form.
pub trait RowsKv: Sized {
    /// Positions per row.
    fn positions(&self) -> usize;

    /// The first `len` positions of row `row`, as a batch of one row.
    #[must_use]
    fn row_prefix(&self, row: usize, len: usize) -> Self;

    /// Rows `rows`, in that order.
    #[must_use]
    fn select(&self, rows: &[usize]) -> Self;

    /// `self` then `newer` along the positions; `None` when their rows or shapes differ.
    fn cat(self, newer: Self) -> Option<Self>;
}

/// A model's forward pass over cached keys and values.
pub trait ForwardPass: Debug {
    /// Keys and values of the positions one pass computes.
    type Kv: RowsKv + Debug;
    /// The shared-prefix store: every layer's keys and values for `max_seq` positions of
    /// one row, preallocated.
    type Shared: Debug;

    /// Tokens in the vocabulary: the length of every row of logits.
    fn vocab_size(&self) -> usize;

    /// The most positions a sequence may have: the length of the shared-prefix store.
    fn max_seq(&self) -> usize;

    /// An empty shared-prefix store.
    fn new_shared(&self) -> Self::Shared;

    /// Logits (`[rows, n, vocab]`, row-major) of `tokens` (`rows × n`, row-major) at the
    /// positions after the first `shared_len` positions of `shared` (broadcast to every
    /// row) and then `branch` (one row per row), and the new positions' keys and values.
    ///
    /// # Errors
    /// [`Error::Internal`](crate::Error::Internal) for shapes that do not fit, or
    /// [`Error::ReadBack`](crate::Error::ReadBack) for a device read-back that fails.
    fn forward(
        &self,
        tokens: &[u32],
        rows: usize,
        shared: &Self::Shared,
        shared_len: usize,
        branch: Option<&Self::Kv>,
    ) -> impl Future<Output = Result<(Vec<f32>, Self::Kv)>>;

    /// Writes `kv` (one row) into `shared` from position `start` on; `false`, and nothing
    /// written, when it does not fit.
    fn write(&self, shared: &mut Self::Shared, start: usize, kv: Self::Kv) -> bool;

    /// [`forward`](Self::forward) of one row after the first `start` positions of
    /// `shared` (and no branch), the new keys and values written into `shared` from
    /// `start` on by the pass itself: the logits (`[n, vocab]`). `None`, with nothing
    /// written, when the pass has no such path for this call; the caller then runs
    /// `forward` and `write`. By default there is none.
    ///
    /// # Errors
    /// As [`forward`](Self::forward); positions from `start` on may have been written.
    fn forward_in_place(
        &self,
        tokens: &[u32],
        shared: &mut Self::Shared,
        start: usize,
    ) -> impl Future<Output = Option<Result<Vec<f32>>>> {
        let _ = (tokens, shared, start);
        std::future::ready(None)
    }
}

/// A pass of the bundled GPT architecture, whose whole shape is a [`ModelConfig`].
pub trait GptPass: ForwardPass {
    /// The model's shape.
    fn config(&self) -> &ModelConfig;
}
