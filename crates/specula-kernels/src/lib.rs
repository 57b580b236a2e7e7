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
pub use layer_norm::layer_norm;
#[cfg(not(all(target_arch = "wasm32", feature = "webgpu")))]
pub use native::{attention, batched_matmul, dense, dense_gelu, dense_residual, layer_norm};

/// Keys and values of a cached part, `[1 or rows, heads, len, head_dim]` each.
pub type KeysValues<'a> = (&'a burn::tensor::Tensor<4>, &'a burn::tensor::Tensor<4>);
