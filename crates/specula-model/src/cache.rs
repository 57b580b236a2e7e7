//! The K/V cache of the shared prefix: per layer, keys and values preallocated as
//! `[1, heads, max_seq, head_dim]`, written in place at the current length, and rolled
//! back to any shorter length by moving the length (the stale tail is overwritten later).
//! It also keeps the logits of every cached position, so a query for any cached prefix is
//! answered without recomputation.

use burn::tensor::{Device, Tensor};

use crate::config::ModelConfig;
use crate::transformer::LayerKv;

/// The committed-prefix cache of one model.
#[derive(Debug)]
pub(crate) struct KvCache {
    layers: Vec<LayerKv>,
    tokens: Vec<u32>,
    logits: Vec<f32>,
    vocab: usize,
}

impl KvCache {
    /// An empty cache for `config`.
    pub(crate) fn new(config: &ModelConfig, device: &Device) -> Self {
        let shape = [1, config.n_heads, config.max_seq, config.head_dim()];
        let layers = (0..config.n_layers)
            .map(|_| LayerKv {
                k: Tensor::zeros(shape, device),
                v: Tensor::zeros(shape, device),
            })
            .collect();
        Self {
            layers,
            tokens: Vec::new(),
            logits: Vec::new(),
            vocab: config.vocab_size,
        }
    }

    /// The cached tokens.
    pub(crate) fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// Rolls back to the first `len` positions (no-op when already shorter).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.tokens.truncate(len);
        self.logits.truncate(len * self.vocab);
    }

    /// The keys and values of the first `len` positions (`len` ≤ cached length), or `None`
    /// for `len` = 0.
    pub(crate) fn view(&self, len: usize) -> Option<Vec<LayerKv>> {
        (len > 0).then(|| {
            self.layers
                .iter()
                .map(|l| LayerKv {
                    k: l.k.clone().narrow(2, 0, len),
                    v: l.v.clone().narrow(2, 0, len),
                })
                .collect()
        })
    }

    /// Appends `tokens` with their keys/values (`[1, heads, n, head_dim]` per layer) and
    /// their `n × vocab` logits. The caller keeps the length within `max_seq`.
    pub(crate) fn append(&mut self, tokens: &[u32], new: Vec<LayerKv>, logits: Vec<f32>) {
        let start = self.tokens.len();
        let end = start + tokens.len();
        // Move the tensors out so each is uniquely owned and written in place; a clone
        // here would make slice_assign copy the whole preallocated cache.
        let layers = std::mem::take(&mut self.layers);
        self.layers = layers
            .into_iter()
            .zip(new)
            .map(|(layer, kv)| {
                let [_, h, _, hd] = layer.k.dims();
                let range = [0..1, 0..h, start..end, 0..hd];
                LayerKv {
                    k: layer.k.slice_assign(range.clone(), kv.k),
                    v: layer.v.slice_assign(range, kv.v),
                }
            })
            .collect();
        self.tokens.extend_from_slice(tokens);
        self.logits.extend_from_slice(&logits);
    }

    /// The logits after the first `pos + 1` tokens, if cached.
    pub(crate) fn logits_row(&self, pos: usize) -> Option<&[f32]> {
        self.logits.get(pos * self.vocab..(pos + 1) * self.vocab)
    }
}
