//! [`LlamaPass`]: burn's forward pass of a Llama-family model read from GGUF (grouped-
//! query attention, rotary positions, RMSNorm, SwiGLU), behind the same [`CachedLm`]
//! caches as the bundled GPT, so every method, the lab and the traces take it unchanged.
//! The math is in docs/real-models.md.

use burn::tensor::activation::{silu, softmax};
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use specula_gguf::{GgufModel, LlamaConfig, LlamaWeights, RopeStyle};

use crate::burn_lm::{BurnKv, kv, read, read_async};
use crate::cached::{CachedLm, ForwardPass, RowsKv as _};
use crate::error::{Error, Result};
use crate::transformer::LayerKv;

/// One block's weights on the device; matrices are `[in, out]` for `x.matmul(w)`.
#[derive(Debug)]
struct Block {
    attn_norm: Tensor<1>,
    wq: Tensor<2>,
    wk: Tensor<2>,
    wv: Tensor<2>,
    bias: Option<[Tensor<1>; 3]>,
    wo: Tensor<2>,
    ffn_norm: Tensor<1>,
    w_gate: Tensor<2>,
    w_up: Tensor<2>,
    w_down: Tensor<2>,
}

/// burn's forward pass of a Llama-family model on one device.
#[derive(Debug)]
pub struct LlamaPass {
    config: LlamaConfig,
    device: Device,
    embedding: Tensor<2>,
    blocks: Vec<Block>,
    output_norm: Tensor<1>,
    head: Tensor<2>,
}

/// A Llama-family model with caches.
pub type LlamaLm = CachedLm<LlamaPass>;

impl LlamaPass {
    /// Uploads `model`'s weights to `device`.
    ///
    /// # Errors
    /// None today; the signature leaves room for devices that refuse an upload.
    pub fn new(model: &GgufModel, device: &Device) -> Result<Self> {
        let config = model.config;
        let w: &LlamaWeights = &model.weights;
        let (d, kv, ff) = (config.d_model, config.kv_dim(), config.d_ff);
        let vector =
            |v: &[f32]| Tensor::<1>::from_data(TensorData::new(v.to_vec(), [v.len()]), device);
        // The file stores `[out, in]`; the pass multiplies on the right by `[in, out]`,
        // transposed here once: a transposed view would be copied by every matmul.
        let matrix = |v: &[f32], out: usize, inp: usize| {
            let mut t = vec![0.0; v.len()];
            for (o, row) in v.chunks_exact(inp).enumerate() {
                for (i, &x) in row.iter().enumerate() {
                    t[i * out + o] = x;
                }
            }
            Tensor::<2>::from_data(TensorData::new(t, [inp, out]), device)
        };
        let blocks = w
            .layers
            .iter()
            .map(|l| Block {
                attn_norm: vector(&l.attn_norm),
                wq: matrix(&l.wq, d, d),
                wk: matrix(&l.wk, kv, d),
                wv: matrix(&l.wv, kv, d),
                bias: l
                    .qkv_bias
                    .as_ref()
                    .map(|[q, k, v]| [vector(q), vector(k), vector(v)]),
                wo: matrix(&l.wo, d, d),
                ffn_norm: vector(&l.ffn_norm),
                w_gate: matrix(&l.w_gate, ff, d),
                w_up: matrix(&l.w_up, ff, d),
                w_down: matrix(&l.w_down, d, ff),
            })
            .collect();
        let vocab = config.vocab_size;
        Ok(Self {
            config,
            device: device.clone(),
            embedding: Tensor::from_data(TensorData::new(w.token_embd.clone(), [vocab, d]), device),
            blocks,
            output_norm: vector(&w.output_norm),
            head: matrix(w.head(), vocab, d),
        })
    }

    /// The model's shape.
    #[must_use]
    pub fn config(&self) -> &LlamaConfig {
        &self.config
    }

