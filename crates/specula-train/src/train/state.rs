//! The settings of a run, its progress (saved in every checkpoint) and what the loop
//! reports through [`Observer`].

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::InitRecord;
use crate::distill::DistillConfig;
use specula_model::{Error, Result};
use specula_model::{ModelConfig, ModelRole};

/// Every training setting. Stored in the checkpoint; a resumed run keeps them, except
/// the total number of steps, which may be raised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// The role (names files and the bundle).
    pub role: ModelRole,
    /// The model's shape.
    pub model: ModelConfig,
    /// Sequences per batch.
    pub batch_size: usize,
    /// Tokens per sequence (at most `model.max_seq`).
    pub context: usize,
    /// Total optimiser steps.
    pub steps: u64,
    /// Peak learning rate.
    pub learning_rate: f64,
    /// Final learning rate of the cosine decay.
    pub min_learning_rate: f64,
    /// Linear warm-up steps.
    pub warmup_steps: u64,
    /// AdamW decoupled weight decay.
    pub weight_decay: f64,
    /// Dropout on embeddings and residual branches.
    pub dropout: f64,
    /// Gradient-norm clip.
    pub grad_clip: f64,
    /// Evaluate every this many steps.
    pub eval_every: u64,
    /// Batches per split per evaluation.
    pub eval_batches: usize,
    /// Write a checkpoint every this many steps.
    pub checkpoint_every: u64,
    /// Seeds initialisation, batches and dropout.
    pub seed: u64,
    /// Distillation from a teacher, if any (runs from before it existed have none).
    #[serde(default)]
    pub distill: Option<DistillConfig>,
    /// The trained weights the run started from, if not from a seeded initialisation.
    #[serde(default)]
    pub init: Option<InitRecord>,
}

impl TrainConfig {
    /// Defaults for `role` over `vocab_size` characters (see MODELS.md for the choices).
    #[must_use]
    pub fn for_role(role: ModelRole, vocab_size: usize) -> Self {
        let model = ModelConfig::for_role(role, vocab_size);
        // Both runs are far from overfitting at the step counts this CPU allows, so no
        // dropout; the small draft takes a higher learning rate.
        let (learning_rate, dropout, batch_size) = match role {
            ModelRole::Draft => (2e-3, 0.0, 16),
            ModelRole::Target => (1e-3, 0.0, 12),
        };
        Self {
            role,
            model,
            batch_size,
            context: 256,
            steps: 5000,
            learning_rate,
            min_learning_rate: learning_rate / 10.0,
            warmup_steps: 100,
            weight_decay: 0.1,
            dropout,
            grad_clip: 1.0,
            eval_every: 250,
            eval_batches: 8,
            checkpoint_every: 250,
            seed: 1337,
            distill: None,
            init: None,
        }
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// [`Error::Training`] naming the bad setting, [`Error::BadConfig`] for the shape.
    pub fn validate(&self) -> Result<()> {
        self.model.validate()?;
        let bad = |m: &str| Err(Error::Training(m.into()));
        if self.batch_size == 0 || self.context == 0 {
            return bad("batch size and context must be at least 1");
        }
        if self.context > self.model.max_seq {
            return bad("the context is longer than the model's positions");
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return bad("the learning rate must be positive");
        }
        if !(0.0..=self.learning_rate).contains(&self.min_learning_rate) {
            return bad("the minimum learning rate must be in [0, learning rate]");
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return bad("dropout must be in [0, 1)");
        }
        if !(self.weight_decay >= 0.0 && self.grad_clip > 0.0) {
            return bad("weight decay must be >= 0 and the gradient clip > 0");
        }
        if self.eval_every == 0 || self.checkpoint_every == 0 || self.eval_batches == 0 {
            return bad("evaluation and checkpoint intervals must be at least 1");
        }
        self.distill
            .as_ref()
            .map_or(Ok(()), DistillConfig::validate)
    }

    /// The learning rate at `step`: linear warm-up, then cosine decay to the minimum.
    #[must_use]
    pub fn learning_rate_at(&self, step: u64) -> f64 {
        if step < self.warmup_steps {
            return self.learning_rate * (step + 1) as f64 / self.warmup_steps as f64;
        }
        let span = self.steps.saturating_sub(self.warmup_steps).max(1) as f64;
        let progress = ((step - self.warmup_steps) as f64 / span).min(1.0);
        let cosine = 0.5 * (1.0 + (std::f64::consts::PI * progress).cos());
        self.min_learning_rate + (self.learning_rate - self.min_learning_rate) * cosine
    }
}

/// One evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LossPoint {
    /// Steps done when evaluated.
    pub step: u64,
    /// Training tokens seen.
    pub tokens_seen: u64,
    /// Mean cross-entropy on fixed training batches (nats per character).
    pub train_loss: f64,
    /// Mean cross-entropy on fixed validation batches.
    pub val_loss: f64,
    /// Training wall time so far (all sessions), seconds.
    pub elapsed_secs: f64,
    /// The learning rate at this step.
    pub learning_rate: f64,
}

/// Progress of a run, saved in every checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainState {
    /// The settings.
    pub config: TrainConfig,
    /// Steps done.
    pub step: u64,
    /// Training tokens seen.
    pub tokens_seen: u64,
    /// Training wall time so far (all sessions), seconds.
    pub elapsed_secs: f64,
    /// Every evaluation so far.
    pub history: Vec<LossPoint>,
}

/// What the loop reports. Every method has a default that does nothing.
pub trait Observer {
    /// After each step: the batch loss and the throughput since this run (re)started.
    fn step(&mut self, _state: &TrainState, _loss: f64, _tokens_per_sec: f64) {}
    /// After each evaluation.
    fn eval(&mut self, _state: &TrainState, _point: &LossPoint) {}
    /// While the teacher's distributions are computed: windows done of all.
    fn teacher(&mut self, _done: usize, _windows: usize) {}
    /// After a checkpoint was written to `dir`.
    fn checkpoint(&mut self, _state: &TrainState, _dir: &Path) {}
    /// Asked before each step; `true` ends the run early (a checkpoint is written).
    fn should_stop(&mut self) -> bool {
        false
    }
}

/// A no-op observer.
impl Observer for () {}
