//! A plain, resumable training loop: AdamW on an autodiff device, warm-up then cosine
//! learning rate, seeded batches (batch `i` is the same after a resume), periodic
//! evaluation on fixed train/validation batches, and checkpoints holding the f32 weights,
//! the optimiser state and the loss history.
//!
//! Presentation (progress bar, CSV, plot) is the caller's, through [`Observer`].

mod init_from;

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::grad_clipping::GradientClippingConfig;
use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::activation::log_softmax;
use burn::tensor::{DType, Device, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use crate::config::{ModelConfig, ModelRole};
use crate::data::{self, Corpus, Split};
use crate::distill::{DistillConfig, TeacherTable};
use crate::error::{Error, Result};
use crate::transformer::Gpt;
use crate::weights::{ModelBundle, TrainingRecord, WeightSource, load_model, model_bytes};
pub use init_from::InitRecord;

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

/// A training run in progress.
pub struct Trainer {
    corpus: Corpus,
    state: TrainState,
    model: Gpt,
    optim: ModuleOptimizer,
    device: Device,
    dir: PathBuf,
    /// The teacher's distributions, computed at the first distilled step.
    teacher: Option<TeacherTable>,
}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("state", &self.state)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// Burnpack `bytes` as a model to train under `config` on the autodiff `device`.
fn trainable_model(config: &TrainConfig, bytes: &[u8], device: &Device) -> Result<Gpt> {
    let model = load_model(&config.model, bytes, device)?;
    // load_model builds without dropout; rebuild the dropout layers by reloading into a
    // fresh module with the configured rate.
    let fresh = Gpt::new(&config.model, 0, config.dropout, device)?;
    Ok(fresh.load_record(model.into_record()).train())
}

fn optimizer(config: &TrainConfig) -> ModuleOptimizer {
    AdamWConfig::new()
        .with_beta_2(0.99)
        .with_weight_decay(config.weight_decay as f32)
        .with_grad_clipping(Some(GradientClippingConfig::Norm(config.grad_clip as f32)))
        .init()
}

const CHECKPOINT: &str = "checkpoint";

impl Trainer {
    /// A fresh run writing to `dir` (checkpoints in `dir/checkpoint`).
    ///
    /// # Errors
    /// [`Error::Training`] when `dir` already holds a checkpoint (resume it instead) or a
    /// setting is bad; [`Error::BadConfig`] when the vocabulary differs from the corpus.
    pub fn start(corpus: Corpus, config: TrainConfig, dir: &Path, device: &Device) -> Result<Self> {
        config.validate()?;
        if config.model.vocab_size != corpus.tokenizer.vocab_size() {
            return Err(Error::BadConfig(format!(
                "the model has {} tokens but the corpus {} characters",
                config.model.vocab_size,
                corpus.tokenizer.vocab_size()
            )));
        }
        if dir.join(CHECKPOINT).join("state.json").exists() {
            return Err(Error::Training(format!(
                "{} already holds a checkpoint; resume it or choose another directory",
                dir.display()
            )));
        }
        let device = device.clone().autodiff();
        let model = Gpt::new(&config.model, config.seed, config.dropout, &device)?;
        Ok(Self {
            optim: optimizer(&config),
            state: TrainState {
                config,
                step: 0,
                tokens_seen: 0,
                elapsed_secs: 0.0,
                history: Vec::new(),
            },
            corpus,
            model,
            device,
            dir: dir.to_path_buf(),
            teacher: None,
        })
    }

    /// Continues the run checkpointed in `dir`, optionally raising its total steps.
    ///
    /// # Errors
    /// [`Error::Io`], [`Error::Weights`] for an unreadable checkpoint, [`Error::Training`]
    /// for a lower step total.
    pub fn resume(corpus: Corpus, dir: &Path, steps: Option<u64>, device: &Device) -> Result<Self> {
        let ck = dir.join(CHECKPOINT);
        let state_path = ck.join("state.json");
        let text = std::fs::read_to_string(&state_path).map_err(|e| Error::io(&state_path, e))?;
        let mut state: TrainState =
            serde_json::from_str(&text).map_err(|e| Error::Weights(e.to_string()))?;
        if let Some(steps) = steps {
            if steps < state.step {
                return Err(Error::Training(format!(
                    "the run already took {} steps; --steps {steps} is fewer",
                    state.step
                )));
            }
            state.config.steps = steps;
        }
        let device = device.clone().autodiff();
        let model_path = ck.join("model.bpk");
        let bytes = std::fs::read(&model_path).map_err(|e| Error::io(&model_path, e))?;
        let model = trainable_model(&state.config, &bytes, &device)?;
        let optim_path = ck.join("optim.bpk");
        let optim = optimizer(&state.config)
            .load(&optim_path)
            .map_err(|e| Error::Weights(format!("{}: {e}", optim_path.display())))?;
        Ok(Self {
            corpus,
            state,
            model,
            optim,
            device,
            dir: dir.to_path_buf(),
            teacher: None,
        })
    }

    /// Distils from `teacher` from the current step on: the loss becomes `weight` × the
    /// cross-entropy against the teacher's distribution plus (1 − `weight`) × the corpus
    /// cross-entropy, on windows starting every `stride` characters. A run that already
    /// distils keeps its settings; asking for the same ones again is allowed.
    ///
    /// # Errors
    /// [`Error::Training`] for bad settings or different ones than the run's, and the
    /// errors of loading the teacher.
    pub fn distill(&mut self, teacher: WeightSource, weight: f64, stride: usize) -> Result<()> {
        let sha = teacher.load(ModelRole::Target)?.meta.weights_sha256;
        let wanted = DistillConfig {
            teacher,
            teacher_sha256: sha,
            weight,
            stride,
            from_step: self.state.step,
        };
        wanted.validate()?;
        match &self.state.config.distill {
            None => {
                self.state.config.distill = Some(wanted);
                Ok(())
            }
            Some(have)
                if have.teacher_sha256 == wanted.teacher_sha256
                    && have.weight == wanted.weight
                    && have.stride == wanted.stride =>
            {
                Ok(())
            }
            Some(have) => Err(Error::Training(format!(
                "the run already distils from {:?} (weights sha256 {}, weight {}, stride {})",
                have.teacher, have.teacher_sha256, have.weight, have.stride
            ))),
        }
    }

    /// The progress so far.
    #[must_use]
    pub fn state(&self) -> &TrainState {
        &self.state
    }

    /// Runs until the configured steps are done or `observer` asks to stop, evaluating and
    /// checkpointing on schedule and once more at the end.
    ///
    /// # Errors
    /// Batching errors ([`Error::Training`]), checkpoint errors.
    pub fn run(&mut self, observer: &mut dyn Observer) -> Result<()> {
        let session = Instant::now();
        let session_start_tokens = self.state.tokens_seen;
        let base_elapsed = self.state.elapsed_secs;
        let mut last_checkpoint = self.state.step;
        while self.state.step < self.state.config.steps && !observer.should_stop() {
            self.prepare_teacher(observer)?;
            let loss = self.step()?;
            self.state.elapsed_secs = base_elapsed + session.elapsed().as_secs_f64();
            let rate = (self.state.tokens_seen - session_start_tokens) as f64
                / session.elapsed().as_secs_f64().max(1e-9);
            observer.step(&self.state, loss, rate);
            let step = self.state.step;
            if step.is_multiple_of(self.state.config.eval_every) {
                let point = self.evaluate()?;
                observer.eval(&self.state, &point);
            }
            if step.is_multiple_of(self.state.config.checkpoint_every) {
                self.save_checkpoint()?;
                last_checkpoint = step;
                observer.checkpoint(&self.state, &self.dir.join(CHECKPOINT));
            }
        }
        if self.state.history.last().map(|p| p.step) != Some(self.state.step) {
            let point = self.evaluate()?;
            observer.eval(&self.state, &point);
        }
        if last_checkpoint != self.state.step || !self.dir.join(CHECKPOINT).exists() {
            self.save_checkpoint()?;
            observer.checkpoint(&self.state, &self.dir.join(CHECKPOINT));
        }
        Ok(())
    }

    /// The distillation settings when the next step is distilled.
    fn distilling(&self) -> Option<&DistillConfig> {
        let d = self.state.config.distill.as_ref()?;
        (self.state.step >= d.from_step).then_some(d)
    }

    /// Computes the teacher's table before the first distilled step of each (resumed) run.
    fn prepare_teacher(&mut self, observer: &mut dyn Observer) -> Result<()> {
        let Some(d) = self.distilling() else {
            return Ok(());
        };
        if self.teacher.is_some() {
            return Ok(());
        }
        let bundle = d.teacher.load(ModelRole::Target)?;
        if bundle.meta.weights_sha256 != d.teacher_sha256 {
            return Err(Error::Training(format!(
                "the teacher {:?} has changed since the run began distilling (sha256 {}, was {})",
                d.teacher, bundle.meta.weights_sha256, d.teacher_sha256
            )));
        }
        let table = TeacherTable::compute(
            &bundle,
            &self.corpus.tokenizer,
            &self.corpus.train,
            self.state.config.context,
            d.stride,
            &self.device.clone().inner(),
            &mut |done, all| observer.teacher(done, all),
        )?;
        self.teacher = Some(table);
        Ok(())
    }

    /// One optimiser step; returns the batch loss.
    fn step(&mut self) -> Result<f64> {
        let c = &self.state.config;
        let step = self.state.step;
        let lr = c.learning_rate_at(step);
        self.device.seed(c.seed.wrapping_add(step));
        let loss = match (self.distilling(), &self.teacher) {
            (Some(d), Some(table)) => {
                let (b, probs) = table.batch(&self.corpus.train, c.batch_size, c.seed, step)?;
                distill_loss(&self.model, &b, probs, d.weight, &self.device)
            }
            (Some(_), None) => {
                return Err(Error::Training(
                    "the teacher's table was not computed before a distilled step".into(),
                ));
            }
            (None, _) => {
                let b = data::batch(&self.corpus.train, c.batch_size, c.context, c.seed, step)?;
                loss(&self.model, &b, &self.device)
            }
        };
        let value = scalar(loss.clone())?;
        let grads = GradientsParams::from_grads(loss.backward(), &self.model);
        self.model = self.optim.step(lr, self.model.clone(), grads);
        self.state.step += 1;
        self.state.tokens_seen += (c.batch_size * c.context) as u64;
        Ok(value)
    }

    /// Mean loss on fixed batches of both splits (the same batches every time).
    ///
    /// # Errors
    /// [`Error::Training`] when a split is shorter than one window.
    pub fn evaluate(&mut self) -> Result<LossPoint> {
        let c = &self.state.config;
        let model = self.model.valid();
        let device = self.device.clone().inner();
        let mut means = [0.0; 2];
        for (mean, split) in means.iter_mut().zip([Split::Train, Split::Val]) {
            let mut total = 0.0;
            for i in 0..c.eval_batches {
                // Indices far from any training step keep evaluation batches distinct.
                let index = u64::MAX - i as u64;
                let b = data::batch(
                    self.corpus.part(split),
                    c.batch_size,
                    c.context,
                    c.seed,
                    index,
                )?;
                total += scalar(loss(&model, &b, &device))?;
            }
            *mean = total / c.eval_batches as f64;
        }
        let point = LossPoint {
            step: self.state.step,
            tokens_seen: self.state.tokens_seen,
            train_loss: means[0],
            val_loss: means[1],
            elapsed_secs: self.state.elapsed_secs,
            learning_rate: c.learning_rate_at(self.state.step),
        };
        self.state.history.push(point.clone());
        Ok(point)
    }

    /// Writes `dir/checkpoint/{model.bpk, optim.bpk, state.json}` (via a temporary
    /// directory, so an interrupted write leaves the previous checkpoint intact) and the
    /// f16 bundle in `dir/export/`.
    ///
    /// # Errors
    /// [`Error::Io`], [`Error::Weights`].
    pub fn save_checkpoint(&self) -> Result<()> {
        let tmp = self.dir.join("checkpoint.tmp");
        let ck = self.dir.join(CHECKPOINT);
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let model_path = tmp.join("model.bpk");
        std::fs::write(&model_path, model_bytes(&self.model, DType::F32)?)
            .map_err(|e| Error::io(&model_path, e))?;
        let optim_path = tmp.join("optim.bpk");
        self.optim
            .save(&optim_path)
            .map_err(|e| Error::Weights(format!("{}: {e}", optim_path.display())))?;
        let state_path = tmp.join("state.json");
        let json =
            serde_json::to_string_pretty(&self.state).map_err(|e| Error::Weights(e.to_string()))?;
        std::fs::write(&state_path, json).map_err(|e| Error::io(&state_path, e))?;
        let old = self.dir.join("checkpoint.old");
        let _ = std::fs::remove_dir_all(&old);
        if ck.exists() {
            std::fs::rename(&ck, &old).map_err(|e| Error::io(&ck, e))?;
        }
        std::fs::rename(&tmp, &ck).map_err(|e| Error::io(&tmp, e))?;
        let _ = std::fs::remove_dir_all(&old);
        self.export()?.save_dir(&self.dir.join("export"))
    }

    /// The current weights as an f16 bundle with the training figures.
    ///
    /// # Errors
    /// [`Error::Weights`].
    pub fn export(&self) -> Result<ModelBundle> {
        let last = self.state.history.last();
        ModelBundle::from_model(
            &self.model,
            self.state.config.role,
            self.state.config.model,
            self.corpus.tokenizer.clone(),
            Some(TrainingRecord {
                steps: self.state.step,
                tokens_seen: self.state.tokens_seen,
                train_loss: last.map(|p| p.train_loss),
                val_loss: last.map(|p| p.val_loss),
                seed: self.state.config.seed,
            }),
        )
    }
}

/// Mean next-token cross-entropy of `model` on `batch`, in nats.
fn loss(model: &Gpt, batch: &data::Batch, device: &Device) -> Tensor<1> {
    let (log_probs, targets) = log_probs_and_targets(model, batch, device);
    log_probs.gather(1, targets).neg().mean()
}

/// `weight` × the mean cross-entropy of `model` against the teacher's probabilities
/// (`batch × len × vocab`) plus (1 − `weight`) × the corpus cross-entropy, in nats.
fn distill_loss(
    model: &Gpt,
    batch: &data::Batch,
    teacher: Vec<f32>,
    weight: f64,
    device: &Device,
) -> Tensor<1> {
    let (log_probs, targets) = log_probs_and_targets(model, batch, device);
    let [n, vocab] = log_probs.dims();
    let teacher = Tensor::<2>::from_data(TensorData::new(teacher, [n, vocab]), device);
    let soft = (log_probs.clone() * teacher).sum_dim(1).neg().mean();
    let hard = log_probs.gather(1, targets).neg().mean();
    soft * weight + hard * (1.0 - weight)
}

/// The model's log-probabilities on `batch` (`[rows × len, vocab]`) and the next tokens
/// (`[rows × len, 1]`).
fn log_probs_and_targets(
    model: &Gpt,
    batch: &data::Batch,
    device: &Device,
) -> (Tensor<2>, Tensor<2, Int>) {
    let to_tensor = |tokens: &[u32]| -> Vec<i64> { tokens.iter().map(|&t| i64::from(t)).collect() };
    let inputs = Tensor::<2, Int>::from_data(
        TensorData::new(to_tensor(&batch.inputs), [batch.batch, batch.len]),
        device,
    );
    let n = batch.batch * batch.len;
    let targets =
        Tensor::<2, Int>::from_data(TensorData::new(to_tensor(&batch.targets), [n, 1]), device);
    let logits = model.forward(inputs);
    let vocab = logits.dims()[2];
    (log_softmax(logits.reshape([n, vocab]), 1), targets)
}

fn scalar(t: Tensor<1>) -> Result<f64> {
    t.try_into_scalar::<f32>()
        .map(f64::from)
        .map_err(|e| Error::Training(format!("reading the loss: {e:?}")))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Backend;
    use specula_core::{Distribution, SamplingConfig, kl_divergence};

    const TEXT: &str = "the cat sat on the mat; a dog ate the hat. ";

    pub(crate) fn corpus() -> Corpus {
        Corpus::from_text(&TEXT.repeat(30)).unwrap()
    }

    pub(crate) fn tiny(vocab: usize, d_model: usize, seed: u64) -> TrainConfig {
        let mut c = TrainConfig::for_role(ModelRole::Draft, vocab);
        c.model.d_model = d_model;
        c.model.d_ff = 4 * d_model;
        c.model.n_heads = 2;
        c.model.n_layers = 1;
        c.model.max_seq = 16;
        c.context = 16;
        c.batch_size = 4;
        c.warmup_steps = 5;
        c.eval_every = 1000;
        c.checkpoint_every = 1000;
        c.eval_batches = 1;
        c.seed = seed;
        c
    }

    pub(crate) fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("specula-train-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn close(a: Tensor<1>, b: f64) -> bool {
        (scalar(a).unwrap() - b).abs() < 1e-4
    }

    #[test]
    fn distill_loss_mixes_the_soft_and_the_hard_cross_entropy() {
        let corpus = corpus();
        let device = Backend::Cpu.device().unwrap();
        let config = tiny(corpus.tokenizer.vocab_size(), 16, 5);
        let model = Gpt::new(&config.model, 5, 0.0, &device).unwrap();
        let b = data::batch(&corpus.train, 2, 8, 1, 0).unwrap();
        let vocab = config.model.vocab_size;
        let hard = scalar(loss(&model, &b, &device)).unwrap();
        let one_hot: Vec<f32> = b
            .targets
            .iter()
            .flat_map(|&t| (0..vocab).map(move |v| if v == t as usize { 1.0 } else { 0.0 }))
            .collect();
        let uniform = vec![1.0 / vocab as f32; one_hot.len()];
        // A one-hot teacher on the next characters is the corpus loss; weight 0 ignores it.
        assert!(close(distill_loss(&model, &b, one_hot, 1.0, &device), hard));
        assert!(close(
            distill_loss(&model, &b, uniform.clone(), 0.0, &device),
            hard
        ));
        // A uniform teacher scores the mean of −log p over the whole alphabet.
        let (log_probs, _) = log_probs_and_targets(&model, &b, &device);
        let all: Vec<f32> = log_probs.into_data().try_into_vec::<f32>().unwrap();
        let expected = -all.iter().map(|&x| f64::from(x)).sum::<f64>() / all.len() as f64;
        assert!(close(
            distill_loss(&model, &b, uniform.clone(), 1.0, &device),
            expected
        ));
        let mixed = 0.25 * expected + 0.75 * hard;
        assert!(close(
            distill_loss(&model, &b, uniform, 0.25, &device),
            mixed
        ));
    }

    /// Mean KL(teacher ‖ student) over the first 20 windows of 16 training characters.
    fn kl_to_teacher(trainer: &Trainer, teacher: &ModelBundle) -> f64 {
        let device = Backend::Cpu.device().unwrap();
        let student = trainer.export().unwrap().build(&device).unwrap();
        let teacher = teacher.build(&device).unwrap();
        let vocab = teacher.config().vocab_size;
        let probs =
            |logits: &[f32]| Distribution::from_logits(logits, &SamplingConfig::default()).unwrap();
        let (mut kl, mut rows) = (0.0, 0);
        for window in trainer.corpus.train.chunks_exact(16).take(20) {
            let t = teacher.logits_uncached(window).unwrap();
            let s = student.logits_uncached(window).unwrap();
            for (t, s) in t.chunks(vocab).zip(s.chunks(vocab)) {
                kl += kl_divergence(probs(t).probs(), probs(s).probs());
                rows += 1;
            }
        }
        kl / f64::from(rows)
    }

    /// burn seeds one random generator per backend, shared by every thread: training
    /// runs in tests that run side by side would draw each other's dropout masks.
    static TRAINING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_distilled_run_moves_the_student_towards_the_teacher_and_keeps_its_settings() {
        let _alone = TRAINING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let corpus = corpus();
        let device = Backend::Cpu.device().unwrap();
        let vocab = corpus.tokenizer.vocab_size();
        // The teacher: a different random model, exported where the run can find it.
        let teacher_config = tiny(vocab, 24, 77).model;
        let teacher_model = Gpt::new(&teacher_config, 77, 0.0, &device).unwrap();
        let teacher = ModelBundle::from_model(
            &teacher_model,
            ModelRole::Target,
            teacher_config,
            corpus.tokenizer.clone(),
            None,
        )
        .unwrap();
        let teacher_dir = scratch("teacher");
        teacher.save_dir(&teacher_dir).unwrap();
        let teacher = ModelBundle::load_dir(&teacher_dir, ModelRole::Target).unwrap();

        let run_dir = scratch("student");
        let mut config = tiny(vocab, 16, 3);
        config.steps = 60;
        let mut trainer = Trainer::start(corpus, config, &run_dir, &device).unwrap();
        let source = WeightSource::Dir(teacher_dir.clone());
        trainer.distill(source.clone(), 1.0, 8).unwrap();
        let before = kl_to_teacher(&trainer, &teacher);
        trainer.run(&mut ()).unwrap();
        let after = kl_to_teacher(&trainer, &teacher);
        assert!(after < 0.5 * before, "KL {before} → {after}");

        // The settings are saved with the run; a resumed run refuses others.
        let d = trainer.state().config.distill.clone().unwrap();
        assert_eq!((d.from_step, d.stride, &d.teacher), (0, 8, &source));
        let mut resumed =
            Trainer::resume(super::tests::corpus(), &run_dir, Some(70), &device).unwrap();
        assert_eq!(resumed.state().config.distill, Some(d));
        assert!(resumed.distill(source.clone(), 1.0, 8).is_ok());
        assert!(matches!(
            resumed.distill(source, 0.5, 8),
            Err(Error::Training(_))
        ));
        let _ = std::fs::remove_dir_all(&teacher_dir);
        let _ = std::fs::remove_dir_all(&run_dir);
    }

    /// Records each step's training loss.
    #[derive(Default)]
    struct Losses(Vec<f64>);

    impl Observer for Losses {
        fn step(&mut self, _state: &TrainState, loss: f64, _tokens_per_sec: f64) {
            self.0.push(loss);
        }
    }

    /// The f32 logits of the checkpointed model on the first windows of training text
    /// (the checkpoint files themselves differ: burn gives parameters random ids).
    fn checkpoint_logits(dir: &Path, trainer: &Trainer) -> Vec<f32> {
        let device = Backend::Cpu.device().unwrap();
        let config = trainer.state().config.model;
        let bytes = std::fs::read(dir.join(CHECKPOINT).join("model.bpk")).unwrap();
        let model = load_model(&config, &bytes, &device).unwrap();
        let lm = crate::BurnLm::new(model, config, device).unwrap();
        let windows = trainer.corpus.train.chunks_exact(16).take(4);
        windows
            .flat_map(|w| lm.logits_uncached(w).unwrap())
            .collect()
    }

    #[test]
    fn a_resumed_run_takes_the_same_steps_as_an_uninterrupted_one() {
        let _alone = TRAINING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let device = Backend::Cpu.device().unwrap();
        let mut config = tiny(corpus().tokenizer.vocab_size(), 16, 9);
        config.dropout = 0.1; // the dropout masks must repeat too
        config.steps = 12;
        let straight_dir = scratch("straight");
        let mut straight =
            Trainer::start(corpus(), config.clone(), &straight_dir, &device).unwrap();
        let mut straight_losses = Losses::default();
        straight.run(&mut straight_losses).unwrap();

        let split_dir = scratch("split");
        config.steps = 5;
        let mut first = Trainer::start(corpus(), config, &split_dir, &device).unwrap();
        let mut split_losses = Losses::default();
        first.run(&mut split_losses).unwrap();
        let after_five = checkpoint_logits(&split_dir, &first);
        drop(first);
        let mut second = Trainer::resume(corpus(), &split_dir, Some(12), &device).unwrap();
        assert_eq!(second.state().step, 5);
        second.run(&mut split_losses).unwrap();

        assert_eq!(split_losses.0.len(), 12);
        assert_eq!(split_losses.0, straight_losses.0);
        assert_eq!(second.state().tokens_seen, straight.state().tokens_seen);
        // Bit for bit: the losses above cover the optimiser's restored moments, these the
        // weights after the last step.
        let resumed = checkpoint_logits(&split_dir, &second);
        assert!(resumed == checkpoint_logits(&straight_dir, &straight));
        assert!(
            resumed != after_five,
            "the last 7 steps left the weights as they were"
        );
        let _ = std::fs::remove_dir_all(&straight_dir);
        let _ = std::fs::remove_dir_all(&split_dir);
    }
}
