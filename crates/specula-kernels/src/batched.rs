//! `a · b` for 4-D tensors with few rows per matrix (attention's scores and mixing), read
//! through the operands' strides so transposed, narrowed and broadcast views need no copy.

use burn::tensor::Tensor as BurnTensor;
// The `#[cube]` macro names `cubecl::…`; burn-cubecl re-exports the exact version it uses.
use burn_cubecl::Cube;
use burn_cubecl::cubecl;
use burn_cubecl::cubecl::prelude::*;

use crate::launch::{cube, empty_f32, grid};

/// One invocation per output element of a contiguous `[b0, b1, m, n]` output:
/// `out[r, h, i, j] = Σ_t a[r, h, i, t] · b[r, h, t, j]`, every operand read by its strides.
#[cube(launch)]
fn batched_kernel(a: &Tensor<f32>, b: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pos = ABSOLUTE_POS;
    if pos >= out.len() {
        terminate!();
    }
    let n = out.shape(3);
    let m = out.shape(2);
    let heads = out.shape(1);
    let j = pos % n;
    let i = (pos / n) % m;
    let h = (pos / (n * m)) % heads;
    let r = pos / (n * m * heads);
    let a_row = r * a.stride(0) + h * a.stride(1) + i * a.stride(2);
    let b_col = r * b.stride(0) + h * b.stride(1) + j * b.stride(3);
    let (a_step, b_step) = (a.stride(3), b.stride(2));
    let mut acc = 0.0f32;
    for t in 0..a.shape(3) {
        acc += a[a_row + t * a_step] * b[b_col + t * b_step];
    }
    out[pos] = acc;
}

/// `a · b` (`[b0, b1, m, k] · [b0, b1, k, n]`, equal batch dimensions) for f32 tensors on a
/// CubeCL device; `None` for tensors elsewhere or of other shapes or types.
#[must_use]
pub fn batched_matmul(a: &BurnTensor<4>, b: &BurnTensor<4>) -> Option<BurnTensor<4>> {
    let (a, b) = (cube(a)?, cube(b)?);
    let (sa, sb) = (a.meta.shape(), b.meta.shape());
    if sa[0] != sb[0] || sa[1] != sb[1] || sa[3] != sb[2] {
        return None;
    }
    let shape = [sa[0], sa[1], sa[2], sb[3]];
    let out = empty_f32(&a, shape);
    let client = a.client.clone();
    let units = shape.iter().product::<usize>();
    if units == 0 {
        return Some(BurnTensor::from_primitive::<Cube>(out));
    }
    let (cube_count, cube_dim) = grid(&client, units);
    batched_kernel::launch(
        &client,
        cube_count,
        cube_dim,
        a.into_tensor_arg(),
        b.into_tensor_arg(),
        out.clone().into_tensor_arg(),
    );
    Some(BurnTensor::from_primitive::<Cube>(out))
}
