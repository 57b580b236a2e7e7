//! [`DeviceLm`]: a model on the faster forward pass for its device, for callers that pick
//! the device at run time (the CLI's `--backend`, the browser's WebGPU with its CPU
//! fallback). Each variant is a whole model of one path, so there is no combination of
//! a path with the other path's caches to get wrong.

use burn::tensor::Device;
use specula_engine::{ForwardRequest, ForwardResponse, LanguageModel, ModelError};
use specula_gguf::GgufModel;
use specula_model::{BurnLm, ForwardStats, LlamaLm, ModelBundle, ModelConfig, Result};

use std::sync::Arc;

use crate::dense_remote::{DenseCall, DenseRemote};
use crate::llama_pass::{HostLlamaLm, HostLlamaPass};
use crate::pass::{HostLm, HostPass};
use crate::stage_profile::StageProfile;

/// A model on the host forward pass or on burn's.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "a process holds one or two models and never moves them in a loop"
)]
pub enum DeviceLm {
    /// The host pass (burn's CPU backend).
    Host(HostLm),
    /// burn's pass (a GPU device, or burn's CPU backend to compare).
    Burn(BurnLm),
    /// A Llama-family model from a GGUF file, on the host pass (burn's CPU backend).
    HostLlama(HostLlamaLm),
    /// A Llama-family model from a GGUF file, on burn's pass (a GPU device).
    Llama(LlamaLm),
}

impl DeviceLm {
    /// The model of `bundle` for `device`: on burn's CPU backend the host pass, whose
    /// few-position calls cost far less than burn's per-operation work (see `HostGpt`);
    /// on any other device burn's pass.
    ///
    /// # Errors
    /// The errors of [`HostPass::from_bundle`] or [`ModelBundle::build`].
    pub fn build(bundle: &ModelBundle, device: &Device) -> Result<Self> {
        if *device == Device::flex() {
            Ok(Self::Host(HostLm::from_pass(HostPass::from_bundle(
                bundle,
            )?)))
        } else {
            Ok(Self::Burn(bundle.build(device)?))
        }
    }

    /// `model` (read from a GGUF file) for `device`: on burn's CPU backend the host pass,
    /// whose verifying passes read the weights once (see `HostLlama`); on any other device
    /// burn's pass.
    ///
    /// # Errors
    /// The errors of [`HostLlamaPass::new`] or [`LlamaLm::load`].
    pub fn from_gguf(model: &GgufModel, device: &Device) -> Result<Self> {
        if *device == Device::flex() {
            Ok(Self::HostLlama(HostLlamaLm::from_pass(HostLlamaPass::new(
                model,
            )?)))
        } else {
            Ok(Self::Llama(LlamaLm::load(model, device)?))
        }
    }

    /// Threads for a host pass (1 or 2; see [`HostPass::set_threads`]); burn's passes
    /// keep burn's own thread pool.
    ///
    /// # Errors
    /// [`specula_model::Error::BadConfig`] for 0 or more than 2 threads on a host pass.
    pub fn set_host_threads(&mut self, threads: usize) -> Result<()> {
        match self {
            Self::Host(lm) => lm.pass_mut().set_threads(threads),
            Self::HostLlama(lm) => lm.pass_mut().set_threads(threads),
            Self::Burn(_) | Self::Llama(_) => Ok(()),
        }
    }

    /// Hands half of each large dense call of a host pass to `remote` (see
    /// [`HostPass::set_dense_remote`]); `false`, and nothing set, on burn's passes.
    pub fn set_dense_remote(&mut self, remote: Option<Arc<dyn DenseRemote>>) -> bool {
        match self {
            Self::Host(lm) => lm.pass_mut().set_dense_remote(remote),
            Self::HostLlama(lm) => lm.pass_mut().set_dense_remote(remote),
            Self::Burn(_) | Self::Llama(_) => return false,
        }
        true
    }

    /// The remote's side of a dense call on a host pass (see [`DenseRemote`]); `None` on
    /// burn's passes or for a call that does not fit the model.
    #[must_use]
    pub fn serve_dense(&self, call: DenseCall<'_>) -> Option<Vec<f32>> {
        match self {
            Self::Host(lm) => lm.pass().serve_dense(call),
            Self::HostLlama(lm) => lm.pass().serve_dense(call),
            Self::Burn(_) | Self::Llama(_) => None,
        }
    }

