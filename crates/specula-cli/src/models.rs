//! Loading the draft/target pair (bundled, or from a directory) and encoding prompts.

use std::io::Write as _;
use std::path::Path;

use burn::tensor::Device;
use specula_host::DeviceLm;
use specula_model::{Backend, CharTokenizer, ModelBundle, ModelRole, bundled};

use crate::error::CliError;

/// Both models and their shared tokenizer.
#[derive(Debug)]
pub struct Pair {
    /// The draft model.
    pub draft: DeviceLm,
    /// The target model.
    pub target: DeviceLm,
    /// The tokenizer (the same alphabet for both).
    pub tokenizer: CharTokenizer,
    /// The target's bundle, to build it again on another forward pass (`specula bench`).
    pub target_bundle: ModelBundle,
    /// The draft's bundle, likewise.
    pub draft_bundle: ModelBundle,
}

/// Loads the bundled pair, or `dir/{draft,target}.{json,bpk}`, on `backend`: on the CPU
/// on the host forward pass (`specula-host`), elsewhere on burn's.
///
/// # Errors
/// Usage errors for a missing or corrupt directory or a mismatched pair; failures for a
/// backend that cannot start.
pub fn load(dir: Option<&Path>, backend: Backend, threads: usize) -> Result<Pair, CliError> {
    // Only the first call in a process can size the pool; later ones keep it.
    let _ = specula_model::set_cpu_threads(threads);
    let bundle =
        |role| match dir {
            Some(d) => ModelBundle::load_dir(d, role)
                .map_err(|e| CliError::usage(format!("--models: {e}"))),
            None => bundled::bundle(role)
                .map_err(|e| CliError::failure(format!("bundled weights: {e}"))),
        };
    let (draft, target) = (bundle(ModelRole::Draft)?, bundle(ModelRole::Target)?);
    if draft.meta.tokenizer != target.meta.tokenizer {
        return Err(CliError::usage(
            "the draft and target models use different alphabets",
        ));
    }
    let (draft_params, target_params) = (
        draft.meta.config.num_params(),
        target.meta.config.num_params(),
    );
    if draft_params > target_params {
        return Err(CliError::usage(format!(
            "--models: the draft ({draft_params} parameters) is larger than the target \
             ({target_params}); are draft.* and target.* swapped?"
        )));
    }
    let device = backend
        .device()
        .map_err(|e| CliError::usage(format!("--backend: {e}")))?;
    let build = |b: &ModelBundle| {
        // Weights that pass the checksum can still fail to parse (a corrupt file with its
        // digest recomputed): bad input, named like the other errors of the directory.
        let mut lm = DeviceLm::build(b, &device).map_err(|e| match dir {
            Some(d) => CliError::usage(format!(
                "--models: {}: {e}",
                d.join(format!("{}.bpk", b.meta.role.name())).display()
            )),
            None => CliError::failure(e.to_string()),
        })?;
        // The host pass splits its dense layers over at most two threads.
        if let DeviceLm::Host(lm) = &mut lm {
            lm.pass_mut()
                .set_threads(threads.clamp(1, 2))
                .map_err(|e| CliError::failure(e.to_string()))?;
        }
        Ok::<_, CliError>(lm)
    };
    Ok(Pair {
        draft: build(&draft)?,
        target: build(&target)?,
        tokenizer: target.meta.tokenizer.clone(),
        target_bundle: target,
        draft_bundle: draft,
    })
}

impl Pair {
    /// The target again on burn's forward pass on the CPU (to compare with the host pass).
    ///
    /// # Errors
    /// A failure when the weights do not build (they built once already).
    pub fn burn_target(&self) -> Result<DeviceLm, CliError> {
        burn_model(&self.target_bundle)
    }

    /// Both models on burn's forward pass on the CPU, replacing the host pass
    /// (`specula bench --burn-forward`); the caches start empty.
    ///
    /// # Errors
    /// A failure when the weights do not build (they built once already).
    pub fn use_burn_forward(&mut self) -> Result<(), CliError> {
        self.draft = burn_model(&self.draft_bundle)?;
        self.target = burn_model(&self.target_bundle)?;
        Ok(())
    }

    /// The prompt's tokens.
    ///
    /// # Errors
    /// A usage error naming the first character outside the alphabet.
    pub fn encode(&self, prompt: &str) -> Result<Vec<u32>, CliError> {
        self.tokenizer
            .encode(prompt)
            .map_err(|e| CliError::usage(format!("--prompt: {e}")))
    }

    /// The text of generated tokens (always in the alphabet).
    #[must_use]
    pub fn decode(&self, tokens: &[u32]) -> String {
        self.tokenizer.decode(tokens).unwrap_or_default()
    }

    /// The positions both models can read: the context window (see `decode`).
    #[must_use]
    pub fn window(&self) -> usize {
        self.target
            .config()
            .max_seq
            .min(self.draft.config().max_seq)
    }

    /// Says on stderr (as a note) that a prompt of `prompt_len` tokens fills the window
    /// and that the models will read only its end.
    pub fn note_cropped_prompt(&self, prompt_len: usize) {
        let window = self.window();
        let read = (window / 2).max(1);
        if prompt_len >= window {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(
                stderr,
                "note: the prompt ({prompt_len} characters) fills the models' {window} \
                 positions; they read its last {read}"
            );
        }
    }

    /// Checks that `prompt_len + new_tokens` fits the models' positions.
    ///
    /// # Errors
    /// A usage error naming `flag`.
    pub fn check_length(
        &self,
        prompt_len: usize,
        new_tokens: usize,
        flag: &str,
    ) -> Result<(), CliError> {
        let max = self
            .target
            .config()
            .max_seq
            .min(self.draft.config().max_seq);
        if prompt_len + new_tokens > max {
            return Err(CliError::usage(format!(
                "the prompt ({prompt_len} characters) plus {flag} {new_tokens} exceeds the models' {max} positions"
            )));
        }
        Ok(())
    }
}

/// The model of `bundle` on burn's forward pass on the CPU.
fn burn_model(bundle: &ModelBundle) -> Result<DeviceLm, CliError> {
    bundle
        .build(&Device::flex())
        .map(DeviceLm::Burn)
        .map_err(|e| CliError::failure(e.to_string()))
}
