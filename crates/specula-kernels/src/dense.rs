//! `x · W + b` for a few rows of `x`: one invocation per output vector (of one row, or of
//! four rows at once), no shared memory, no padding to tiles; optionally followed in the
//! same dispatch by GELU (burn's is five dispatches) or by a residual addition.

use burn::tensor::Tensor;
use burn_cubecl::Cube;
// The `#[cube]` macro names `cubecl::…`; burn-cubecl re-exports the exact version it uses.
use burn_cubecl::cubecl;
use burn_cubecl::cubecl::prelude::*;
use burn_cubecl::kernel::into_contiguous;

use crate::launch::{cube, empty_f32, grid};

/// `gelu(v) = v · (1 + erf(v / √2)) / 2`, in burn's order of operations, when `gelu`.
#[cube]
fn activate<N: Size>(v: Vector<f32, N>, #[comptime] gelu: bool) -> Vector<f32, N> {
    if comptime!(gelu) {
        let half = Vector::<f32, N>::new(0.5f32);
        let one = Vector::<f32, N>::new(1.0f32);
        let sqrt2 = Vector::<f32, N>::new(std::f32::consts::SQRT_2);
        v * (Vector::erf(v / sqrt2) + one) * half
    } else {
        v
    }
}

/// `v`, plus `residual[at]` when `has_residual`.
#[cube]
fn add_residual<N: Size>(
    v: Vector<f32, N>,
    residual: &[Vector<f32, N>],
    at: usize,
    #[comptime] has_residual: bool,
) -> Vector<f32, N> {
    if comptime!(has_residual) {
        residual[at] + v
    } else {
        v
    }
}

/// One row: invocation `col` computes output columns `col · N ..` from the row of `x`
/// (scalars, broadcast) and one column vector of every weight row.
#[cube(launch)]
fn one_row_kernel<N: Size>(
    x: &[f32],
    weight: &[Vector<f32, N>],
    bias: &[Vector<f32, N>],
    residual: &[Vector<f32, N>],
    out: &mut [Vector<f32, N>],
    k: usize,
    #[comptime] gelu: bool,
    #[comptime] has_residual: bool,
) {
    let col = ABSOLUTE_POS;
    if col >= out.len() {
        terminate!();
    }
    let n_vectors = out.len();
    let mut acc = bias[col];
    for i in 0..k {
        acc += Vector::<f32, N>::new(x[i]) * weight[i * n_vectors + col];
    }
    out[col] = add_residual(activate(acc, gelu), residual, col, has_residual);
}

/// Several rows: invocation `block · n_vectors + col` computes rows `4 · block ..` (rows past
/// the end repeat the last row and are not written), so each weight vector is read once per
/// four rows.
#[cube(launch)]
fn four_rows_kernel<N: Size>(
    x: &[f32],
    weight: &[Vector<f32, N>],
    bias: &[Vector<f32, N>],
    residual: &[Vector<f32, N>],
    out: &mut [Vector<f32, N>],
    rows: usize,
    k: usize,
    n_vectors: usize,
    #[comptime] gelu: bool,
    #[comptime] has_residual: bool,
) {
    let pos = ABSOLUTE_POS;
    if pos >= rows.div_ceil(4) * n_vectors {
        terminate!();
    }
    let col = pos % n_vectors;
    let r0 = (pos / n_vectors) * 4;
    let last = rows - 1;
    let x0 = r0 * k;
    let x1 = (if r0 + 1 < rows { r0 + 1 } else { last }) * k;
    let x2 = (if r0 + 2 < rows { r0 + 2 } else { last }) * k;
    let x3 = (if r0 + 3 < rows { r0 + 3 } else { last }) * k;
    let b = bias[col];
    let mut a0 = b;
    let mut a1 = b;
    let mut a2 = b;
    let mut a3 = b;
    for i in 0..k {
        let w = weight[i * n_vectors + col];
        a0 += Vector::<f32, N>::new(x[x0 + i]) * w;
        a1 += Vector::<f32, N>::new(x[x1 + i]) * w;
        a2 += Vector::<f32, N>::new(x[x2 + i]) * w;
        a3 += Vector::<f32, N>::new(x[x3 + i]) * w;
    }
    let at = r0 * n_vectors + col;
    out[at] = add_residual(activate(a0, gelu), residual, at, has_residual);
    if r0 + 1 < rows {
        let at = (r0 + 1) * n_vectors + col;
        out[at] = add_residual(activate(a1, gelu), residual, at, has_residual);
    }
    if r0 + 2 < rows {
        let at = (r0 + 2) * n_vectors + col;
        out[at] = add_residual(activate(a2, gelu), residual, at, has_residual);
    }
    if r0 + 3 < rows {
        let at = (r0 + 3) * n_vectors + col;
        out[at] = add_residual(activate(a3, gelu), residual, at, has_residual);
    }
}

