//! Hand-written WebGPU kernels for the Specula models.
//!
//! burn's matmul picks a tiled kernel for any product with more than one row. A
//! verification pass multiplies only γ + 1 rows by each weight matrix, so most of every tile
//! is padding: under a software WebGPU adapter a 5-row product cost ~13× a 1-row one
//! (MODELS.md, "On WebGPU"). And a model this small is bound by the number of
//! dispatches, of which burn's composites (layer norm, GELU, attention) take ~30 per
//! layer. So:
//! - [`dense`] / [`dense_gelu`] / [`dense_residual`]: `x · W + b` (then GELU, or plus a
//!   residual) for a few rows, one invocation per output vector of one or four rows, no
//!   shared memory;
//! - [`layer_norm`]: each row normalised in one invocation;
//! - [`attention`]: causal attention of the new positions over the cached prefix and
//!   branch, an online softmax per row, head and position, reading the caches in place;
//! - [`batched_matmul`]: 4-D products read through their strides (attention's products
//!   when a pass has more than 64 rows in all, as wide SpecTr drafts do, but few new
//!   positions per row);
//! - [`fused_forward`]: a small model's whole pass of a few positions of one sequence, one
//!   dispatch per block (embeddings, norms, projections, attention over the cache it
//!   writes in place, MLP and head fused), for the draft, whose pass is otherwise a few
//!   dozen dispatches for very little arithmetic.
//!
//! Each declines (`None`) what it does not handle, and the caller falls back to burn. Only
//! the browser build with the `webgpu` feature (the default) has kernels; elsewhere, and in
//! the CPU-only wasm module, every function declines every call.
#![deny(missing_docs)]

#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
mod attention;
#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
mod batched;
#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
mod dense;
#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
mod fused;
#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
mod launch;
#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
mod layer_norm;
#[cfg(not(all(target_arch = "wasm32", feature = "webgpu")))]
mod native;

#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
pub use attention::attention;
#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
pub use batched::batched_matmul;
#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
pub use dense::{dense, dense_gelu, dense_residual};
#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
pub use fused::fused_forward;
#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
pub use layer_norm::layer_norm;
#[cfg(not(all(target_arch = "wasm32", feature = "webgpu")))]
pub use native::{
    attention, batched_matmul, dense, dense_gelu, dense_residual, fused_forward, layer_norm,
};

/// Keys and values of a cached part, `[1 or rows, heads, len, head_dim]` each.
pub type KeysValues<'a> = (&'a burn::tensor::Tensor<4>, &'a burn::tensor::Tensor<4>);

/// The shape of a GPT for [`fused_forward`], which also fixes the order of its packed
/// parameters (one f32 vector): the token embedding `[vocab, d]`, the position embedding
/// `[max_seq, d]`, then per block the attention norm's γ and β, the query/key/value layer
/// (`W` `[d, 3d]`, then `b`), the output projection (`[d, d]`, `b`), the MLP norm's γ and
/// β, the MLP's first layer (`[d, d_ff]`, `b`) and second (`[d_ff, d]`, `b`), then the
/// final norm's γ and β and the head (`[d, vocab]`, `b`); every `W` is `[d_in, d_out]`
/// row-major, as burn's `Linear` stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelShape {
    /// Width.
    pub d_model: usize,
    /// Attention heads (dividing the width).
    pub heads: usize,
    /// MLP width.
    pub d_ff: usize,
    /// Vocabulary size.
    pub vocab: usize,
    /// Positions.
    pub max_seq: usize,
    /// Blocks.
    pub layers: usize,
}

impl ModelShape {
    /// Parameters of one block of width `d` and MLP width `d_ff`.
    #[must_use]
    pub fn block_len(d: usize, d_ff: usize) -> usize {
        let norm = 2 * d;
        let linear = |d_in: usize, d_out: usize| d_in * d_out + d_out;
        norm + linear(d, 3 * d) + linear(d, d) + norm + linear(d, d_ff) + linear(d_ff, d)
    }

    /// Length of the packed parameter vector.
    #[must_use]
    pub fn packed_len(&self) -> usize {
        let d = self.d_model;
        (self.vocab + self.max_seq) * d
            + self.layers * Self::block_len(d, self.d_ff)
            + 2 * d
            + d * self.vocab
            + self.vocab
    }
}
