//! [`BurnLm`]: a [`Gpt`] behind the engine's
//! [`LanguageModel`](specula_engine::LanguageModel) trait through burn's own forward pass
//! ([`BurnPass`]), on any device: the reference, and the path that runs on WebGPU.

mod fused;
pub(crate) mod kv;

use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::cached::{CachedLm, ForwardPass, GptPass};
use crate::config::ModelConfig;
use crate::error::{Error, RequestProblem, Result};
use crate::transformer::{Gpt, KvContext, LayerKv};
pub use kv::BurnKv;

/// burn's forward pass of a [`Gpt`] on its device, keys and values in burn tensors.
#[derive(Debug)]
pub struct BurnPass {
    model: Gpt,
    config: ModelConfig,
    device: Device,
    fused: fused::Fused,
}

/// A [`Gpt`] with caches, on burn's forward pass.
pub type BurnLm = CachedLm<BurnPass>;

impl BurnPass {
    /// Wraps `model` (built for `config`, on `device`).
    ///
    /// # Errors
    /// [`Error::BadConfig`] when `config` is invalid or does not match the model.
    pub fn new(model: Gpt, config: ModelConfig, device: Device) -> Result<Self> {
        config.validate()?;
        if model.vocab_size() != config.vocab_size
            || model.max_seq() != config.max_seq
            || model.n_layers() != config.n_layers
        {
            return Err(Error::BadConfig(
                "the model does not match its configuration".into(),
            ));
        }
        Ok(Self {
            model,
            config,
            device,
            fused: fused::Fused::default(),
        })
    }

    /// Runs passes of at most `max_positions` new positions of the shared prefix (capped
    /// at 64; 0, the default, for none) through the fused pass on WebGPU: every block in
    /// one dispatch (`specula_kernels::fused_forward`) where burn's pass takes about a
    /// dozen per block, for the same logits up to float rounding. Its one workgroup walks
    /// the positions in order, so it suits a model as small as the draft, whose pass is
    /// bound by dispatches, and passes of very few positions; a pass or device the kernel
    /// does not take runs burn's as before.
    pub fn set_fused(&mut self, max_positions: usize) {
        self.fused.set_max_positions(max_positions);
    }

    /// The longest pass the fused pass takes (0: it is off).
    #[must_use]
    pub fn fused_positions(&self) -> usize {
        self.fused.max_positions()
    }

    /// How many passes the fused kernel ran (the rest ran burn's).
    #[must_use]
    pub fn fused_passes(&self) -> u64 {
        self.fused.passes()
    }

    fn int_tensor(&self, tokens: &[u32], shape: [usize; 2]) -> Tensor<2, Int> {
        let data: Vec<i64> = tokens.iter().map(|&t| i64::from(t)).collect();
        Tensor::from_data(TensorData::new(data, shape), &self.device)
    }
}

impl ForwardPass for BurnPass {
    type Kv = BurnKv;
    type Shared = Vec<LayerKv>;

    fn vocab_size(&self) -> usize {
        self.config.vocab_size
    }

    fn max_seq(&self) -> usize {
        self.config.max_seq
    }

    fn new_shared(&self) -> Vec<LayerKv> {
        kv::new_shared(&self.config, &self.device)
    }

    async fn forward(
        &self,
        tokens: &[u32],
        rows: usize,
        shared: &Vec<LayerKv>,
        shared_len: usize,
        branch: Option<&BurnKv>,
    ) -> Result<(Vec<f32>, BurnKv)> {
        use crate::cached::RowsKv as _;
        let start = shared_len + branch.map_or(0, BurnKv::positions);
        let (logits, kv) = {
            // The views must be gone before the cache is written, or writing copies it.
            let shared = kv::view(shared, shared_len);
            self.model.forward_with(
                self.int_tensor(tokens, [rows, tokens.len() / rows.max(1)]),
                start,
                KvContext {
                    shared: shared.as_deref(),
                    branch: branch.map(BurnKv::layers),
                },
            )
        };
        Ok((read_async(logits).await?, BurnKv(kv)))
    }

    fn write(&self, shared: &mut Vec<LayerKv>, start: usize, kv: BurnKv) -> bool {
        kv::write(shared, start, kv);
        true
    }

    async fn forward_in_place(
        &self,
        tokens: &[u32],
        shared: &mut Vec<LayerKv>,
        start: usize,
    ) -> Option<Result<Vec<f32>>> {
        let logits = self
            .fused
            .run(&self.model, &self.config, tokens, shared, start)?;
        Some(read_async(logits).await)
    }
}

impl GptPass for BurnPass {
    fn config(&self) -> &ModelConfig {
        &self.config
    }
}

impl BurnLm {
    /// Wraps `model` (built for `config`, on `device`) with empty caches.
    ///
    /// # Errors
    /// [`Error::BadConfig`] when `config` is invalid or does not match the model.
    pub fn new(model: Gpt, config: ModelConfig, device: Device) -> Result<Self> {
        Ok(Self::from_pass(BurnPass::new(model, config, device)?))
    }

    /// The device it runs on.
    #[must_use]
    pub fn device(&self) -> &Device {
        &self.pass().device
    }

    /// The underlying module.
    #[must_use]
    pub fn model(&self) -> &Gpt {
        &self.pass().model
    }

    /// Logits at every position of `tokens` from a full forward pass without any cache
    /// (the reference the cached paths must match), `len × vocab` row-major.
    ///
    /// # Errors
    /// [`Error::BadRequest`] for an empty or too long sequence, [`Error::UnknownToken`].
    pub fn logits_uncached(&self, tokens: &[u32]) -> Result<Vec<f32>> {
        let config = self.config();
        if tokens.len() > config.max_seq {
            return Err(Error::BadRequest(RequestProblem::TooLong {
                len: tokens.len(),
                max_seq: config.max_seq,
            }));
        }
        let vocab = config.vocab_size;
        if let Some(&token) = tokens.iter().find(|&&t| t as usize >= vocab) {
            return Err(Error::UnknownToken { token, vocab });
        }
        if tokens.is_empty() {
            return Err(Error::BadRequest(RequestProblem::EmptySequence));
        }
        let pass = self.pass();
        let logits = pass
            .model
            .forward(pass.int_tensor(tokens, [1, tokens.len()]));
        read(logits)
    }
}

pub(crate) fn read<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>> {
    t.try_into_data()
        .map_err(|e| Error::ReadBack(format!("{e:?}")))?
        .try_into_vec::<f32>()
        .map_err(|e| Error::ReadBack(format!("{e:?}")))
}

pub(crate) async fn read_async<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>> {
    t.into_data_async()
        .await
        .map_err(|e| Error::ReadBack(format!("{e:?}")))?
        .try_into_vec::<f32>()
        .map_err(|e| Error::ReadBack(format!("{e:?}")))
}
