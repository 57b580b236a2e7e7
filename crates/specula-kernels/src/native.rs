//! Outside the browser build (or without the `webgpu` feature) there are no kernels: each
//! function has the browser build's signature and declines every call, so the callers
//! compile unchanged and use burn.

use burn::tensor::Tensor;

use crate::{KeysValues, ModelShape};

/// Functions with the given signatures that always return `None`.
macro_rules! declining {
    ($($(#[doc = $doc:literal])* pub fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)*) => {
        $(
            $(#[doc = $doc])*
            #[must_use]
            pub fn $name($(_: $ty),*) -> Option<$ret> {
                None
            }
        )*
    };
}

declining! {
    /// `x · weight + bias`: no kernel here, so `None` (the caller uses burn's matmul).
    pub fn dense(x: &Tensor<2>, weight: &Tensor<2>, bias: &Tensor<1>) -> Tensor<2>;
    /// `gelu(x · weight + bias)`: no kernel here, so `None`.
    pub fn dense_gelu(x: &Tensor<2>, weight: &Tensor<2>, bias: &Tensor<1>) -> Tensor<2>;
    /// `residual + (x · weight + bias)`: no kernel here, so `None`.
    pub fn dense_residual(
        x: &Tensor<2>,
        weight: &Tensor<2>,
        bias: &Tensor<1>,
        residual: &Tensor<2>,
    ) -> Tensor<2>;
    /// Layer normalisation of each row: no kernel here, so `None`.
    pub fn layer_norm(x: &Tensor<2>, gamma: &Tensor<1>, beta: &Tensor<1>, epsilon: f64) -> Tensor<2>;
    /// Causal self-attention of the new positions: no kernel here, so `None`.
    pub fn attention(
        qkv: &Tensor<3>,
        heads: usize,
        shared: Option<KeysValues<'_>>,
        branch: Option<KeysValues<'_>>,
    ) -> Tensor<3>;
    /// `a · b` for 4-D tensors: no kernel here, so `None`.
    pub fn batched_matmul(a: &Tensor<4>, b: &Tensor<4>) -> Tensor<4>;
    /// A small model's fused pass: no kernel here, so `None` (the caller runs burn's).
    pub fn fused_forward(
        weights: &Tensor<1>,
        shape: ModelShape,
        epsilon: f64,
        tokens: &[u32],
        start: usize,
        cache: &[KeysValues<'_>],
    ) -> Tensor<2>;
}
