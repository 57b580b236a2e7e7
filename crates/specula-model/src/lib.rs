//! # specula-model
//!
//! Tiny GPT-style language models in [burn](https://burn.dev) for speculative decoding:
//! one decoder-only transformer definition ([`Gpt`]) used for both roles (a small
//! **draft** and a larger **target**), a character-level tokenizer, and [`BurnLm`], which
//! implements [`specula_engine::LanguageModel`] on burn's forward pass (the reference, and
//! the path that runs on WebGPU) with
//!
//! - a per-layer K/V cache preallocated for `max_seq` positions, rolled back to any
//!   accepted length by comparing tokens (a rejected draft simply stops matching);
//! - one batched forward pass over many positions of many sequences (γ + 1 positions for
//!   speculative verification, K × L for SpecTr) that reuses the cache for the shared prefix.
//!
//! That request logic is [`CachedLm`], generic over a [`ForwardPass`]: `specula-host`
//! implements the same trait with a host CPU pass on plain buffers, so both paths answer
//! requests the same way and neither can be handed the other's keys and values.
//! Training is `specula-train`'s.
//!
//! Weights are stored as f16 burnpack bytes with a JSON description and a SHA-256
//! checksum ([`ModelBundle`]); the trained pair ships inside the crate ([`bundled`]).
//!
//! Features: `rayon` (threaded CPU kernels and `set_cpu_threads`), `simd` and `x86-v4`
//! (AVX-512 matmul, chosen at run time) are on by default; `wgpu` adds
//! [`Backend::Wgpu`]; `webgpu` (off by default) gives the browser build the few-row
//! WebGPU kernels of `specula-kernels`. A wasm build takes `default-features = false`.
#![deny(missing_docs)]

mod backend;
pub mod bundled;
mod burn_lm;
mod cached;
mod config;
mod error;
mod init;
mod llama;
mod tokenizer;
mod transformer;
mod upgrade;
mod webgpu_ops;
mod weights;

pub use backend::Backend;
pub use burn_lm::{BurnKv, BurnLm, BurnPass};
pub use cached::{CachedLm, ForwardPass, ForwardStats, GptPass, RowsKv};
pub use config::{
    MAX_D_FF, MAX_D_MODEL, MAX_HEADS, MAX_KV_ENTRIES, MAX_LAYERS, MAX_PARAMS, MAX_SEQ,
    MAX_VOCAB_SIZE, ModelConfig, ModelRole,
};
pub use error::{Error, RequestProblem, Result};
pub use llama::{LlamaLm, LlamaPass, rms_norm, rotate};
pub use tokenizer::CharTokenizer;
pub use transformer::{BlockParams, Gpt, GptParams, KvContext, LayerKv, LinearParams, NormParams};
pub use upgrade::{Upgrade, upgrade_dir};
pub use weights::{
    FORMAT_VERSION, MAX_META_BYTES, ModelBundle, ModelMeta, TrainingRecord, WEIGHTS_SLACK_BYTES,
    WeightSource, load_model, model_bytes, sha256_hex,
};

#[cfg(feature = "rayon")]
/// Limits burn's CPU backend to `threads` worker threads (rayon's global pool), e.g. 1 to
/// keep a long training run from taking the whole machine. Must run before any tensor work;
/// later calls have no effect.
///
/// # Errors
/// [`Error::BadConfig`] when the pool was already built or `threads` is 0.
pub fn set_cpu_threads(threads: usize) -> Result<()> {
    if threads == 0 {
        return Err(Error::BadConfig("threads must be at least 1".into()));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .map_err(|e| Error::BadConfig(format!("cannot set the thread count: {e}")))
}
