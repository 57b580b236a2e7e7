//! [`CachedLm`]: a model's [`ForwardPass`] behind the engine's [`LanguageModel`] trait,
//! with a rollback-able K/V cache for the shared prefix and a per-sequence "branch" cache
//! for draft suffixes. The request logic is written once here for every path: burn's
//! ([`BurnLm`](crate::BurnLm)) and the host CPU pass of `specula-host`.
//!
//! One request is answered in at most two forward passes:
//! 1. the common prefix of every sequence goes into the shared cache (batch 1), computing
//!    only the positions not already cached with the same tokens — a rejected draft simply
//!    does not match, which is the rollback;
//! 2. the remaining suffixes run as one batch attending to that prefix (and to the
//!    previous call's suffixes when each new sequence extends one of them, as SpecTr's
//!    draft calls do), padded at the end to a common length.

mod branch;
mod pass;
mod prefix;

use specula_engine::{ForwardRequest, ForwardResponse, LanguageModel, ModelError};

use crate::config::ModelConfig;
use crate::error::{Error, RequestProblem, Result};
use branch::Branch;
pub use pass::{ForwardPass, GptPass, RowsKv};
use prefix::Prefix;

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

/// A language model with caches, ready for the decoding engine: the forward pass `P` and
/// the cached keys and values of its own kind.
#[derive(Debug)]
pub struct CachedLm<P: ForwardPass> {
    pass: P,
    vocab_size: usize,
    max_seq: usize,
    cache: Prefix<P::Shared>,
    branch: Option<Branch<P::Kv>>,
    stats: ForwardStats,
}

impl<P: ForwardPass> CachedLm<P> {
    /// `pass` with empty caches.
    pub fn from_pass(pass: P) -> Self {
        let (vocab_size, max_seq) = (pass.vocab_size(), pass.max_seq());
        let cache = Prefix::new(pass.new_shared(), vocab_size);
        Self {
            pass,
            vocab_size,
            max_seq,
            cache,
            branch: None,
            stats: ForwardStats::default(),
        }
    }

    /// The forward pass.
    #[must_use]
    pub fn pass(&self) -> &P {
        &self.pass
    }

    /// The forward pass, to change its settings; the caches are kept, so a pass offers
    /// only settings that do not change its logits.
    pub fn pass_mut(&mut self) -> &mut P {
        &mut self.pass
    }

    /// The most positions a sequence may have.
    #[must_use]
    pub fn max_seq(&self) -> usize {
        self.max_seq
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
        // done, which holds for the CPU backend and the host pass.
        burn::tensor::try_read_sync(self.answer_async(request))
            .unwrap_or(Err(Error::BadRequest(RequestProblem::NoSyncReadBack)))
    }

    /// [`answer`](Self::answer) with an awaited read-back, for WebGPU in a browser (the
    /// only way to read a GPU buffer there) or any async caller.
    ///
    /// # Errors
    /// As [`answer`](Self::answer).
    pub async fn answer_async(&mut self, request: &ForwardRequest) -> Result<Vec<f32>> {
        let vocab = self.vocab_size;
        // How far each sequence is needed: up to its longest query.
        let mut need = vec![0_usize; request.sequences.len()];
        for q in &request.queries {
            let seq = request.sequences.get(q.sequence).ok_or(Error::BadRequest(
                RequestProblem::NoSuchSequence {
                    sequence: q.sequence,
                },
            ))?;
            if q.prefix_len == 0 || q.prefix_len > seq.len() {
                return Err(Error::BadRequest(RequestProblem::PrefixOutOfRange {
                    prefix_len: q.prefix_len,
                    len: seq.len(),
                    sequence: q.sequence,
                }));
            }
            need[q.sequence] = need[q.sequence].max(q.prefix_len);
        }
        if request
            .sequences
            .iter()
            .any(|s| s.len() < request.committed_len)
        {
            return Err(Error::BadRequest(RequestProblem::ShorterThanCommitted));
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
            let row = row.ok_or(Error::Internal("a query's logits row is missing"))?;
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
        // Positions from `keep` on are stale (rolled back or never written), so a pass may
        // write them as it goes.
        if let Some(logits) = self
            .pass
            .forward_in_place(new, self.cache.store_mut(), keep)
            .await
        {
            let logits = logits?;
            self.stats.passes += 1;
            self.stats.positions += new.len() as u64;
            return if self.cache.record(new, &logits) {
                Ok(())
            } else {
                Err(Error::Internal(
                    "the fused pass's logits do not fit the cache",
                ))
            };
        }
        let (logits, kv) = self
            .pass
            .forward(new, 1, self.cache.store(), keep, None)
            .await?;
        self.stats.passes += 1;
        self.stats.positions += new.len() as u64;
        if self.cache.append(&self.pass, new, kv, logits) {
            Ok(())
        } else {
            Err(Error::Internal("the new keys/values do not fit the cache"))
        }
    }

    fn check_tokens(&self, tokens: &[u32]) -> Result<()> {
        if tokens.len() > self.max_seq {
            return Err(Error::BadRequest(RequestProblem::TooLong {
                len: tokens.len(),
                max_seq: self.max_seq,
            }));
        }
        let vocab = self.vocab_size;
        match tokens.iter().find(|&&t| t as usize >= vocab) {
            Some(&token) => Err(Error::UnknownToken { token, vocab }),
            None => Ok(()),
        }
    }
}

impl<P: GptPass> CachedLm<P> {
    /// The model's shape.
    #[must_use]
    pub fn config(&self) -> &ModelConfig {
        self.pass.config()
    }
}

impl<P: ForwardPass> LanguageModel for CachedLm<P> {
    fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    fn forward(
        &mut self,
        request: &ForwardRequest,
    ) -> std::result::Result<ForwardResponse, ModelError> {
        let logits = self.answer(request)?;
        Ok(ForwardResponse::new(self.vocab_size, logits))
    }
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
