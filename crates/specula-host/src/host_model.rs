//! [`HostGpt`]: the inference forward pass of a [`Gpt`](specula_model::Gpt) on plain host
//! memory.
//!
//! Why: decoding asks for one to a few dozen positions per call, and at that size burn's
//! per-operation work (dispatch, layout copies, allocation, a gemm that repacks its
//! operands) cost more than the arithmetic — ~40 tensor operations per draft call, and a
//! verification of 5 positions cost 1.35–1.87 autoregressive steps inside decoding where
//! its weights alone cost 1.2. Here the same pass is a handful of loops over `Vec<f32>`:
//! dense layers on weights packed once ([`PackedDense`]), LayerNorm, GELU and attention
//! ([`attend`]). The weights are read from the burn module, which stays the definition;
//! tests compare every logit with burn's uncached forward.

use std::sync::Arc;

use pulp::Arch;
use specula_engine::ForwardStage as S;
use specula_model::{GptParams, LinearParams, NormParams};

use crate::dense::{PackedDense, gather_panels};

use crate::dense_remote::RemoteSlot;
use crate::dense_split::{self, Activation, partner, splits};
use crate::helper_thread::{Helper, with_helper};
use crate::host_attention::{Queries, attend_split};
use crate::host_kv::{HostCache, HostKv, HostLayer};
use crate::reduce;
use crate::stage_profile::StageTimer;

/// LayerNorm parameters.
#[derive(Debug, Clone)]
pub(crate) struct Norm {
    pub(crate) gamma: Vec<f32>,
    pub(crate) beta: Vec<f32>,
    pub(crate) epsilon: f32,
}

/// One block's parameters.
#[derive(Debug, Clone)]
pub(crate) struct HostBlock {
    pub(crate) norm_attn: Norm,
    pub(crate) qkv: PackedDense,
    pub(crate) proj: PackedDense,
    pub(crate) norm_mlp: Norm,
    pub(crate) fc_in: PackedDense,
    pub(crate) fc_out: PackedDense,
}

/// A whole model's inference parameters in host memory.
#[derive(Debug, Clone)]
pub(crate) struct HostGpt {
    pub(crate) d: usize,
    pub(crate) heads: usize,
    pub(crate) vocab: usize,
    pub(crate) max_seq: usize,
    /// `[vocab, d]`.
    pub(crate) token_embedding: Vec<f32>,
    /// `[max_seq, d]`.
    pub(crate) position_embedding: Vec<f32>,
    pub(crate) blocks: Vec<HostBlock>,
    pub(crate) final_norm: Norm,
    pub(crate) head: PackedDense,
    /// The SIMD level, detected once.
    pub(crate) arch: Arch,
    /// Threads for the dense layers of one forward pass (1, or 2 with a helper).
    pub(crate) threads: usize,
    /// A remote copy of the model that takes half of each large dense call where no
    /// helper thread runs.
    pub(crate) remote: RemoteSlot,
}

/// What a forward pass attends to besides its own new positions.
pub(crate) use crate::host_attention::Context as HostContext;

