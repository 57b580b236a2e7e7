//! The Llama family as GGUF files describe it: the shape from `{arch}.*` keys and the
//! weights from `blk.N.*` tensors, dequantized to f32. Qwen2 files (`qwen2`) are the same
//! network with q/k/v biases and rotary embedding over split halves.

use crate::error::{GgufError, Result};
use crate::file::GgufFile;

/// The architectures this crate runs.
pub const ARCHITECTURES: &[&str] = &["llama", "qwen2"];

/// The most positions a loaded model is given: its K/V cache is sized for this many or
/// the file's context length, whichever is smaller. The cache also keeps every cached
/// position's logits (196 KB a position at SmolLM2's 49,152 tokens), which bounds it.
pub const MAX_CONTEXT: usize = 2048;

/// The rotary angles' cosines and sines for positions `start..start + n`, each
/// `[n, head_dim / 2]` row-major: pair `i` of position `pos` turns by
/// `pos · base^(−2i / head_dim)`, computed in f64 so long positions lose nothing before the
/// one rounding to f32. Every Llama pass (burn's, the host pass, the trainable draft)
/// rotates by these.
#[must_use]
pub fn rope_tables(base: f32, head_dim: usize, start: usize, n: usize) -> (Vec<f32>, Vec<f32>) {
    let half = head_dim / 2;
    let mut cos = Vec::with_capacity(n * half);
    let mut sin = Vec::with_capacity(n * half);
    for pos in start..start + n {
        for i in 0..half {
            let freq = f64::from(base).powf(-2.0 * i as f64 / head_dim as f64);
            let angle = pos as f64 * freq;
            cos.push(angle.cos() as f32);
            sin.push(angle.sin() as f32);
        }
    }
    (cos, sin)
}

/// How rotary embedding pairs the dimensions of a head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RopeStyle {
    /// Adjacent dimensions `(2i, 2i + 1)` rotate together: ggml's default, which `llama`
    /// files are converted for (their Q and K rows are permuted to match).
    Adjacent,
    /// Dimension `i` rotates with `i + head_dim / 2` (GPT-NeoX's layout; `qwen2`).
    Halves,
}

/// The shape of a Llama-family decoder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LlamaConfig {
    /// Tokens in the vocabulary.
    pub vocab_size: usize,
    /// Width of the residual stream.
    pub d_model: usize,
    /// Transformer blocks.
    pub n_layers: usize,
    /// Query heads.
    pub n_heads: usize,
    /// Key/value heads (grouped-query attention: each serves `n_heads / n_kv_heads`).
    pub n_kv_heads: usize,
    /// Width of one head.
    pub head_dim: usize,
    /// Hidden width of the SwiGLU feed-forward layer.
    pub d_ff: usize,
    /// RoPE's base frequency.
    pub rope_base: f32,
    /// How RoPE pairs dimensions.
    pub rope_style: RopeStyle,
    /// RMSNorm's ε.
    pub rms_eps: f32,
    /// Positions the model reads (the file's context, capped at [`MAX_CONTEXT`]).
    pub max_seq: usize,
    /// Whether the output head is the token embedding (no `output.weight`).
    pub tied_output: bool,
    /// Whether the attention projections have biases.
    pub qkv_bias: bool,
}

