//! # specula-host
//!
//! The host CPU forward pass of `specula-model`'s [`Gpt`](specula_model::Gpt): the same
//! inference on plain buffers, without burn's tensor operations, for burn's CPU backend
//! natively and in wasm. At decoding's few positions per call, burn's per-operation work
//! (dispatch, layout copies, allocation, a gemm that repacks its operands) costs more than
//! the arithmetic; here a pass is a handful of loops over `Vec<f32>`: dense layers on
//! weights packed once (AVX-512, AVX2+FMA, NEON, wasm simd128 or scalar through `pulp`),
//! LayerNorm, GELU and batched attention, on one thread or two, or with half of each large
//! dense call on a [`DenseRemote`] (another wasm instance, where no thread can be spawned).
//!
//! [`HostPass`] implements [`specula_model::ForwardPass`], so [`HostLm`] is
//! [`CachedLm`](specula_model::CachedLm) with the host pass: the same request logic as
//! [`BurnLm`](specula_model::BurnLm) (shared prefix, branch cache, work counters), with
//! its own keys and values ([`HostKv`], [`HostCache`]). burn's forward stays the
//! definition; tests compare every logit with it. [`DeviceLm`] picks the pass for a
//! device at run time.
//!
//! Features: `x86-v4` (AVX-512 dense kernels and burn's, chosen at run time) is on by
//! default; a wasm build takes `default-features = false`. `relaxed-simd` (wasm only)
//! builds the kernels with relaxed SIMD's fused multiply-add, for a module of its own.
#![deny(missing_docs)]

pub mod bundled;
mod const_rows;
mod dense;
mod dense_remote;
mod dense_split;
mod device_lm;
mod helper_thread;
mod host_attention;
mod host_kv;
mod host_llama;
mod host_memory;
mod host_model;
mod llama_pass;
mod model_tokenizer;
mod pass;
mod prefetch;
mod reduce;
mod simd;
mod stage_profile;

pub use dense_remote::{DenseCall, DenseRemote};
pub use device_lm::DeviceLm;
pub use host_kv::{HostCache, HostKv};
pub use llama_pass::{HostLlamaLm, HostLlamaPass};
pub use model_tokenizer::{ModelTokenizer, TextStream};
pub use pass::{HostLm, HostPass};
pub use simd::simd_level;
pub use specula_engine::{ForwardStage, StageTimes};
pub use stage_profile::{SharedClock, StageProfile};