impl HostGpt {
    /// `params` with the dense weights packed into one block (on huge pages when
    /// `huge_pages` and the system allows), on one thread; `None` when a shape does not fit.
    pub(crate) fn new(params: GptParams, huge_pages: bool) -> Option<Self> {
        let blocks = params
            .blocks
            .iter()
            .map(|b| {
                Some(HostBlock {
                    norm_attn: Norm::from(&b.norm_attn),
                    qkv: pack(&b.qkv)?,
                    proj: pack(&b.proj)?,
                    norm_mlp: Norm::from(&b.norm_mlp),
                    fc_in: pack(&b.fc_in)?,
                    fc_out: pack(&b.fc_out)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let mut host = Self {
            d: params.d_model,
            heads: params.n_heads,
            vocab: params.vocab_size,
            max_seq: params.max_seq,
            head: pack(&params.head)?,
            final_norm: Norm::from(&params.final_norm),
            token_embedding: params.token_embedding,
            position_embedding: params.position_embedding,
            blocks,
            arch: crate::simd::arch(),
            threads: 1,
            remote: RemoteSlot::default(),
        };
        gather_panels(&mut host.dense_layers_mut(), huge_pages);
        Some(host)
    }

    /// The remote's part of `call` on this copy of the model (see
    /// [`DenseRemote`](crate::DenseRemote)); `None` when the call does not fit it.
    pub(crate) fn serve_dense(&self, call: crate::DenseCall<'_>) -> Option<Vec<f32>> {
        crate::dense_remote::serve(self.dense_layers(), call)
    }

    /// Every dense layer.
    fn dense_layers(&self) -> impl Iterator<Item = &PackedDense> {
        self.blocks
            .iter()
            .flat_map(|b| [&b.qkv, &b.proj, &b.fc_in, &b.fc_out])
            .chain([&self.head])
    }

    /// Every dense layer, in the order a forward pass reads them.
    pub(crate) fn dense_layers_mut(&mut self) -> Vec<&mut PackedDense> {
        let mut layers: Vec<&mut PackedDense> = Vec::with_capacity(4 * self.blocks.len() + 1);
        for b in &mut self.blocks {
            layers.extend([&mut b.qkv, &mut b.proj, &mut b.fc_in, &mut b.fc_out]);
        }
        layers.push(&mut self.head);
        layers
    }

    /// Whether the dense weights live in memory advised for huge pages.
    pub(crate) fn on_huge_pages(&self) -> bool {
        self.head.on_huge_pages()
    }

    /// An empty shared-prefix cache for this model.
    pub(crate) fn new_cache(&self) -> HostCache {
        HostCache::new(
            self.blocks.len(),
            self.heads,
            self.max_seq,
            self.d / self.heads,
        )
    }

    /// Logits (`[rows, n, vocab]`, row-major) for `tokens` (`rows × n`) at positions
    /// `start..start + n`, after the `context` (which must hold exactly `start` positions
    /// per row), and the new positions' keys/values. `None` when the shapes do not fit
    /// (a token outside the vocabulary, too many positions, a context of another length).
    /// `timer` times the stages.
    pub(crate) fn forward(
        &self,
        tokens: &[u32],
        rows: usize,
        start: usize,
        context: HostContext<'_>,
        timer: &mut StageTimer<'_>,
    ) -> Option<(Vec<f32>, HostKv)> {
        let d = self.d;
        let n = tokens.len().checked_div(rows)?;
        let shared_len = context.shared.map_or(0, |(_, len)| len);
        let branch_len = context.branch.map_or(0, |b| b.len);
        let fits = n > 0
            && rows * n == tokens.len()
            && start + n <= self.max_seq
            && shared_len + branch_len == start
            && context
                .branch
                .is_none_or(|b| b.rows == rows && b.heads * b.head_dim == d)
            && tokens.iter().all(|&t| (t as usize) < self.vocab);
        if !fits {
            return None;
        }
        let m = rows * n;
        let mut x = Vec::with_capacity(m * d);
        for (i, &t) in tokens.iter().enumerate() {
            let pos = start + i % n;
            let tok = &self.token_embedding[t as usize * d..(t as usize + 1) * d];
            let at = &self.position_embedding[pos * d..(pos + 1) * d];
            x.extend(tok.iter().zip(at).map(|(a, b)| a + b));
        }
        let new = HostKv {
            rows,
            heads: self.heads,
            len: n,
            head_dim: d / self.heads,
            layers: Vec::with_capacity(self.blocks.len()),
        };
        // A helper only when some call of this pass would be split.
        let threads = if self.threads > 1 && self.dense_layers().any(|l| splits(l, m)) {
            self.threads
        } else {
            1
        };
        with_helper(threads, |helper| {
            timer.lap(S::Embed);
            self.blocks_and_head(x, m, new, context, helper, timer)
        })
    }

    /// The blocks and the head over the embedded inputs `x` (`m` rows).
    fn blocks_and_head<'m>(
        &'m self,
        mut x: Vec<f32>,
        m: usize,
        mut new: HostKv,
        context: HostContext<'m>,
        helper: Option<&Helper<'_, 'm>>,
        timer: &mut StageTimer<'_>,
    ) -> Option<(Vec<f32>, HostKv)> {
        let (d, rows) = (self.d, new.rows);
        let dense = |layer: &'m PackedDense, x: Vec<f32>, activation: Activation| {
            let partner = partner(helper, &self.remote, self.dense_layers(), layer);
            dense_split::apply(layer, Arc::new(x), m, activation, partner)
        };
        for (layer, block) in self.blocks.iter().enumerate() {
            let normed = block.norm_attn.apply(&x, d);
            timer.lap(S::Norms);
            let qkv = dense(&block.qkv, normed, Activation::Identity)?;
            new.layers.push(split_kv(&qkv, rows, self.heads, d));
            timer.lap(S::Qkv);
            let mut context_out = vec![0.0; m * d];
            let queries = Queries::fused_qkv(d);
            let arch = self.arch;
            attend_split(
                arch,
                qkv,
                queries,
                &new,
                layer,
                context,
                helper,
                &mut context_out,
            );
            timer.lap(S::Attention);
            add_in_place(
                &mut x,
                &dense(&block.proj, context_out, Activation::Identity)?,
            );
            timer.lap(S::AttnOut);
            let normed = block.norm_mlp.apply(&x, d);
            timer.lap(S::Norms);
            let hidden = dense(&block.fc_in, normed, Activation::Gelu)?;
            timer.lap(S::MlpIn);
            add_in_place(&mut x, &dense(&block.fc_out, hidden, Activation::Identity)?);
            timer.lap(S::MlpOut);
        }
        let normed = self.final_norm.apply(&x, d);
        timer.lap(S::Norms);
        let logits = dense(&self.head, normed, Activation::Identity)?;
        timer.lap(S::Head);
        Some((logits, new))
    }
}

fn pack(linear: &LinearParams) -> Option<PackedDense> {
    PackedDense::new(
        &linear.weight,
        linear.bias.as_deref(),
        linear.d_in,
        linear.d_out,
    )
}

impl From<&NormParams> for Norm {
    fn from(norm: &NormParams) -> Self {
        Self {
            gamma: norm.gamma.clone(),
            beta: norm.beta.clone(),
            epsilon: norm.epsilon,
        }
    }
}

impl Norm {
    /// LayerNorm of every `d`-wide row of `x` (biased variance, as burn computes it).
    fn apply(&self, x: &[f32], d: usize) -> Vec<f32> {
        let mut out = Vec::with_capacity(x.len());
        for row in x.chunks_exact(d) {
            let mean = reduce::sum(row) / d as f32;
            let var = reduce::sum_by(row, |v| (v - mean) * (v - mean)) / d as f32;
            let inv = 1.0 / (var + self.epsilon).sqrt();
            out.extend(
                row.iter()
                    .zip(&self.gamma)
                    .zip(&self.beta)
                    .map(|((v, g), b)| (v - mean) * inv * g + b),
            );
        }
        out
    }
}

/// The keys and values of `qkv` (`[rows, n, 3d]`) as `[rows, heads, n, head_dim]` each.
fn split_kv(qkv: &[f32], rows: usize, heads: usize, d: usize) -> HostLayer {
    let hd = d / heads;
    let n = qkv.len() / (3 * d * rows);
    let mut k = Vec::with_capacity(qkv.len() / 3);
    let mut v = Vec::with_capacity(qkv.len() / 3);
    for r in 0..rows {
        for h in 0..heads {
            for t in 0..n {
                let at = (r * n + t) * 3 * d + h * hd;
                k.extend_from_slice(&qkv[at + d..at + d + hd]);
                v.extend_from_slice(&qkv[at + 2 * d..at + 2 * d + hd]);
            }
        }
    }
    HostLayer { k, v }
}

pub(crate) fn add_in_place(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}
