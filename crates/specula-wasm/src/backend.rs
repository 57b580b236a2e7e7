//! Choosing where the models run: WebGPU (burn-wgpu) when the browser gives an adapter,
//! otherwise burn's CPU backend (`flex`) inside wasm. WebGPU is probed from JavaScript
//! first because wgpu panics instead of erroring when there is none, and burn's WebGPU
//! runtime is initialised once per page: a second init fails. A module built without the
//! `webgpu` feature (the CPU-only module) has no WebGPU at all: `auto` is the CPU and
//! `webgpu` a `backend_unavailable` error.

#[cfg(feature = "webgpu")]
use std::cell::RefCell;
#[cfg(feature = "webgpu")]
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use burn::tensor::Device;
use serde::Serialize;

use crate::error::{Result, WasmError};

/// Set when the browser reports the GPU device lost (or a test simulates it); the next
/// model call then moves to the CPU.
static GPU_LOST: AtomicBool = AtomicBool::new(false);

/// Whether the GPU device has been reported lost.
pub(crate) fn gpu_lost() -> bool {
    GPU_LOST.load(Ordering::Relaxed)
}

/// Marks the GPU device lost (the browser's callback).
#[cfg_attr(not(all(target_arch = "wasm32", feature = "webgpu")), allow(dead_code))]
pub(crate) fn mark_gpu_lost() {
    GPU_LOST.store(true, Ordering::Relaxed);
}

use specula_engine::options::SimdLevel;
/// What the caller asked for, and where the draft runs: defined with the other load
/// options in the engine, so that the page checks the same names.
pub use specula_engine::options::{BackendChoice, DraftBackend};

/// This module's CPU kernels' SIMD level (a native build, for tests, counts as `simd128`).
fn this_simd() -> SimdLevel {
    specula_host::simd_level().unwrap_or(SimdLevel::Simd128)
}

/// Which build of the wasm module answers: the full one (WebGPU and CPU) or the CPU-only
/// one (built without the `webgpu` feature; a smaller download).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum ModuleKind {
    /// WebGPU (burn-wgpu, CubeCL, the few-row kernels) and the CPU.
    Full,
    /// The CPU only: `backend: "webgpu"` is refused.
    Cpu,
}

impl ModuleKind {
    /// This build's kind.
    pub const THIS: Self = if cfg!(feature = "webgpu") {
        Self::Full
    } else {
        Self::Cpu
    };
}

/// Where the models run, as reported to JavaScript.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct BackendInfo {
    /// Where the target runs: `"webgpu"` or `"cpu"`.
    pub backend: &'static str,
    /// Where the draft runs: `"webgpu"` or `"cpu"`.
    pub draft_backend: &'static str,
    /// What was asked for.
    pub requested: BackendChoice,
    /// The GPU adapter's name (WebGPU only).
    pub adapter: Option<String>,
    /// Whether the adapter is a software fallback such as SwiftShader (slow).
    pub is_fallback_adapter: Option<bool>,
    /// Why the models are not on WebGPU when `auto` was asked, or why they left it.
    pub reason: Option<String>,
    /// Which wasm module runs them: `"full"` (WebGPU and CPU) or `"cpu"` (CPU-only).
    pub module: ModuleKind,
    /// The SIMD instructions of that module's CPU kernels (which build of the CPU-only
    /// module the `cpuSimd` load option picked; the full module's is `"simd128"`).
    pub simd: SimdLevel,
    /// Web Workers computing the target's dense layers: 1, or 2 when a second worker
    /// holds a copy of the target (load option `threads`; the target on the CPU only).
    #[ts(type = "1 | 2")]
    pub threads: u32,
    /// Why one worker where `threads` asked for "auto" or 2 (the page is not
    /// cross-origin isolated, one core, the target on WebGPU, the second worker
    /// failed to start); null otherwise.
    pub threads_reason: Option<String>,
}

impl BackendInfo {
    /// The CPU backend, for `reason`.
    pub(crate) fn cpu(requested: BackendChoice, reason: Option<String>) -> Self {
        Self {
            backend: "cpu",
            draft_backend: "cpu",
            requested,
            adapter: None,
            is_fallback_adapter: None,
            reason,
            module: ModuleKind::THIS,
            simd: this_simd(),
            threads: 1,
            threads_reason: None,
        }
    }
}

/// The GPU adapter as the browser describes it.
#[cfg(feature = "webgpu")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Adapter {
    pub(crate) name: String,
    pub(crate) is_fallback: Option<bool>,
    /// The largest storage buffer the device binds (the smaller of its `maxBufferSize`
    /// and `maxStorageBufferBindingSize`), once burn has created the device.
    pub(crate) max_buffer: Option<u64>,
}

/// The largest storage buffer the page's WebGPU device binds, once it exists.
#[must_use]
pub(crate) fn gpu_buffer_limit() -> Option<u64> {
    #[cfg(feature = "webgpu")]
    {
        match &*WEBGPU.with(Rc::clone).borrow() {
            WebGpu::Ready(_, adapter) => adapter.max_buffer,
            _ => None,
        }
    }
    #[cfg(not(feature = "webgpu"))]
    {
        None
    }
}

