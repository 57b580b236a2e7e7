//! What the draft is trained to and measured by, at the temperature it drafts at.
//!
//! Speculative sampling accepts a draft token with probability min(1, p_target / p_draft),
//! so a position's acceptance is Σ_x min(p_target(x), p_draft(x)) = 1 − TV. The loss is the
//! forward KL divergence from the target to the draft, both at the drafting temperature,
//! over the target's kept top-k (renormalised): what DistillSpec found to serve sampling
//! best on on-policy data (docs/real-models.md, "The trained draft").

use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Int, Tensor, TensorData};

use super::batches::Batch;

/// A batch on a device: the inputs and the target's renormalised top-k at a temperature.
#[derive(Debug, Clone)]
pub struct BatchTensors {
    /// `[rows, len]` input tokens.
    pub tokens: Tensor<2, Int>,
    /// `[rows × len, top_k]` target tokens.
    pub top_tokens: Tensor<2, Int>,
    /// `[rows × len, top_k]` the target's probabilities at the temperature, renormalised
    /// over the kept tokens, times the position's weight (0 where nothing is scored).
    pub target: Tensor<2>,
    /// Positions scored.
    pub scored: usize,
    /// Σ over scored positions of the tempered top-k's entropy: the least the summed
    /// loss can be.
    pub entropy: f64,
}

impl BatchTensors {
    /// `batch` on `device`, the target tempered by `temperature`.
    #[must_use]
    pub fn new(batch: &Batch, temperature: f32, device: &Device) -> Self {
        let (n, k) = (batch.rows * batch.len, batch.top_k);
        let mut target = vec![0.0f32; n * k];
        let mut entropy = 0.0;
        for (pos, (row, &w)) in target.chunks_exact_mut(k).zip(&batch.scored).enumerate() {
            if w == 0.0 {
                continue;
            }
            let logp = &batch.top_logp[pos * k..(pos + 1) * k];
            let top = logp.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
            let mut sum = 0.0;
            for (p, &l) in row.iter_mut().zip(logp) {
                *p = ((l - top) / temperature).exp();
                sum += *p;
            }
            row.iter_mut().for_each(|p| *p *= w / sum);
            entropy -= row
                .iter()
                .filter(|&&p| p > 0.0)
                .map(|&p| f64::from(p) * f64::from(p).ln())
                .sum::<f64>();
        }
        Self {
            tokens: Tensor::from_data(
                TensorData::new(batch.tokens.clone(), [batch.rows, batch.len]),
                device,
            ),
            top_tokens: Tensor::from_data(
                TensorData::new(batch.top_tokens.clone(), [n, k]),
                device,
            ),
            target: Tensor::from_data(TensorData::new(target, [n, k]), device),
            scored: batch.scored_positions(),
            entropy,
        }
    }
}

/// The draft's log-probabilities at `temperature` of the target's kept tokens:
/// `[rows × len, top_k]` from logits `[rows, len, vocab]`.
fn draft_log_probs(logits: Tensor<3>, batch: &BatchTensors, temperature: f32) -> Tensor<2> {
    let [rows, len, vocab] = logits.dims();
    let tempered = logits.reshape([rows * len, vocab]).div_scalar(temperature);
    log_softmax(tempered, 1).gather(1, batch.top_tokens.clone())
}

/// The mean over scored positions of the cross-entropy from the target's tempered top-k
/// to the draft at the same temperature (the forward KL up to the target's entropy, which
/// does not depend on the draft).
#[must_use]
pub fn distill_loss(logits: Tensor<3>, batch: &BatchTensors, temperature: f32) -> Tensor<1> {
    let logq = draft_log_probs(logits, batch, temperature);
    (logq * batch.target.clone())
        .sum()
        .neg()
        .div_scalar(batch.scored.max(1) as f32)
}

/// The mean over scored positions of 1 − Σ_x min(target, draft) over the kept tokens at
/// `temperature`: the rejection probability itself (total variation), which speculative
/// sampling pays for, as a loss (DistillSpec's TVD).
#[must_use]
pub fn tv_loss(logits: Tensor<3>, batch: &BatchTensors, temperature: f32) -> Tensor<1> {
    let q = draft_log_probs(logits, batch, temperature).exp();
    let scored = batch.scored.max(1) as f32;
    q.min_pair(batch.target.clone())
        .sum()
        .neg()
        .add_scalar(scored)
        .div_scalar(scored)
}

/// Σ over scored positions of Σ_x min(target, draft) over the target's kept tokens at
/// `temperature`: each position's expected acceptance, counting only the kept tokens (so
/// at most the true value by the mass beyond the top-k, small at top 32).
#[must_use]
pub fn expected_acceptance(logits: Tensor<3>, batch: &BatchTensors, temperature: f32) -> f64 {
    let q = draft_log_probs(logits, batch, temperature).exp();
    let accepted: f32 = q
        .min_pair(batch.target.clone())
        .sum()
        .try_into_scalar()
        .unwrap_or(f32::NAN);
    f64::from(accepted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draft::batches::batches;
    use crate::onpolicy::records::Record;

    fn one_position(top: Vec<(u32, f32)>) -> Batch {
        let record = Record {
            instruction: 0,
            prompt: vec![1],
            answer: vec![top[0].0],
            top: vec![top],
        };
        batches(&[record], 16).remove(0)
    }

    #[test]
    fn a_draft_equal_to_the_target_is_always_accepted_and_minimises_the_loss() {
        let device = Device::flex();
        let vocab = 5;
        // The target's full distribution over 5 tokens, all kept.
        let logp: Vec<f32> = [0.5f32, 0.2, 0.15, 0.1, 0.05]
            .iter()
            .map(|p| p.ln())
            .collect();
        let batch = one_position((0..5).map(|t| (t as u32, logp[t])).collect());
        let t = 0.7;
        let tensors = BatchTensors::new(&batch, t, &device);
        let logits =
            |v: Vec<f32>| Tensor::<3>::from_data(TensorData::new(v, [1, 1, vocab]), &device);
        let exact = logits(logp.clone());
        let accepted = expected_acceptance(exact.clone(), &tensors, t);
        assert!((accepted - 1.0).abs() < 1e-5, "{accepted}");
        let best: f32 = distill_loss(exact, &tensors, t).into_scalar();
        let uniform = logits(vec![0.0; vocab]);
        let worse: f32 = distill_loss(uniform.clone(), &tensors, t).into_scalar();
        assert!(best < worse, "{best} vs {worse}");
        // Acceptance of a uniform draft: Σ min(p_t, 1/5) computed by hand.
        let tempered: Vec<f64> = logp.iter().map(|&l| (f64::from(l) / 0.7).exp()).collect();
        let z: f64 = tempered.iter().sum();
        let want: f64 = tempered.iter().map(|p| (p / z).min(0.2)).sum();
        let got = expected_acceptance(uniform.clone(), &tensors, t);
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
        // The TV loss is the rejection probability: 0 for the exact draft, 1 − want here.
        let tv: f32 = tv_loss(uniform, &tensors, t).into_scalar();
        assert!((f64::from(tv) - (1.0 - want)).abs() < 1e-5, "{tv}");
        let none: f32 = tv_loss(logits(logp.clone()), &tensors, t).into_scalar();
        assert!(none.abs() < 1e-5, "{none}");
    }
}
