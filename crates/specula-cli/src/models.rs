//! Loading the draft/target pair (bundled, from a directory, or from GGUF files) and
//! encoding prompts.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use burn::tensor::Device;
use specula_gguf::GgufModel;
use specula_host::DeviceLm;
use specula_model::{Backend, ModelBundle, ModelRole, bundled};

use crate::error::CliError;

/// Where the two models come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// The bundled Shakespeare pair, or `draft.*`/`target.*` of a directory.
    Bundled(Option<PathBuf>),
    /// Llama-family GGUF files; without a draft (lookup), the target stands in for it
    /// and is never asked.
    Gguf {
        /// The target's file.
        target: PathBuf,
        /// The draft's file.
        draft: Option<PathBuf>,
    },
}

/// The tokenizer both models share.
pub use specula_host::ModelTokenizer as PairTokenizer;

/// Both models and their shared tokenizer.
#[derive(Debug)]
pub struct Pair {
    /// The draft model.
    pub draft: DeviceLm,
    /// The target model.
    pub target: DeviceLm,
    /// The tokenizer both share.
    pub tokenizer: PairTokenizer,
    /// The target's bundle, to build it again on another forward pass (`specula bench`);
    /// `None` for GGUF models.
    pub target_bundle: Option<ModelBundle>,
    /// The draft's bundle, likewise.
    pub draft_bundle: Option<ModelBundle>,
}

/// Loads the models `source` names on `backend`.
///
/// # Errors
/// As [`load`] and [`load_gguf`].
pub fn load_source(
    source: &ModelSource,
    backend: Backend,
    threads: usize,
) -> Result<Pair, CliError> {
    match source {
        ModelSource::Bundled(dir) => load(dir.as_deref(), backend, threads),
        ModelSource::Gguf { target, draft } => {
            load_gguf(target, draft.as_deref(), backend, threads)
        }
    }
}

/// Reads a GGUF model, naming `flag` in every error.
fn read_gguf(path: &Path, flag: &str) -> Result<GgufModel, CliError> {
    // No limit of its own: the parser refuses a model larger than the memory available.
    let bytes = crate::parse::read_regular_file(path, u64::MAX)
        .map_err(|e| CliError::bad_weights(format!("{flag}: {}: {e}", path.display())))?;
    GgufModel::from_bytes(bytes, available_memory())
        .map_err(|e| CliError::bad_weights(format!("{flag}: {}: {e}", path.display())))
}

/// The memory the system reports available (Linux's `MemAvailable`), or `None` where it
/// does not say.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Loads a GGUF target, and a GGUF draft with the same tokenizer (or the target again
/// in its place, for lookup, which never asks it), on burn's pass on `backend`.
///
/// # Errors
/// Usage errors naming the flag for a file that does not load or a pair whose
/// tokenizers differ; failures for a backend that cannot start.
pub fn load_gguf(
    target: &Path,
    draft: Option<&Path>,
    backend: Backend,
    threads: usize,
) -> Result<Pair, CliError> {
    let _ = specula_model::set_cpu_threads(threads);
    let target_model = read_gguf(target, "--target")?;
    let draft_model = match draft {
        Some(path) => Some(read_gguf(path, "--draft")?),
        None => None,
    };
    if let Some(d) = &draft_model
        && !d.tokenizer.same_vocabulary(&target_model.tokenizer)
    {
        return Err(CliError::bad_weights(
            "--draft: the draft's tokenizer differs from the target's (tokens or merges); \
             speculative decoding needs one vocabulary",
        ));
    }
    let device = backend
        .device()
        .map_err(|e| CliError::backend(format!("--backend: {e}")))?;
    let build = |m: &GgufModel| {
        let mut lm =
            DeviceLm::from_gguf(m, &device).map_err(|e| CliError::bad_weights(e.to_string()))?;
        lm.set_host_threads(threads.clamp(1, 2))
            .map_err(|e| CliError::failure(e.to_string()))?;
        Ok::<_, CliError>(lm)
    };
    let target_lm = build(&target_model)?;
    let draft_lm = build(draft_model.as_ref().unwrap_or(&target_model))?;
    Ok(Pair {
        draft: draft_lm,
        target: target_lm,
        tokenizer: PairTokenizer::Bpe(Box::new(target_model.tokenizer)),
        target_bundle: None,
        draft_bundle: None,
    })
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
    let bundle = |role| match dir {
        Some(d) => ModelBundle::load_dir(d, role)
            .map_err(|e| CliError::bad_weights(format!("--models: {e}"))),
        None => {
            bundled::bundle(role).map_err(|e| CliError::failure(format!("bundled weights: {e}")))
        }
    };
    let (draft, target) = (bundle(ModelRole::Draft)?, bundle(ModelRole::Target)?);
    if draft.meta.tokenizer != target.meta.tokenizer {
        return Err(CliError::bad_weights(
            "the draft and target models use different alphabets",
        ));
    }
    let (draft_params, target_params) = (
        draft.meta.config.num_params(),
        target.meta.config.num_params(),
    );
    if draft_params > target_params {
        return Err(CliError::bad_weights(format!(
            "--models: the draft ({draft_params} parameters) is larger than the target \
             ({target_params}); are draft.* and target.* swapped?"
        )));
    }
    let device = backend
        .device()
        .map_err(|e| CliError::backend(format!("--backend: {e}")))?;
    let build = |b: &ModelBundle| {
        // Weights that pass the checksum can still fail to parse (a corrupt file with its
        // digest recomputed): bad input, named like the other errors of the directory.
        let mut lm = DeviceLm::build(b, &device).map_err(|e| match dir {
            Some(d) => CliError::bad_weights(format!(
                "--models: {}: {e}",
                d.join(format!("{}.bpk", b.meta.role.name())).display()
            )),
            None => CliError::failure(e.to_string()),
        })?;
        // The host pass splits its dense layers over at most two threads.
        lm.set_host_threads(threads.clamp(1, 2))
            .map_err(|e| CliError::failure(e.to_string()))?;
        Ok::<_, CliError>(lm)
    };
    Ok(Pair {
        draft: build(&draft)?,
        target: build(&target)?,
        tokenizer: PairTokenizer::Chars(target.meta.tokenizer.clone()),
        target_bundle: Some(target),
        draft_bundle: Some(draft),
    })
}

