//! The SIMD level every kernel of this crate runs at, picked once per model by `pulp`.

use pulp::Arch;
use specula_engine::options::SimdLevel;

/// `pulp`'s best level on this machine. Inside a wasm module built with this crate's
/// `relaxed-simd` feature that is relaxed SIMD, whose fused multiply-add halves the
/// vector operations of the dense layers (docs/host-forward-pass.md, "Inside wasm, and
/// relaxed SIMD"); such a module only compiles where the browser has the proposal, so
/// the package loads it only there and needs no detection here.
pub(crate) fn arch() -> Arch {
    #[cfg(all(target_arch = "wasm32", feature = "relaxed-simd"))]
    pulp::wasm::enable_relaxed_simd();
    Arch::new()
}

/// Which SIMD instructions this build's kernels use inside wasm: relaxed SIMD for a
/// module built with the `relaxed-simd` feature, else `simd128`; `None` outside wasm
/// (where `pulp` picks AVX-512, AVX2 + FMA or NEON at run time).
#[must_use]
pub fn simd_level() -> Option<SimdLevel> {
    if cfg!(all(target_arch = "wasm32", feature = "relaxed-simd")) {
        Some(SimdLevel::RelaxedSimd)
    } else if cfg!(target_arch = "wasm32") {
        Some(SimdLevel::Simd128)
    } else {
        None
    }
}
