//! [`HostPass`]: the host forward pass of `HostGpt` as a
//! [`ForwardPass`](specula_model::ForwardPass), so that [`HostLm`] answers the engine's
//! requests with the same request logic as burn's [`BurnLm`](specula_model::BurnLm).

use burn::tensor::Device;
use specula_model::{
    CachedLm, Error, ForwardPass, Gpt, GptPass, ModelBundle, ModelConfig, Result, RowsKv,
    load_model,
};

use crate::dense::gather_panels;
use crate::host_kv::{HostCache, HostKv};
use crate::host_model::{HostContext, HostGpt};
use crate::stage_profile::StageProfile;

/// A model's inference parameters in host memory (dense layers packed once at load,
/// attention and LayerNorm as plain loops), run without burn's tensor operations.
#[derive(Debug)]
pub struct HostPass {
    model: HostGpt,
    config: ModelConfig,
    profile: StageProfile,
}

/// A model with caches, on the host forward pass.
pub type HostLm = CachedLm<HostPass>;

impl HostPass {
    /// `model`'s parameters (built for `config`) copied to host memory, the dense weights
    /// on huge pages where the system has them, on one thread.
    ///
    /// # Errors
    /// [`Error::BadConfig`] when `config` is invalid or does not match the model;
    /// [`Error::Weights`] when the parameters cannot be read back synchronously (a model
    /// on WebGPU in a browser) or do not fit their shapes.
    pub fn new(model: &Gpt, config: ModelConfig) -> Result<Self> {
        config.validate()?;
        if model.vocab_size() != config.vocab_size
            || model.max_seq() != config.max_seq
            || model.n_layers() != config.n_layers
        {
            return Err(Error::BadConfig(
                "the model does not match its configuration".into(),
            ));
        }
        let params = model.params().ok_or_else(|| {
            Error::Weights("the parameters cannot be read back synchronously".into())
        })?;
        let model = HostGpt::new(params, true)
            .ok_or_else(|| Error::Weights("the parameters do not fit their shapes".into()))?;
        Ok(Self {
            model,
            config,
            profile: StageProfile::default(),
        })
    }

    /// The model of `bundle`, read through burn's CPU backend.
    ///
    /// # Errors
    /// The errors of [`load_model`] and [`new`](Self::new).
    pub fn from_bundle(bundle: &ModelBundle) -> Result<Self> {
        let config = bundle.meta.config;
        let model = load_model(&config, &bundle.weights, &Device::flex())?;
        Self::new(&model, config)
    }

    /// Whether the dense weights live in one block of memory advised for transparent huge
    /// pages: on Linux by default for weights of 1 MiB or more (a target position reads
    /// ~30 MB of them, and small pages cost a TLB miss and a prefetch restart per 4 KiB);
    /// `false` elsewhere, for smaller models, or when the system refused the mapping. The
    /// shared-prefix cache of keys and values follows the same rule, always.
    #[must_use]
    pub fn huge_pages(&self) -> bool {
        self.model.on_huge_pages()
    }

    /// Asks for the dense weights on huge pages or on ordinary heap memory (to compare;
    /// see [`huge_pages`](Self::huge_pages)). Logits do not change.
    pub fn set_huge_pages(&mut self, on: bool) {
        gather_panels(&mut self.model.dense_layers_mut(), on);
    }

    /// Threads for the dense layers: 1 (the default) or 2. With 2, a helper thread
    /// computes half the output columns of every dense call of at least 2^18
    /// multiply-adds (the target's layers; the draft's only with several rows) and spins
    /// between them for the rest of the forward pass. Verifying several positions is
    /// arithmetic that one core does not hide behind reading the weights, and a second
    /// core takes half of it; one position can gain too, where two cores stream the
    /// weights faster than one (MODELS.md, "The helper thread"). Logits do not change.
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

    /// Hands half of each large dense call to `remote`, another copy of this model
    /// answering with [`serve_dense`](Self::serve_dense) (another wasm instance, where no
    /// thread can be spawned), or stops (`None`). A helper thread, when set, comes first.
    /// Logits do not change.
    pub fn set_dense_remote(&mut self, remote: Option<std::sync::Arc<dyn crate::DenseRemote>>) {
        self.model.remote = crate::dense_remote::RemoteSlot(remote);
    }

    /// The remote's side of a dense call (see [`crate::DenseRemote`]): this copy's part
    /// of `call`, `None` when the call does not fit the model.
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

/// `threads` when the host pass can run on that many (1 or 2).
///
/// # Errors
/// [`Error::BadConfig`] for 0 or more than 2 threads.
pub(crate) fn host_threads(threads: usize) -> Result<usize> {
    if (1..=2).contains(&threads) {
        Ok(threads)
    } else {
        Err(Error::BadConfig(format!(
            "the host forward pass runs on 1 or 2 threads, not {threads}"
        )))
    }
}

impl GptPass for HostPass {
    fn config(&self) -> &ModelConfig {
        &self.config
    }
}

impl ForwardPass for HostPass {
    type Kv = HostKv;
    type Shared = HostCache;

    fn vocab_size(&self) -> usize {
        self.config.vocab_size
    }

    fn max_seq(&self) -> usize {
        self.config.max_seq
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
        let start = shared_len + branch.map_or(0, |b| b.len);
        let context = HostContext {
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

impl RowsKv for HostKv {
    fn positions(&self) -> usize {
        self.len
    }

    fn row_prefix(&self, row: usize, len: usize) -> Self {
        HostKv::row_prefix(self, row, len)
    }

    fn select(&self, rows: &[usize]) -> Self {
        HostKv::select(self, rows)
    }

    fn cat(self, newer: Self) -> Option<Self> {
        HostKv::cat(&self, &newer)
    }
}