    /// Logits `[rows, n, vocab]` of `tokens` at positions `start..start + n`, attending
    /// to `context` first (shared prefix, then branch), and every layer's new keys and
    /// values (`[rows, kv_heads, n, head_dim]`, keys already rotated).
    fn run(
        &self,
        tokens: &[u32],
        rows: usize,
        start: usize,
        shared: Option<&[LayerKv]>,
        branch: Option<&[LayerKv]>,
    ) -> (Tensor<3>, Vec<LayerKv>) {
        let c = &self.config;
        let n = tokens.len() / rows.max(1);
        let ids: Vec<i64> = tokens.iter().map(|&t| i64::from(t)).collect();
        let ids = Tensor::<1, Int>::from_data(TensorData::new(ids, [rows * n]), &self.device);
        let mut x = self
            .embedding
            .clone()
            .select(0, ids)
            .reshape([rows, n, c.d_model]);
        let cached = start;
        let rope = Rope::new(c, start, n, &self.device);
        let group = c.n_heads / c.n_kv_heads;
        let mask = causal_mask(n, cached, group, &self.device);
        let mut new_kv = Vec::with_capacity(self.blocks.len());
        for (i, block) in self.blocks.iter().enumerate() {
            let h = rms_norm(x.clone(), &block.attn_norm, c.rms_eps);
            let (attended, layer_kv) = self.attention(
                block,
                h,
                &rope,
                mask.as_ref(),
                shared.and_then(|s| s.get(i)),
                branch.and_then(|b| b.get(i)),
            );
            x = x + attended;
            let h = rms_norm(x.clone(), &block.ffn_norm, c.rms_eps);
            let gate = silu(h.clone().matmul(block.w_gate.clone().unsqueeze()));
            let up = h.matmul(block.w_up.clone().unsqueeze());
            x = x + (gate * up).matmul(block.w_down.clone().unsqueeze());
            new_kv.push(layer_kv);
        }
        let x = rms_norm(x, &self.output_norm, c.rms_eps);
        (x.matmul(self.head.clone().unsqueeze()), new_kv)
    }

    fn attention(
        &self,
        block: &Block,
        x: Tensor<3>,
        rope: &Rope,
        mask: Option<&Tensor<4, Bool>>,
        shared: Option<&LayerKv>,
        branch: Option<&LayerKv>,
    ) -> (Tensor<3>, LayerKv) {
        let c = &self.config;
        let [rows, n, d] = x.dims();
        let (hd, kvh) = (c.head_dim, c.n_kv_heads);
        let group = c.n_heads / kvh;
        let project = |w: &Tensor<2>, bias: Option<&Tensor<1>>, heads: usize| {
            let mut y = x.clone().matmul(w.clone().unsqueeze());
            if let Some(b) = bias {
                y = y + b.clone().unsqueeze();
            }
            y.reshape([rows, n, heads, hd]).swap_dims(1, 2)
        };
        let bias = block.bias.as_ref();
        let q = rope.apply(project(&block.wq, bias.map(|b| &b[0]), c.n_heads));
        let k = rope.apply(project(&block.wk, bias.map(|b| &b[1]), kvh));
        let v = project(&block.wv, bias.map(|b| &b[2]), kvh);
        // Query heads of one key/value head side by side: [rows, kv heads, group · n, hd],
        // so each cached key is read once, not once per query head.
        let q = q
            .reshape([rows, kvh, group * n, hd])
            .mul_scalar(1.0 / (hd as f64).sqrt());
        let mut parts: Vec<(Tensor<4>, Tensor<4>)> = Vec::with_capacity(3);
        if let Some(s) = shared {
            let len = s.k.dims()[2];
            parts.push((
                s.k.clone().expand([rows, kvh, len, hd]),
                s.v.clone().expand([rows, kvh, len, hd]),
            ));
        }
        if let Some(b) = branch {
            parts.push((b.k.clone(), b.v.clone()));
        }
        parts.push((k.clone(), v.clone()));
        let scores: Vec<Tensor<4>> = parts
            .iter()
            .map(|(keys, _)| q.clone().matmul(keys.clone().swap_dims(2, 3)))
            .collect();
        let mut scores = Tensor::cat(scores, 3);
        let total = scores.dims()[3];
        if let Some(mask) = mask {
            scores = scores.mask_fill(
                mask.clone().expand([rows, kvh, group * n, total]),
                f32::NEG_INFINITY,
            );
        }
        let probs = softmax(scores, 3);
        let mut offset = 0;
        let mut out: Option<Tensor<4>> = None;
        for (_, values) in parts {
            let len = values.dims()[2];
            let part = probs.clone().narrow(3, offset, len).matmul(values);
            out = Some(match out {
                Some(o) => o + part,
                None => part,
            });
            offset += len;
        }
        let out = out
            .unwrap_or_else(|| Tensor::zeros([rows, kvh, group * n, hd], &self.device))
            .reshape([rows, c.n_heads, n, hd])
            .swap_dims(1, 2)
            .reshape([rows, n, d]);
        (out.matmul(block.wo.clone().unsqueeze()), LayerKv { k, v })
    }