/// `x · weight + bias` (`[rows, k] · [k, n] + [n]`) for f32 tensors on a CubeCL device;
/// `None` for tensors elsewhere (CPU, autodiff), of another type, or of mismatched or empty
/// shapes (the caller then uses burn's matmul, which reports them).
#[must_use]
pub fn dense(x: &Tensor<2>, weight: &Tensor<2>, bias: &Tensor<1>) -> Option<Tensor<2>> {
    dense_then(x, weight, bias, false, None)
}

/// [`dense`] followed by GELU (the exact, erf form burn's `gelu` computes), in one
/// dispatch; `None` as for [`dense`].
#[must_use]
pub fn dense_gelu(x: &Tensor<2>, weight: &Tensor<2>, bias: &Tensor<1>) -> Option<Tensor<2>> {
    dense_then(x, weight, bias, true, None)
}

/// `residual + (x · weight + bias)` (`residual`: `[rows, n]`) in one dispatch, the
/// addition in that order (as burn's `residual + y`); `None` as for [`dense`], or when
/// `residual` has another shape.
#[must_use]
pub fn dense_residual(
    x: &Tensor<2>,
    weight: &Tensor<2>,
    bias: &Tensor<1>,
    residual: &Tensor<2>,
) -> Option<Tensor<2>> {
    dense_then(x, weight, bias, false, Some(residual))
}

fn dense_then(
    x: &Tensor<2>,
    weight: &Tensor<2>,
    bias: &Tensor<1>,
    gelu: bool,
    residual: Option<&Tensor<2>>,
) -> Option<Tensor<2>> {
    let (x, weight, bias) = (cube(x)?, cube(weight)?, cube(bias)?);
    let (rows, k) = (x.meta.shape()[0], x.meta.shape()[1]);
    let n = weight.meta.shape()[1];
    if weight.meta.shape()[0] != k || bias.meta.shape()[0] != n || rows * k * n == 0 {
        return None;
    }
    let residual = match residual {
        Some(r) => {
            let r = cube(r)?;
            if r.meta.shape().to_vec() != [rows, n] {
                return None;
            }
            Some(into_contiguous(r))
        }
        None => None,
    };
    // Whole vectors of columns: 4 lanes where the width allows (every layer here).
    let vector = [4, 2, 1].into_iter().find(|v| n % v == 0).unwrap_or(1);
    let n_vectors = n / vector;
    let (x, weight, bias) = (
        into_contiguous(x),
        into_contiguous(weight),
        into_contiguous(bias),
    );
    let client = x.client.clone();
    let out = empty_f32(&x, [rows, n]);
    let units = rows.div_ceil(4) * n_vectors;
    let (cube_count, cube_dim) = grid(&client, units);
    let has_residual = residual.is_some();
    // Without a residual the bias stands in for it (never read: `has_residual` is off).
    let residual = residual.unwrap_or_else(|| bias.clone()).into_buffer_arg();
    let (x, weight, bias, out_arg) = (
        x.into_buffer_arg(),
        weight.into_buffer_arg(),
        bias.into_buffer_arg(),
        out.clone().into_buffer_arg(),
    );
    if rows == 1 {
        one_row_kernel::launch(
            &client,
            cube_count,
            cube_dim,
            vector,
            x,
            weight,
            bias,
            residual,
            out_arg,
            k,
            gelu,
            has_residual,
        );
    } else {
        four_rows_kernel::launch(
            &client,
            cube_count,
            cube_dim,
            vector,
            x,
            weight,
            bias,
            residual,
            out_arg,
            rows,
            k,
            n_vectors,
            gelu,
            has_residual,
        );
    }
    Some(Tensor::from_primitive::<Cube>(out))
}
