//! # specula-train
//!
//! Training and distillation of `specula-model`'s [`Gpt`](specula_model::Gpt): a plain,
//! resumable AdamW loop on burn's autodiff CPU device ([`Trainer`]), the corpus and its
//! seeded batches ([`data`]), and distillation from a teacher model's distributions
//! ([`distill`]); and the on-policy data a real (GGUF) target's draft learns from
//! ([`onpolicy`]). Only `specula train` uses it; running the models needs none of it (the
//! wasm build does not link it).
#![deny(missing_docs)]

pub mod data;
pub mod distill;
pub mod draft;
pub mod llama_draft;
pub mod onpolicy;
mod train;

pub use train::{InitRecord, LossPoint, Observer, TrainConfig, TrainState, Trainer};
