//! Training a small draft for a real (GGUF) target from its on-policy data
//! ([`crate::onpolicy`]): the draft's shape and seeded start ([`shape`]), the records as
//! batches ([`batches`](mod@batches)), the loss and the acceptance it is measured by ([`objective`]),
//! and the loop ([`DraftTrainer`]): AdamW with warm-up and cosine decay over a seeded
//! order of batches, so a run is reproduced from its seed (docs/real-models.md, "The
//! trained draft").

pub mod batches;
pub mod objective;
pub mod shape;

use burn::grad_clipping::GradientClippingConfig;
use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::Device;
use serde::{Deserialize, Serialize};
use specula_gguf::{LlamaConfig, LlamaWeights};
use specula_model::{Error, Result};

use crate::llama_draft::LlamaDraft;
use crate::onpolicy::records::Record;
use batches::{Batch, batches, epoch_order};
use objective::{BatchTensors, distill_loss, expected_acceptance, tv_loss};
use shape::DraftShape;

/// Every setting of a draft's training run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DraftTrainConfig {
    /// The draft's dimensions.
    pub shape: DraftShape,
    /// Seeds the blocks' starting weights and the order of batches.
    pub seed: u64,
    /// Passes over the training records.
    pub epochs: u64,
    /// Positions per batch, padding included.
    pub batch_tokens: usize,
    /// Peak learning rate.
    pub learning_rate: f64,
    /// Final learning rate of the cosine decay.
    pub min_learning_rate: f64,
    /// Linear warm-up steps.
    pub warmup_steps: u64,
    /// AdamW decoupled weight decay.
    pub weight_decay: f64,
    /// Gradient-norm clip.
    pub grad_clip: f64,
    /// Keep the starting embedding (the target's, projected) instead of training it.
    pub freeze_embedding: bool,
    /// What the loss measures between the target and the draft (records from before
    /// the choice existed used the forward KL divergence).
    #[serde(default)]
    pub divergence: Divergence,
    /// The temperature both distributions are compared at: the one the draft will
    /// draft at.
    pub temperature: f32,
}

impl DraftTrainConfig {
    /// The recipe of SmolLM2-135M's draft (MODELS.md gives its losses and acceptance).
    #[must_use]
    pub fn smollm2() -> Self {
        Self {
            shape: DraftShape::SMOLLM2,
            seed: 0,
            epochs: 10,
            batch_tokens: 512,
            learning_rate: 3e-3,
            min_learning_rate: 3e-4,
            warmup_steps: 20,
            weight_decay: 0.0,
            grad_clip: 1.0,
            freeze_embedding: false,
            divergence: Divergence::ForwardKl,
            temperature: 0.7,
        }
    }

    /// The learning rate at `step` of `total`: linear warm-up, then cosine decay.
    #[must_use]
    pub fn learning_rate_at(&self, step: u64, total: u64) -> f64 {
        if step < self.warmup_steps {
            return self.learning_rate * (step + 1) as f64 / self.warmup_steps as f64;
        }
        let span = total.saturating_sub(self.warmup_steps).max(1) as f64;
        let progress = ((step - self.warmup_steps) as f64 / span).min(1.0);
        let cosine = 0.5 * (1.0 + (std::f64::consts::PI * progress).cos());
        self.min_learning_rate + (self.learning_rate - self.min_learning_rate) * cosine
    }
}

/// The divergence a draft is trained to lower, both distributions at the drafting
/// temperature over the target's kept top-k.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Divergence {
    /// KL(target ‖ draft): [`objective::distill_loss`].
    #[default]
    ForwardKl,
    /// 1 − Σ min(target, draft), the rejection probability: [`objective::tv_loss`].
    TotalVariation,
}

/// Loss and acceptance on a set of records.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Mean cross-entropy from the target's tempered top-k to the draft.
    pub loss: f64,
    /// Mean entropy of the target's tempered top-k: `loss − entropy` is the KL divergence.
    pub entropy: f64,
    /// Mean expected acceptance at the temperature over the kept tokens (1 − TV).
    pub acceptance: f64,
    /// Positions scored.
    pub positions: usize,
}

/// A draft's training run in progress.
pub struct DraftTrainer {
    config: DraftTrainConfig,
    draft_config: LlamaConfig,
    model: LlamaDraft,
    optim: ModuleOptimizer,
    batches: Vec<Batch>,
    device: Device,
    step: u64,
}

impl std::fmt::Debug for DraftTrainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DraftTrainer")
            .field("config", &self.config)
            .field("step", &self.step)
            .finish_non_exhaustive()
    }
}

