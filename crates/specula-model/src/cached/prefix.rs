//! The cache of the shared prefix: a path's preallocated store of keys and values, written
//! in place at the current length and rolled back to any shorter length by moving the
//! length (the stale tail is overwritten later), with the tokens and the logits of every
//! cached position, so a query for any cached prefix is answered without recomputation.

use super::pass::{ForwardPass, RowsKv};

/// The committed-prefix cache of one model.
#[derive(Debug)]
pub(super) struct Prefix<S> {
    store: S,
    tokens: Vec<u32>,
    logits: Vec<f32>,
    vocab: usize,
}

impl<S> Prefix<S> {
    /// An empty cache around `store`.
    pub(super) fn new(store: S, vocab: usize) -> Self {
        Self {
            store,
            tokens: Vec::new(),
            logits: Vec::new(),
            vocab,
        }
    }

    /// The storage.
    pub(super) fn store(&self) -> &S {
        &self.store
    }

    /// The cached tokens.
    pub(super) fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// Rolls back to the first `len` positions (no-op when already shorter).
    pub(super) fn truncate(&mut self, len: usize) {
        self.tokens.truncate(len);
        self.logits.truncate(len * self.vocab);
    }

    /// Appends `tokens` with their keys/values (one row of `tokens.len()` positions, written
    /// by `pass`) and their `n × vocab` logits. The caller keeps the length within
    /// `max_seq`. `false`, and nothing appended, when `new` is of another shape.
    pub(super) fn append<P: ForwardPass<Shared = S>>(
        &mut self,
        pass: &P,
        tokens: &[u32],
        new: P::Kv,
        logits: Vec<f32>,
    ) -> bool {
        if new.positions() != tokens.len() || !pass.write(&mut self.store, self.tokens.len(), new) {
            return false;
        }
        self.tokens.extend_from_slice(tokens);
        self.logits.extend_from_slice(&logits);
        true
    }

    /// The storage, for a pass that writes new keys/values itself (then [`record`]).
    ///
    /// [`record`]: Self::record
    pub(super) fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Appends `tokens` and their `n × vocab` logits, their keys/values already written
    /// into the store from the current length on. `false`, and nothing appended, when
    /// `logits` is of another length.
    pub(super) fn record(&mut self, tokens: &[u32], logits: &[f32]) -> bool {
        if logits.len() != tokens.len() * self.vocab {
            return false;
        }
        self.tokens.extend_from_slice(tokens);
        self.logits.extend_from_slice(logits);
        true
    }

    /// The logits after the first `pos + 1` tokens, if cached.
    pub(super) fn logits_row(&self, pos: usize) -> Option<&[f32]> {
        self.logits.get(pos * self.vocab..(pos + 1) * self.vocab)
    }
}
