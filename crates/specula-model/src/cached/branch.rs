//! The per-sequence "branch" cache of [`CachedLm`]: the draft suffixes of the previous
//! request, reused when the next request extends them (SpecTr's draft calls) or promoted
//! into the shared cache when one of them was accepted.

use super::{CachedLm, ForwardPass, RowsKv, common_prefix};
use crate::error::Result;

/// Suffixes computed by the previous request, one row per sequence.
#[derive(Debug)]
pub(super) struct Branch<K> {
    /// Length of the shared prefix they were computed against.
    base: usize,
    /// Tokens per row after the prefix.
    len: usize,
    /// Full token sequences (`base + len` each).
    rows: Vec<Vec<u32>>,
    /// Keys/values of every row and position.
    layers: K,
    /// `rows × len × vocab` logits.
    logits: Vec<f32>,
}

/// The outcome of one suffix batch.
pub(super) struct Suffix<K> {
    reused: usize,
    width: usize,
    /// `rows × reused × vocab`, from the previous branch.
    old_logits: Vec<f32>,
    /// `rows × width × vocab`.
    new_logits: Vec<f32>,
    pub(super) next_branch: Option<Branch<K>>,
}

impl<K> Suffix<K> {
    /// Logits of suffix row `r` at offset `off` after the shared prefix.
    pub(super) fn row(&self, r: usize, off: usize, vocab: usize) -> Option<&[f32]> {
        if off < self.reused {
            let at = (r * self.reused + off) * vocab;
            self.old_logits.get(at..at + vocab)
        } else {
            let at = (r * self.width + off - self.reused) * vocab;
            self.new_logits.get(at..at + vocab)
        }
    }
}

impl<P: ForwardPass> CachedLm<P> {
    /// Moves the longest run of `prefix[keep..]` that a previous suffix row already computed
    /// (against this same prefix start) into the shared cache, and returns its length. After
    /// a SpecTr verification the accepted draft is such a row, so the next request does not
    /// recompute it.
    pub(super) fn promote_branch(&mut self, prefix: &[u32], keep: usize) -> usize {
        let Some(b) = self.branch.as_ref().filter(|b| b.base == keep) else {
            return 0;
        };
        let best = b
            .rows
            .iter()
            .enumerate()
            // Every row holds `base + len` tokens: the prefix it was computed against, then
            // its suffix.
            .filter(|(_, row)| row[..keep] == prefix[..keep])
            .map(|(r, row)| (r, common_prefix(&row[keep..], &prefix[keep..])))
            .max_by_key(|&(_, m)| m);
        let Some((r, m)) = best.filter(|&(_, m)| m > 0) else {
            return 0;
        };
        let kv = b.layers.row_prefix(r, m);
        let vocab = self.vocab_size;
        let logits = b.logits[r * b.len * vocab..(r * b.len + m) * vocab].to_vec();
        if self
            .cache
            .append(&self.pass, &prefix[keep..keep + m], kv, logits)
        {
            m
        } else {
            0
        }
    }

    /// Runs every suffix row (tokens after `base`) in one batch.
    pub(super) async fn run_suffixes(
        &mut self,
        rows: &[&[u32]],
        suffix_rows: &[usize],
        base: usize,
    ) -> Result<Suffix<P::Kv>> {
        let vocab = self.vocab_size;
        let parents = self.branch_parents(rows, suffix_rows, base);
        let reused = match (&parents, &self.branch) {
            (Some(_), Some(b)) => b.len,
            _ => 0,
        };
        let start = base + reused;
        let lens: Vec<usize> = suffix_rows.iter().map(|&i| rows[i].len() - start).collect();
        let width = lens.iter().copied().max().unwrap_or(0);
        let mut old_logits = Vec::new();
        let mut gathered: Option<P::Kv> = None;
        if let (Some(parents), Some(branch)) = (&parents, &self.branch) {
            let row_len = branch.len * vocab;
            for &p in parents {
                old_logits.extend_from_slice(&branch.logits[p * row_len..(p + 1) * row_len]);
            }
            gathered = Some(branch.layers.select(parents));
        }
        if width == 0 {
            // Every wanted position was computed by the previous request.
            return Ok(Suffix {
                reused,
                width,
                old_logits,
                new_logits: Vec::new(),
                next_branch: None,
            });
        }
        // Pad at the end: causal attention keeps padding out of every real position.
        let mut tokens = Vec::with_capacity(suffix_rows.len() * width);
        for &i in suffix_rows {
            let row = &rows[i][start..];
            tokens.extend_from_slice(row);
            tokens.extend(std::iter::repeat_n(0, width - row.len()));
        }
        let (new_logits, kv) = self
            .pass
            .forward(
                &tokens,
                suffix_rows.len(),
                self.cache.store(),
                base,
                gathered.as_ref(),
            )
            .await?;
        self.stats.passes += 1;
        self.stats.positions += tokens.len() as u64;
        // Only unpadded rows can be extended by the next request.
        let unpadded = lens.iter().all(|&l| l == width);
        let layers = match gathered {
            _ if !unpadded => None,
            Some(old) => old.cat(kv),
            None => Some(kv),
        };
        let next_branch = layers.map(|layers| {
            let mut logits = Vec::with_capacity(suffix_rows.len() * (reused + width) * vocab);
            for r in 0..suffix_rows.len() {
                logits.extend_from_slice(&old_logits[r * reused * vocab..(r + 1) * reused * vocab]);
                logits.extend_from_slice(&new_logits[r * width * vocab..(r + 1) * width * vocab]);
            }
            Branch {
                base,
                len: reused + width,
                rows: suffix_rows.iter().map(|&i| rows[i].to_vec()).collect(),
                layers,
                logits,
            }
        });
        Ok(Suffix {
            reused,
            width,
            old_logits,
            new_logits,
            next_branch,
        })
    }

    /// For each suffix row, the previous branch row it extends, if every row extends one
    /// computed against the same prefix.
    fn branch_parents(
        &self,
        rows: &[&[u32]],
        suffix_rows: &[usize],
        base: usize,
    ) -> Option<Vec<usize>> {
        let branch = self.branch.as_ref().filter(|b| b.base == base)?;
        suffix_rows
            .iter()
            .map(|&i| {
                let row = rows[i];
                branch
                    .rows
                    .iter()
                    .position(|b| row.len() >= b.len() && row.starts_with(b))
            })
            .collect()
    }
}
