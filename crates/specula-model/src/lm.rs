//! [`BurnLm`]: a [`Gpt`] behind the engine's [`LanguageModel`] trait, with a rollback-able
//! K/V cache for the shared prefix and a per-sequence "branch" cache for draft suffixes.
//!
//! One request is answered in at most two forward passes:
//! 1. the common prefix of every sequence goes into the shared cache (batch 1), computing
//!    only the positions not already cached with the same tokens — a rejected draft simply
//!    does not match, which is the rollback;
//! 2. the remaining suffixes run as one batch attending to that prefix (and to the
//!    previous call's suffixes when each new sequence extends one of them, as SpecTr's
//!    draft calls do), padded at the end to a common length.

mod branch;

use burn::tensor::{Device, Int, Tensor, TensorData};
use specula_engine::{ForwardRequest, ForwardResponse, LanguageModel, ModelError};

use crate::cache::{KvCache, Store};
use crate::config::ModelConfig;
use crate::error::{Error, Result};
use crate::host_model::{HostContext, HostGpt};
use crate::kv::Kv;
use crate::transformer::{Gpt, KvContext};
use branch::Branch;

/// Work counters, for measuring cost per position.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ForwardStats {
    /// Requests answered.
    pub requests: u64,
    /// Forward passes run (at most two per request).
    pub passes: u64,
    /// Positions computed (rows × new tokens, padding included).
    pub positions: u64,
}

/// A transformer language model with caches, ready for the decoding engine.
#[derive(Debug)]
pub struct BurnLm {
    model: Gpt,
    /// The inference parameters in host memory, on burn's CPU backend only: when present,
    /// every forward pass runs on them instead of through burn's tensor operations.
    host: Option<HostGpt>,
    /// Whether the host pass asks for its dense weights on huge pages.
    huge_pages: bool,
    /// Threads for the host pass's dense layers.
    host_threads: usize,
    config: ModelConfig,
    device: Device,
    cache: KvCache,
    branch: Option<Branch>,
    stats: ForwardStats,
}

