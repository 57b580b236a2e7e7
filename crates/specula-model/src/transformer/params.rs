//! A [`Gpt`]'s inference parameters read back into plain vectors ([`GptParams`]), for
//! forward passes that run outside burn (`specula-host` packs them once at load). The
//! module stays the definition; this is a copy.

use burn::nn::{LayerNorm, LayerNormConfig, Linear};
use burn::tensor::Tensor;

use super::Gpt;

/// A dense layer `y = x · W + b`.
#[derive(Debug, Clone)]
pub struct LinearParams {
    /// `W`, `[d_in, d_out]` row-major.
    pub weight: Vec<f32>,
    /// `b`, `d_out` values, if the layer has one.
    pub bias: Option<Vec<f32>>,
    /// Input width.
    pub d_in: usize,
    /// Output width.
    pub d_out: usize,
}

/// A LayerNorm.
#[derive(Debug, Clone)]
pub struct NormParams {
    /// Scale.
    pub gamma: Vec<f32>,
    /// Shift (zeros for a norm without one).
    pub beta: Vec<f32>,
    /// Added to the variance.
    pub epsilon: f32,
}

/// One pre-norm block.
#[derive(Debug, Clone)]
pub struct BlockParams {
    /// The norm before attention.
    pub norm_attn: NormParams,
    /// Queries, keys and values side by side, `d → 3d`.
    pub qkv: LinearParams,
    /// The attention output projection, `d → d`.
    pub proj: LinearParams,
    /// The norm before the MLP.
    pub norm_mlp: NormParams,
    /// The MLP's first layer (GELU after it), `d → d_ff`.
    pub fc_in: LinearParams,
    /// The MLP's second layer, `d_ff → d`.
    pub fc_out: LinearParams,
}

/// Every inference parameter of a [`Gpt`] (dropout is training only).
#[derive(Debug, Clone)]
pub struct GptParams {
    /// Model width.
    pub d_model: usize,
    /// Attention heads.
    pub n_heads: usize,
    /// Vocabulary size.
    pub vocab_size: usize,
    /// Positions.
    pub max_seq: usize,
    /// `[vocab_size, d_model]`.
    pub token_embedding: Vec<f32>,
    /// `[max_seq, d_model]`.
    pub position_embedding: Vec<f32>,
    /// The blocks, in order.
    pub blocks: Vec<BlockParams>,
    /// The norm after the last block.
    pub final_norm: NormParams,
    /// The output layer, `d → vocab_size`.
    pub head: LinearParams,
}

impl Gpt {
    /// This model's inference parameters, copied to host memory; `None` if a parameter
    /// cannot be read back synchronously (on a GPU device in a browser).
    #[must_use]
    pub fn params(&self) -> Option<GptParams> {
        let blocks = self
            .blocks
            .iter()
            .map(|b| {
                Some(BlockParams {
                    norm_attn: norm(&b.norm_attn)?,
                    qkv: linear(&b.attn.qkv)?,
                    proj: linear(&b.attn.proj)?,
                    norm_mlp: norm(&b.norm_mlp)?,
                    fc_in: linear(&b.fc_in)?,
                    fc_out: linear(&b.fc_out)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let [_, d_model] = self.token_embedding.weight.val().dims();
        Some(GptParams {
            d_model,
            n_heads: self.blocks.first().map_or(1, |b| b.attn.n_heads),
            vocab_size: self.vocab_size,
            max_seq: self.max_seq,
            token_embedding: read_vec(self.token_embedding.weight.val())?,
            position_embedding: read_vec(self.position_embedding.weight.val())?,
            blocks,
            final_norm: norm(&self.final_norm)?,
            head: linear(&self.head)?,
        })
    }
}

impl Gpt {
    /// Every inference parameter in one vector on the model's device, in the order of
    /// `specula_kernels::ModelShape` (the fused WebGPU pass reads them from one buffer);
    /// `None` for a layer without a bias or a norm without a shift, which it does not take.
    #[must_use]
    pub(crate) fn packed_params(&self) -> Option<Tensor<1>> {
        let flat = |t: Tensor<2>| {
            let n: usize = t.dims().iter().product();
            t.reshape([n])
        };
        let linear = |l: &Linear| Some([flat(l.weight.val()), l.bias.as_ref()?.val()]);
        let norm = |n: &LayerNorm| Some([n.gamma.val(), n.beta.as_ref()?.val()]);
        let mut parts = vec![
            flat(self.token_embedding.weight.val()),
            flat(self.position_embedding.weight.val()),
        ];
        for b in &self.blocks {
            parts.extend(norm(&b.norm_attn)?);
            parts.extend(linear(&b.attn.qkv)?);
            parts.extend(linear(&b.attn.proj)?);
            parts.extend(norm(&b.norm_mlp)?);
            parts.extend(linear(&b.fc_in)?);
            parts.extend(linear(&b.fc_out)?);
        }
        parts.extend(norm(&self.final_norm)?);
        parts.extend(linear(&self.head)?);
        Some(Tensor::cat(parts, 0))
    }
}

fn read_vec<const D: usize>(t: Tensor<D>) -> Option<Vec<f32>> {
    t.try_into_data().ok()?.try_into_vec::<f32>().ok()
}

fn linear(linear: &Linear) -> Option<LinearParams> {
    let weight = linear.weight.val();
    let [d_in, d_out] = weight.dims();
    let bias = match &linear.bias {
        Some(b) => Some(read_vec(b.val())?),
        None => None,
    };
    Some(LinearParams {
        weight: read_vec(weight)?,
        bias,
        d_in,
        d_out,
    })
}

fn norm(norm: &LayerNorm) -> Option<NormParams> {
    let gamma = read_vec(norm.gamma.val())?;
    let beta = match &norm.beta {
        Some(b) => read_vec(b.val())?,
        None => vec![0.0; gamma.len()],
    };
    // The epsilon is private to the module; every norm here is built from the default
    // configuration (see `Init::layer_norm`).
    let epsilon = LayerNormConfig::new(gamma.len()).epsilon as f32;
    Some(NormParams {
        gamma,
        beta,
        epsilon,
    })
}
