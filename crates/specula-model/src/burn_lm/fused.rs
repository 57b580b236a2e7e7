//! The fused pass of a small model on WebGPU (`specula_kernels::fused_forward`): the
//! model's parameters packed once into one vector, and a pass over new positions of the
//! shared prefix that writes their keys and values into the prefix store itself.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use burn::nn::LayerNormConfig;
use burn::tensor::Tensor;
use specula_kernels::ModelShape;

use crate::config::ModelConfig;
use crate::transformer::{Gpt, LayerKv};
use crate::webgpu_ops::FEW_ROWS;

/// Whether and how a model takes the fused pass, and how often it did.
#[derive(Debug, Default)]
pub(super) struct Fused {
    /// The longest pass it takes (0: none).
    max_positions: usize,
    /// The packed parameters, made on first use; `None` when the model cannot be packed
    /// (a layer without a bias or a norm without a shift).
    packed: OnceLock<Option<Tensor<1>>>,
    passes: AtomicU64,
}

impl Fused {
    pub(super) fn set_max_positions(&mut self, max_positions: usize) {
        self.max_positions = max_positions.min(FEW_ROWS);
    }

    pub(super) fn max_positions(&self) -> usize {
        self.max_positions
    }

    pub(super) fn passes(&self) -> u64 {
        self.passes.load(Ordering::Relaxed)
    }

    /// Logits (`[n, vocab]`) of `tokens` at positions `start..` after the first `start`
    /// positions of `shared`, their keys and values written into `shared`; `None`, with
    /// nothing written, when the pass is off or the kernel declines (burn's pass then runs).
    pub(super) fn run(
        &self,
        model: &Gpt,
        config: &ModelConfig,
        tokens: &[u32],
        shared: &[LayerKv],
        start: usize,
    ) -> Option<Tensor<2>> {
        if tokens.len() > self.max_positions {
            return None;
        }
        let packed = self.packed.get_or_init(|| model.packed_params()).as_ref()?;
        let shape = ModelShape {
            d_model: config.d_model,
            heads: config.n_heads,
            d_ff: config.d_ff,
            vocab: config.vocab_size,
            max_seq: config.max_seq,
            layers: config.n_layers,
        };
        let cache: Vec<_> = shared.iter().map(|l| (&l.k, &l.v)).collect();
        // Every norm here has the default epsilon (see `webgpu_ops::layer_norm`).
        let epsilon = LayerNormConfig::new(config.d_model).epsilon;
        let logits = specula_kernels::fused_forward(packed, shape, epsilon, tokens, start, &cache)?;
        self.passes.fetch_add(1, Ordering::Relaxed);
        Some(logits)
    }
}