impl LlamaConfig {
    /// Reads the shape from `file`'s metadata and checks it against its tensors.
    ///
    /// # Errors
    /// [`GgufError::UnsupportedArchitecture`] for another family; [`GgufError::Metadata`]
    /// naming a missing or inconsistent key; [`GgufError::Tensor`] for a missing token
    /// embedding.
    pub fn from_file(file: &GgufFile) -> Result<Self> {
        let arch = file.string("general.architecture")?;
        if !ARCHITECTURES.contains(&arch) {
            return Err(GgufError::UnsupportedArchitecture(arch.to_owned()));
        }
        let key = |name: &str| format!("{arch}.{name}");
        let size = |name: &str, max: u64| -> Result<usize> {
            let k = key(name);
            let v = file.unsigned(&k)?;
            if v == 0 || v > max {
                return Err(GgufError::metadata(&k, format!("{v} is outside 1..={max}")));
            }
            Ok(v as usize)
        };
        let d_model = size("embedding_length", 16_384)?;
        let n_layers = size("block_count", 256)?;
        let n_heads = size("attention.head_count", 256)?;
        let n_kv_heads = match file.value(&key("attention.head_count_kv")) {
            None => n_heads,
            Some(_) => size("attention.head_count_kv", 256)?,
        };
        let d_ff = size("feed_forward_length", 65_536)?;
        let context = size("context_length", u64::MAX)?;
        if !d_model.is_multiple_of(n_heads) {
            return Err(GgufError::metadata(
                &key("attention.head_count"),
                format!("{n_heads} heads do not divide the width {d_model}"),
            ));
        }
        if !n_heads.is_multiple_of(n_kv_heads) {
            return Err(GgufError::metadata(
                &key("attention.head_count_kv"),
                format!("{n_kv_heads} key/value heads do not divide {n_heads} query heads"),
            ));
        }
        let head_dim = d_model / n_heads;
        if !head_dim.is_multiple_of(2) {
            return Err(GgufError::metadata(
                &key("attention.head_count"),
                format!("heads of {head_dim} dimensions cannot be rotated in pairs"),
            ));
        }
        let rope_base = match file.value(&key("rope.freq_base")) {
            None => 10_000.0,
            Some(_) => file.number(&key("rope.freq_base"))? as f32,
        };
        let rms_eps = file.number(&key("attention.layer_norm_rms_epsilon"))? as f32;
        if !(rope_base.is_finite() && rope_base > 1.0) {
            return Err(GgufError::metadata(&key("rope.freq_base"), "must exceed 1"));
        }
        if !(rms_eps.is_finite() && rms_eps > 0.0 && rms_eps < 1.0) {
            return Err(GgufError::metadata(
                &key("attention.layer_norm_rms_epsilon"),
                "must lie in (0, 1)",
            ));
        }
        let embedding = file
            .tensor("token_embd.weight")
            .ok_or_else(|| GgufError::tensor("token_embd.weight", "is missing"))?;
        let vocab_size = match embedding.dims.as_slice() {
            [d, v] if *d == d_model as u64 && *v > 0 && *v <= u64::from(u32::MAX) => *v as usize,
            dims => {
                return Err(GgufError::tensor(
                    "token_embd.weight",
                    format!("has dimensions {dims:?}; expected [{d_model}, vocabulary]"),
                ));
            }
        };
        Ok(Self {
            vocab_size,
            d_model,
            n_layers,
            n_heads,
            n_kv_heads,
            head_dim,
            d_ff,
            rope_base,
            rope_style: if arch == "qwen2" {
                RopeStyle::Halves
            } else {
                RopeStyle::Adjacent
            },
            rms_eps,
            max_seq: context.min(MAX_CONTEXT),
            tied_output: file.tensor("output.weight").is_none(),
            qkv_bias: file.tensor("blk.0.attn_q.bias").is_some(),
        })
    }

    /// Width of the keys (and values) of all key/value heads together.
    #[must_use]
    pub fn kv_dim(&self) -> usize {
        self.n_kv_heads * self.head_dim
    }

    /// The rotary angles' cosines and sines for positions `start..start + n` (see
    /// [`rope_tables`]).
    #[must_use]
    pub fn rope_tables(&self, start: usize, n: usize) -> (Vec<f32>, Vec<f32>) {
        rope_tables(self.rope_base, self.head_dim, start, n)
    }

    /// The number of weights, counting a tied head once.
    #[must_use]
    pub fn num_params(&self) -> u64 {
        let (d, kv, ff) = (self.d_model as u64, self.kv_dim() as u64, self.d_ff as u64);
        let bias = if self.qkv_bias { d + 2 * kv } else { 0 };
        let block = 2 * d + d * d + 2 * d * kv + bias + d * d + 3 * d * ff;
        let embed = self.vocab_size as u64 * d;
        let head = if self.tied_output { 0 } else { embed };
        embed + head + d + self.n_layers as u64 * block
    }

    /// The largest weight matrix in f32, as one device buffer holds it: its name and its
    /// bytes (the embedding and output head, `vocab × d_model`, for any usual shape; the
    /// feed-forward's `d_ff × d_model` otherwise).
    #[must_use]
    pub fn largest_matrix(&self) -> (&'static str, u64) {
        let (d, ff, vocab) = (
            self.d_model as u64,
            self.d_ff as u64,
            self.vocab_size as u64,
        );
        if vocab >= ff {
            ("token_embd.weight", 4 * vocab * d)
        } else {
            ("ffn_up.weight", 4 * ff * d)
        }
    }

