//! The `threads` load option: how many Web Workers share the target's dense layers when
//! it runs on the CPU inside wasm ([`CpuThreads`]).

use serde::{Serialize, Serializer};

/// The `threads` load option. A second worker holds its own copy of the target and
/// computes half the output columns of each large dense call (docs/host-forward-pass.md,
/// "Two workers"); it needs `SharedArrayBuffer`, which a page has only when it is
/// cross-origin isolated (served with `Cross-Origin-Opener-Policy: same-origin` and
/// `Cross-Origin-Embedder-Policy: require-corp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "\"auto\" | 1 | 2"))]
pub enum CpuThreads {
    /// Two workers where the page is cross-origin isolated, the machine has at least two
    /// cores and the target runs on the CPU; else one (`BackendInfo.threadsReason` says
    /// why).
    #[default]
    Auto,
    /// One worker.
    One,
    /// Two workers, or the error "backend_unavailable" where the page cannot have them.
    Two,
}

impl CpuThreads {
    /// Every choice, the default first.
    pub const ALL: [Self; 3] = [Self::Auto, Self::One, Self::Two];
}

/// As JavaScript gives it: `"auto"`, `1` or `2`.
impl Serialize for CpuThreads {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Auto => serializer.serialize_str("auto"),
            Self::One => serializer.serialize_u32(1),
            Self::Two => serializer.serialize_u32(2),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_serialise_as_javascript_gives_them() {
        let all = CpuThreads::ALL;
        assert_eq!(serde_json::to_string(&all).unwrap(), r#"["auto",1,2]"#);
        assert_eq!(serde_json::to_value(CpuThreads::Two).unwrap(), 2);
        assert_eq!(CpuThreads::default(), CpuThreads::Auto);
    }
}
