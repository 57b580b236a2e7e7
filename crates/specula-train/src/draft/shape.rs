//! The trained draft's shape and its seeded starting weights.
//!
//! The draft shares its target's tokenizer, so its embedding has the target's 49,152 rows
//! and dominates its size; a few thin blocks sit on top. The embedding (tied to the output
//! head, as in SmolLM2) starts as the target's embedding projected on its `d_model` leading
//! principal directions, so tokens the on-policy data never shows still start near the
//! tokens they resemble; the blocks start from seeded normal weights (docs/real-models.md,
//! "The trained draft").

use nalgebra::{DMatrix, SymmetricEigen};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use serde::{Deserialize, Serialize};
use specula_gguf::llama::LayerWeights;
use specula_gguf::{LlamaConfig, LlamaWeights, RopeStyle};
use specula_model::{Error, Result};

/// The draft's dimensions; everything else (vocabulary, rotary base, norm epsilon) is the
/// target's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DraftShape {
    /// Width of the residual stream.
    pub d_model: usize,
    /// Decoder blocks.
    pub n_layers: usize,
    /// Attention heads (also key/value heads: no grouping at this size).
    pub n_heads: usize,
    /// Hidden width of the gated feed-forward.
    pub d_ff: usize,
}

/// Standard deviation of the blocks' starting weights (GPT-2's), scaled down for the
/// projections that write into the residual stream.
const INIT_STD: f64 = 0.02;

impl DraftShape {
    /// SmolLM2-135M's draft: 128 wide, 4 blocks; 7.1 M parameters. The feed-forward is
    /// 352 wide so that the file, the tokenizer's 1.8 MB included, stays under 16 MB.
    pub const SMOLLM2: Self = Self {
        d_model: 128,
        n_layers: 4,
        n_heads: 4,
        d_ff: 352,
    };

    /// The full configuration next to `target` (same vocabulary, rotary and norm settings,
    /// tied output, the `llama` architecture's adjacent rotary pairs).
    ///
    /// # Errors
    /// [`Error::BadConfig`] when `d_model` does not split into heads of even width.
    pub fn config(&self, target: &LlamaConfig) -> Result<LlamaConfig> {
        let head_dim = self.d_model / self.n_heads.max(1);
        if self.n_heads == 0
            || head_dim * self.n_heads != self.d_model
            || !head_dim.is_multiple_of(2)
        {
            return Err(Error::BadConfig(format!(
                "the draft's width {} does not split into {} heads of even width",
                self.d_model, self.n_heads
            )));
        }
        if self.n_layers == 0 || self.d_ff == 0 {
            return Err(Error::BadConfig(
                "the draft needs a block and a feed-forward".into(),
            ));
        }
        Ok(LlamaConfig {
            vocab_size: target.vocab_size,
            d_model: self.d_model,
            n_layers: self.n_layers,
            n_heads: self.n_heads,
            n_kv_heads: self.n_heads,
            head_dim,
            d_ff: self.d_ff,
            rope_base: target.rope_base,
            rope_style: RopeStyle::Adjacent,
            rms_eps: target.rms_eps,
            max_seq: target.max_seq,
            tied_output: true,
            qkv_bias: false,
        })
    }

    /// Parameters of the draft over `vocab` tokens.
    #[must_use]
    pub fn parameters(&self, vocab: usize) -> usize {
        let d = self.d_model;
        let block = 4 * d * d + 3 * d * self.d_ff + 2 * d;
        vocab * d + self.n_layers * block + d
    }

