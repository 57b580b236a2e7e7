//! `specula train`: trains the draft or the target model on the corpus, resumably.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::ProgressBar;
use specula_engine::options::RealRange;
use specula_model::{Backend, ModelRole, WeightSource, sha256_hex};
use specula_train::data::{Corpus, TINY_SHAKESPEARE_SHA256};
use specula_train::{LossPoint, Observer, TrainConfig, TrainState, Trainer};

use crate::error::CliError;
use crate::parse;
use crate::plot;
use crate::progress;

/// Flags of `specula train`, as typed.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Which model: draft or target.
    #[arg(long, value_name = "ROLE", allow_hyphen_values = true)]
    pub role: String,
    /// The corpus (fetch it with scripts/fetch-corpus.sh).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "data/tinyshakespeare.txt",
        allow_hyphen_values = true
    )]
    pub corpus: PathBuf,
    /// Run directory: checkpoint/, export/ (f16 bundle), loss.csv, loss.svg.
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub out: Option<PathBuf>,
    /// Continue the run in --out from its checkpoint (settings come from the checkpoint).
    #[arg(long)]
    pub resume: bool,
    /// Total optimiser steps (with --resume: the new total).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub steps: Option<String>,
    /// Sequences per batch.
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub batch: Option<String>,
    /// Tokens per sequence.
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub context: Option<String>,
    /// Peak learning rate.
    #[arg(long, value_name = "LR", allow_hyphen_values = true)]
    pub lr: Option<String>,
    /// Dropout.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub dropout: Option<String>,
    /// Model width (overrides the role's shape).
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub d_model: Option<String>,
    /// Transformer blocks.
    #[arg(long, value_name = "L", allow_hyphen_values = true)]
    pub layers: Option<String>,
    /// Attention heads.
    #[arg(long, value_name = "H", allow_hyphen_values = true)]
    pub heads: Option<String>,
    /// Evaluate (and write loss.csv / loss.svg) every N steps.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub eval_every: Option<String>,
    /// Checkpoint every N steps.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub checkpoint_every: Option<String>,
    /// Seed of initialisation, batches and dropout.
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub seed: Option<String>,
    /// CPU threads for burn (default 1, to leave the machine usable).
    #[arg(
        long,
        value_name = "N",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub threads: String,
    /// Stop (with a checkpoint) after this many minutes; resume later.
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub max_minutes: Option<String>,
    /// Start a new run from trained weights of its role instead of a seeded
    /// initialisation: `bundled` (the embedded model) or a run's export/ directory.
    #[arg(long, value_name = "WEIGHTS", allow_hyphen_values = true)]
    pub init_from: Option<String>,
    /// Distil from a teacher: `bundled` (the embedded target) or a directory holding
    /// target.json and target.bpk (a run's export/). With --resume, from the next step on.
    #[arg(long, value_name = "TEACHER", allow_hyphen_values = true)]
    pub distill_from: Option<String>,
    /// Share of the teacher's loss; the rest is the corpus cross-entropy (default 1).
    #[arg(long, value_name = "W", allow_hyphen_values = true)]
    pub distill_weight: Option<String>,
    /// Characters between the starts of the teacher's windows (default: half the context).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub distill_stride: Option<String>,
    /// Hide the progress bar (log one line per evaluation instead).
    #[arg(long)]
    pub quiet: bool,
}

/// `train`'s flags, checked (the shape flags against a stand-in vocabulary: the
/// corpus gives the real one).
pub struct TrainSettings {
    role: ModelRole,
    threads: usize,
    max_minutes: Option<f64>,
    steps: Option<u64>,
    out: PathBuf,
    distill: Option<DistillFlags>,
}

