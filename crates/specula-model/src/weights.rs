//! Trained weights on disk and in memory: a JSON description (shape, alphabet, training
//! figures, the SHA-256 of the weights, and a SHA-256 of the description itself) beside
//! burnpack weights stored as f16 (half the size; the logits move by ~1e-3, far below what
//! sampling can notice — see MODELS.md).
//!
//! The description's own digest (`sha256`) is taken over the rest of the description,
//! which includes the weights' digest, so one value seals the shape, the role, the
//! alphabet and the weights together: an edited field is refused even when it is in range.

use std::path::{Path, PathBuf};

use burn::module::{Module, ModuleMapper, Param};
use burn::store::ModuleRecord;
use burn::tensor::{Bytes, DType, Device, Tensor};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::burn_lm::BurnLm;
use crate::config::{ModelConfig, ModelRole};
use crate::error::{Error, Result};
use crate::tokenizer::CharTokenizer;
use crate::transformer::Gpt;

/// Where a model's weights come from: a training run's teacher or starting point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WeightSource {
    /// The model of the role embedded in this build.
    Bundled,
    /// A directory holding `ROLE.json` and `ROLE.bpk` (a run's `export/`).
    Dir(PathBuf),
}

impl WeightSource {
    /// From a command-line value: `bundled`, or else a directory.
    #[must_use]
    pub fn from_flag(value: &str) -> Self {
        match value {
            "bundled" => Self::Bundled,
            dir => Self::Dir(PathBuf::from(dir)),
        }
    }

    /// The bundle of `role` this source names.
    ///
    /// # Errors
    /// [`Error::Io`] and [`Error::Weights`] for unreadable or corrupt files.
    pub fn load(&self, role: ModelRole) -> Result<ModelBundle> {
        match self {
            Self::Bundled => crate::bundled::bundle(role),
            Self::Dir(dir) => ModelBundle::load_dir(dir, role),
        }
    }
}

/// The format version written in every description. Version 2 added the description's own
/// digest ([`ModelMeta::sha256`]); version 1 files are refused with a pointer to the
/// `upgrade_format` example of this crate, which seals them.
pub const FORMAT_VERSION: u32 = 2;

/// Training figures recorded with the weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingRecord {
    /// Optimiser steps taken.
    pub steps: u64,
    /// Training tokens seen (batch × context × steps).
    pub tokens_seen: u64,
    /// Mean training cross-entropy at the last evaluation, nats per character.
    pub train_loss: Option<f64>,
    /// Mean validation cross-entropy at the last evaluation, nats per character.
    pub val_loss: Option<f64>,
    /// The training seed.
    pub seed: u64,
}

/// Everything needed to rebuild a model besides its weights. Unknown fields are refused:
/// they would not be covered by [`sha256`](Self::sha256).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelMeta {
    /// [`FORMAT_VERSION`].
    pub format: u32,
    /// Which role the model was trained for.
    pub role: ModelRole,
    /// Its shape.
    pub config: ModelConfig,
    /// The character alphabet, in token order.
    pub tokenizer: CharTokenizer,
    /// How it was trained, if it was.
    pub training: Option<TrainingRecord>,
    /// Hex SHA-256 of the weight bytes.
    pub weights_sha256: String,
    /// Hex SHA-256 of this description without this field ([`ModelMeta::digest`]): it
    /// covers every other field, the weights' digest included.
    pub sha256: String,
}

/// The fields [`ModelMeta::sha256`] covers: all but itself, in the file's order.
#[derive(Serialize)]
struct Unsealed<'a> {
    format: u32,
    role: ModelRole,
    config: &'a ModelConfig,
    tokenizer: &'a CharTokenizer,
    training: &'a Option<TrainingRecord>,
    weights_sha256: &'a str,
}

/// The largest model description read (the JSON holds the alphabet: at most
/// [`MAX_VOCAB_SIZE`](crate::MAX_VOCAB_SIZE) characters, a few bytes each).
pub const MAX_META_BYTES: u64 = 1 << 20;

/// Slack allowed in a weight file over two bytes per parameter (burnpack's header and
/// tensor names; the bundled files carry a few kilobytes).
pub const WEIGHTS_SLACK_BYTES: u64 = 1 << 20;

