//! Distillation targets: a teacher model's next-character distributions over fixed
//! windows of the training split, computed once per run and drawn in seeded batches.
//!
//! Speculative decoding accepts a drafted token with probability min(1, target/draft), so
//! the acceptance rate is 1 − TV(target, draft). Training the draft on the target's whole
//! distribution (soft labels) instead of the corpus' next character (hard labels) fits it
//! to what it is judged against (DistillSpec, Zhou et al. 2023).

use burn::tensor::activation::softmax;
use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::data::Batch;
use specula_model::CharTokenizer;
use specula_model::{Error, Result};
use specula_model::{ModelBundle, WeightSource, load_model};

/// Distillation settings, stored with the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DistillConfig {
    /// The teacher.
    pub teacher: WeightSource,
    /// SHA-256 of the teacher's weights when the run started distilling; a resumed run
    /// refuses a different teacher.
    pub teacher_sha256: String,
    /// Share of the soft (teacher) loss; the rest is the corpus cross-entropy.
    pub weight: f64,
    /// Steps from this one on are distilled (earlier ones of a resumed run were not).
    pub from_step: u64,
    /// Offset between consecutive teacher windows, in characters.
    pub stride: usize,
}

impl DistillConfig {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`Error::Training`] naming the bad setting.
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.weight) {
            return Err(Error::Training(
                "the distillation weight must be in [0, 1]".into(),
            ));
        }
        if self.stride == 0 {
            return Err(Error::Training(
                "the teacher's window stride must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// The teacher's probabilities at every position of fixed windows of a token stream.
#[derive(Debug, Clone)]
pub struct TeacherTable {
    context: usize,
    vocab: usize,
    starts: Vec<usize>,
    /// `starts.len() × context × vocab`, row-major.
    probs: Vec<f32>,
}

/// Windows per teacher forward pass.
const WINDOWS_PER_PASS: usize = 8;

impl TeacherTable {
    /// Runs `teacher` over windows of `context` tokens of `tokens` starting every
    /// `stride` characters, reporting `(windows done, windows)` to `progress`.
    ///
    /// # Errors
    /// [`Error::BadVocabulary`] when the teacher's alphabet is not `tokenizer`'s,
    /// [`Error::Training`] when the text is shorter than one window or the teacher's
    /// positions are fewer than `context`, and the errors of loading the weights.
    pub fn compute(
        teacher: &ModelBundle,
        tokenizer: &CharTokenizer,
        tokens: &[u32],
        context: usize,
        stride: usize,
        device: &Device,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Self> {
        if &teacher.meta.tokenizer != tokenizer {
            return Err(Error::BadVocabulary(
                "the teacher's alphabet differs from the corpus'".into(),
            ));
        }
        if teacher.meta.config.max_seq < context {
            return Err(Error::Training(format!(
                "the teacher sees {} positions, fewer than the context of {context}",
                teacher.meta.config.max_seq
            )));
        }
        if tokens.len() <= context || stride == 0 {
            return Err(Error::Training(format!(
                "{} tokens cannot fill a window of {}",
                tokens.len(),
                context + 1
            )));
        }
        let model = load_model(&teacher.meta.config, &teacher.weights, device)?;
        let vocab = teacher.meta.config.vocab_size;
        // Each window also needs the token after its last input (the hard label).
        let starts: Vec<usize> = (0..tokens.len() - context).step_by(stride).collect();
        let mut probs = Vec::with_capacity(starts.len() * context * vocab);
        for (pass, chunk) in starts.chunks(WINDOWS_PER_PASS).enumerate() {
            let inputs: Vec<i64> = chunk
                .iter()
                .flat_map(|&s| tokens[s..s + context].iter().map(|&t| i64::from(t)))
                .collect();
            let inputs = Tensor::<2, Int>::from_data(
                TensorData::new(inputs, [chunk.len(), context]),
                device,
            );
            let p = softmax(model.forward(inputs), 2)
                .try_into_data()
                .map_err(|e| Error::Training(format!("reading the teacher's output: {e:?}")))?
                .try_into_vec::<f32>()
                .map_err(|e| Error::Training(format!("reading the teacher's output: {e:?}")))?;
            probs.extend_from_slice(&p);
            progress(
                (pass * WINDOWS_PER_PASS + chunk.len()).min(starts.len()),
                starts.len(),
            );
        }
        Ok(Self {
            context,
            vocab,
            starts,
            probs,
        })
    }

    /// Windows in the table.
    #[must_use]
    pub fn windows(&self) -> usize {
        self.starts.len()
    }

    /// `batch` windows drawn with a generator seeded by `(seed, index)`, and the teacher's
    /// probabilities at each of their positions (`batch × context × vocab`).
    ///
    /// # Errors
    /// [`Error::Training`] for a batch of 0 or `tokens` that are not the table's.
    pub fn batch(
        &self,
        tokens: &[u32],
        batch: usize,
        seed: u64,
        index: u64,
    ) -> Result<(Batch, Vec<f32>)> {
        let last = self.starts.last().copied().unwrap_or(0);
        if batch == 0 || tokens.len() < last + self.context + 1 {
            return Err(Error::Training(
                "a distillation batch needs at least one window of the table's tokens".into(),
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let (len, row) = (self.context, self.context * self.vocab);
        let mut inputs = Vec::with_capacity(batch * len);
        let mut targets = Vec::with_capacity(batch * len);
        let mut probs = Vec::with_capacity(batch * row);
        for _ in 0..batch {
            let w = rng.random_range(0..self.starts.len());
            let s = self.starts[w];
            inputs.extend_from_slice(&tokens[s..s + len]);
            targets.extend_from_slice(&tokens[s + 1..=s + len]);
            probs.extend_from_slice(&self.probs[w * row..(w + 1) * row]);
        }
        Ok((
            Batch {
                batch,
                len,
                inputs,
                targets,
            },
            probs,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use specula_model::Gpt;
    use specula_model::{ModelConfig, ModelRole};

    fn tiny_teacher(tokenizer: &CharTokenizer) -> (ModelBundle, Gpt, Device) {
        let device = specula_model::Backend::Cpu.device().unwrap();
        let mut config = ModelConfig::for_role(ModelRole::Draft, tokenizer.vocab_size());
        config.d_model = 16;
        config.n_heads = 2;
        config.n_layers = 1;
        config.max_seq = 8;
        let model = Gpt::new(&config, 3, 0.0, &device).unwrap();
        let bundle =
            ModelBundle::from_model(&model, ModelRole::Target, config, tokenizer.clone(), None)
                .unwrap();
        (bundle, model, device)
    }

    #[test]
    fn table_holds_the_teachers_distributions_and_batches_are_reproducible() {
        let text = "the cat sat on the mat; ".repeat(4);
        let tokenizer = CharTokenizer::from_corpus(&text).unwrap();
        let tokens = tokenizer.encode(&text).unwrap();
        let (bundle, model, device) = tiny_teacher(&tokenizer);
        let mut reports = Vec::new();
        let table =
            TeacherTable::compute(&bundle, &tokenizer, &tokens, 6, 5, &device, &mut |d, n| {
                reports.push((d, n));
            })
            .unwrap();
        let windows = (tokens.len() - 6).div_ceil(5);
        assert_eq!(table.windows(), windows);
        assert_eq!(reports.last(), Some(&(windows, windows)));

        let (b, probs) = table.batch(&tokens, 3, 9, 4).unwrap();
        let (b2, probs2) = table.batch(&tokens, 3, 9, 4).unwrap();
        assert_eq!((&b, &probs), (&b2, &probs2));
        let vocab = tokenizer.vocab_size();
        for (w, window) in b.inputs.chunks(6).enumerate() {
            // The stored rows are the teacher's softmax on exactly this window, and the
            // targets are its next characters.
            let start = (0..tokens.len())
                .find(|&s| &tokens[s..s + 6] == window)
                .unwrap();
            assert_eq!(
                &b.targets[w * 6..(w + 1) * 6],
                &tokens[start + 1..start + 7]
            );
            let input = Tensor::<2, Int>::from_data(
                TensorData::new(window.iter().map(|&t| i64::from(t)).collect(), [1, 6]),
                &device,
            );
            let expected: Vec<f32> = softmax(model.forward(input), 2)
                .into_data()
                .try_into_vec::<f32>()
                .unwrap();
            let got = &probs[w * 6 * vocab..(w + 1) * 6 * vocab];
            for (g, e) in got.iter().zip(&expected) {
                assert!((g - e).abs() < 1e-5, "{g} vs {e}");
            }
            for row in got.chunks(vocab) {
                assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn a_teacher_with_another_alphabet_or_too_few_positions_is_refused() {
        let text = "abcabcabcabcabc";
        let tokenizer = CharTokenizer::from_corpus(text).unwrap();
        let tokens = tokenizer.encode(text).unwrap();
        let (bundle, _, device) = tiny_teacher(&tokenizer);
        let other = CharTokenizer::from_corpus("abcd").unwrap();
        let none = &mut |_, _| {};
        assert!(matches!(
            TeacherTable::compute(&bundle, &other, &tokens, 4, 4, &device, none),
            Err(Error::BadVocabulary(_))
        ));
        assert!(matches!(
            TeacherTable::compute(&bundle, &tokenizer, &tokens, 9, 4, &device, none),
            Err(Error::Training(_))
        ));
    }
}
