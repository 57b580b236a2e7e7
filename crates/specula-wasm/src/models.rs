//! The draft/target pair, answering the engine's requests asynchronously (WebGPU read-back
//! can only be awaited in a browser), and moving to the CPU when the GPU fails or is lost.
//! The target runs on the chosen device; the draft there too or, when asked, on the CPU.
//! The decoder keeps every committed token and waits for the same request after a failure,
//! so the move loses no text.

use std::rc::Rc;

use burn::tensor::Device;
use specula_engine::{ForwardRequest, ForwardResponse, Role};
use specula_gguf::{GgufModel, LlamaConfig};
use specula_host::{DeviceLm, ModelTokenizer};
use specula_model::{ModelBundle, ModelMeta, ModelRole};

use crate::backend::{BackendInfo, DraftBackend, gpu_lost};
use crate::error::{Result, WasmError};

/// The longest draft pass on WebGPU that takes the fused pass: a draft call extends its
/// cache by one or two positions. Its one workgroup costs ~2.3 ms per position on the
/// software adapter where burn's multi-row kernels add ~0.6 ms to a ~4.5 ms call, so the
/// fusion pays for one or two positions and loses on a prompt's first pass.
const FUSED_DRAFT_POSITIONS: usize = 2;

/// The two checked bundles, kept to rebuild the models on the CPU.
#[derive(Debug, Clone)]
pub struct Bundles {
    /// The draft model.
    pub draft: ModelBundle,
    /// The target model.
    pub target: ModelBundle,
}

impl Bundles {
    /// Checks checksums, roles and that both models share one alphabet.
    ///
    /// # Errors
    /// [`WasmError::Weights`] naming the model and the problem.
    pub fn from_parts(
        draft_meta: &[u8],
        draft_weights: &[u8],
        target_meta: &[u8],
        target_weights: &[u8],
    ) -> Result<Self> {
        let load = |name: &str, meta: &[u8], weights: &[u8], role: ModelRole| {
            let bundle = ModelBundle::from_parts(meta, weights)
                .map_err(|e| WasmError::Weights(format!("{name} model: {e}")))?;
            check_role(name, &bundle.meta, role)?;
            Ok::<_, WasmError>(bundle)
        };
        let bundles = Self {
            draft: load("draft", draft_meta, draft_weights, ModelRole::Draft)?,
            target: load("target", target_meta, target_weights, ModelRole::Target)?,
        };
        check_alphabets(&bundles.draft.meta, &bundles.target.meta)?;
        Ok(bundles)
    }
}

/// GGUF files of a draft and a target (docs/real-models.md), checked to share a
/// tokenizer; the bytes are kept to rebuild the models on the CPU.
#[derive(Debug, Clone)]
pub struct GgufPair {
    draft: Rc<[u8]>,
    target: Rc<[u8]>,
    tokenizer: ModelTokenizer,
    /// The shapes, for the checks made before building (the GPU's buffer limit).
    shapes: [LlamaConfig; 2],
}

/// The most bytes of one GGUF file: a wasm module's 4 GiB of memory holds a copy of the
/// file and the weights dequantized from it, so a larger file cannot load. The package's
/// worker refuses such a file before downloading it (generated into `web/src/limits.js`).
pub const MAX_GGUF_FILE_BYTES: u64 = 1 << 31;

impl GgufPair {
    /// Reads both files' shape and tokenizer, refusing a pair whose tokenizers differ or
    /// a model whose loading would not fit the memory left.
    ///
    /// # Errors
    /// [`WasmError::Weights`] naming the model and what is wrong with its file.
    pub fn from_files(draft: Vec<u8>, target: Vec<u8>) -> Result<Self> {
        for (name, bytes) in [("draft", &draft), ("target", &target)] {
            if bytes.len() as u64 > MAX_GGUF_FILE_BYTES {
                return Err(WasmError::Weights(format!(
                    "{name} model: the GGUF file has {} bytes, more than the {MAX_GGUF_FILE_BYTES} \
                     a wasm module can hold beside the weights dequantized from it",
                    bytes.len()
                )));
            }
        }
        let (draft, target): (Rc<[u8]>, Rc<[u8]>) = (draft.into(), target.into());
        let shape = |name: &str, bytes: &[u8]| {
            specula_gguf::model::shape_of(bytes, available_memory())
                .map_err(|e| WasmError::Weights(format!("{name} model: {e}")))
        };
        let (draft_shape, draft_tokenizer) = shape("draft", &draft)?;
        let (target_shape, target_tokenizer) = shape("target", &target)?;
        if !draft_tokenizer.same_vocabulary(&target_tokenizer) {
            return Err(WasmError::Weights(
                "the draft and target models have different tokenizers (tokens or merges); \
                 they must share one"
                    .into(),
            ));
        }
        Ok(Self {
            draft,
            target,
            tokenizer: ModelTokenizer::Bpe(Box::new(target_tokenizer)),
            shapes: [draft_shape, target_shape],
        })
    }