impl ModelMeta {
    /// Parses and checks a description whole before anything is allocated from it: the
    /// format, every shape field and its limit ([`ModelConfig::validate`]), and that the
    /// alphabet has as many characters as the vocabulary.
    ///
    /// # Errors
    /// [`Error::Description`] for bad JSON or an unknown format, [`Error::BadConfig`].
    pub fn from_json(json: &[u8]) -> Result<Self> {
        // The format first, so that an older file gets its own message rather than "missing
        // field" for a field its version did not have.
        #[derive(Deserialize)]
        struct Version {
            format: u32,
        }
        let version: Version =
            serde_json::from_slice(json).map_err(|e| Error::Description(e.to_string()))?;
        if version.format == 1 {
            return Err(Error::Description(
                "format 1 predates the description's own checksum; upgrade the directory with \
                 `cargo run -p specula-model --example upgrade_format -- DIR`"
                    .into(),
            ));
        }
        let meta: Self =
            serde_json::from_slice(json).map_err(|e| Error::Description(e.to_string()))?;
        if meta.format != FORMAT_VERSION {
            return Err(Error::Description(format!(
                "format {} is not the supported {FORMAT_VERSION}",
                meta.format
            )));
        }
        meta.config.validate()?;
        if meta.tokenizer.vocab_size() != meta.config.vocab_size {
            return Err(Error::BadConfig(format!(
                "the alphabet has {} characters but the model {} tokens",
                meta.tokenizer.vocab_size(),
                meta.config.vocab_size
            )));
        }
        Ok(meta)
    }

    /// The hex SHA-256 that [`sha256`](Self::sha256) must hold: over the compact JSON of
    /// every other field, in the order the file lists them.
    ///
    /// # Panics
    /// Never: the fields are plain data that always serialise.
    #[must_use]
    pub fn digest(&self) -> String {
        let unsealed = Unsealed {
            format: self.format,
            role: self.role,
            config: &self.config,
            tokenizer: &self.tokenizer,
            training: &self.training,
            weights_sha256: &self.weights_sha256,
        };
        let json = serde_json::to_vec(&unsealed).expect("plain data serialises");
        sha256_hex(&json)
    }

    /// Sets [`sha256`](Self::sha256) to [`digest`](Self::digest) (after any change).
    pub fn seal(&mut self) {
        self.sha256 = self.digest();
    }

    /// Checks [`sha256`](Self::sha256) against [`digest`](Self::digest).
    ///
    /// # Errors
    /// [`Error::Checksum`] naming the role's description.
    pub fn check_sealed(&self) -> Result<()> {
        let actual = self.digest();
        // A hex digest means the same in either case.
        if !actual.eq_ignore_ascii_case(&self.sha256) {
            return Err(Error::Checksum {
                name: format!("the {} description", self.role.name()),
                expected: self.sha256.clone(),
                actual,
            });
        }
        Ok(())
    }

    /// The most bytes a weight file of this shape may have: two per parameter (f16) plus
    /// [`WEIGHTS_SLACK_BYTES`].
    #[must_use]
    pub fn max_weights_len(&self) -> u64 {
        2 * self.config.num_params() as u64 + WEIGHTS_SLACK_BYTES
    }

    fn check_weights_len(&self, len: u64) -> Result<()> {
        let max = self.max_weights_len();
        if len > max {
            return Err(Error::Weights(format!(
                "the weights are {len} bytes, more than the {max} a model of this shape needs"
            )));
        }
        Ok(())
    }
}

/// Reads at most `limit` bytes of `path`, refusing a longer file ([`Error::File`]) without
/// reading the rest, and anything but a regular file before opening it: opening a FIFO
/// with no writer blocks forever, and a device such as `/dev/zero` never ends.
pub(crate) fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::File {
            path: path.display().to_string(),
            source: Box::new(Error::Unreadable("not a regular file".to_owned())),
        });
    }
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(Error::File {
            path: path.display().to_string(),
            source: Box::new(Error::Unreadable(format!(
                "the file is larger than the {limit} bytes allowed"
            ))),
        });
    }
    Ok(bytes)
}

