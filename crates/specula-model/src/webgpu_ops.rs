//! The model's operations that take a `specula_kernels` kernel on WebGPU, for passes of few
//! rows, and burn's own operations everywhere else (the CPU backend's reference path,
//! training, long first passes). Each kernel declines what it does not handle, so the
//! fallback is always burn's.

use burn::nn::{Dropout, LayerNorm, LayerNormConfig, Linear};
use burn::tensor::Tensor;
use burn::tensor::activation::gelu;

/// Most rows a pass may have for [`dense`] to use the few-row kernel: every verification
/// (γ + 1 positions, a SpecTr draft set or tree) fits; a long prompt's first pass does not,
/// and there burn's tiled matmul is the better kernel on a real GPU.
pub(crate) const FEW_ROWS: usize = 64;

/// `layer` applied to `x` (`[rows, n, d_in]`): on WebGPU, passes of at most [`FEW_ROWS`]
/// rows use `specula_kernels::dense`, which costs about one row per row where burn's tiled
/// matmul pads every tile (MODELS.md, "On WebGPU"); everything else, training included, is
/// burn's.
pub(crate) fn dense(layer: &Linear, x: Tensor<3>) -> Tensor<3> {
    few_rows(layer, &x, specula_kernels::dense).unwrap_or_else(|| layer.forward(x))
}

/// `gelu(layer(x))`: on WebGPU as [`dense`], with GELU in the same dispatch (burn's takes
/// five more).
pub(crate) fn dense_gelu(layer: &Linear, x: Tensor<3>) -> Tensor<3> {
    few_rows(layer, &x, specula_kernels::dense_gelu).unwrap_or_else(|| gelu(layer.forward(x)))
}

/// `residual + dropout(layer(x))`: on WebGPU as [`dense`], with the addition in the same
/// dispatch (nothing trains on WebGPU, and off an autodiff device dropout is the identity,
/// as burn's `Dropout` itself decides).
pub(crate) fn dense_residual(
    residual: Tensor<3>,
    layer: &Linear,
    x: Tensor<3>,
    dropout: &Dropout,
) -> Tensor<3> {
    let [rows, n, d] = residual.dims();
    let fused = if x.device().is_autodiff() {
        None
    } else {
        few_rows(layer, &x, |x, w, b| {
            specula_kernels::dense_residual(x, w, b, &residual.clone().reshape([rows * n, d]))
        })
    };
    fused.unwrap_or_else(|| residual + dropout.forward(layer.forward(x)))
}

/// `kernel` (a `specula_kernels` dense kernel) for `layer` on `x` when the pass has at most
/// [`FEW_ROWS`] rows and the kernel takes the tensors.
fn few_rows(
    layer: &Linear,
    x: &Tensor<3>,
    kernel: impl FnOnce(&Tensor<2>, &Tensor<2>, &Tensor<1>) -> Option<Tensor<2>>,
) -> Option<Tensor<3>> {
    let [rows, n, d_in] = x.dims();
    if rows * n > FEW_ROWS {
        return None;
    }
    let bias = layer.bias.as_ref()?;
    let y = kernel(
        &x.clone().reshape([rows * n, d_in]),
        &layer.weight.val(),
        &bias.val(),
    )?;
    let d_out = y.dims()[1];
    Some(y.reshape([rows, n, d_out]))
}

/// `norm` applied to `x` (`[rows, n, d]`): on WebGPU one dispatch
/// (`specula_kernels::layer_norm`) where burn's composite takes nine; elsewhere, training
/// included, burn's.
pub(crate) fn layer_norm(norm: &LayerNorm, x: Tensor<3>) -> Tensor<3> {
    let [rows, n, d] = x.dims();
    if let Some(beta) = &norm.beta
        && let Some(y) = specula_kernels::layer_norm(
            &x.clone().reshape([rows * n, d]),
            &norm.gamma.val(),
            &beta.val(),
            // Private to the module; every norm here has the default (see `host_norm`).
            LayerNormConfig::new(d).epsilon,
        )
    {
        return y.reshape([rows, n, d]);
    }
    norm.forward(x)
}

/// `a · b` for attention (`[rows, heads, n, k] · [rows, heads, k, m]`): on WebGPU, passes of
/// at most [`FEW_ROWS`] new positions use `specula_kernels::batched_matmul`, which reads
/// the transposed and narrowed views in place; everything else is burn's matmul.
pub(crate) fn matmul(a: Tensor<4>, b: Tensor<4>) -> Tensor<4> {
    if a.dims()[2] <= FEW_ROWS
        && let Some(y) = specula_kernels::batched_matmul(&a, &b)
    {
        return y;
    }
    a.matmul(b)
}