/// The state of the page's one WebGPU runtime.
#[cfg(feature = "webgpu")]
enum WebGpu {
    Idle,
    Starting,
    Ready(Device, Adapter),
    Failed(String),
}

#[cfg(feature = "webgpu")]
thread_local! {
    static WEBGPU: Rc<RefCell<WebGpu>> = Rc::new(RefCell::new(WebGpu::Idle));
}

/// The device and backend report for `choice`, initialising WebGPU on first use.
///
/// # Errors
/// [`WasmError::Backend`] when `webgpu` was asked for and cannot be had (always, in the
/// CPU-only module).
pub(crate) async fn select(choice: BackendChoice) -> Result<(Device, BackendInfo)> {
    match choice {
        BackendChoice::Cpu => Ok((Device::flex(), BackendInfo::cpu(choice, None))),
        #[cfg(feature = "webgpu")]
        BackendChoice::Auto | BackendChoice::WebGpu => select_webgpu(choice).await,
        #[cfg(not(feature = "webgpu"))]
        BackendChoice::Auto => Ok((
            Device::flex(),
            BackendInfo::cpu(choice, Some(CPU_ONLY.into())),
        )),
        #[cfg(not(feature = "webgpu"))]
        BackendChoice::WebGpu => Err(WasmError::Backend(format!(
            "backend \"webgpu\" is not available: {CPU_ONLY}; use backend \"cpu\" or \"auto\", or \
             load the full module (the npm package does for \"webgpu\")"
        ))),
    }
}

/// Why the CPU-only module never uses WebGPU.
#[cfg(not(feature = "webgpu"))]
const CPU_ONLY: &str =
    "this is the CPU-only wasm module (built without the `webgpu` feature), which has no WebGPU";

/// [`select`] for `auto` and `webgpu` in the full module.
#[cfg(feature = "webgpu")]
async fn select_webgpu(choice: BackendChoice) -> Result<(Device, BackendInfo)> {
    match webgpu().await {
        Ok((device, adapter)) => Ok((
            device,
            BackendInfo {
                backend: "webgpu",
                draft_backend: "webgpu",
                requested: choice,
                adapter: Some(adapter.name),
                is_fallback_adapter: adapter.is_fallback,
                reason: None,
                module: ModuleKind::THIS,
                simd: this_simd(),
                threads: 1,
                threads_reason: None,
            },
        )),
        Err(reason) if choice == BackendChoice::Auto => {
            Ok((Device::flex(), BackendInfo::cpu(choice, Some(reason))))
        }
        Err(reason) => Err(WasmError::Backend(format!(
            "backend \"webgpu\" is not available: {reason}; use backend \"cpu\" or \"auto\""
        ))),
    }
}

#[cfg(feature = "webgpu")]
async fn webgpu() -> std::result::Result<(Device, Adapter), String> {
    if gpu_lost() {
        return Err("the WebGPU device was lost earlier on this page".into());
    }
    let state = WEBGPU.with(Rc::clone);
    match &*state.borrow() {
        WebGpu::Ready(device, adapter) => return Ok((device.clone(), adapter.clone())),
        WebGpu::Failed(reason) => return Err(reason.clone()),
        WebGpu::Starting => {
            return Err("WebGPU is still being initialised by another load()".into());
        }
        WebGpu::Idle => {}
    }
    *state.borrow_mut() = WebGpu::Starting;
    let result = init().await;
    *state.borrow_mut() = match &result {
        Ok((device, adapter)) => WebGpu::Ready(device.clone(), adapter.clone()),
        Err(reason) => WebGpu::Failed(reason.clone()),
    };
    result
}

/// How many kernel launches CubeCL queues before it submits them to the GPU unasked (its
/// default is 32): more than any model call makes (the 320-wide target's one-position
/// call is ~57 dispatches by burn's pass), so a call's work goes in as few submissions as
/// its uploads and its read-back allow; each submission is a hand-over to the GPU that a
/// real GPU pays for (MODELS.md, "On WebGPU").
#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
const TASKS_PER_SUBMISSION: usize = 1024;

#[cfg(all(target_arch = "wasm32", feature = "webgpu"))]
async fn init() -> std::result::Result<(Device, Adapter), String> {
    use burn::tensor::wgpu::WgpuBackend;

    let mut adapter = crate::gpu_probe::probe().await?;
    let (device, setup) = Device::wgpu_options()
        .graphics_api(WgpuBackend::WebGpu)
        .tasks_max(TASKS_PER_SUBMISSION)
        .init_with_setup_async()
        .await
        .map_err(|e| format!("burn could not initialise WebGPU: {e}"))?;
    setup
        .device
        .set_device_lost_callback(|_reason, _message| mark_gpu_lost());
    let limits = setup.device.limits();
    adapter.max_buffer = Some(
        limits
            .max_buffer_size
            .min(limits.max_storage_buffer_binding_size),
    );
    Ok((device, adapter))
}

#[cfg(all(not(target_arch = "wasm32"), feature = "webgpu"))]
async fn init() -> std::result::Result<(Device, Adapter), String> {
    Err("WebGPU exists only in the browser build".into())
}
