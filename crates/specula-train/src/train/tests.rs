//! Tests of the training loop: distillation, resuming, and helpers for the tests of
//! `init_from`.

use super::*;
use specula_core::{Distribution, SamplingConfig, kl_divergence};
use specula_model::Backend;

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
    let mut resumed = Trainer::resume(super::tests::corpus(), &run_dir, Some(70), &device).unwrap();
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
    let lm = specula_model::BurnLm::new(model, config, device).unwrap();
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
    let mut straight = Trainer::start(corpus(), config.clone(), &straight_dir, &device).unwrap();
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
