//! What every kernel's launcher does: take the CubeCL primitive behind a burn tensor, and
//! size a one-dimensional grid of invocations.

use burn::tensor::{DType, Tensor};
use burn_cubecl::Cube;
use burn_cubecl::cubecl::client::Client;
use burn_cubecl::cubecl::{CubeCount, CubeDim, calculate_cube_count_elemwise};
use burn_cubecl::tensor::CubeTensor;

/// The CubeCL primitive of `t` when it is an f32 tensor on a CubeCL device stored as rows
/// (not storage-tiled); `None` otherwise (the CPU, autodiff, another type), and the caller
/// then leaves the operation to burn.
pub(crate) fn cube<const D: usize>(t: &Tensor<D>) -> Option<CubeTensor> {
    let t = t.clone().try_into_primitive::<Cube>().ok()?;
    (t.dtype == DType::F32 && !t.meta.is_tiled()).then_some(t)
}

/// Cubes and their size for `units` invocations, one per position of `ABSOLUTE_POS`.
pub(crate) fn grid(client: &Client, units: usize) -> (CubeCount, CubeDim) {
    let cube_dim = CubeDim::new(client, units);
    (
        calculate_cube_count_elemwise(client, units, cube_dim),
        cube_dim,
    )
}