impl DraftTrainer {
    /// A fresh run for `target` (whose embedding seeds the draft's) over `records`, on the
    /// autodiff form of `device`.
    ///
    /// # Errors
    /// [`Error::BadConfig`] for a shape that does not fit the target;
    /// [`Error::Training`] when no record has an answer.
    pub fn start(
        config: DraftTrainConfig,
        target: &LlamaConfig,
        target_weights: &LlamaWeights,
        records: &[Record],
        device: &Device,
    ) -> Result<Self> {
        let draft_config = config.shape.config(target)?;
        let weights = config.shape.init(target, target_weights, config.seed)?;
        let device = device.clone().autodiff();
        let mut model = LlamaDraft::from_weights(&draft_config, &weights, &device)
            .ok_or_else(|| Error::BadConfig("the draft's starting weights do not fit".into()))?;
        if config.freeze_embedding {
            model = model.freeze_embedding();
        }
        let batches = batches(records, config.batch_tokens);
        if batches.is_empty() {
            return Err(Error::Training("no record has an answer to learn".into()));
        }
        let optim = AdamWConfig::new()
            .with_beta_2(0.99)
            .with_weight_decay(config.weight_decay as f32)
            .with_grad_clipping(Some(GradientClippingConfig::Norm(config.grad_clip as f32)))
            .init();
        Ok(Self {
            config,
            draft_config,
            model,
            optim,
            batches,
            device,
            step: 0,
        })
    }

    /// Steps taken.
    #[must_use]
    pub fn step(&self) -> u64 {
        self.step
    }

    /// Steps of the whole run (epochs × batches).
    #[must_use]
    pub fn total_steps(&self) -> u64 {
        self.config.epochs * self.batches.len() as u64
    }

    /// Batches per epoch.
    #[must_use]
    pub fn batches_per_epoch(&self) -> usize {
        self.batches.len()
    }

    /// The draft's configuration (its GGUF header).
    #[must_use]
    pub fn draft_config(&self) -> &LlamaConfig {
        &self.draft_config
    }

    /// The batch step `step` trains on: epoch `step / batches` in its seeded order.
    #[must_use]
    pub fn batch_at(&self, step: u64) -> &Batch {
        let n = self.batches.len() as u64;
        let order = epoch_order(self.batches.len(), self.config.seed, step / n);
        &self.batches[order[(step % n) as usize]]
    }

    /// One optimiser step on the next batch of the seeded order; returns its loss.
    ///
    /// # Errors
    /// [`Error::Training`] when the loss is not finite.
    pub fn train_step(&mut self) -> Result<f64> {
        let batch = self.batch_at(self.step).clone();
        self.train_on(&batch)
    }

    /// One optimiser step on `batch`, at the learning rate of the next step; returns the
    /// loss before the step.
    ///
    /// # Errors
    /// [`Error::Training`] when the loss is not finite.
    pub fn train_on(&mut self, batch: &Batch) -> Result<f64> {
        let t = self.config.temperature;
        let tensors = BatchTensors::new(batch, t, &self.device);
        let logits = self.model.forward(tensors.tokens.clone());
        let loss = match self.config.divergence {
            Divergence::ForwardKl => distill_loss(logits, &tensors, t),
            Divergence::TotalVariation => tv_loss(logits, &tensors, t),
        };
        let value = f64::from(loss.clone().into_scalar::<f32>());
        if !value.is_finite() {
            return Err(Error::Training(format!(
                "loss {value} at step {}",
                self.step
            )));
        }
        let grads = GradientsParams::from_grads(loss.backward(), &self.model);
        let lr = self.config.learning_rate_at(self.step, self.total_steps());
        self.model = self.optim.step(lr, self.model.clone(), grads);
        self.step += 1;
        Ok(value)
    }

    /// Loss and acceptance on `records` (without gradients), in batches of the run's size.
    #[must_use]
    pub fn evaluate(&self, records: &[Record]) -> Evaluation {
        evaluate(&self.model.valid(), records, &self.config)
    }

    /// The current weights, in GGUF's layout.
    #[must_use]
    pub fn weights(&self) -> LlamaWeights {
        self.model.valid().weights()
    }
}

/// Loss and acceptance of `model` on `records` at `config`'s temperature.
#[must_use]
pub fn evaluate(model: &LlamaDraft, records: &[Record], config: &DraftTrainConfig) -> Evaluation {
    let device = model_device(model);
    let t = config.temperature;
    let (mut loss, mut accepted, mut entropy, mut positions) = (0.0, 0.0, 0.0, 0);
    for batch in batches(records, config.batch_tokens) {
        let tensors = BatchTensors::new(&batch, t, &device);
        let logits = model.forward(tensors.tokens.clone());
        let scored = tensors.scored as f64;
        loss += f64::from(distill_loss(logits.clone(), &tensors, t).into_scalar::<f32>()) * scored;
        accepted += expected_acceptance(logits, &tensors, t);
        positions += tensors.scored;
        entropy += tensors.entropy;
    }
    let n = positions.max(1) as f64;
    Evaluation {
        loss: loss / n,
        entropy: entropy / n,
        acceptance: accepted / n,
        positions,
    }
}

fn model_device(model: &LlamaDraft) -> Device {
    model
        .devices()
        .into_iter()
        .next()
        .unwrap_or_else(Device::flex)
}
