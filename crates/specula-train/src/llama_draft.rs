//! A Llama-family model as a trainable burn module: the draft a real (GGUF) target gets
//! is trained in this form and written back as GGUF (`specula_gguf::writer`), so it loads
//! beside its target like any other file. The forward pass is the one of
//! `specula_model::LlamaPass` over a whole batch without a cache (the math is in
//! docs/real-models.md); a test holds the two to the same logits.

use burn::module::{Module, Param};
use burn::nn::{Embedding, Linear};
use burn::tensor::activation::{silu, softmax};
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use specula_gguf::llama::LayerWeights;
use specula_gguf::llama::rope_tables;
use specula_gguf::{LlamaConfig, LlamaWeights, RopeStyle};

/// One block's parameters; linear weights are `[in, out]`.
#[derive(Module, Debug)]
pub struct DraftBlock {
    attn_norm: Param<Tensor<1>>,
    wq: Linear,
    wk: Linear,
    wv: Linear,
    wo: Linear,
    ffn_norm: Param<Tensor<1>>,
    gate: Linear,
    up: Linear,
    down: Linear,
}

/// A Llama-family decoder (no attention biases) whose weights train on an autodiff device.
#[derive(Module, Debug)]
pub struct LlamaDraft {
    embedding: Embedding,
    blocks: Vec<DraftBlock>,
    output_norm: Param<Tensor<1>>,
    /// The output head, `None` when it is the embedding (tied).
    head: Option<Linear>,
    n_heads: usize,
    n_kv_heads: usize,
    head_dim: usize,
    rope_base: f32,
    rms_eps: f32,
    /// Pairs of rotated dimensions are adjacent (`llama`), else halves (`qwen2`).
    adjacent: bool,
}

/// `[out, in]` row-major values (GGUF's layout) as a bias-free linear layer of `[in, out]`.
fn linear(values: &[f32], out: usize, inp: usize, device: &Device) -> Linear {
    let mut t = vec![0.0; values.len()];
    for (o, row) in values.chunks_exact(inp).enumerate() {
        for (i, &x) in row.iter().enumerate() {
            t[i * out + o] = x;
        }
    }
    Linear {
        weight: Param::from_tensor(Tensor::from_data(TensorData::new(t, [inp, out]), device)),
        bias: None,
    }
}

fn vector(values: &[f32], device: &Device) -> Param<Tensor<1>> {
    Param::from_tensor(Tensor::from_data(
        TensorData::new(values.to_vec(), [values.len()]),
        device,
    ))
}

