//! The GPT-style decoder-only transformer: pre-norm blocks, learned positions, one
//! definition for both roles. Every forward pass goes through [`Gpt::forward_with`], which
//! attends to optional cached keys/values, so the cached and uncached paths share code.

mod params;

use crate::config::ModelConfig;
use crate::error::Result;
use crate::init::Init;
use crate::webgpu_ops::{FEW_ROWS, dense, dense_gelu, dense_residual, layer_norm, matmul};
use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Embedding, LayerNorm, Linear};
use burn::tensor::activation::softmax;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
pub use params::{BlockParams, GptParams, LinearParams, NormParams};

/// Keys and values of one layer, `[batch, heads, len, head_dim]` each.
#[derive(Debug, Clone)]
pub struct LayerKv {
    /// Keys.
    pub k: Tensor<4>,
    /// Values.
    pub v: Tensor<4>,
}

/// Cached keys/values the new tokens attend to, in order: `shared` (batch 1, broadcast to
/// every row, the common prefix) then `branch` (one row per sequence). Either may be absent.
#[derive(Debug, Clone, Copy, Default)]
pub struct KvContext<'a> {
    /// One entry per layer, batch 1.
    pub shared: Option<&'a [LayerKv]>,
    /// One entry per layer, batch equal to the number of rows.
    pub branch: Option<&'a [LayerKv]>,
}

impl KvContext<'_> {
    fn len(&self) -> usize {
        let len = |kv: Option<&[LayerKv]>| kv.and_then(|l| l.first()).map_or(0, |l| l.k.dims()[2]);
        len(self.shared) + len(self.branch)
    }
}

/// Self-attention of one block.
#[derive(Module, Debug)]
pub struct Attention {
    qkv: Linear,
    proj: Linear,
    n_heads: usize,
}

/// One pre-norm transformer block.
#[derive(Module, Debug)]
pub struct Block {
    norm_attn: LayerNorm,
    attn: Attention,
    norm_mlp: LayerNorm,
    fc_in: Linear,
    fc_out: Linear,
    dropout: Dropout,
}

/// A decoder-only transformer language model.
#[derive(Module, Debug)]
pub struct Gpt {
    token_embedding: Embedding,
    position_embedding: Embedding,
    blocks: Vec<Block>,
    final_norm: LayerNorm,
    head: Linear,
    dropout: Dropout,
    vocab_size: usize,
    max_seq: usize,
}

impl Gpt {
    /// A model of shape `config` with seeded GPT-2 initialisation; `dropout` applies only
    /// when training on an autodiff device.
    ///
    /// # Errors
    /// [`Error::BadConfig`](crate::Error::BadConfig) for an invalid shape.
    pub fn new(config: &ModelConfig, seed: u64, dropout: f64, device: &Device) -> Result<Self> {
        Self::with_init(config, Init::new(seed, device), dropout)
    }

    /// A model of `config`'s shape with every weight zero, to load a record into.
    ///
    /// # Errors
    /// [`Error::BadConfig`] when `config` is invalid.
    pub(crate) fn zeroed(config: &ModelConfig, device: &Device) -> Result<Self> {
        Self::with_init(config, Init::zeros(device), 0.0)
    }

    fn with_init(config: &ModelConfig, mut init: Init<'_>, dropout: f64) -> Result<Self> {
        config.validate()?;
        let d = config.d_model;
        // GPT-2 scales the residual projections by 1/sqrt(2·layers).
        let residual = 1.0 / ((2 * config.n_layers) as f64).sqrt();
        let token_embedding = init.embedding(config.vocab_size, d);
        let position_embedding = init.embedding(config.max_seq, d);
        let blocks = (0..config.n_layers)
            .map(|_| Block {
                norm_attn: init.layer_norm(d),
                attn: Attention {
                    qkv: init.linear(d, 3 * d, 1.0),
                    proj: init.linear(d, d, residual),
                    n_heads: config.n_heads,
                },
                norm_mlp: init.layer_norm(d),
                fc_in: init.linear(d, config.d_ff, 1.0),
                fc_out: init.linear(config.d_ff, d, residual),
                dropout: DropoutConfig::new(dropout).init(),
            })
            .collect();
        Ok(Self {
            token_embedding,
            position_embedding,
            blocks,
            final_norm: init.layer_norm(d),
            head: init.linear(d, config.vocab_size, 1.0),
            dropout: DropoutConfig::new(dropout).init(),
            vocab_size: config.vocab_size,
            max_seq: config.max_seq,
        })
    }

