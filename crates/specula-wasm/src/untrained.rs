//! Seeded, untrained model pairs: the same weights on every backend (the numbers come
//! from ChaCha, not the device), for tests and for packaging before trained weights exist.

use burn::tensor::Device;
use specula_model::{CharTokenizer, Gpt, ModelBundle, ModelConfig, ModelRole};

use crate::error::{Result, WasmError};
use crate::models::Bundles;

/// The 65 characters of Tiny Shakespeare, the bundled models' alphabet.
pub const SHAKESPEARE_ALPHABET: &str =
    "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Which shapes to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// The bundled shapes ([`ModelConfig::for_role`]).
    Full,
    /// Tiny shapes that run fast even on software WebGPU, for tests.
    Test,
}

impl Size {
    /// Parses `"full" | "test"` (default test).
    ///
    /// # Errors
    /// [`WasmError::InvalidOption`] for anything else.
    pub fn parse(name: Option<&str>) -> Result<Self> {
        Ok(specula_engine::options::one_of(
            "size",
            name,
            &[("test", Self::Test), ("full", Self::Full)],
        )?)
    }

    fn config(self, role: ModelRole, vocab: usize) -> ModelConfig {
        match (self, role) {
            (Self::Full, _) => ModelConfig::for_role(role, vocab),
            (Self::Test, ModelRole::Draft) => ModelConfig {
                vocab_size: vocab,
                d_model: 32,
                n_layers: 1,
                n_heads: 2,
                d_ff: 64,
                max_seq: 128,
            },
            (Self::Test, ModelRole::Target) => ModelConfig {
                vocab_size: vocab,
                d_model: 64,
                n_layers: 2,
                n_heads: 4,
                d_ff: 128,
                max_seq: 128,
            },
        }
    }
}

/// A draft/target pair initialised from `seed` (the target from `seed + 1`).
///
/// # Errors
/// [`WasmError::Weights`] if the model crate refuses the shapes (it should not).
pub fn untrained_bundles(seed: u64, size: Size) -> Result<Bundles> {
    let weights = |e: specula_model::Error| WasmError::Weights(format!("untrained models: {e}"));
    let tokenizer =
        CharTokenizer::from_alphabet(SHAKESPEARE_ALPHABET.chars().collect()).map_err(weights)?;
    let device = Device::flex();
    let bundle = |role: ModelRole, seed: u64| -> Result<ModelBundle> {
        let config = size.config(role, tokenizer.vocab_size());
        let model = Gpt::new(&config, seed, 0.0, &device).map_err(weights)?;
        ModelBundle::from_model(&model, role, config, tokenizer.clone(), None).map_err(weights)
    };
    Ok(Bundles {
        draft: bundle(ModelRole::Draft, seed)?,
        target: bundle(ModelRole::Target, seed.wrapping_add(1))?,
    })
}