impl Pair {
    /// The target again on burn's forward pass on the CPU (to compare with the host pass).
    ///
    /// # Errors
    /// A failure when the weights do not build (they built once already).
    pub fn burn_target(&self) -> Result<DeviceLm, CliError> {
        burn_model(self.target_bundle.as_ref())
    }

    /// Both models on burn's forward pass on the CPU, replacing the host pass
    /// (`specula bench --burn-forward`); the caches start empty.
    ///
    /// # Errors
    /// A failure when the weights do not build (they built once already).
    pub fn use_burn_forward(&mut self) -> Result<(), CliError> {
        self.draft = burn_model(self.draft_bundle.as_ref())?;
        self.target = burn_model(self.target_bundle.as_ref())?;
        Ok(())
    }

    /// The prompt's tokens.
    ///
    /// # Errors
    /// A usage error naming the first character outside the alphabet.
    pub fn encode(&self, prompt: &str) -> Result<Vec<u32>, CliError> {
        self.tokenizer
            .encode(prompt)
            .map_err(|e| CliError::bad_prompt(format!("--prompt: {e}")))
    }

    /// The text of generated tokens.
    #[must_use]
    pub fn decode(&self, tokens: &[u32]) -> String {
        self.tokenizer.decode(tokens).unwrap_or_default()
    }

    /// The tokens `config` stops at, with the model's end token (docs/real-models.md):
    /// a chat model's turn ends there, and what follows it is noise.
    #[must_use]
    pub fn stop_tokens(&self, config: &specula_engine::DecodeConfig) -> Vec<u32> {
        let mut tokens = config.stop_tokens().to_vec();
        self.tokenizer.add_end_token(&mut tokens);
        tokens
    }

    /// The positions both models can read: the context window (see `decode`).
    #[must_use]
    pub fn window(&self) -> usize {
        self.target.max_seq().min(self.draft.max_seq())
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
                "note: the prompt ({prompt_len} {}) fills the models' {window} \
                 positions; they read its last {read}",
                self.tokenizer.unit()
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
        let max = self.target.max_seq().min(self.draft.max_seq());
        if prompt_len + new_tokens > max {
            return Err(CliError::usage(format!(
                "the prompt ({prompt_len} {}) plus {flag} {new_tokens} exceeds the models' {max} \
                 positions: {flag} may be at most {} here",
                self.tokenizer.unit(),
                max.saturating_sub(prompt_len)
            )));
        }
        Ok(())
    }
}

/// The model of `bundle` on burn's forward pass on the CPU.
fn burn_model(bundle: Option<&ModelBundle>) -> Result<DeviceLm, CliError> {
    bundle
        .ok_or_else(|| {
            CliError::usage("burn's GPT pass needs the bundled architecture, not a GGUF model")
        })?
        .build(&Device::flex())
        .map(DeviceLm::Burn)
        .map_err(|e| CliError::failure(e.to_string()))
}
