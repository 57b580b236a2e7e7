//! The SIMD level every kernel of this crate runs at, picked once per model by `pulp`.

use pulp::Arch;

/// `pulp`'s best level on this machine. Inside a wasm module built with this crate's
/// `relaxed-simd` feature that is relaxed SIMD, whose fused multiply-add halves the
/// arithmetic of the dense layers (docs/host-forward-pass.md, "Relaxed SIMD"); such a
/// module only compiles where the browser has the proposal, so the package loads it only
/// there and needs no detection here.
pub(crate) fn arch() -> Arch {
    #[cfg(all(target_arch = "wasm32", feature = "relaxed-simd"))]
    pulp::wasm::enable_relaxed_simd();
    Arch::new()
}

/// Which SIMD instructions this build's kernels use: `"relaxed-simd"` for a wasm module
/// built with the `relaxed-simd` feature, `"simd128"` for other wasm modules, `"native"`
/// outside wasm (where `pulp` picks AVX-512, AVX2 + FMA or NEON at run time).
pub fn simd_level() -> &'static str {
    if cfg!(all(target_arch = "wasm32", feature = "relaxed-simd")) {
        "relaxed-simd"
    } else if cfg!(target_arch = "wasm32") {
        "simd128"
    } else {
        "native"
    }
}