/// Checks every flag, before the corpus is read or a model built.
///
/// # Errors
/// A usage error naming the first bad flag.
pub fn check(args: &TrainArgs) -> Result<TrainSettings, CliError> {
    let role = match parse::choice("--role", &args.role, &["draft", "target"])? {
        "draft" => ModelRole::Draft,
        _ => ModelRole::Target,
    };
    let threads = parse::uint("--threads", &args.threads, 1_usize, 256)?;
    let max_minutes = args
        .max_minutes
        .as_deref()
        .map(|m| parse::float("--max-minutes", m, RealRange::closed(0.0, 1e6)))
        .transpose()?;
    let steps = args
        .steps
        .as_deref()
        .map(|s| parse::uint("--steps", s, 1_u64, 100_000_000))
        .transpose()?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("runs/{}", role.name())));
    if args.resume {
        reject_shape_flags(args)?;
        if args.init_from.is_some() {
            return Err(CliError::usage(
                "--init-from starts a new run; a resumed run keeps its own weights",
            ));
        }
    }
    let distill = distill_flags(args)?;
    if !args.resume {
        // Every flag value is checked before the corpus, so a bad value is reported
        // first whatever file --corpus names (the vocabulary here is a stand-in).
        config_from_flags(args, role, 1, steps)?;
    }
    Ok(TrainSettings {
        role,
        threads,
        max_minutes,
        steps,
        out,
        distill,
    })
}

/// Runs `specula train`.
///
/// # Errors
/// Usage errors for bad flags or a corpus that fails its checksum; failures for I/O.
pub fn run(args: TrainArgs) -> Result<(), CliError> {
    let TrainSettings {
        role,
        threads,
        max_minutes,
        steps,
        out,
        distill,
    } = check(&args)?;
    let corpus = load_corpus(&args.corpus)?;
    specula_model::set_cpu_threads(threads).map_err(|e| CliError::failure(e.to_string()))?;
    let device = Backend::Cpu
        .device()
        .map_err(|e| CliError::failure(e.to_string()))?;
    let mut trainer = if args.resume {
        Trainer::resume(corpus, &out, steps, &device)
    } else {
        let config = config_from_flags(&args, role, corpus.tokenizer.vocab_size(), steps)?;
        Trainer::start(corpus, config, &out, &device)
    }
    .map_err(|e| CliError::usage(e.to_string()))?;
    if let Some(init) = args.init_from.as_deref() {
        trainer
            .init_from(WeightSource::from_flag(init))
            .map_err(|e| CliError::usage(format!("--init-from: {e}")))?;
    }
    if let Some(flags) = distill {
        // Flags left out keep a distilling run's settings, else take the defaults.
        let run = trainer.state().config.distill.as_ref();
        let weight = flags.weight.or(run.map(|d| d.weight)).unwrap_or(1.0);
        let stride = flags
            .stride
            .or(run.map(|d| d.stride))
            .unwrap_or(trainer.state().config.context.div_ceil(2));
        trainer
            .distill(flags.teacher, weight, stride)
            .map_err(|e| CliError::usage(format!("--distill-from: {e}")))?;
    }
    let mut observer = Progress::new(&out, trainer.state(), args.quiet, max_minutes);
    trainer
        .run(&mut observer)
        .map_err(|e| CliError::failure(e.to_string()))?;
    observer.finish(trainer.state());
    Ok(())
}

/// The largest corpus `--corpus` reads. The corpus must be Tiny Shakespeare (1,115,394
/// bytes, checked by its digest), so a file many times its size cannot be it and is
/// refused before it fills memory.
pub const MAX_CORPUS_BYTES: u64 = 16 << 20;

