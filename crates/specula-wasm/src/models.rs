//! The draft/target pair, answering the engine's requests asynchronously (WebGPU read-back
//! can only be awaited in a browser), and moving to the CPU when the GPU fails or is lost.
//! The target runs on the chosen device; the draft there too or, when asked, on the CPU.
//! The decoder keeps every committed token and waits for the same request after a failure,
//! so the move loses no text.

use burn::tensor::Device;
use specula_engine::{ForwardRequest, ForwardResponse, Role};
use specula_host::DeviceLm;
use specula_model::{CharTokenizer, ModelBundle, ModelMeta, ModelRole};

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
    bundles: Bundles,
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
        bundles: Bundles,
        device: &Device,
        mut info: BackendInfo,
        draft_backend: DraftBackend,
    ) -> Result<Self> {
        let build = |bundle: &ModelBundle, device: &Device, name: &str| {
            DeviceLm::build(bundle, device)
                .map_err(|e| WasmError::Weights(format!("{name} model: {e}")))
        };
        let draft_device = match draft_backend {
            DraftBackend::Cpu if info.backend != "cpu" => {
                info.draft_backend = "cpu";
                Device::flex()
            }
            _ => device.clone(),
        };
        let mut draft = build(&bundles.draft, &draft_device, "draft")?;
        // The draft only: its pass is bound by dispatches, while the target's arithmetic
        // needs more than the fused kernel's one workgroup.
        if let DeviceLm::Burn(lm) = &mut draft
            && draft_backend != DraftBackend::Unfused
        {
            lm.pass_mut().set_fused(FUSED_DRAFT_POSITIONS);
        }
        Ok(Self {
            draft,
            target: build(&bundles.target, device, "target")?,
            bundles,
            info,
            fallback: None,
            simulated_loss: false,
        })
    }

    /// The shared alphabet.
    #[must_use]
    pub fn tokenizer(&self) -> &CharTokenizer {
        &self.bundles.target.meta.tokenizer
    }

    /// The vocabulary size.
    #[must_use]
    pub fn vocab(&self) -> usize {
        self.tokenizer().vocab_size()
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
        let build = |bundle: &ModelBundle, name: &str| {
            DeviceLm::build(bundle, &device).map_err(|e| {
                WasmError::Model(format!(
                    "{reason}; rebuilding the {name} model on the CPU failed: {e}"
                ))
            })
        };
        if self.on_gpu(Role::Draft) {
            self.draft = build(&self.bundles.draft, "draft")?;
        }
        self.target = build(&self.bundles.target, "target")?;
        self.info = BackendInfo::cpu(self.info.requested, Some(reason.clone()));
        self.fallback = Some(reason);
        Ok(())
    }
}
