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
//!   positions per row).
//!
//! Each declines (`None`) what it does not handle, and the caller falls back to burn. Only
//! the browser build has kernels; elsewhere every function declines every call.
#![deny(missing_docs)]

#[cfg(target_arch = "wasm32")]
mod attention;
#[cfg(target_arch = "wasm32")]
mod batched;
#[cfg(target_arch = "wasm32")]
mod dense;
#[cfg(target_arch = "wasm32")]
mod launch;
#[cfg(target_arch = "wasm32")]
mod layer_norm;
#[cfg(not(target_arch = "wasm32"))]
mod native;

#[cfg(target_arch = "wasm32")]
pub use attention::attention;
#[cfg(target_arch = "wasm32")]
pub use batched::batched_matmul;
#[cfg(target_arch = "wasm32")]
pub use dense::{dense, dense_gelu, dense_residual};
#[cfg(target_arch = "wasm32")]
pub use layer_norm::layer_norm;
#[cfg(not(target_arch = "wasm32"))]
pub use native::{attention, batched_matmul, dense, dense_gelu, dense_residual, layer_norm};

/// Keys and values of a cached part, `[1 or rows, heads, len, head_dim]` each.
pub type KeysValues<'a> = (&'a burn::tensor::Tensor<4>, &'a burn::tensor::Tensor<4>);