/// A description plus the burnpack weight bytes it checks.
#[derive(Debug, Clone)]
pub struct ModelBundle {
    /// The description.
    pub meta: ModelMeta,
    /// burnpack bytes (f16 parameters).
    pub weights: Vec<u8>,
}

/// Hex SHA-256 of `bytes`.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Casts every float parameter.
struct CastParams(DType);

impl ModuleMapper for CastParams {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let dtype = self.0;
        param.map(|t| t.cast(dtype))
    }
}

/// The burnpack bytes of `model` with parameters in `dtype`.
///
/// # Errors
/// [`Error::Weights`] when serialisation fails.
pub fn model_bytes(model: &Gpt, dtype: DType) -> Result<Vec<u8>> {
    let model = model.valid().map(&mut CastParams(dtype));
    let bytes = model
        .into_record()
        .into_bytes()
        .map_err(|e| Error::Weights(e.to_string()))?;
    Ok(bytes.to_vec())
}

/// Loads burnpack `bytes` into a fresh model of shape `config` on `device` (parameters
/// converted to f32).
///
/// # Errors
/// [`Error::BadConfig`], [`Error::Weights`] for bytes that do not fit the shape.
pub fn load_model(config: &ModelConfig, bytes: &[u8], device: &Device) -> Result<Gpt> {
    let model = Gpt::zeroed(config, device)?;
    let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes.to_vec()))
        .map_err(|e| Error::Weights(e.to_string()))?
        .cast_to_module_dtype();
    model
        .try_load_record(record)
        .map_err(|e| Error::Weights(e.to_string()))
}

impl ModelBundle {
    /// A bundle of `model` stored as f16.
    ///
    /// # Errors
    /// [`Error::Weights`] when serialisation fails.
    pub fn from_model(
        model: &Gpt,
        role: ModelRole,
        config: ModelConfig,
        tokenizer: CharTokenizer,
        training: Option<TrainingRecord>,
    ) -> Result<Self> {
        let weights = model_bytes(model, DType::F16)?;
        let mut meta = ModelMeta {
            format: FORMAT_VERSION,
            role,
            config,
            tokenizer,
            training,
            weights_sha256: sha256_hex(&weights),
            sha256: String::new(),
        };
        meta.seal();
        Ok(Self { meta, weights })
    }

    /// A bundle from a JSON description and weight bytes: the description is checked
    /// whole ([`ModelMeta::from_json`]) and against its own digest
    /// ([`ModelMeta::check_sealed`]) before the weights' size and checksum.
    ///
    /// # Errors
    /// [`ModelMeta::from_json`]'s errors, [`Error::Weights`] for weights far larger than
    /// the shape needs, [`Error::Checksum`] for an edited description or weights.
    pub fn from_parts(meta_json: &[u8], weights: &[u8]) -> Result<Self> {
        let meta = ModelMeta::from_json(meta_json)?;
        meta.check_sealed()?;
        Self::with_weights(meta, weights)
    }

    /// `meta` (already checked) with `weights`, checked for size and digest.
    fn with_weights(meta: ModelMeta, weights: &[u8]) -> Result<Self> {
        meta.check_weights_len(weights.len() as u64)?;
        let actual = sha256_hex(weights);
        if !actual.eq_ignore_ascii_case(&meta.weights_sha256) {
            return Err(Error::Checksum {
                name: format!("{} weights", meta.role.name()),
                expected: meta.weights_sha256,
                actual,
            });
        }
        Ok(Self {
            meta,
            weights: weights.to_vec(),
        })
    }

    /// Reads `DIR/ROLE.json` and `DIR/ROLE.bpk`: the description first, checked whole, for
    /// its role and against its own digest, then the weights if their size fits the shape.
    /// Errors name the file.
    ///
    /// # Errors
    /// [`Error::Io`], [`Error::File`] wrapping the errors of
    /// [`from_parts`](Self::from_parts), or [`Error::BadConfig`] when the description is
    /// for the other role.
    pub fn load_dir(dir: &Path, role: ModelRole) -> Result<Self> {
        let (meta_path, weights_path) = paths(dir, role);
        let in_file = |path: &Path| {
            let path = path.display().to_string();
            move |e: Error| Error::File {
                path,
                source: Box::new(e),
            }
        };
        let meta_bytes = read_limited(&meta_path, MAX_META_BYTES)?;
        let meta = ModelMeta::from_json(&meta_bytes).map_err(in_file(&meta_path))?;
        if meta.role != role {
            return Err(in_file(&meta_path)(Error::BadConfig(format!(
                "its role is {}, but it is loaded as the {} model",
                meta.role.name(),
                role.name()
            ))));
        }
        meta.check_sealed().map_err(in_file(&meta_path))?;
        let limit = meta.max_weights_len();
        let weights = read_limited(&weights_path, limit)?;
        Self::with_weights(meta, &weights).map_err(in_file(&weights_path))
    }

