//! [`HostLlama`]: the inference forward pass of a Llama-family model read from GGUF
//! (grouped-query attention, rotary positions, RMSNorm, SwiGLU) on plain host memory.
//!
//! Why: burn's CPU backend multiplies through a gemm that packs the weights on every call
//! of more than one row. For SmolLM2-135M (540 MB of f32 weights) that made a verifying
//! pass of 5 positions cost 8.4 single positions inside wasm and 1.9 natively, where a
//! pass that reads the weights once costs little more than one position. Here the
//! projections are [`PackedDense`] layers packed once at load (queries, keys and values
//! fused into one, the gate and up projections into another), and attention is the
//! GPT's host attention with query heads sharing key/value heads
//! ([`Queries::group`](crate::host_attention::Queries)). burn's `LlamaPass` stays the
//! definition; tests compare every logit with it. The math is in docs/real-models.md.

use std::sync::Arc;

use pulp::Arch;
use specula_engine::ForwardStage as S;
use specula_gguf::{GgufModel, LlamaConfig, RopeStyle};

use crate::dense::{PackedDense, gather_panels};
use crate::dense_remote::RemoteSlot;
use crate::dense_split::{self, Activation, partner, splits};
use crate::helper_thread::{Helper, with_helper};
use crate::host_attention::{Context, Queries, attend_split};
use crate::host_kv::{HostCache, HostKv, HostLayer};
use crate::host_model::add_in_place;
use crate::reduce;
use crate::stage_profile::StageTimer;

/// The most f32 weight bytes gathered into one block of huge pages (SmolLM2-135M and
/// -360M are; 1.7B, at 6.8 GB, stays on ordinary pages).
const GATHER_LIMIT: u64 = 2 << 30;

/// One block's parameters.
#[derive(Debug, Clone)]
struct LlamaBlock {
    attn_norm: Vec<f32>,
    /// Queries, keys and values side by side: `[d, d + 2·kv_dim]`, with their biases.
    qkv: PackedDense,
    wo: PackedDense,
    ffn_norm: Vec<f32>,
    /// SwiGLU's gate and up projections side by side: `[d, 2·d_ff]`.
    gate_up: PackedDense,
    down: PackedDense,
}

/// A Llama-family model's inference parameters in host memory.
#[derive(Debug, Clone)]
pub(crate) struct HostLlama {
    pub(crate) config: LlamaConfig,
    /// `[vocab, d]`.
    embedding: Vec<f32>,
    blocks: Vec<LlamaBlock>,
    output_norm: Vec<f32>,
    head: PackedDense,
    arch: Arch,
    /// Threads for the dense layers and attention of one pass (1, or 2 with a helper).
    pub(crate) threads: usize,
    /// A remote copy of the model that takes half of each large dense call where no
    /// helper thread runs.
    pub(crate) remote: RemoteSlot,
}

