//! What every kernel's launcher does: take the CubeCL primitive behind a burn tensor, make
//! the output, and size a one-dimensional grid of invocations.

use burn::tensor::{DType, Tensor};
use burn_cubecl::Cube;
use burn_cubecl::cubecl::client::Client;
use burn_cubecl::cubecl::{CubeCount, CubeDim, calculate_cube_count_elemwise};
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;

/// The CubeCL primitive of `t` when it is an f32 tensor on a CubeCL device stored as rows
/// (not storage-tiled); `None` otherwise (the CPU, autodiff, another type), and the caller
/// then leaves the operation to burn.
pub(crate) fn cube<const D: usize>(t: &Tensor<D>) -> Option<CubeTensor> {
    let t = t.clone().try_into_primitive::<Cube>().ok()?;
    (t.dtype == DType::F32 && !t.meta.is_tiled()).then_some(t)
}

/// A contiguous f32 tensor of `shape`, uninitialised, on `like`'s device.
pub(crate) fn empty_f32<const D: usize>(like: &CubeTensor, shape: [usize; D]) -> CubeTensor {
    empty_device_dtype(
        like.client.clone(),
        like.device.clone(),
        shape.into(),
        DType::F32,
    )
}

/// Cubes and their size for `units` invocations, one per position of `ABSOLUTE_POS`.
pub(crate) fn grid(client: &Client, units: usize) -> (CubeCount, CubeDim) {
    let cube_dim = CubeDim::new(client, units);
    (
        calculate_cube_count_elemwise(client, units, cube_dim),
        cube_dim,
    )
}