    fn check(&self, tokens: &[u32]) -> Result<()> {
        let vocab = self.config.vocab_size;
        match tokens.iter().find(|&&t| t as usize >= vocab) {
            Some(&token) => Err(Error::UnknownToken { token, vocab }),
            None => Ok(()),
        }
    }
}

impl ForwardPass for LlamaPass {
    type Kv = BurnKv;
    type Shared = Vec<LayerKv>;

    fn vocab_size(&self) -> usize {
        self.config.vocab_size
    }

    fn max_seq(&self) -> usize {
        self.config.max_seq
    }

    fn new_shared(&self) -> Vec<LayerKv> {
        let c = &self.config;
        let shape = [1, c.n_kv_heads, c.max_seq, c.head_dim];
        (0..c.n_layers)
            .map(|_| LayerKv {
                k: Tensor::zeros(shape, &self.device),
                v: Tensor::zeros(shape, &self.device),
            })
            .collect()
    }

    async fn forward(
        &self,
        tokens: &[u32],
        rows: usize,
        shared: &Vec<LayerKv>,
        shared_len: usize,
        branch: Option<&BurnKv>,
    ) -> Result<(Vec<f32>, BurnKv)> {
        self.check(tokens)?;
        let start = shared_len + branch.map_or(0, BurnKv::positions);
        let (logits, kv) = {
            // The views must be gone before the cache is written, or writing copies it.
            let view = kv::view(shared, shared_len);
            self.run(
                tokens,
                rows,
                start,
                view.as_deref(),
                branch.map(BurnKv::layers),
            )
        };
        Ok((read_async(logits).await?, BurnKv(kv)))
    }

    fn write(&self, shared: &mut Vec<LayerKv>, start: usize, new: BurnKv) -> bool {
        kv::write(shared, start, new);
        true
    }
}

impl LlamaLm {
    /// `model` on `device`, with empty caches.
    ///
    /// # Errors
    /// As [`LlamaPass::new`].
    pub fn load(model: &GgufModel, device: &Device) -> Result<Self> {
        Ok(Self::from_pass(LlamaPass::new(model, device)?))
    }

    /// Logits at every position of `tokens` from one pass without any cache (the
    /// reference the cached paths must match), `len × vocab` row-major.
    ///
    /// # Errors
    /// [`Error::UnknownToken`]; [`Error::BadRequest`] for an empty or too long sequence.
    pub fn logits_uncached(&self, tokens: &[u32]) -> Result<Vec<f32>> {
        use crate::error::RequestProblem;
        if tokens.is_empty() {
            return Err(Error::BadRequest(RequestProblem::EmptySequence));
        }
        if tokens.len() > self.max_seq() {
            return Err(Error::BadRequest(RequestProblem::TooLong {
                len: tokens.len(),
                max_seq: self.max_seq(),
            }));
        }
        self.pass().check(tokens)?;
        read(self.pass().run(tokens, 1, 0, None, None).0)
    }
}

