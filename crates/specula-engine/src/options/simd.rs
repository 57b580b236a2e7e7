//! Which build of the CPU-only wasm module runs the models: the SIMD levels
//! ([`SimdLevel`]) and the `cpuSimd` load option that picks one ([`CpuSimd`]).

use serde::Serialize;

use super::OptionError;
use super::load::one_of;

/// The SIMD instructions a wasm module's CPU kernels use: plain 128-bit SIMD, which every
/// current browser has, or relaxed SIMD, whose fused multiply-add halves the dense
/// layers' vector operations where the browser has the proposal
/// (docs/host-forward-pass.md, "Inside wasm, and relaxed SIMD").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum SimdLevel {
    /// `simd128` with the `relaxed-simd` proposal (Chrome and Edge 114, Firefox 145 with
    /// it on; not Node 20 or Safari). Its multiply-add may round once or twice depending
    /// on the processor, so logits may differ in their last bits between machines.
    RelaxedSimd,
    /// `simd128` only: the same sums in the same order on every machine.
    Simd128,
}

impl SimdLevel {
    /// Every level, the fastest first.
    pub const ALL: [Self; 2] = [Self::RelaxedSimd, Self::Simd128];

    /// Its name, as `cpuSimd` and `BackendInfo.simd` spell it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::RelaxedSimd => "relaxed-simd",
            Self::Simd128 => "simd128",
        }
    }
}

/// The `cpuSimd` load option: which build of the CPU-only module to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum CpuSimd {
    /// Relaxed SIMD where the browser compiles it and its module is served, else
    /// `simd128`.
    #[default]
    Auto,
    /// The relaxed-SIMD build, or the error "backend_unavailable".
    RelaxedSimd,
    /// The `simd128` build (the same logits on every machine).
    Simd128,
}

impl CpuSimd {
    /// Every choice, the default first.
    pub const ALL: [Self; 3] = [Self::Auto, Self::RelaxedSimd, Self::Simd128];

    /// The name the options give it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::RelaxedSimd => SimdLevel::RelaxedSimd.name(),
            Self::Simd128 => SimdLevel::Simd128.name(),
        }
    }

    /// The choice named `name` (the default when `None`).
    ///
    /// # Errors
    /// [`OptionError`] about `cpuSimd` for any other name.
    pub fn parse(name: Option<&str>) -> Result<Self, OptionError> {
        one_of("cpuSimd", name, &Self::ALL.map(|c| (c.name(), c)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_serialise_alike() {
        for choice in CpuSimd::ALL {
            assert_eq!(CpuSimd::parse(Some(choice.name())), Ok(choice));
            assert_eq!(serde_json::to_value(choice).unwrap(), choice.name());
        }
        for level in SimdLevel::ALL {
            assert_eq!(serde_json::to_value(level).unwrap(), level.name());
        }
        assert_eq!(CpuSimd::parse(None), Ok(CpuSimd::Auto));
        assert_eq!(
            CpuSimd::parse(Some("avx")).unwrap_err().to_string(),
            r#"cpuSimd must be "auto", "relaxed-simd" or "simd128", got "avx""#
        );
    }
}
