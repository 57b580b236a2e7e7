//! Starting a run from trained weights instead of a seeded initialisation, e.g. to
//! distil the bundled draft again from a new target without retraining it from scratch.

use serde::{Deserialize, Serialize};

use super::Trainer;
use specula_model::WeightSource;
use specula_model::{Error, Result};

/// The weights a run started from, kept with its settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InitRecord {
    /// Where they came from.
    pub source: WeightSource,
    /// SHA-256 of their bytes.
    pub weights_sha256: String,
    /// The steps they had been trained for, when their bundle says.
    pub steps: Option<u64>,
}

impl Trainer {
    /// Replaces the seeded initial weights of a run that has not taken a step yet with
    /// those of `source` (the optimiser starts afresh). The run records where they came
    /// from.
    ///
    /// # Errors
    /// [`Error::Training`] once the run has taken a step; [`Error::BadConfig`] when the
    /// weights have another shape or alphabet than the run; the errors of loading them.
    pub fn init_from(&mut self, source: WeightSource) -> Result<()> {
        if self.state.step > 0 {
            return Err(Error::Training(format!(
                "the run has taken {} steps; only a new run starts from other weights",
                self.state.step
            )));
        }
        let config = &self.state.config;
        let bundle = source.load(config.role)?;
        if bundle.meta.config != config.model {
            return Err(Error::BadConfig(format!(
                "the weights have the shape {:?} but the run {:?}",
                bundle.meta.config, config.model
            )));
        }
        if bundle.meta.tokenizer != self.corpus.tokenizer {
            return Err(Error::BadConfig(
                "the weights were trained on another alphabet than this corpus'".into(),
            ));
        }
        self.model = super::trainable_model(config, &bundle.weights, &self.device)?;
        self.state.config.init = Some(InitRecord {
            source,
            weights_sha256: bundle.meta.weights_sha256,
            steps: bundle.meta.training.map(|t| t.steps),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::train::tests::{corpus, scratch, tiny};
    use specula_model::{Backend, ModelBundle, ModelRole};

    #[test]
    fn a_run_started_from_an_export_begins_with_its_weights_and_records_them() {
        let device = Backend::Cpu.device().unwrap();
        let vocab = corpus().tokenizer.vocab_size();
        let mut config = tiny(vocab, 16, 3);
        config.steps = 4;
        let first_dir = scratch("init-first");
        let mut first = Trainer::start(corpus(), config.clone(), &first_dir, &device).unwrap();
        first.run(&mut ()).unwrap();
        let export = first.export().unwrap();

        // Another seed: without the weights the two would differ from the first step.
        config.seed = 4;
        let second_dir = scratch("init-second");
        let mut second = Trainer::start(corpus(), config.clone(), &second_dir, &device).unwrap();
        let window = &corpus().train[..16];
        let logits = |b: ModelBundle| b.build(&device).unwrap().logits_uncached(window).unwrap();
        assert_ne!(logits(second.export().unwrap()), logits(export.clone()));
        let source = WeightSource::Dir(first_dir.join("export"));
        second.init_from(source.clone()).unwrap();
        // Bit for bit: the export holds f16 values, which f32 represents exactly.
        assert_eq!(logits(second.export().unwrap()), logits(export.clone()));
        let record = second.state().config.init.clone().unwrap();
        assert_eq!(record.source, source);
        assert_eq!(record.weights_sha256, export.meta.weights_sha256);
        assert_eq!(record.steps, Some(4));

        // Once a step is taken, or for weights of another shape, it refuses.
        second.run(&mut ()).unwrap();
        let again = second.init_from(source.clone());
        assert!(matches!(again, Err(Error::Training(m)) if m.contains("4 steps")));
        let wider = tiny(vocab, 24, 3);
        let mut third = Trainer::start(corpus(), wider, &scratch("init-third"), &device).unwrap();
        let shape = third.init_from(source);
        assert!(matches!(shape, Err(Error::BadConfig(m)) if m.contains("shape")));
        let _ = std::fs::remove_dir_all(&first_dir);
        let _ = std::fs::remove_dir_all(&second_dir);
    }

    #[test]
    fn the_bundled_draft_starts_a_run_of_the_drafts_default_settings() {
        let device = Backend::Cpu.device().unwrap();
        // A corpus over the bundled alphabet, so the run's tokenizer is the bundle's.
        let alphabet: String = specula_model::bundled::tokenizer()
            .unwrap()
            .alphabet()
            .iter()
            .collect();
        let corpus = crate::data::Corpus::from_text(&alphabet.repeat(40)).unwrap();
        let config =
            crate::train::TrainConfig::for_role(ModelRole::Draft, alphabet.chars().count());
        let mut run = Trainer::start(corpus, config, &scratch("init-bundled"), &device).unwrap();
        run.init_from(WeightSource::Bundled).unwrap();
        let bundled = specula_model::bundled::bundle(ModelRole::Draft).unwrap();
        let tokens: Vec<u32> = (0..40).map(|i| i * 7 % 65).collect();
        let logits = |b: ModelBundle| b.build(&device).unwrap().logits_uncached(&tokens).unwrap();
        assert_eq!(logits(run.export().unwrap()), logits(bundled.clone()));
        let record = run.state().config.init.clone().unwrap();
        assert_eq!(record.weights_sha256, bundled.meta.weights_sha256);
        // A directory without the role's files is an I/O error naming the file.
        let missing = WeightSource::Dir(PathBuf::from("/nonexistent/specula-init"));
        let err = run.init_from(missing).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
        assert!(err.to_string().contains("draft.json"), "{err}");
    }
}
