//! A plain, resumable training loop: AdamW on an autodiff device, warm-up then cosine
//! learning rate, seeded batches (batch `i` is the same after a resume), periodic
//! evaluation on fixed train/validation batches, and checkpoints holding the f32 weights,
//! the optimiser state and the loss history.
//!
//! Presentation (progress bar, CSV, plot) is the caller's, through [`Observer`].

mod init_from;
mod state;
#[cfg(test)]
pub(crate) mod tests;

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::grad_clipping::GradientClippingConfig;
use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::activation::log_softmax;
use burn::tensor::{DType, Device, Int, Tensor, TensorData};

use crate::data::{self, Corpus, Split};
use crate::distill::{DistillConfig, TeacherTable};
pub use init_from::InitRecord;
use specula_model::Gpt;
use specula_model::ModelRole;
use specula_model::{Error, Result};
use specula_model::{ModelBundle, TrainingRecord, WeightSource, load_model, model_bytes};
pub use state::{LossPoint, Observer, TrainConfig, TrainState};

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