    /// Writes `DIR/ROLE.json` and `DIR/ROLE.bpk`, creating `DIR`.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn save_dir(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let (meta_path, weights_path) = paths(dir, self.meta.role);
        let mut json =
            serde_json::to_string_pretty(&self.meta).map_err(|e| Error::Weights(e.to_string()))?;
        json.push('\n');
        std::fs::write(&meta_path, json).map_err(|e| Error::io(&meta_path, e))?;
        std::fs::write(&weights_path, &self.weights).map_err(|e| Error::io(&weights_path, e))
    }

    /// The model on burn's forward pass, ready for decoding on `device` (the host CPU pass
    /// is `specula-host`'s).
    ///
    /// # Errors
    /// The errors of [`load_model`] and [`BurnLm::new`].
    pub fn build(&self, device: &Device) -> Result<BurnLm> {
        let model = load_model(&self.meta.config, &self.weights, device)?;
        BurnLm::new(model, self.meta.config, device.clone())
    }
}

fn paths(dir: &Path, role: ModelRole) -> (std::path::PathBuf, std::path::PathBuf) {
    (
        dir.join(format!("{}.json", role.name())),
        dir.join(format!("{}.bpk", role.name())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled_meta() -> ModelMeta {
        crate::bundled::bundle(ModelRole::Draft).unwrap().meta
    }

    #[test]
    fn a_sealed_description_survives_writing_and_reading_with_awkward_floats() {
        let mut meta = bundled_meta();
        // Values whose shortest decimal form the default serde_json parser reads one ULP off.
        let training = meta.training.as_mut().unwrap();
        training.train_loss = Some(1.362_317_919_731_140_1);
        training.val_loss = Some(0.1 + 0.2);
        meta.seal();
        let json = serde_json::to_vec_pretty(&meta).unwrap();
        let read = ModelMeta::from_json(&json).unwrap();
        assert_eq!(read, meta);
        read.check_sealed().unwrap();
    }

    #[test]
    fn checksums_in_upper_case_are_the_same_checksums() {
        let bundle = crate::bundled::bundle(ModelRole::Draft).unwrap();
        let mut meta = bundle.meta.clone();
        meta.weights_sha256 = meta.weights_sha256.to_ascii_uppercase();
        meta.seal();
        meta.sha256 = meta.sha256.to_ascii_uppercase();
        let json = serde_json::to_vec(&meta).unwrap();
        ModelBundle::from_parts(&json, &bundle.weights).expect("upper-case hex is accepted");
        // Still a mismatch when the digits differ.
        meta.sha256 = sha256_hex(b"other").to_ascii_uppercase();
        let json = serde_json::to_vec(&meta).unwrap();
        assert!(ModelBundle::from_parts(&json, &bundle.weights).is_err());
    }

    #[test]
    fn any_edited_field_breaks_the_seal() {
        let meta = bundled_meta();
        meta.check_sealed().unwrap();
        let edits: [fn(&mut ModelMeta); 5] = [
            |m| m.config.max_seq -= 1,
            |m| m.role = ModelRole::Target,
            |m| m.training = None,
            |m| m.weights_sha256 = sha256_hex(b"other weights"),
            |m| m.tokenizer = CharTokenizer::from_corpus("ab").unwrap(),
        ];
        for edit in edits {
            let mut edited = meta.clone();
            edit(&mut edited);
            let err = edited.check_sealed().unwrap_err().to_string();
            assert!(err.contains("checksum mismatch for the"), "{err}");
        }
    }
}