impl BurnLm {
    /// Wraps `model` (built for `config`, on `device`) with empty caches.
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
        let cache = KvCache::burn(&config, &device);
        let mut lm = Self {
            model,
            host: None,
            huge_pages: true,
            host_threads: 1,
            config,
            device,
            cache,
            branch: None,
            stats: ForwardStats::default(),
        };
        // At decoding's few positions per call, burn's per-operation work costs more than
        // the arithmetic (see `host_model`).
        lm.set_host_forward(true);
        Ok(lm)
    }

    /// The model's shape.
    #[must_use]
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The device it runs on.
    #[must_use]
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Whether forward passes run on the host copy of the parameters (dense layers on
    /// weights packed once at load, attention and LayerNorm as plain loops) instead of
    /// burn's tensor operations: on by default on burn's CPU backend; see
    /// [`set_host_forward`](Self::set_host_forward).
    #[must_use]
    pub fn host_forward(&self) -> bool {
        self.host.is_some()
    }

    /// Turns the host forward pass on or off (off runs burn's own forward, to compare). On
    /// devices other than burn's CPU backend it stays off. Logits agree either way to float
    /// rounding. Switching clears the caches, whose keys and values live in a different
    /// form on each path.
    pub fn set_host_forward(&mut self, on: bool) {
        if on == self.host.is_some() {
            return;
        }
        self.host = (on && self.device == Device::flex())
            .then(|| self.model.host(self.huge_pages))
            .flatten();
        if let Some(host) = &mut self.host {
            host.threads = self.host_threads;
        }
        self.cache = match &self.host {
            Some(host) => KvCache::host(host.new_cache(), self.config.vocab_size),
            None => KvCache::burn(&self.config, &self.device),
        };
        self.branch = None;
    }

    /// Whether the host forward pass keeps its dense weights in one block of memory
    /// advised for transparent huge pages: on Linux by default for weights of 1 MiB or
    /// more (a target position reads ~30 MB of them, and small pages cost a TLB miss and a
    /// prefetch restart per 4 KiB); `false` elsewhere, for smaller models, without the
    /// host pass, or when the system refused the mapping. The shared-prefix cache of keys
    /// and values follows the same rule, always.
    #[must_use]
    pub fn huge_pages(&self) -> bool {
        self.host.as_ref().is_some_and(HostGpt::on_huge_pages)
    }

    /// Asks for the host pass's dense weights on huge pages or on ordinary heap memory
    /// (to compare; see [`huge_pages`](Self::huge_pages)). Logits do not change; the
    /// caches are kept.
    pub fn set_huge_pages(&mut self, on: bool) {
        self.huge_pages = on;
        if let Some(host) = &mut self.host {
            crate::dense::gather_panels(&mut host.dense_layers_mut(), on);
        }
    }

    /// Threads for the host forward pass's dense layers: 1 (the default) or 2. With 2, a
    /// helper thread computes half the output columns of every dense call of at least
    /// 2^18 multiply-adds (the target's layers; the draft's only with several rows) and
    /// spins between them for the rest of the forward pass. Verifying several positions
    /// is arithmetic that one core does not hide behind reading the weights, and a second
    /// core takes half of it; one position can gain too, where two cores stream the
    /// weights faster than one (MODELS.md, "The helper thread"). Logits do not change.
    ///
    /// # Errors
    /// [`Error::BadConfig`] for 0 or more than 2 threads.
    pub fn set_host_threads(&mut self, threads: usize) -> Result<()> {
        if !(1..=2).contains(&threads) {
            return Err(Error::BadConfig(format!(
                "the host forward pass runs on 1 or 2 threads, not {threads}"
            )));
        }
        self.host_threads = threads;
        if let Some(host) = &mut self.host {
            host.threads = threads;
        }
        Ok(())
    }

    /// The threads set by [`set_host_threads`](Self::set_host_threads).
    #[must_use]
    pub fn host_threads(&self) -> usize {
        self.host_threads
    }

    /// The underlying module.
    #[must_use]
    pub fn model(&self) -> &Gpt {
        &self.model
    }

    /// Work done so far.
    #[must_use]
    pub fn stats(&self) -> ForwardStats {
        self.stats
    }

    /// Forgets every cached position.
    pub fn reset(&mut self) {
        self.cache.truncate(0);
        self.branch = None;
    }

    /// Rolls the shared cache back to its first `len` positions (and drops the branch).
    pub fn truncate(&mut self, len: usize) {
        self.cache.truncate(len);
        self.branch = None;
    }

    /// The tokens currently in the shared cache.
    #[must_use]
    pub fn cached_tokens(&self) -> &[u32] {
        self.cache.tokens()
    }

    /// Logits at every position of `tokens` from a full forward pass without any cache
    /// (the reference the cached path must match), `len × vocab` row-major.
    ///
    /// # Errors
    /// [`Error::BadRequest`] for an empty or too long sequence, [`Error::UnknownToken`].
    pub fn logits_uncached(&self, tokens: &[u32]) -> Result<Vec<f32>> {
        self.check_tokens(tokens)?;
        if tokens.is_empty() {
            return Err(Error::BadRequest("the sequence is empty".into()));
        }
        let logits = self
            .model
            .forward(self.int_tensor(tokens, [1, tokens.len()]));
        read(logits)
    }

    /// Answers `request`: one row of logits per query, in order.
    ///
    /// Blocks on the device read-back; in a browser on WebGPU, where blocking is
    /// impossible, use [`answer_async`](Self::answer_async).
    ///
    /// # Errors
    /// [`Error::BadRequest`] for a query outside its sequence, a sequence longer than
    /// `max_seq`, or a committed length longer than a sequence (also when the read-back
    /// cannot complete synchronously); [`Error::UnknownToken`].
    pub fn answer(&mut self, request: &ForwardRequest) -> Result<Vec<f32>> {
        // Natively this blocks; in wasm it succeeds only when the read-back is already
        // done, which holds for the CPU backend.
        burn::tensor::try_read_sync(self.answer_async(request)).unwrap_or_else(|| {
            Err(Error::BadRequest(
                "the device cannot be read synchronously here; use answer_async".into(),
            ))
        })
    }

    /// [`answer`](Self::answer) with an awaited read-back, for WebGPU in a browser (the
    /// only way to read a GPU buffer there) or any async caller.
    ///
    /// # Errors
    /// As [`answer`](Self::answer).
    pub async fn answer_async(&mut self, request: &ForwardRequest) -> Result<Vec<f32>> {
        let vocab = self.config.vocab_size;
        // How far each sequence is needed: up to its longest query.
        let mut need = vec![0_usize; request.sequences.len()];
        for q in &request.queries {
            let seq = request.sequences.get(q.sequence).ok_or_else(|| {
                Error::BadRequest(format!("query for sequence {} out of range", q.sequence))
            })?;
            if q.prefix_len == 0 || q.prefix_len > seq.len() {
                return Err(Error::BadRequest(format!(
                    "query prefix length {} is outside 1..={} for sequence {}",
                    q.prefix_len,
                    seq.len(),
                    q.sequence
                )));
            }
            need[q.sequence] = need[q.sequence].max(q.prefix_len);
        }
        if request
            .sequences
            .iter()
            .any(|s| s.len() < request.committed_len)
        {
            return Err(Error::BadRequest(
                "a sequence is shorter than the committed length".into(),
            ));
        }
        let used: Vec<usize> = (0..need.len()).filter(|&i| need[i] > 0).collect();
        let Some(&first) = used.first() else {
            return Ok(Vec::new());
        };
        let rows: Vec<&[u32]> = request
            .sequences
            .iter()
            .zip(&need)
            .map(|(s, &n)| &s[..n])
            .collect();
        for &i in &used {
            self.check_tokens(rows[i])?;
        }
        let shared = used
            .iter()
            .map(|&i| common_prefix(rows[first], rows[i]))
            .min()
            .unwrap_or(0);
        self.stats.requests += 1;
        self.sync_shared(&rows[first][..shared]).await?;

        let suffix_rows: Vec<usize> = used.iter().copied().filter(|&i| need[i] > shared).collect();
        let suffix = if suffix_rows.is_empty() {
            None
        } else {
            Some(self.run_suffixes(&rows, &suffix_rows, shared).await?)
        };

        let mut out = Vec::with_capacity(request.queries.len() * vocab);
        for q in &request.queries {
            let pos = q.prefix_len - 1;
            let row = if pos < shared {
                self.cache.logits_row(pos)
            } else {
                let r = suffix_rows.iter().position(|&i| i == q.sequence);
                match (&suffix, r) {
                    (Some(s), Some(r)) => s.row(r, pos - shared, vocab),
                    _ => None,
                }
            };
            let row =
                row.ok_or_else(|| Error::BadRequest("internal: missing logits row".into()))?;
            out.extend_from_slice(row);
        }
        if let Some(s) = suffix {
            self.branch = s.next_branch;
        }
        Ok(out)
    }

    /// Makes the shared cache hold exactly `prefix` at its start, computing only what is
    /// missing. Positions beyond are kept (they may match a later request) unless new
    /// ones must be written.
    async fn sync_shared(&mut self, prefix: &[u32]) -> Result<()> {
        let keep = common_prefix(self.cache.tokens(), prefix);
        if keep == prefix.len() {
            return Ok(());
        }
        self.cache.truncate(keep);
        let keep = keep + self.promote_branch(prefix, keep);
        if keep == prefix.len() {
            return Ok(());
        }
        let new = &prefix[keep..];
        let (logits, kv) = self.run_forward(new, 1, keep, None).await?;
        self.stats.passes += 1;
        self.stats.positions += new.len() as u64;
        if self.cache.append(new, kv, logits) {
            Ok(())
        } else {
            Err(internal("the new keys/values do not fit the cache"))
        }
    }

    /// One forward pass over `tokens` (`rows` rows of equal length) at positions after the
    /// first `shared_len` cached ones and the `branch` rows: logits and new keys/values.
    async fn run_forward(
        &self,
        tokens: &[u32],
        rows: usize,
        shared_len: usize,
        branch: Option<&Kv>,
    ) -> Result<(Vec<f32>, Kv)> {
        let start = shared_len + branch.map_or(0, Kv::len);
        match (&self.host, self.cache.store()) {
            (Some(host), Store::Host(cache)) => {
                let branch = match branch {
                    Some(Kv::Host(b)) => Some(b),
                    None => None,
                    Some(Kv::Burn(_)) => return Err(internal("a burn branch on the host path")),
                };
                let context = HostContext {
                    shared: (shared_len > 0).then_some((cache, shared_len)),
                    branch,
                };
                host.forward(tokens, rows, start, context)
                    .map(|(logits, kv)| (logits, Kv::Host(kv)))
                    .ok_or_else(|| internal("a forward pass of the wrong shape"))
            }
            (None, Store::Burn(_)) => {
                let branch = match branch {
                    Some(Kv::Burn(b)) => Some(b.as_slice()),
                    None => None,
                    Some(Kv::Host(_)) => return Err(internal("a host branch on the burn path")),
                };
                let (logits, kv) = {
                    // The views must be gone before `append`, or it copies the cache.
                    let shared = self.cache.burn_view(shared_len);
                    self.model.forward_with(
                        self.int_tensor(tokens, [rows, tokens.len() / rows.max(1)]),
                        start,
                        KvContext {
                            shared: shared.as_deref(),
                            branch,
                        },
                    )
                };
                Ok((read_async(logits).await?, Kv::Burn(kv)))
            }
            _ => Err(internal("the cache does not match the forward path")),
        }
    }

    fn check_tokens(&self, tokens: &[u32]) -> Result<()> {
        if tokens.len() > self.config.max_seq {
            return Err(Error::BadRequest(format!(
                "a sequence of {} tokens is longer than the model's {} positions",
                tokens.len(),
                self.config.max_seq
            )));
        }
        let vocab = self.config.vocab_size;
        match tokens.iter().find(|&&t| t as usize >= vocab) {
            Some(&token) => Err(Error::UnknownToken { token, vocab }),
            None => Ok(()),
        }
    }

    fn int_tensor(&self, tokens: &[u32], shape: [usize; 2]) -> Tensor<2, Int> {
        let data: Vec<i64> = tokens.iter().map(|&t| i64::from(t)).collect();
        Tensor::from_data(TensorData::new(data, shape), &self.device)
    }
}

impl LanguageModel for BurnLm {
    fn vocab_size(&self) -> usize {
        self.config.vocab_size
    }

    fn forward(
        &mut self,
        request: &ForwardRequest,
    ) -> std::result::Result<ForwardResponse, ModelError> {
        let logits = self.answer(request)?;
        Ok(ForwardResponse::new(self.config.vocab_size, logits))
    }
}

fn internal(what: &str) -> Error {
    Error::BadRequest(format!("internal: {what}"))
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn read<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>> {
    t.try_into_data()
        .map_err(|e| Error::BadRequest(format!("reading logits back: {e:?}")))?
        .try_into_vec::<f32>()
        .map_err(|e| Error::BadRequest(format!("reading logits back: {e:?}")))
}

async fn read_async<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>> {
    t.into_data_async()
        .await
        .map_err(|e| Error::BadRequest(format!("reading logits back: {e:?}")))?
        .try_into_vec::<f32>()
        .map_err(|e| Error::BadRequest(format!("reading logits back: {e:?}")))
}