impl LlamaDraft {
    /// `weights` (of shape `config`) on `device`; `None` for attention biases, which the
    /// draft does not have, or weights that do not fit the shape.
    #[must_use]
    pub fn from_weights(
        config: &LlamaConfig,
        weights: &LlamaWeights,
        device: &Device,
    ) -> Option<Self> {
        let c = config;
        let (d, kv, ff, vocab) = (c.d_model, c.kv_dim(), c.d_ff, c.vocab_size);
        if c.qkv_bias || weights.token_embd.len() != vocab * d {
            return None;
        }
        let blocks = weights
            .layers
            .iter()
            .map(|l| {
                let fits = l.wq.len() == d * d
                    && l.wk.len() == kv * d
                    && l.wv.len() == kv * d
                    && l.wo.len() == d * d
                    && l.w_gate.len() == ff * d
                    && l.w_up.len() == ff * d
                    && l.w_down.len() == d * ff;
                fits.then(|| DraftBlock {
                    attn_norm: vector(&l.attn_norm, device),
                    wq: linear(&l.wq, d, d, device),
                    wk: linear(&l.wk, kv, d, device),
                    wv: linear(&l.wv, kv, d, device),
                    wo: linear(&l.wo, d, d, device),
                    ffn_norm: vector(&l.ffn_norm, device),
                    gate: linear(&l.w_gate, ff, d, device),
                    up: linear(&l.w_up, ff, d, device),
                    down: linear(&l.w_down, d, ff, device),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let embedding = Embedding {
            weight: Param::from_tensor(Tensor::from_data(
                TensorData::new(weights.token_embd.clone(), [vocab, d]),
                device,
            )),
        };
        Some(Self {
            embedding,
            blocks,
            output_norm: vector(&weights.output_norm, device),
            head: weights.output.as_ref().map(|h| linear(h, vocab, d, device)),
            n_heads: c.n_heads,
            n_kv_heads: c.n_kv_heads,
            head_dim: c.head_dim,
            rope_base: c.rope_base,
            rms_eps: c.rms_eps,
            adjacent: c.rope_style == RopeStyle::Adjacent,
        })
    }

    /// The same draft with its embedding (and so its tied head) held fixed: only the
    /// blocks and norms learn.
    #[must_use]
    pub fn freeze_embedding(mut self) -> Self {
        self.embedding.weight = self.embedding.weight.set_require_grad(false);
        self
    }

    /// The current weights in GGUF's layout (`[out, in]` matrices), for writing the draft
    /// as a file (`specula_gguf::writer`); the inverse of [`Self::from_weights`].
    #[must_use]
    pub fn weights(&self) -> LlamaWeights {
        let values = |t: Tensor<1>| {
            t.into_data()
                .convert::<f32>()
                .try_to_vec::<f32>()
                .unwrap_or_default()
        };
        let matrix = |l: &Linear| {
            let [inp, out] = l.weight.val().dims();
            let t = values(l.weight.val().reshape([inp * out]));
            let mut m = vec![0.0; t.len()];
            for (i, row) in t.chunks_exact(out).enumerate() {
                for (o, &x) in row.iter().enumerate() {
                    m[o * inp + i] = x;
                }
            }
            m
        };
        let flat = |t: Tensor<2>| {
            let [a, b] = t.dims();
            values(t.reshape([a * b]))
        };
        LlamaWeights {
            token_embd: flat(self.embedding.weight.val()),
            layers: self
                .blocks
                .iter()
                .map(|b| LayerWeights {
                    attn_norm: values(b.attn_norm.val()),
                    wq: matrix(&b.wq),
                    wk: matrix(&b.wk),
                    wv: matrix(&b.wv),
                    qkv_bias: None,
                    wo: matrix(&b.wo),
                    ffn_norm: values(b.ffn_norm.val()),
                    w_gate: matrix(&b.gate),
                    w_up: matrix(&b.up),
                    w_down: matrix(&b.down),
                })
                .collect(),
            output_norm: values(self.output_norm.val()),
            output: self.head.as_ref().map(matrix),
        }
    }

    /// Logits `[batch, len, vocab]` at every position of `tokens` (`[batch, len]`).
    #[must_use]
    pub fn forward(&self, tokens: Tensor<2, Int>) -> Tensor<3> {
        let [batch, len] = tokens.dims();
        let device = tokens.device();
        let mut x = self.embedding.forward(tokens);
        let (cos, sin) = self.rope_tables(len, &device);
        let mask = causal_mask(len, &device);
        let (h, kvh, hd) = (self.n_heads, self.n_kv_heads, self.head_dim);
        let d = h * hd;
        for b in &self.blocks {
            let normed = rms_norm(x.clone(), &b.attn_norm, self.rms_eps);
            let heads = |t: Tensor<3>, n: usize| t.reshape([batch, len, n, hd]).swap_dims(1, 2);
            let q = self.rotate(heads(b.wq.forward(normed.clone()), h), &cos, &sin);
            let k = self.rotate(heads(b.wk.forward(normed.clone()), kvh), &cos, &sin);
            let v = heads(b.wv.forward(normed), kvh);
            // Each key/value head serves `h / kvh` query heads side by side.
            let widen = |t: Tensor<4>| {
                t.reshape([batch, kvh, 1, len, hd])
                    .expand([batch, kvh, h / kvh, len, hd])
                    .reshape([batch, h, len, hd])
            };
            let (k, v) = (widen(k), widen(v));
            let scores = q
                .matmul(k.swap_dims(2, 3))
                .mul_scalar(1.0 / (hd as f64).sqrt())
                .mask_fill(mask.clone().expand([batch, h, len, len]), f32::NEG_INFINITY);
            let out = softmax(scores, 3)
                .matmul(v)
                .swap_dims(1, 2)
                .reshape([batch, len, d]);
            x = x + b.wo.forward(out);
            let normed = rms_norm(x.clone(), &b.ffn_norm, self.rms_eps);
            let hidden = silu(b.gate.forward(normed.clone())) * b.up.forward(normed);
            x = x + b.down.forward(hidden);
        }
        let x = rms_norm(x, &self.output_norm, self.rms_eps);
        match &self.head {
            Some(head) => head.forward(x),
            None => x.matmul(self.embedding.weight.val().transpose().unsqueeze()),
        }
    }

    /// Cosines and sines `[1, 1, len, head_dim / 2]` of positions `0..len`.
    fn rope_tables(&self, len: usize, device: &Device) -> (Tensor<4>, Tensor<4>) {
        let half = self.head_dim / 2;
        let (cos, sin) = rope_tables(self.rope_base, self.head_dim, 0, len);
        let t = |v: Vec<f32>| Tensor::<4>::from_data(TensorData::new(v, [1, 1, len, half]), device);
        (t(cos), t(sin))
    }

    /// Rotates `x` (`[batch, heads, len, head_dim]`) by the positions' angles.
    fn rotate(&self, x: Tensor<4>, cos: &Tensor<4>, sin: &Tensor<4>) -> Tensor<4> {
        let style = if self.adjacent {
            RopeStyle::Adjacent
        } else {
            RopeStyle::Halves
        };
        specula_model::rotate(x, cos, sin, style)
    }
}

/// RMSNorm with a trainable weight: `specula_model::rms_norm`, the inference pass's.
fn rms_norm(x: Tensor<3>, w: &Param<Tensor<1>>, eps: f32) -> Tensor<3> {
    specula_model::rms_norm(x, &w.val(), eps)
}

/// `[1, 1, len, len]`, true where a position may not look (the later ones).
fn causal_mask(len: usize, device: &Device) -> Tensor<4, Bool> {
    let data: Vec<bool> = (0..len)
        .flat_map(|i| (0..len).map(move |j| j > i))
        .collect();
    Tensor::from_data(TensorData::new(data, [1, 1, len, len]), device)
}

#[cfg(test)]
mod tests {
    use super::*;
    use specula_gguf::GgufModel;
    use specula_gguf::synthetic::SyntheticLlama;
    use specula_model::LlamaLm;

    #[test]
    fn the_draft_module_scores_as_the_inference_pass() {
        let device = Device::flex();
        for spec in [
            SyntheticLlama::tiny(),
            SyntheticLlama {
                architecture: "qwen2".into(),
                untied_output: true,
                n_kv_heads: 4,
                seed: 5,
                ..SyntheticLlama::tiny()
            },
        ] {
            let file = GgufModel::from_bytes(spec.build(), None).expect("the file");
            let draft =
                LlamaDraft::from_weights(&file.config, &file.weights, &device).expect("the module");
            let reference = LlamaLm::load(&file, &device).expect("burn's pass");
            let rows: [Vec<u32>; 2] = [vec![5, 9, 1, 200, 3, 7, 7], vec![40, 2, 9, 11, 0, 8, 1]];
            let vocab = file.config.vocab_size;
            let ids: Vec<i64> = rows.iter().flatten().map(|&t| i64::from(t)).collect();
            let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [2, 7]), &device);
            let logits: Vec<f32> = draft
                .forward(tokens)
                .into_data()
                .try_into_vec::<f32>()
                .expect("f32");
            for (r, row) in rows.iter().enumerate() {
                let want = reference.logits_uncached(row).expect("burn's forward");
                let got = &logits[r * 7 * vocab..(r + 1) * 7 * vocab];
                let diff = want
                    .iter()
                    .zip(got)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f32::max);
                assert!(diff < 1e-4, "row {r}: max |diff| {diff}");
            }
        }
    }

    #[test]
    fn the_weights_come_back_in_the_layout_they_went_in() {
        let device = Device::flex();
        for untied_output in [false, true] {
            let spec = SyntheticLlama {
                untied_output,
                ..SyntheticLlama::tiny()
            };
            let file = GgufModel::from_bytes(spec.build(), None).expect("the file");
            let draft =
                LlamaDraft::from_weights(&file.config, &file.weights, &device).expect("module");
            assert_eq!(draft.weights(), file.weights);
        }
    }

    #[test]
    fn adamw_steps_on_the_autodiff_device_lower_the_loss() {
        use burn::optim::{AdamWConfig, GradientsParams};
        use burn::tensor::activation::log_softmax;
        let device = Device::flex().autodiff();
        let file = GgufModel::from_bytes(SyntheticLlama::tiny().build(), None).expect("file");
        let mut draft =
            LlamaDraft::from_weights(&file.config, &file.weights, &device).expect("module");
        let mut optim = AdamWConfig::new().init();
        let seq: Vec<i64> = (0..18).map(|i| (i * 37 % 200) as i64).collect();
        let inputs = Tensor::<2, Int>::from_data(
            TensorData::new([&seq[..8], &seq[9..17]].concat(), [2, 8]),
            &device,
        );
        let targets = Tensor::<2, Int>::from_data(
            TensorData::new([&seq[1..9], &seq[10..18]].concat(), [16, 1]),
            &device,
        );
        let loss_of = |m: &LlamaDraft| {
            let logits = m.forward(inputs.clone());
            let vocab = logits.dims()[2];
            log_softmax(logits.reshape([16, vocab]), 1)
                .gather(1, targets.clone())
                .neg()
                .mean()
        };
        let value = |t: Tensor<1>| t.try_into_scalar::<f32>().expect("a loss");
        let first = value(loss_of(&draft));
        for _ in 0..5 {
            let loss = loss_of(&draft);
            let grads = GradientsParams::from_grads(loss.backward(), &draft);
            draft = optim.step(1e-2, draft, grads);
        }
        let last = value(loss_of(&draft));
        assert!(last < 0.8 * first, "loss {first} -> {last}");
    }
}