    /// The vocabulary size.
    #[must_use]
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// The number of positions.
    #[must_use]
    pub fn max_seq(&self) -> usize {
        self.max_seq
    }

    /// The number of layers.
    #[must_use]
    pub fn n_layers(&self) -> usize {
        self.blocks.len()
    }

    /// Logits for every position of `tokens` (`[batch, len]`, no cache): `[batch, len, vocab]`.
    ///
    /// # Panics
    /// If `len` exceeds `max_seq` (callers check lengths first).
    #[must_use]
    pub fn forward(&self, tokens: Tensor<2, Int>) -> Tensor<3> {
        self.forward_with(tokens, 0, KvContext::default()).0
    }

    /// Logits for `tokens` (`[rows, n]`) at positions `start..start + n`, attending first to
    /// the cached `context` (which must hold exactly `start` positions), and the new keys and
    /// values of every layer (`[rows, heads, n, head_dim]`).
    ///
    /// # Panics
    /// If `start + n` exceeds `max_seq` or the context's shapes do not fit (callers check).
    #[must_use]
    pub fn forward_with(
        &self,
        tokens: Tensor<2, Int>,
        start: usize,
        context: KvContext<'_>,
    ) -> (Tensor<3>, Vec<LayerKv>) {
        let device = tokens.device();
        let [rows, n] = tokens.dims();
        let positions =
            Tensor::<1, Int>::arange(start as i64..(start + n) as i64, &device).reshape([1, n]);
        let pos = self.position_embedding.forward(positions);
        let d = pos.dims()[2];
        let mut x = self.token_embedding.forward(tokens) + pos.expand([rows, n, d]);
        x = self.dropout.forward(x);
        let mask = CausalMask::new(n, context.len(), &device);
        let mut new_kv = Vec::with_capacity(self.blocks.len());
        for (i, block) in self.blocks.iter().enumerate() {
            let (y, kv) = block.forward(
                x,
                context.shared.and_then(|l| l.get(i)),
                context.branch.and_then(|l| l.get(i)),
                &mask,
            );
            x = y;
            new_kv.push(kv);
        }
        let logits = dense(&self.head, layer_norm(&self.final_norm, x));
        (logits, new_kv)
    }
}

impl Block {
    fn forward(
        &self,
        x: Tensor<3>,
        shared: Option<&LayerKv>,
        branch: Option<&LayerKv>,
        mask: &CausalMask<'_>,
    ) -> (Tensor<3>, LayerKv) {
        let (context, kv) =
            self.attn
                .forward(layer_norm(&self.norm_attn, x.clone()), shared, branch, mask);
        let x = dense_residual(x, &self.attn.proj, context, &self.dropout);
        let h = dense_gelu(&self.fc_in, layer_norm(&self.norm_mlp, x.clone()));
        let x = dense_residual(x, &self.fc_out, h, &self.dropout);
        (x, kv)
    }
}

