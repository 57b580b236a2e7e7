//! Choosing the burn device a model runs on.

use std::fmt;
use std::str::FromStr;

use burn::tensor::Device;

use crate::error::{Error, Result};

/// Where a model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// burn's pure-Rust CPU backend (`flex`). Always available.
    #[default]
    Cpu,
    /// burn-wgpu (Vulkan/Metal/DX12; lavapipe on GPU-less Linux). Needs the `wgpu` feature.
    Wgpu,
}

impl Backend {
    /// The device for this backend. Never uses `Device::default()`, which prefers a GPU.
    ///
    /// # Errors
    /// [`Error::BackendNotBuilt`] for [`Backend::Wgpu`] in a build without the `wgpu` feature.
    pub fn device(self) -> Result<Device> {
        match self {
            Self::Cpu => Ok(Device::flex()),
            #[cfg(feature = "wgpu")]
            Self::Wgpu => Ok(Device::wgpu(burn::tensor::DeviceKind::default())),
            #[cfg(not(feature = "wgpu"))]
            Self::Wgpu => Err(Error::BackendNotBuilt("wgpu")),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cpu => "cpu",
            Self::Wgpu => "wgpu",
        })
    }
}

impl FromStr for Backend {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "cpu" => Ok(Self::Cpu),
            "wgpu" => Ok(Self::Wgpu),
            other => Err(Error::BadConfig(format!(
                "unknown backend {other:?}; expected cpu or wgpu"
            ))),
        }
    }
}
