//! [`HostLlamaPass`]: the host forward pass of a Llama-family model as a
//! [`ForwardPass`](specula_model::ForwardPass), so that [`HostLlamaLm`] answers the
//! engine's requests with the same request logic (shared prefix, branch cache, work
//! counters) as burn's [`LlamaLm`](specula_model::LlamaLm).

use specula_gguf::{GgufModel, LlamaConfig};
use specula_model::{CachedLm, Error, ForwardPass, Result};

use crate::host_attention::Context;
use crate::host_kv::{HostCache, HostKv};
use crate::host_llama::HostLlama;
use crate::pass::host_threads;
use crate::stage_profile::StageProfile;

/// A Llama-family model's weights packed in host memory, run without burn's tensor
/// operations.
#[derive(Debug)]
pub struct HostLlamaPass {
    model: HostLlama,
    profile: StageProfile,
}

/// A Llama-family model with caches, on the host forward pass.
pub type HostLlamaLm = CachedLm<HostLlamaPass>;

impl HostLlamaPass {
    /// `model`'s weights packed for the host pass, on huge pages where the system has
    /// them, on one thread.
    ///
    /// # Errors
    /// [`Error::BadConfig`] when the shape is not one the pass runs (query heads that do
    /// not fill the model's width, or key/value heads that do not divide them) or a
    /// weight does not fit its shape.
    pub fn new(model: &GgufModel) -> Result<Self> {
        let model = HostLlama::new(model, true)
            .ok_or_else(|| Error::BadConfig("the model's weights do not fit its shape".into()))?;
        Ok(Self {
            model,
            profile: StageProfile::default(),
        })
    }

    /// The model's shape.
    #[must_use]
    pub fn config(&self) -> &LlamaConfig {
        &self.model.config
    }

    /// Whether the dense weights live in memory advised for huge pages (see
    /// [`HostPass::huge_pages`](crate::HostPass::huge_pages)).
    #[must_use]
    pub fn huge_pages(&self) -> bool {
        self.model.on_huge_pages()
    }

    /// Threads for the dense layers and attention: 1 (the default) or 2, as
    /// [`HostPass::set_threads`](crate::HostPass::set_threads). Logits do not change.
    ///
    /// # Errors
    /// [`Error::BadConfig`] for 0 or more than 2 threads.
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        self.model.threads = host_threads(threads)?;
        Ok(())
    }

    /// The threads set by [`set_threads`](Self::set_threads).
    #[must_use]
    pub fn threads(&self) -> usize {
        self.model.threads
    }

    /// A remote for half of each large dense call, as
    /// [`HostPass::set_dense_remote`](crate::HostPass::set_dense_remote).
    pub fn set_dense_remote(&mut self, remote: Option<std::sync::Arc<dyn crate::DenseRemote>>) {
        self.model.remote = crate::dense_remote::RemoteSlot(remote);
    }

    /// The remote's side of a dense call, as
    /// [`HostPass::serve_dense`](crate::HostPass::serve_dense).
    #[must_use]
    pub fn serve_dense(&self, call: crate::DenseCall<'_>) -> Option<Vec<f32>> {
        self.model.serve_dense(call)
    }

    /// The opt-in per-stage timing of this pass's forward passes (off until
    /// [`StageProfile::enable`]).
    #[must_use]
    pub fn stage_profile(&self) -> &StageProfile {
        &self.profile
    }

    /// The stage profile, to turn on or off or reset.
    pub fn stage_profile_mut(&mut self) -> &mut StageProfile {
        &mut self.profile
    }
}

impl ForwardPass for HostLlamaPass {
    type Kv = HostKv;
    type Shared = HostCache;

    fn vocab_size(&self) -> usize {
        self.model.config.vocab_size
    }

    fn max_seq(&self) -> usize {
        self.model.config.max_seq
    }

    fn new_shared(&self) -> HostCache {
        self.model.new_cache()
    }

    async fn forward(
        &self,
        tokens: &[u32],
        rows: usize,
        shared: &HostCache,
        shared_len: usize,
        branch: Option<&HostKv>,
    ) -> Result<(Vec<f32>, HostKv)> {
        let vocab = self.model.config.vocab_size;
        if let Some(&token) = tokens.iter().find(|&&t| t as usize >= vocab) {
            return Err(Error::UnknownToken { token, vocab });
        }
        let start = shared_len + branch.map_or(0, |b| b.len);
        let context = Context {
            shared: (shared_len > 0).then_some((shared, shared_len)),
            branch,
        };
        let mut timer = self.profile.timer(tokens.len());
        let out = self.model.forward(tokens, rows, start, context, &mut timer);
        timer.finish();
        out.ok_or(Error::Internal("a forward pass of the wrong shape"))
    }

    fn write(&self, shared: &mut HostCache, start: usize, kv: HostKv) -> bool {
        shared.write(start, &kv)
    }
}