/// `x · w / rms(x)` over the last dimension (RMSNorm). Shared with the trainable draft of
/// `specula-train`.
#[must_use]
pub fn rms_norm(x: Tensor<3>, weight: &Tensor<1>, eps: f32) -> Tensor<3> {
    let scale = x
        .clone()
        .powi_scalar(2)
        .mean_dim(2)
        .add_scalar(f64::from(eps))
        .sqrt()
        .recip();
    x * scale * weight.clone().unsqueeze()
}

/// The rotation of positions `start..start + n`: cosines and sines `[n, head_dim / 2]`.
struct Rope {
    style: RopeStyle,
    cos: Tensor<4>,
    sin: Tensor<4>,
}

impl Rope {
    fn new(c: &LlamaConfig, start: usize, n: usize, device: &Device) -> Self {
        let half = c.head_dim / 2;
        let (cos, sin) = c.rope_tables(start, n);
        let t = |v: Vec<f32>| Tensor::<4>::from_data(TensorData::new(v, [1, 1, n, half]), device);
        Self {
            style: c.rope_style,
            cos: t(cos),
            sin: t(sin),
        }
    }

    /// Rotates `x` (`[rows, heads, n, head_dim]`).
    fn apply(&self, x: Tensor<4>) -> Tensor<4> {
        rotate(x, &self.cos, &self.sin, self.style)
    }
}

/// Rotates `x` (`[rows, heads, n, head_dim]`) by the angles whose cosines and sines are
/// `cos` and `sin` (`[1, 1, n, head_dim / 2]`, from [`LlamaConfig::rope_tables`]), pairing
/// dimensions as `style` says. Shared with the trainable draft of `specula-train`.
#[must_use]
pub fn rotate(x: Tensor<4>, cos: &Tensor<4>, sin: &Tensor<4>, style: RopeStyle) -> Tensor<4> {
    let [rows, heads, n, hd] = x.dims();
    let half = hd / 2;
    let (cos, sin) = (
        cos.clone().expand([rows, heads, n, half]),
        sin.clone().expand([rows, heads, n, half]),
    );
    match style {
        RopeStyle::Halves => {
            let a = x.clone().narrow(3, 0, half);
            let b = x.narrow(3, half, half);
            let ra = a.clone() * cos.clone() - b.clone() * sin.clone();
            let rb = a * sin + b * cos;
            Tensor::cat(vec![ra, rb], 3)
        }
        RopeStyle::Adjacent => {
            let pairs = x.reshape([rows, heads, n, half, 2]);
            let a = pairs
                .clone()
                .narrow(4, 0, 1)
                .reshape([rows, heads, n, half]);
            let b = pairs.narrow(4, 1, 1).reshape([rows, heads, n, half]);
            let ra = a.clone() * cos.clone() - b.clone() * sin.clone();
            let rb = a * sin + b * cos;
            Tensor::stack::<5>(vec![ra, rb], 4).reshape([rows, heads, n, hd])
        }
    }
}

/// `[1, 1, group · n, cached + n]`, true where a query may not look: query row
/// `g · n + i` is new position `i` of query head `g` of its group, which sees the cache
/// and new positions up to `i`. `None` for one new position.
fn causal_mask(n: usize, cached: usize, group: usize, device: &Device) -> Option<Tensor<4, Bool>> {
    if n <= 1 {
        return None;
    }
    let total = cached + n;
    let data: Vec<bool> = (0..group)
        .flat_map(|_| (0..n).flat_map(move |i| (0..total).map(move |col| col > cached + i)))
        .collect();
    Some(Tensor::from_data(
        TensorData::new(data, [1, 1, group * n, total]),
        device,
    ))
}
