//! The K/V cache of the shared prefix: per layer, keys and values preallocated for
//! `max_seq` positions (burn tensors `[1, heads, max_seq, head_dim]`, or host buffers for
//! the CPU forward), written in place at the current length, and rolled back to any
//! shorter length by moving the length (the stale tail is overwritten later). It also
//! keeps the logits of every cached position, so a query for any cached prefix is
//! answered without recomputation.

use burn::tensor::{Device, Tensor};

use crate::config::ModelConfig;
use crate::host_kv::HostCache;
use crate::kv::Kv;
use crate::transformer::LayerKv;

/// Where the cached keys/values live.
#[derive(Debug)]
pub(crate) enum Store {
    /// Burn tensors, one pair per layer.
    Burn(Vec<LayerKv>),
    /// Host buffers.
    Host(HostCache),
}

/// The committed-prefix cache of one model.
#[derive(Debug)]
pub(crate) struct KvCache {
    store: Store,
    tokens: Vec<u32>,
    logits: Vec<f32>,
    vocab: usize,
}

impl KvCache {
    /// An empty cache of burn tensors for `config`.
    pub(crate) fn burn(config: &ModelConfig, device: &Device) -> Self {
        let shape = [1, config.n_heads, config.max_seq, config.head_dim()];
        let layers = (0..config.n_layers)
            .map(|_| LayerKv {
                k: Tensor::zeros(shape, device),
                v: Tensor::zeros(shape, device),
            })
            .collect();
        Self::with_store(Store::Burn(layers), config.vocab_size)
    }

    /// An empty cache around host buffers.
    pub(crate) fn host(cache: HostCache, vocab: usize) -> Self {
        Self::with_store(Store::Host(cache), vocab)
    }

    fn with_store(store: Store, vocab: usize) -> Self {
        Self {
            store,
            tokens: Vec::new(),
            logits: Vec::new(),
            vocab,
        }
    }

    /// The storage.
    pub(crate) fn store(&self) -> &Store {
        &self.store
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

    /// The burn keys and values of the first `len` positions (`len` ≤ cached length), or
    /// `None` for `len` = 0 or a host cache.
    pub(crate) fn burn_view(&self, len: usize) -> Option<Vec<LayerKv>> {
        let Store::Burn(layers) = &self.store else {
            return None;
        };
        (len > 0).then(|| {
            layers
                .iter()
                .map(|l| LayerKv {
                    k: l.k.clone().narrow(2, 0, len),
                    v: l.v.clone().narrow(2, 0, len),
                })
                .collect()
        })
    }

    /// Appends `tokens` with their keys/values (one row of `tokens.len()` positions) and
    /// their `n × vocab` logits. The caller keeps the length within `max_seq`. `false`, and
    /// nothing appended, when `new` is of the other kind or shape.
    pub(crate) fn append(&mut self, tokens: &[u32], new: Kv, logits: Vec<f32>) -> bool {
        let start = self.tokens.len();
        let end = start + tokens.len();
        match (&mut self.store, new) {
            (Store::Burn(layers), Kv::Burn(new)) => {
                // Move the tensors out so each is uniquely owned and written in place; a
                // clone here would make slice_assign copy the whole preallocated cache.
                let old = std::mem::take(layers);
                *layers = old
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
            }
            (Store::Host(cache), Kv::Host(new)) => {
                if new.len != tokens.len() || !cache.write(start, &new) {
                    return false;
                }
            }
            _ => return false,
        }
        self.tokens.extend_from_slice(tokens);
        self.logits.extend_from_slice(&logits);
        true
    }

    /// The logits after the first `pos + 1` tokens, if cached.
    pub(crate) fn logits_row(&self, pos: usize) -> Option<&[f32]> {
        self.logits.get(pos * self.vocab..(pos + 1) * self.vocab)
    }
}