impl HostLlama {
    /// `model`'s weights packed for the host pass (on huge pages when `huge_pages` and
    /// the system allows), on one thread; `None` when a shape does not fit.
    pub(crate) fn new(model: &GgufModel, huge_pages: bool) -> Option<Self> {
        let c = model.config;
        let w = &model.weights;
        let (d, kv, ff) = (c.d_model, c.kv_dim(), c.d_ff);
        if c.n_heads * c.head_dim != d
            || c.n_kv_heads == 0
            || !c.n_heads.is_multiple_of(c.n_kv_heads)
        {
            return None;
        }
        let blocks = w
            .layers
            .iter()
            .map(|l| {
                let bias = l.qkv_bias.as_ref().map(|[q, k, v]| [&q[..], k, v].concat());
                Some(LlamaBlock {
                    attn_norm: l.attn_norm.clone(),
                    qkv: pack(&[(&l.wq, d), (&l.wk, kv), (&l.wv, kv)], d, bias.as_deref())?,
                    wo: pack(&[(&l.wo, d)], d, None)?,
                    ffn_norm: l.ffn_norm.clone(),
                    gate_up: pack(&[(&l.w_gate, ff), (&l.w_up, ff)], d, None)?,
                    down: pack(&[(&l.w_down, d)], ff, None)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let mut host = Self {
            config: c,
            embedding: w.token_embd.clone(),
            blocks,
            output_norm: w.output_norm.clone(),
            head: pack(&[(w.head(), c.vocab_size)], d, None)?,
            arch: crate::simd::arch(),
            threads: 1,
            remote: RemoteSlot::default(),
        };
        if host.embedding.len() != c.vocab_size * d {
            return None;
        }
        // One block on huge pages where Linux has them. Gathering holds the weights a third
        // time for a moment, past the peak `load_peak_bytes` allows for, so only weights
        // of up to `GATHER_LIMIT` bytes are gathered; elsewhere (wasm) it would only copy.
        if huge_pages && cfg!(target_os = "linux") && 4 * c.num_params() <= GATHER_LIMIT {
            gather_panels(&mut host.dense_layers_mut(), true);
        }
        Some(host)
    }

    /// Every dense layer, in the order a forward pass reads them.
    pub(crate) fn dense_layers_mut(&mut self) -> Vec<&mut PackedDense> {
        let mut layers: Vec<&mut PackedDense> = Vec::with_capacity(4 * self.blocks.len() + 1);
        for b in &mut self.blocks {
            layers.extend([&mut b.qkv, &mut b.wo, &mut b.gate_up, &mut b.down]);
        }
        layers.push(&mut self.head);
        layers
    }

    /// The remote's part of `call` on this copy of the model (see
    /// [`DenseRemote`](crate::DenseRemote)); `None` when the call does not fit it.
    pub(crate) fn serve_dense(&self, call: crate::DenseCall<'_>) -> Option<Vec<f32>> {
        crate::dense_remote::serve(self.dense_layers(), call)
    }

    fn dense_layers(&self) -> impl Iterator<Item = &PackedDense> {
        self.blocks
            .iter()
            .flat_map(|b| [&b.qkv, &b.wo, &b.gate_up, &b.down])
            .chain([&self.head])
    }

    /// Whether the dense weights live in memory advised for huge pages.
    pub(crate) fn on_huge_pages(&self) -> bool {
        self.head.on_huge_pages()
    }

    /// An empty shared-prefix cache: one key/value head per group of query heads.
    pub(crate) fn new_cache(&self) -> HostCache {
        let c = &self.config;
        HostCache::new(self.blocks.len(), c.n_kv_heads, c.max_seq, c.head_dim)
    }

    /// Logits (`[rows, n, vocab]`) for `tokens` (`rows × n`) at positions
    /// `start..start + n` after `context` (exactly `start` positions per row), and the new
    /// positions' keys (rotated) and values. `None` when the shapes do not fit (a token
    /// outside the vocabulary, too many positions, a context of another length).
    /// `timer` times the stages.
    pub(crate) fn forward(
        &self,
        tokens: &[u32],
        rows: usize,
        start: usize,
        context: Context<'_>,
        timer: &mut StageTimer<'_>,
    ) -> Option<(Vec<f32>, HostKv)> {
        let c = &self.config;
        let d = c.d_model;
        let n = tokens.len().checked_div(rows)?;
        let shared_len = context.shared.map_or(0, |(_, len)| len);
        let branch_len = context.branch.map_or(0, |b| b.len);
        let fits = n > 0
            && rows * n == tokens.len()
            && start + n <= c.max_seq
            && shared_len + branch_len == start
            && context
                .branch
                .is_none_or(|b| (b.rows, b.heads, b.head_dim) == (rows, c.n_kv_heads, c.head_dim))
            && tokens.iter().all(|&t| (t as usize) < c.vocab_size);
        if !fits {
            return None;
        }
        let m = rows * n;
        let mut x = Vec::with_capacity(m * d);
        for &t in tokens {
            x.extend_from_slice(&self.embedding[t as usize * d..(t as usize + 1) * d]);
        }
        let new = HostKv {
            rows,
            heads: c.n_kv_heads,
            len: n,
            head_dim: c.head_dim,
            layers: Vec::with_capacity(self.blocks.len()),
        };
        let threads = if self.threads > 1 && self.dense_layers().any(|l| splits(l, m)) {
            self.threads
        } else {
            1
        };
        let rope = Rope::new(c, start, n);
        with_helper(threads, |helper| {
            timer.lap(S::Embed);
            self.blocks_and_head(x, &rope, new, context, helper, timer)
        })
    }

    /// The blocks and the head over the embedded inputs `x`.
    fn blocks_and_head<'m>(
        &'m self,
        mut x: Vec<f32>,
        rope: &Rope,
        mut new: HostKv,
        context: Context<'m>,
        helper: Option<&Helper<'_, 'm>>,
        timer: &mut StageTimer<'_>,
    ) -> Option<(Vec<f32>, HostKv)> {
        let c = &self.config;
        let (d, kv, ff) = (c.d_model, c.kv_dim(), c.d_ff);
        let m = new.rows * new.len;
        let dense = |layer: &'m PackedDense, x: Vec<f32>| {
            let partner = partner(helper, &self.remote, self.dense_layers(), layer);
            dense_split::apply(layer, Arc::new(x), m, Activation::Identity, partner)
        };
        let queries = Queries {
            stride: d + 2 * kv,
            group: c.n_heads / c.n_kv_heads,
        };
        for (layer, block) in self.blocks.iter().enumerate() {
            let normed = rms_norm(&x, &block.attn_norm, c.rms_eps);
            timer.lap(S::Norms);
            let mut qkv = dense(&block.qkv, normed)?;
            for (i, row) in qkv.chunks_exact_mut(queries.stride).enumerate() {
                // Queries and keys are heads of `head_dim` side by side, so one walk
                // rotates both.
                rope.rotate(&mut row[..d + kv], i % new.len);
            }
            new.layers.push(split_kv(&qkv, &new, d));
            timer.lap(S::Qkv);
            let mut attended = vec![0.0; m * d];
            let arch = self.arch;
            attend_split(
                arch,
                qkv,
                queries,
                &new,
                layer,
                context,
                helper,
                &mut attended,
            );
            timer.lap(S::Attention);
            add_in_place(&mut x, &dense(&block.wo, attended)?);
            timer.lap(S::AttnOut);
            let normed = rms_norm(&x, &block.ffn_norm, c.rms_eps);
            timer.lap(S::Norms);
            let gate_up = dense(&block.gate_up, normed)?;
            let hidden = swiglu(&gate_up, ff);
            timer.lap(S::MlpIn);
            add_in_place(&mut x, &dense(&block.down, hidden)?);
            timer.lap(S::MlpOut);
        }
        let normed = rms_norm(&x, &self.output_norm, c.rms_eps);
        timer.lap(S::Norms);
        let logits = dense(&self.head, normed)?;
        timer.lap(S::Head);
        Some((logits, new))
    }
}

/// Packs the GGUF matrices `parts` (each `[out_i, d_in]`, as the file stores them) side by
/// side into one `[d_in, Σ out_i]` dense layer.
fn pack(parts: &[(&[f32], usize)], d_in: usize, bias: Option<&[f32]>) -> Option<PackedDense> {
    let d_out: usize = parts.iter().map(|&(_, out)| out).sum();
    let mut weight = vec![0.0; d_in * d_out];
    let mut col = 0;
    for &(w, out) in parts {
        if w.len() != out * d_in {
            return None;
        }
        for (o, row) in w.chunks_exact(d_in).enumerate() {
            for (i, &v) in row.iter().enumerate() {
                weight[i * d_out + col + o] = v;
            }
        }
        col += out;
    }
    PackedDense::new(&weight, bias, d_in, d_out)
}

/// `x · w / rms(x)` on every row of `x` (as wide as `w`), in burn's order of operations.
fn rms_norm(x: &[f32], w: &[f32], eps: f32) -> Vec<f32> {
    let d = w.len();
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks_exact(d) {
        let mean = reduce::sum_by(row, |v| v * v) / d as f32;
        let inv = 1.0 / (mean + eps).sqrt();
        out.extend(row.iter().zip(w).map(|(v, g)| v * inv * g));
    }
    out
}

/// `silu(gate) · up` for rows of `[gate (d_ff) | up (d_ff)]`.
fn swiglu(gate_up: &[f32], ff: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(gate_up.len() / 2);
    for row in gate_up.chunks_exact(2 * ff) {
        let (gate, up) = row.split_at(ff);
        out.extend(
            gate.iter()
                .zip(up)
                .map(|(&g, &u)| g / (1.0 + (-g).exp()) * u),
        );
    }
    out
}

/// The keys and values of `qkv` (`[rows·n, d + 2·kv_dim]`) as `[rows, kv heads, n,
/// head_dim]` each, in `new`'s shape.
fn split_kv(qkv: &[f32], new: &HostKv, d: usize) -> HostLayer {
    let (rows, n, heads, hd) = (new.rows, new.len, new.heads, new.head_dim);
    let kv = heads * hd;
    let stride = d + 2 * kv;
    let mut k = Vec::with_capacity(rows * n * kv);
    let mut v = Vec::with_capacity(rows * n * kv);
    for r in 0..rows {
        for h in 0..heads {
            for t in 0..n {
                let at = (r * n + t) * stride + d + h * hd;
                k.extend_from_slice(&qkv[at..at + hd]);
                v.extend_from_slice(&qkv[at + kv..at + kv + hd]);
            }
        }
    }
    HostLayer { k, v }
}

/// The rotation of positions `start..start + n`: cosines and sines `[n, head_dim / 2]`.
struct Rope {
    style: RopeStyle,
    head_dim: usize,
    cos: Vec<f32>,
    sin: Vec<f32>,
}

impl Rope {
    fn new(c: &LlamaConfig, start: usize, n: usize) -> Self {
        let (cos, sin) = c.rope_tables(start, n);
        Self {
            style: c.rope_style,
            head_dim: c.head_dim,
            cos,
            sin,
        }
    }

    /// Rotates every head of `heads` (heads of `head_dim` side by side) to new position `t`.
    fn rotate(&self, heads: &mut [f32], t: usize) {
        let half = self.head_dim / 2;
        let (cos, sin) = (
            &self.cos[t * half..(t + 1) * half],
            &self.sin[t * half..(t + 1) * half],
        );
        for head in heads.chunks_exact_mut(self.head_dim) {
            for i in 0..half {
                let (ia, ib) = match self.style {
                    RopeStyle::Halves => (i, i + half),
                    RopeStyle::Adjacent => (2 * i, 2 * i + 1),
                };
                let (a, b) = (head[ia], head[ib]);
                head[ia] = a * cos[i] - b * sin[i];
                head[ib] = a * sin[i] + b * cos[i];
            }
        }
    }
}