    /// The stage profile of a host pass (see [`StageProfile`]); `None` on burn's passes,
    /// which have none.
    #[must_use]
    pub fn stage_profile(&self) -> Option<&StageProfile> {
        match self {
            Self::Host(lm) => Some(lm.pass().stage_profile()),
            Self::HostLlama(lm) => Some(lm.pass().stage_profile()),
            Self::Burn(_) | Self::Llama(_) => None,
        }
    }

    /// The stage profile of a host pass, to turn on or off or reset; `None` on burn's
    /// passes.
    pub fn stage_profile_mut(&mut self) -> Option<&mut StageProfile> {
        match self {
            Self::Host(lm) => Some(lm.pass_mut().stage_profile_mut()),
            Self::HostLlama(lm) => Some(lm.pass_mut().stage_profile_mut()),
            Self::Burn(_) | Self::Llama(_) => None,
        }
    }

    /// The shape of a bundled-architecture model; `None` for a GGUF model.
    #[must_use]
    pub fn gpt_config(&self) -> Option<&ModelConfig> {
        match self {
            Self::Host(lm) => Some(lm.config()),
            Self::Burn(lm) => Some(lm.config()),
            Self::HostLlama(_) | Self::Llama(_) => None,
        }
    }

    /// The most positions a sequence may have.
    #[must_use]
    pub fn max_seq(&self) -> usize {
        match self {
            Self::Host(lm) => lm.max_seq(),
            Self::Burn(lm) => lm.max_seq(),
            Self::HostLlama(lm) => lm.max_seq(),
            Self::Llama(lm) => lm.max_seq(),
        }
    }

    /// Work done so far.
    #[must_use]
    pub fn stats(&self) -> ForwardStats {
        match self {
            Self::Host(lm) => lm.stats(),
            Self::Burn(lm) => lm.stats(),
            Self::HostLlama(lm) => lm.stats(),
            Self::Llama(lm) => lm.stats(),
        }
    }

    /// Forgets every cached position.
    pub fn reset(&mut self) {
        match self {
            Self::Host(lm) => lm.reset(),
            Self::Burn(lm) => lm.reset(),
            Self::HostLlama(lm) => lm.reset(),
            Self::Llama(lm) => lm.reset(),
        }
    }

    /// Rolls the shared cache back to its first `len` positions.
    pub fn truncate(&mut self, len: usize) {
        match self {
            Self::Host(lm) => lm.truncate(len),
            Self::Burn(lm) => lm.truncate(len),
            Self::HostLlama(lm) => lm.truncate(len),
            Self::Llama(lm) => lm.truncate(len),
        }
    }

    /// Answers `request` with an awaited read-back (see
    /// [`CachedLm::answer_async`](specula_model::CachedLm::answer_async)).
    ///
    /// # Errors
    /// As [`CachedLm::answer`](specula_model::CachedLm::answer).
    pub async fn answer_async(&mut self, request: &ForwardRequest) -> Result<Vec<f32>> {
        match self {
            Self::Host(lm) => lm.answer_async(request).await,
            Self::Burn(lm) => lm.answer_async(request).await,
            Self::HostLlama(lm) => lm.answer_async(request).await,
            Self::Llama(lm) => lm.answer_async(request).await,
        }
    }
}

impl LanguageModel for DeviceLm {
    fn vocab_size(&self) -> usize {
        match self {
            Self::Host(lm) => lm.vocab_size(),
            Self::Burn(lm) => lm.vocab_size(),
            Self::HostLlama(lm) => lm.vocab_size(),
            Self::Llama(lm) => lm.vocab_size(),
        }
    }

    fn forward(
        &mut self,
        request: &ForwardRequest,
    ) -> std::result::Result<ForwardResponse, ModelError> {
        match self {
            Self::Host(lm) => lm.forward(request),
            Self::Burn(lm) => lm.forward(request),
            Self::HostLlama(lm) => lm.forward(request),
            Self::Llama(lm) => lm.forward(request),
        }
    }
}