    /// The starting weights: the target's embedding on its leading principal directions,
    /// seeded normal blocks, unit norms.
    ///
    /// # Errors
    /// [`Error::BadConfig`] for a bad shape or a draft wider than its target.
    pub fn init(
        &self,
        target: &LlamaConfig,
        target_weights: &LlamaWeights,
        seed: u64,
    ) -> Result<LlamaWeights> {
        let config = self.config(target)?;
        let d = config.d_model;
        if d > target.d_model {
            return Err(Error::BadConfig(format!(
                "the draft ({d} wide) is wider than its target ({})",
                target.d_model
            )));
        }
        let token_embd = project(&target_weights.token_embd, target.d_model, d);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut normal = |len: usize, std: f64| -> Vec<f32> {
            let dist = Normal::new(0.0, std).unwrap_or_else(|_| unreachable!("std > 0"));
            (0..len).map(|_| dist.sample(&mut rng) as f32).collect()
        };
        let residual_std = INIT_STD / (2.0 * self.n_layers as f64).sqrt();
        let ff = self.d_ff;
        let layers = (0..self.n_layers)
            .map(|_| LayerWeights {
                attn_norm: vec![1.0; d],
                wq: normal(d * d, INIT_STD),
                wk: normal(d * d, INIT_STD),
                wv: normal(d * d, INIT_STD),
                qkv_bias: None,
                wo: normal(d * d, residual_std),
                ffn_norm: vec![1.0; d],
                w_gate: normal(ff * d, INIT_STD),
                w_up: normal(ff * d, INIT_STD),
                w_down: normal(d * ff, residual_std),
            })
            .collect();
        Ok(LlamaWeights {
            token_embd,
            layers,
            // Unit norms would make the tied head's first logits about √d times the
            // embedding's length (the starting loss was 38 nats); 1/√d starts them near 1.
            output_norm: vec![1.0 / (d as f32).sqrt(); d],
            output: None,
        })
    }
}

/// `rows` (`n × wide`, row-major) projected on the `narrow` leading eigenvectors of their
/// second-moment matrix (the top right singular vectors), most important first.
fn project(rows: &[f32], wide: usize, narrow: usize) -> Vec<f32> {
    let n = rows.len() / wide;
    let matrix = DMatrix::<f64>::from_row_iterator(n, wide, rows.iter().map(|&x| f64::from(x)));
    let moment = matrix.tr_mul(&matrix);
    let eigen = SymmetricEigen::new(moment);
    let mut order: Vec<usize> = (0..wide).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
    let mut basis = DMatrix::<f64>::zeros(wide, narrow);
    for (k, &col) in order.iter().take(narrow).enumerate() {
        let v = eigen.eigenvectors.column(col);
        // An eigenvector's sign is arbitrary; fix it (largest entry positive) so the
        // projection does not depend on the solver's choice.
        let largest = v
            .iter()
            .fold(0.0f64, |m, &x| if x.abs() > m.abs() { x } else { m });
        let sign = if largest < 0.0 { -1.0 } else { 1.0 };
        basis.set_column(k, &(v * sign));
    }
    let projected = matrix * basis;
    let mut out = Vec::with_capacity(n * narrow);
    for r in 0..n {
        out.extend(projected.row(r).iter().map(|&x| x as f32));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_projection_keeps_what_lies_in_the_leading_directions() {
        // Rows spanning two directions of a four-wide space: two principal components
        // keep every row's length.
        let rows: Vec<f32> = (0..50)
            .flat_map(|i| {
                let (a, b) = ((i as f32 * 0.37).sin(), (i as f32 * 0.11).cos());
                [a + b, a - b, 2.0 * a, 0.0]
            })
            .collect();
        let out = project(&rows, 4, 2);
        for (row, got) in rows.chunks_exact(4).zip(out.chunks_exact(2)) {
            let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm(row) - norm(got)).abs() < 1e-4, "{row:?} -> {got:?}");
        }
    }

    #[test]
    fn the_smollm2_draft_fits_the_size_limits() {
        let params = DraftShape::SMOLLM2.parameters(49_152);
        assert!(params <= 12_000_000, "{params} parameters");
        // F16 weights plus SmolLM2's tokenizer (about 1.8 MB in the file).
        assert!(
            2 * params + 1_800_000 <= 16_000_000,
            "{} bytes as F16",
            2 * params
        );
    }
}