    /// Why a model that would run on a WebGPU device binding at most `max_buffer` bytes
    /// in one buffer cannot (the draft counts only when `draft_on_gpu`); `None` when both
    /// fit. Checked before any upload: burn would fail on the first oversized buffer.
    #[must_use]
    pub fn gpu_misfit(&self, max_buffer: u64, draft_on_gpu: bool) -> Option<String> {
        let [draft, target] = &self.shapes;
        [("target", target, true), ("draft", draft, draft_on_gpu)]
            .into_iter()
            .filter(|&(_, _, on_gpu)| on_gpu)
            .find_map(|(name, shape, _)| {
                let (tensor, bytes) = shape.largest_matrix();
                (bytes > max_buffer).then(|| {
                    format!(
                        "the {name} model's {tensor} takes {} in f32, more than this WebGPU \
                         device binds in one buffer ({}); the whole model needs about {}",
                        megabytes(bytes),
                        megabytes(max_buffer),
                        megabytes(shape.loaded_bytes())
                    )
                })
            })
    }

    /// The shared tokenizer.
    #[must_use]
    pub fn tokenizer(&self) -> &ModelTokenizer {
        &self.tokenizer
    }

    /// The most positions the target reads.
    #[must_use]
    pub fn target_context(&self) -> usize {
        self.shapes[1].max_seq
    }

    /// The model of `role` on `device`, dequantized from its file again.
    ///
    /// # Errors
    /// [`WasmError::Weights`] naming the model and what is wrong with its file.
    pub fn build(&self, role: Role, device: &Device) -> Result<DeviceLm> {
        let (name, bytes) = match role {
            Role::Draft => ("draft", &self.draft),
            Role::Target => ("target", &self.target),
        };
        let model = GgufModel::from_bytes(bytes.to_vec(), available_memory())
            .map_err(|e| WasmError::Weights(format!("{name} model: {e}")))?;
        DeviceLm::from_gguf(&model, device)
            .map_err(|e| WasmError::Weights(format!("{name} model: {e}")))
    }
}

/// What a pair is built from, kept to rebuild it on the CPU.
#[derive(Debug, Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "one per loaded pair, never moved in a loop"
)]
pub enum Sources {
    /// The bundled architecture's checked bundles.
    Bundled(Bundles),
    /// Two GGUF files.
    Gguf(GgufPair),
}

impl Sources {
    /// Why these models cannot go on the page's WebGPU device as `info` and `draft` place
    /// them (see [`GgufPair::gpu_misfit`]), with its buffer limit lowered to `cap` when
    /// given; `None` when they fit, are not on WebGPU or are the bundled pair (a few
    /// megabytes).
    pub(crate) fn gpu_misfit(
        &self,
        info: &BackendInfo,
        draft: DraftBackend,
        cap: Option<u64>,
    ) -> Option<String> {
        let Self::Gguf(pair) = self else { return None };
        if info.backend != "webgpu" {
            return None;
        }
        let device = crate::backend::gpu_buffer_limit();
        let limit = device.into_iter().chain(cap).min()?;
        pair.gpu_misfit(limit, draft != DraftBackend::Cpu)
    }

    /// The model of `role` on `device`.
    fn build(&self, role: Role, device: &Device) -> Result<DeviceLm> {
        match self {
            Self::Bundled(bundles) => {
                let (bundle, name) = match role {
                    Role::Draft => (&bundles.draft, "draft"),
                    Role::Target => (&bundles.target, "target"),
                };
                DeviceLm::build(bundle, device)
                    .map_err(|e| WasmError::Weights(format!("{name} model: {e}")))
            }
            Self::Gguf(pair) => pair.build(role, device),
        }
    }