/// The corpus at `path`: a regular file of at most [`MAX_CORPUS_BYTES`] with Tiny
/// Shakespeare's digest.
///
/// # Errors
/// A usage error saying why it is not.
pub fn load_corpus(path: &Path) -> Result<Corpus, CliError> {
    let bytes = parse::read_regular_file(path, MAX_CORPUS_BYTES).map_err(|e| {
        CliError::usage(format!(
            "cannot read the corpus {}: {e}; run scripts/fetch-corpus.sh first",
            path.display()
        ))
    })?;
    let digest = sha256_hex(&bytes);
    if digest != TINY_SHAKESPEARE_SHA256 {
        return Err(CliError::usage(format!(
            "{} is not Tiny Shakespeare (sha256 {digest}); run scripts/fetch-corpus.sh",
            path.display()
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::usage(format!("{} is not UTF-8 text", path.display())))?;
    Corpus::from_text(&text).map_err(|e| CliError::usage(e.to_string()))
}

/// `--distill-*` as given.
struct DistillFlags {
    teacher: WeightSource,
    weight: Option<f64>,
    stride: Option<usize>,
}

fn distill_flags(args: &TrainArgs) -> Result<Option<DistillFlags>, CliError> {
    let Some(teacher) = args.distill_from.as_deref() else {
        return match (&args.distill_weight, &args.distill_stride) {
            (Some(_), _) => Err(CliError::usage("--distill-weight needs --distill-from")),
            (_, Some(_)) => Err(CliError::usage("--distill-stride needs --distill-from")),
            _ => Ok(None),
        };
    };
    let weight = args
        .distill_weight
        .as_deref()
        .map(|w| parse::float("--distill-weight", w, RealRange::closed(0.0, 1.0)))
        .transpose()?;
    let stride = args
        .distill_stride
        .as_deref()
        .map(|s| parse::uint("--distill-stride", s, 1_usize, 1 << 24))
        .transpose()?;
    let teacher = WeightSource::from_flag(teacher);
    Ok(Some(DistillFlags {
        teacher,
        weight,
        stride,
    }))
}

fn reject_shape_flags(args: &TrainArgs) -> Result<(), CliError> {
    let given = [
        ("--batch", &args.batch),
        ("--context", &args.context),
        ("--lr", &args.lr),
        ("--dropout", &args.dropout),
        ("--d-model", &args.d_model),
        ("--layers", &args.layers),
        ("--heads", &args.heads),
        ("--eval-every", &args.eval_every),
        ("--checkpoint-every", &args.checkpoint_every),
        ("--seed", &args.seed),
    ];
    match given.iter().find(|(_, v)| v.is_some()) {
        Some((flag, _)) => Err(CliError::usage(format!(
            "{flag} cannot change a resumed run (its settings come from the checkpoint); only --steps can"
        ))),
        None => Ok(()),
    }
}

fn config_from_flags(
    args: &TrainArgs,
    role: ModelRole,
    vocab: usize,
    steps: Option<u64>,
) -> Result<TrainConfig, CliError> {
    let mut c = TrainConfig::for_role(role, vocab);
    if let Some(s) = steps {
        c.steps = s;
    }
    let u = |flag: &str, v: &Option<String>, max: usize| -> Result<Option<usize>, CliError> {
        v.as_deref()
            .map(|raw| parse::uint(flag, raw, 1, max))
            .transpose()
    };
    if let Some(b) = u("--batch", &args.batch, 4096)? {
        c.batch_size = b;
    }
    if let Some(d) = u("--d-model", &args.d_model, specula_model::MAX_D_MODEL)? {
        c.model.d_model = d;
        c.model.d_ff = 4 * d;
    }
    if let Some(l) = u("--layers", &args.layers, specula_model::MAX_LAYERS)? {
        c.model.n_layers = l;
    }
    if let Some(h) = u("--heads", &args.heads, specula_model::MAX_HEADS)? {
        c.model.n_heads = h;
    }
    if let Some(t) = u("--context", &args.context, specula_model::MAX_SEQ)? {
        c.context = t;
        c.model.max_seq = c.model.max_seq.max(t);
    }
    if let Some(lr) = args.lr.as_deref() {
        c.learning_rate = parse::float("--lr", lr, RealRange::closed(1e-6, 1.0))?;
        c.min_learning_rate = c.learning_rate / 10.0;
    }
    if let Some(p) = args.dropout.as_deref() {
        c.dropout = parse::float("--dropout", p, RealRange::closed(0.0, 0.9))?;
    }
    let every = |flag: &str, v: &Option<String>| -> Result<Option<u64>, CliError> {
        v.as_deref()
            .map(|raw| parse::uint(flag, raw, 1_u64, 100_000_000))
            .transpose()
    };
    if let Some(e) = every("--eval-every", &args.eval_every)? {
        c.eval_every = e;
    }
    if let Some(e) = every("--checkpoint-every", &args.checkpoint_every)? {
        c.checkpoint_every = e;
    }
    if let Some(s) = args.seed.as_deref() {
        c.seed = parse::uint("--seed", s, 0_u64, u64::MAX)?;
    }
    c.validate().map_err(|e| CliError::usage(e.to_string()))?;
    Ok(c)
}

/// Progress bar, loss files and the time limit.
struct Progress {
    bar: ProgressBar,
    dir: PathBuf,
    title: String,
    quiet: bool,
    started: Instant,
    limit: Option<Duration>,
    last_val: Option<f64>,
}

impl Progress {
    fn new(dir: &Path, state: &TrainState, quiet: bool, max_minutes: Option<f64>) -> Self {
        let bar = progress::bar(
            state.config.steps,
            quiet,
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} steps, ETA {eta} {msg}",
        );
        bar.set_position(state.step);
        let m = &state.config.model;
        Self {
            bar,
            dir: dir.to_path_buf(),
            title: format!(
                "{} model: d={} layers={} heads={} ({:.2} M parameters)",
                state.config.role.name(),
                m.d_model,
                m.n_layers,
                m.n_heads,
                m.num_params() as f64 / 1e6
            ),
            quiet,
            started: Instant::now(),
            limit: max_minutes.map(|m| Duration::from_secs_f64(m * 60.0)),
            last_val: state.history.last().map(|p| p.val_loss),
        }
    }

    fn write_curves(&self, state: &TrainState) {
        // Losing a plot must not stop training; the checkpoint holds the history anyway.
        let _ = std::fs::create_dir_all(&self.dir);
        let _ = std::fs::write(self.dir.join("loss.csv"), plot::csv(&state.history));
        let _ = std::fs::write(
            self.dir.join("loss.svg"),
            plot::svg(&self.title, &state.history),
        );
    }

    fn finish(&self, state: &TrainState) {
        self.bar.finish_and_clear();
        if let Some(p) = state.history.last() {
            eprintln!(
                "{}: step {} of {}, train {:.4}, validation {:.4} nats/char; checkpoint in {}",
                self.title,
                state.step,
                state.config.steps,
                p.train_loss,
                p.val_loss,
                self.dir.join("checkpoint").display()
            );
        }
    }
}

impl Observer for Progress {
    fn step(&mut self, state: &TrainState, loss: f64, tokens_per_sec: f64) {
        self.bar.set_position(state.step);
        let val = self
            .last_val
            .map(|v| format!(", val {v:.3}"))
            .unwrap_or_default();
        self.bar
            .set_message(format!("loss {loss:.3}{val}, {tokens_per_sec:.0} tok/s"));
    }

    fn eval(&mut self, state: &TrainState, point: &LossPoint) {
        self.last_val = Some(point.val_loss);
        self.write_curves(state);
        if self.quiet {
            eprintln!(
                "step {}: train {:.4}, val {:.4}, {:.0} s",
                point.step, point.train_loss, point.val_loss, point.elapsed_secs
            );
        }
    }

    fn teacher(&mut self, done: usize, windows: usize) {
        if done == windows || !self.quiet {
            self.bar
                .set_message(format!("teacher's distributions: {done}/{windows} windows"));
        }
        if self.quiet && done == windows {
            eprintln!("teacher's distributions computed over {windows} windows");
        }
    }

    fn should_stop(&mut self) -> bool {
        self.limit.is_some_and(|l| self.started.elapsed() >= l)
    }
}