impl Attention {
    /// The heads' attention outputs side by side (`[rows, n, d]`), before the output
    /// projection (the block applies it with the residual addition), and the new keys
    /// and values.
    fn forward(
        &self,
        x: Tensor<3>,
        shared: Option<&LayerKv>,
        branch: Option<&LayerKv>,
        mask: &CausalMask<'_>,
    ) -> (Tensor<3>, LayerKv) {
        let [rows, n, d] = x.dims();
        let h = self.n_heads;
        let hd = d / h;
        let qkv = dense(&self.qkv, x);
        let split = |i: usize| {
            qkv.clone()
                .narrow(2, i * d, d)
                .reshape([rows, n, h, hd])
                .swap_dims(1, 2)
        };
        let (k, v) = (split(1), split(2));
        // On WebGPU, a pass of few new positions takes one dispatch (`specula_kernels`)
        // where the operations below take ~15.
        if rows * n <= FEW_ROWS
            && let Some(context) = specula_kernels::attention(
                &qkv,
                h,
                shared.map(|s| (&s.k, &s.v)),
                branch.map(|b| (&b.k, &b.v)),
            )
        {
            return (context, LayerKv { k, v });
        }
        let q = split(0);
        // Keys/values in order: the shared prefix, the branch, the new positions. Scores
        // are taken against each part and only the (small) score rows are concatenated:
        // concatenating the keys would copy the whole cache in every layer and call.
        let mut cached: Vec<(Tensor<4>, Tensor<4>)> = Vec::with_capacity(2);
        if let Some(s) = shared {
            let len = s.k.dims()[2];
            cached.push((
                s.k.clone().expand([rows, h, len, hd]),
                s.v.clone().expand([rows, h, len, hd]),
            ));
        }
        if let Some(b) = branch {
            cached.push((b.k.clone(), b.v.clone()));
        }
        let new_scores = matmul(q.clone(), k.clone().swap_dims(2, 3));
        let scores = if cached.is_empty() {
            new_scores
        } else {
            let mut parts: Vec<Tensor<4>> = cached
                .iter()
                .map(|(keys, _)| matmul(q.clone(), keys.clone().swap_dims(2, 3)))
                .collect();
            parts.push(new_scores);
            Tensor::cat(parts, 3)
        };
        let total = scores.dims()[3];
        let mut scores = scores.mul_scalar(1.0 / (hd as f64).sqrt());
        if let Some(mask) = mask.get() {
            scores = scores.mask_fill(mask.expand([rows, h, n, total]), f32::NEG_INFINITY);
        }
        let probs = softmax(scores, 3);
        let mut context = matmul(probs.clone().narrow(3, total - n, n), v.clone());
        let mut offset = 0;
        for (_, values) in cached {
            let len = values.dims()[2];
            context = context + matmul(probs.clone().narrow(3, offset, len), values);
            offset += len;
        }
        let context = context.swap_dims(1, 2).reshape([rows, n, d]);
        (context, LayerKv { k, v })
    }
}

/// The causal mask of a pass of `n` new positions after `cached` ones, built on first use
/// and shared by every layer: only burn's attention needs it, so a pass whose attention
/// the WebGPU kernel does (which masks by position itself) never uploads one.
struct CausalMask<'d> {
    n: usize,
    cached: usize,
    device: &'d Device,
    built: std::cell::OnceCell<Option<Tensor<4, Bool>>>,
}

impl<'d> CausalMask<'d> {
    fn new(n: usize, cached: usize, device: &'d Device) -> Self {
        Self {
            n,
            cached,
            device,
            built: std::cell::OnceCell::new(),
        }
    }

    /// `[1, 1, n, cached + n]`, true where new token i (at position cached + i) must not
    /// look: columns after cached + i. `None` for one new token, which may see everything.
    fn get(&self) -> Option<Tensor<4, Bool>> {
        self.built
            .get_or_init(|| {
                let (n, cached) = (self.n, self.cached);
                if n <= 1 {
                    return None;
                }
                let total = cached + n;
                let data: Vec<bool> = (0..n)
                    .flat_map(|i| (0..total).map(move |c| c > cached + i))
                    .collect();
                Some(Tensor::from_data(
                    TensorData::new(data, [1, 1, n, total]),
                    self.device,
                ))
            })
            .clone()
    }
}