    /// Bytes the model takes once loaded: the weights in f32 plus, for `max_seq`
    /// positions, the K/V cache and the logits the cache keeps.
    #[must_use]
    pub fn loaded_bytes(&self) -> u64 {
        let positions = self.max_seq as u64;
        let cache = 2 * self.n_layers as u64 * positions * self.kv_dim() as u64;
        let logits = positions * self.vocab_size as u64;
        4 * (self.num_params() + cache + logits)
    }

    /// Bytes loading takes at its peak: [`loaded_bytes`](Self::loaded_bytes) and, while
    /// a forward pass copies them into its own layout, the dequantized weights again.
    #[must_use]
    pub fn load_peak_bytes(&self) -> u64 {
        self.loaded_bytes() + 4 * self.num_params()
    }
}

/// One block's weights, each matrix row-major `[out, in]`.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerWeights {
    /// RMSNorm before attention, `[d_model]`.
    pub attn_norm: Vec<f32>,
    /// Queries, `[d_model, d_model]`.
    pub wq: Vec<f32>,
    /// Keys, `[kv_dim, d_model]`.
    pub wk: Vec<f32>,
    /// Values, `[kv_dim, d_model]`.
    pub wv: Vec<f32>,
    /// Query, key and value biases, when the file has them.
    pub qkv_bias: Option<[Vec<f32>; 3]>,
    /// Attention output, `[d_model, d_model]`.
    pub wo: Vec<f32>,
    /// RMSNorm before the feed-forward layer, `[d_model]`.
    pub ffn_norm: Vec<f32>,
    /// SwiGLU's gate, `[d_ff, d_model]`.
    pub w_gate: Vec<f32>,
    /// SwiGLU's up projection, `[d_ff, d_model]`.
    pub w_up: Vec<f32>,
    /// The down projection, `[d_model, d_ff]`.
    pub w_down: Vec<f32>,
}

/// Every weight of a Llama-family model in f32.
#[derive(Debug, Clone, PartialEq)]
pub struct LlamaWeights {
    /// The token embedding, `[vocab, d_model]`.
    pub token_embd: Vec<f32>,
    /// The blocks, in order.
    pub layers: Vec<LayerWeights>,
    /// The final RMSNorm, `[d_model]`.
    pub output_norm: Vec<f32>,
    /// The output head `[vocab, d_model]`, or `None` when it is the token embedding.
    pub output: Option<Vec<f32>>,
}

impl LlamaWeights {
    /// Dequantizes every tensor `config` needs from `file`.
    ///
    /// # Errors
    /// [`GgufError::Tensor`] or [`GgufError::UnsupportedTensorType`] naming the first
    /// tensor that is missing, misshapen or of a type this crate does not read.
    pub fn from_file(file: &GgufFile, config: &LlamaConfig) -> Result<Self> {
        let (d, kv, ff, vocab) = (
            config.d_model as u64,
            config.kv_dim() as u64,
            config.d_ff as u64,
            config.vocab_size as u64,
        );
        let layer = |i: usize| -> Result<LayerWeights> {
            let t = |name: &str, dims: &[u64]| file.f32_tensor(&format!("blk.{i}.{name}"), dims);
            let qkv_bias = if config.qkv_bias {
                Some([
                    t("attn_q.bias", &[d])?,
                    t("attn_k.bias", &[kv])?,
                    t("attn_v.bias", &[kv])?,
                ])
            } else {
                None
            };
            Ok(LayerWeights {
                attn_norm: t("attn_norm.weight", &[d])?,
                wq: t("attn_q.weight", &[d, d])?,
                wk: t("attn_k.weight", &[d, kv])?,
                wv: t("attn_v.weight", &[d, kv])?,
                qkv_bias,
                wo: t("attn_output.weight", &[d, d])?,
                ffn_norm: t("ffn_norm.weight", &[d])?,
                w_gate: t("ffn_gate.weight", &[d, ff])?,
                w_up: t("ffn_up.weight", &[d, ff])?,
                w_down: t("ffn_down.weight", &[ff, d])?,
            })
        };
        Ok(Self {
            token_embd: file.f32_tensor("token_embd.weight", &[d, vocab])?,
            layers: (0..config.n_layers).map(layer).collect::<Result<_>>()?,
            output_norm: file.f32_tensor("output_norm.weight", &[d])?,
            output: if config.tied_output {
                None
            } else {
                Some(file.f32_tensor("output.weight", &[d, vocab])?)
            },
        })
    }

    /// The output head, `[vocab, d_model]`.
    #[must_use]
    pub fn head(&self) -> &[f32] {
        self.output.as_deref().unwrap_or(&self.token_embd)
    }
}
