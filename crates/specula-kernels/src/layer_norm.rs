//! Layer normalisation of each row in one dispatch, where burn's composite takes nine (two
//! means, a difference, a square, a sum, a root, a division, a scale and a shift). The
//! rows of a decoding pass are few, so one invocation per row loops over its width.

use burn::tensor::Tensor;
use burn_cubecl::Cube;
// The `#[cube]` macro names `cubecl::…`; burn-cubecl re-exports the exact version it uses.
use burn_cubecl::cubecl;
use burn_cubecl::cubecl::prelude::*;
use burn_cubecl::kernel::into_contiguous;

use crate::launch::{cube, empty_f32, grid};

/// Invocation `row`: `out = (x − mean) / √(var + ε) · γ + β` over the row's `d` values
/// (the biased variance, as burn's `layer_norm`).
#[cube(launch)]
fn layer_norm_kernel(
    x: &[f32],
    gamma: &[f32],
    beta: &[f32],
    out: &mut [f32],
    d: usize,
    epsilon: f32,
) {
    let row = ABSOLUTE_POS;
    if row * d >= x.len() {
        terminate!();
    }
    let start = row * d;
    let width = f32::cast_from(d);
    let mut sum = 0.0f32;
    for i in 0..d {
        sum += x[start + i];
    }
    let mean = sum / width;
    let mut squares = 0.0f32;
    for i in 0..d {
        let c = x[start + i] - mean;
        squares += c * c;
    }
    let inv = 1.0f32 / f32::sqrt(squares / width + epsilon);
    for i in 0..d {
        out[start + i] = (x[start + i] - mean) * inv * gamma[i] + beta[i];
    }
}

/// Layer normalisation of every row of `x` (`[rows, d]`) with `gamma` and `beta` (`[d]`)
/// for f32 tensors on a CubeCL device; `None` for tensors elsewhere, of another type, or
/// of mismatched or empty shapes.
#[must_use]
pub fn layer_norm(
    x: &Tensor<2>,
    gamma: &Tensor<1>,
    beta: &Tensor<1>,
    epsilon: f64,
) -> Option<Tensor<2>> {
    let (x, gamma, beta) = (cube(x)?, cube(gamma)?, cube(beta)?);
    let (rows, d) = (x.meta.shape()[0], x.meta.shape()[1]);
    if gamma.meta.shape()[0] != d || beta.meta.shape()[0] != d || rows * d == 0 {
        return None;
    }
    let (x, gamma, beta) = (
        into_contiguous(x),
        into_contiguous(gamma),
        into_contiguous(beta),
    );
    let client = x.client.clone();
    let out = empty_f32(&x, [rows, d]);
    let (cube_count, cube_dim) = grid(&client, rows);
    layer_norm_kernel::launch(
        &client,
        cube_count,
        cube_dim,
        x.into_buffer_arg(),
        gamma.into_buffer_arg(),
        beta.into_buffer_arg(),
        out.clone().into_buffer_arg(),
        d,
        epsilon as f32,
    );
    Some(Tensor::from_primitive::<Cube>(out))
}