    /// The tokenizer both models share.
    fn tokenizer(&self) -> ModelTokenizer {
        match self {
            Self::Bundled(bundles) => ModelTokenizer::Chars(bundles.target.meta.tokenizer.clone()),
            Self::Gguf(pair) => pair.tokenizer.clone(),
        }
    }
}

/// `bytes` as megabytes for a message: "113.2 MB (113246208 bytes)".
fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB ({bytes} bytes)", bytes as f64 / 1e6)
}

/// The bytes this module's memory can still grow by: wasm32 addresses 4 GiB, of which
/// the pages already taken are gone (their free space inside the heap is not counted, so
/// this errs towards refusing). `None` natively, where the tests run without a limit.
pub(crate) fn available_memory() -> Option<u64> {
    #[cfg(target_arch = "wasm32")]
    {
        let pages = core::arch::wasm32::memory_size::<0>() as u64;
        Some(65_536_u64.saturating_sub(pages) * 65_536)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

/// Checks that `meta` describes a `role` model (`name` in the message).
///
/// # Errors
/// [`WasmError::Weights`] naming the model and the role its weights are for.
pub(crate) fn check_role(name: &str, meta: &ModelMeta, role: ModelRole) -> Result<()> {
    if meta.role == role {
        return Ok(());
    }
    Err(WasmError::Weights(format!(
        "{name} model: these weights are for the {} model",
        meta.role.name()
    )))
}

/// Checks that the draft and the target share one alphabet.
///
/// # Errors
/// [`WasmError::Weights`] when they do not.
pub(crate) fn check_alphabets(draft: &ModelMeta, target: &ModelMeta) -> Result<()> {
    if draft.tokenizer == target.tokenizer {
        return Ok(());
    }
    Err(WasmError::Weights(
        "the draft and target models have different alphabets; they must share one".into(),
    ))
}

/// Both models, ready (the target on the chosen device).
#[derive(Debug)]
pub struct Models {
    draft: DeviceLm,
    target: DeviceLm,
    sources: Sources,
    tokenizer: ModelTokenizer,
    info: BackendInfo,
    /// Set when the models moved to the CPU since the last [`take_fallback`](Self::take_fallback).
    fallback: Option<String>,
    /// A loss simulated for this pair only (tests), so other engines keep the GPU.
    simulated_loss: bool,
}

impl Models {
    /// Forgets both models' cached positions (when the context window slides).
    pub fn reset(&mut self) {
        self.draft.reset();
        self.target.reset();
    }

    /// Builds the target on `device` (described by `info`) and the draft there too or, for
    /// [`DraftBackend::Cpu`], on the CPU. A draft on WebGPU takes the fused pass unless
    /// [`DraftBackend::Unfused`].
    ///
    /// # Errors
    /// [`WasmError::Weights`] when the weights do not fit their description.
    pub fn build(
        sources: impl Into<Sources>,
        device: &Device,
        mut info: BackendInfo,
        draft_backend: DraftBackend,
    ) -> Result<Self> {
        let sources = sources.into();
        let draft_device = match draft_backend {
            DraftBackend::Cpu if info.backend != "cpu" => {
                info.draft_backend = "cpu";
                Device::flex()
            }
            _ => device.clone(),
        };
        let mut draft = sources.build(Role::Draft, &draft_device)?;
        // The draft only: its pass is bound by dispatches, while the target's arithmetic
        // needs more than the fused kernel's one workgroup.
        if let DeviceLm::Burn(lm) = &mut draft
            && draft_backend != DraftBackend::Unfused
        {
            lm.pass_mut().set_fused(FUSED_DRAFT_POSITIONS);
        }
        Ok(Self {
            draft,
            target: sources.build(Role::Target, device)?,
            tokenizer: sources.tokenizer(),
            sources,
            info,
            fallback: None,
            simulated_loss: false,
        })
    }

    /// The shared tokenizer.
    #[must_use]
    pub fn tokenizer(&self) -> &ModelTokenizer {
        &self.tokenizer
    }

    /// The vocabulary size.
    #[must_use]
    pub fn vocab(&self) -> usize {
        self.tokenizer.vocab_size()
    }

    /// The longest sequence both models can read.
    #[must_use]
    pub fn context(&self) -> usize {
        self.draft.max_seq().min(self.target.max_seq())
    }

    /// Where the models run.
    #[must_use]
    pub fn info(&self) -> &BackendInfo {
        &self.info
    }

    /// Acts as if the GPU device were lost: the next call moves to the CPU.
    pub fn simulate_device_loss(&mut self) {
        self.simulated_loss = true;
    }

    /// Why the models moved to the CPU, once, after it happened.
    pub fn take_fallback(&mut self) -> Option<String> {
        self.fallback.take()
    }

    /// Answers one engine request with the model it is for, moving to the CPU and
    /// retrying when that model fails on the GPU or the GPU has been lost.
    ///
    /// # Errors
    /// [`WasmError::Model`] when the model fails on the CPU too.
    pub async fn forward(
        &mut self,
        role: Role,
        request: &ForwardRequest,
    ) -> Result<ForwardResponse> {
        if self.on_gpu(Role::Target) && (gpu_lost() || self.simulated_loss) {
            self.move_to_cpu("the WebGPU device was lost".into())?;
        }
        match self.answer(role, request).await {
            Ok(response) => Ok(response),
            Err(e) if self.on_gpu(role) => {
                self.move_to_cpu(format!("the {role} model failed on WebGPU: {e}"))?;
                self.answer(role, request)
                    .await
                    .map_err(|e| WasmError::Model(format!("the {role} model failed: {e}")))
            }
            Err(e) => Err(WasmError::Model(format!("the {role} model failed: {e}"))),
        }
    }

    async fn answer(
        &mut self,
        role: Role,
        request: &ForwardRequest,
    ) -> specula_model::Result<ForwardResponse> {
        let model = match role {
            Role::Draft => &mut self.draft,
            Role::Target => &mut self.target,
        };
        let vocab = specula_engine::LanguageModel::vocab_size(model);
        let logits = model.answer_async(request).await?;
        Ok(ForwardResponse::new(vocab, logits))
    }

    /// Hands half of the target's large dense calls to `remote` (another worker's copy
    /// of it), or stops (`None`); `reason` is why one worker runs where more were asked.
    /// The updated report.
    ///
    /// # Errors
    /// [`WasmError::InvalidOption`] (field `threads`) for a remote with the target on
    /// WebGPU, which has no host pass to share.
    pub fn set_dense_remote(
        &mut self,
        remote: Option<std::sync::Arc<dyn specula_host::DenseRemote>>,
        reason: Option<String>,
    ) -> Result<BackendInfo> {
        let two = remote.is_some();
        if two && self.on_gpu(Role::Target) {
            return Err(WasmError::option_field(
                "threads",
                "the target runs on WebGPU: a second worker shares the CPU's dense layers only",
            ));
        }
        self.target.set_dense_remote(remote);
        self.info.threads = if two { 2 } else { 1 };
        self.info.threads_reason = reason;
        Ok(self.info.clone())
    }

    /// The `role` model, for what its wrapper offers besides answering requests (the
    /// host pass's stage profile).
    pub(crate) fn model_mut(&mut self, role: Role) -> &mut DeviceLm {
        match role {
            Role::Draft => &mut self.draft,
            Role::Target => &mut self.target,
        }
    }

    /// Whether `role`'s model runs on the GPU.
    fn on_gpu(&self, role: Role) -> bool {
        match role {
            Role::Draft => self.info.draft_backend != "cpu",
            Role::Target => self.info.backend != "cpu",
        }
    }

    /// Rebuilds the models that are on the GPU on the CPU backend (the host forward pass).
    fn move_to_cpu(&mut self, reason: String) -> Result<()> {
        let device = Device::flex();
        let build = |role: Role| {
            self.sources.build(role, &device).map_err(|e| {
                WasmError::Model(format!(
                    "{reason}; rebuilding the {role} model on the CPU failed: {e}"
                ))
            })
        };
        if self.on_gpu(Role::Draft) {
            self.draft = build(Role::Draft)?;
        }
        self.target = build(Role::Target)?;
        self.info = BackendInfo::cpu(self.info.requested, Some(reason.clone()));
        self.fallback = Some(reason);
        Ok(())
    }
}

impl From<Bundles> for Sources {
    fn from(bundles: Bundles) -> Self {
        Self::Bundled(bundles)
    }
}

impl From<GgufPair> for Sources {
    fn from(pair: GgufPair) -> Self {
        Self::Gguf(pair)
    }
}
