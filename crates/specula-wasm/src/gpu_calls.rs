//! What the package reports of the WebGPU calls its worker made (`Specula.gpuCalls()`):
//! counted in JavaScript, where wgpu's calls reach the browser, by wrapping the WebGPU
//! methods once (web/src/worker.js); declared here so that its TypeScript type is
//! generated with the others. These counts, not a software adapter's timings, decide a
//! model call's fixed cost on a real GPU (MODELS.md, "On WebGPU").

use serde::Serialize;

/// WebGPU calls since the worker started, each counted where the browser receives it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct GpuCalls {
    /// Compute dispatches (`dispatchWorkgroups`, direct or indirect): one per kernel run.
    pub dispatches: u32,
    /// Queue submissions (`GPUQueue.submit`): each one a hand-over to the GPU.
    pub submits: u32,
    /// Read-backs (`GPUBuffer.mapAsync`): each one a round trip from the GPU to the CPU.
    pub readbacks: u32,
    /// Compute pipelines created (`createComputePipeline`, sync or async): a kernel
    /// compiled for a new shape or a new kernel.
    pub pipelines: u32,
    /// Buffers created (`GPUDevice.createBuffer`).
    pub buffers: u32,
    /// Uploads through the queue (`GPUQueue.writeBuffer`).
    pub writes: u32,
}
