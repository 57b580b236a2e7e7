//! Parallel drafting (PEARL's post-verify, Liu et al. 2025): while the target verifies
//! round n, the draft model draws round n + 1's drafts from round n's drafts, as if every
//! one of them will be accepted. When they all are, those early drafts are round n + 1's
//! drafts (the target's bonus at position γ + 1 is not drawn: the first early draft is
//! tested there in the next target call); after a rejection they are dropped.
//!
//! Every draft tree draws from its own ChaCha stream (the tree's serial number; the
//! verification keeps stream 0), and which trees exist depends only on the outcomes, so
//! a seed gives the same tokens whether the caller runs the two requests one after the
//! other or concurrently, whatever the order their answers arrive in.

use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Decoder, Pending, Phase, RoundState, Stage, nanos};
use crate::config::Method;
use crate::draft_tree::DraftTree;
use crate::error::{Error, Result};
use crate::request::{ForwardRequest, ForwardResponse, Role, Step};
use crate::stopping::FinishReason;
use crate::trace::{Timing, TokenCounts, TokenSource};

/// A deliberate mistake in the parallel schedule, planted with
/// [`Decoder::with_parallel_bug`] to measure the power of exactness tests (the
/// parallel-drafting counterpart of `specula_core::Bug`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParallelBug {
    /// When every draft of a round is accepted, emit the first early draft at position
    /// γ + 1 untested (as if it were the target's bonus token) instead of testing it in
    /// the next round: that position then follows the draft, not the target.
    TrustEarlyDraft,
    /// Keep the early drafts after a rejection too, as the next round's drafts (drawn
    /// from a context that was not committed). Not a mistake in fact: each is still
    /// tested against the distribution it was drawn from, so the output stays exact
    /// (with fewer acceptances); the exactness tests check that they cannot tell.
    KeepAfterRejection,
}

/// The next round's drafts, drawn while this round's target request is outstanding.
pub(super) struct Early {
    pub(super) tree: DraftTree,
    pub(super) rng: ChaCha8Rng,
    /// Depths drawn so far.
    depth: usize,
    /// The outstanding draft request, with the paths it queries.
    pending: Option<(Pending, ForwardRequest)>,
    draft_calls: usize,
    timing: Timing,
}

impl Decoder {
    /// Plants `bug` in the parallel schedule (no effect without parallel drafting): the
    /// output then no longer follows the target, or, for
    /// [`ParallelBug::KeepAfterRejection`], does while looking wrong.
    #[must_use]
    pub fn with_parallel_bug(mut self, bug: ParallelBug) -> Self {
        self.parallel_bug = Some(bug);
        self
    }

    /// A fresh generator for the next draft tree.
    pub(super) fn tree_rng(&mut self) -> ChaCha8Rng {
        self.trees += 1;
        let mut rng = ChaCha8Rng::seed_from_u64(self.config.seed());
        rng.set_stream(self.trees);
        rng
    }

    /// Which request [`supply`](Self::supply) answers: the one `next_request` returns.
    pub(super) fn expected_role(&self) -> Role {
        if self.stale.is_some() && !self.is_done() {
            return Role::Draft;
        }
        match &self.phase {
            Phase::Round(state) => match state.stage {
                Stage::Draft(_) => Role::Draft,
                Stage::Target if state.early.as_ref().is_some_and(|e| e.pending.is_some()) => {
                    Role::Draft
                }
                Stage::Target => Role::Target,
            },
            _ => Role::Target,
        }
    }

    /// Whether `state` has a request of `role` outstanding.
    pub(super) fn outstanding(state: &RoundState, role: Role) -> bool {
        match (state.stage, role) {
            (Stage::Draft(_), Role::Draft) | (Stage::Target, Role::Target) => {
                state.pending.is_some()
            }
            (Stage::Draft(_), Role::Target) => false,
            (Stage::Target, Role::Draft) => {
                state.early.as_ref().is_some_and(|e| e.pending.is_some())
            }
        }
    }

    /// The target stage under parallel drafting: [`Step::Parallel`] when the target
    /// request is first issued (if the next round can draft), then the next round's
    /// draft requests while it runs, then the target request again.
    pub(super) fn parallel_target_step(&mut self, state: &mut RoundState) -> Step {
        let now = self.clock.now();
        let target = state.tree.target_request(self.context());
        if state.pending.is_none() {
            state.pending = Some(Pending {
                issued_at: now,
                paths: Vec::new(),
            });
            state.early = self.start_early(state);
            return match self.early_request(state, now) {
                Some(draft) => Step::Parallel { target, draft },
                None => Step::Target(target),
            };
        }
        match self.early_request(state, now) {
            Some(draft) => Step::Draft(draft),
            None => Step::Target(target),
        }
    }

    /// The next round's drafts, when this round's drafts leave room for one more round
    /// that drafts.
    fn start_early(&mut self, state: &RoundState) -> Option<Box<Early>> {
        let Method::Speculative { .. } = self.config.method() else {
            return None;
        };
        let depth = state.tree.depth();
        let after = self
            .stopper
            .remaining(self.generated().len())
            .saturating_sub(depth);
        let gamma = self.gamma().unwrap_or(1).min(after.saturating_sub(1));
        if depth == 0 || gamma == 0 {
            return None;
        }
        Some(Box::new(Early {
            tree: DraftTree::new(vec![1; gamma]),
            rng: self.tree_rng(),
            depth: 0,
            pending: None,
            draft_calls: 0,
            timing: Timing::default(),
        }))
    }

    /// The outstanding early draft request, or the next one when the last was answered
    /// and depths remain; `None` when the early drafts are complete (or there are none).
    fn early_request(&self, state: &mut RoundState, now: Duration) -> Option<ForwardRequest> {
        let early = state.early.as_mut()?;
        if let Some((_, request)) = &early.pending {
            return Some(request.clone());
        }
        if early.depth >= early.tree.depth() {
            return None;
        }
        let committed = self.context();
        let mut context = committed.to_vec();
        context.extend_from_slice(state.tree.last_path_tokens());
        let (mut request, paths) = early.tree.draft_request(early.depth + 1, &context);
        // This round's drafts are not committed yet.
        request.committed_len = committed.len();
        early.pending = Some((
            Pending {
                issued_at: now,
                paths,
            },
            request.clone(),
        ));
        Some(request)
    }

    /// Applies the answer to an early draft request.
    pub(super) fn apply_early_draft(
        &mut self,
        state: &mut RoundState,
        response: &ForwardResponse,
        arrive: Duration,
    ) -> Result<Option<crate::trace::RoundTrace>> {
        let queries = match state.early.as_ref().and_then(|e| e.pending.as_ref()) {
            Some((pending, _)) => pending.paths.len(),
            None => return Err(Error::NoPendingRequest),
        };
        self.check_response(Role::Draft, response, queries)?;
        let conditionals = (0..queries)
            .map(|row| self.draft_conditional(response, row))
            .collect::<Result<Vec<_>>>()?;
        let bug = self.config.bug();
        let Some(early) = state.early.as_mut() else {
            return Err(Error::NoPendingRequest);
        };
        let Some((pending, request)) = early.pending.take() else {
            return Err(Error::NoPendingRequest);
        };
        let depth = early.depth + 1;
        if let Err(e) = early
            .tree
            .grow(depth, &pending.paths, conditionals, bug, &mut early.rng)
        {
            early.pending = Some((pending, request));
            return Err(e);
        }
        early.depth = depth;
        early.draft_calls += 1;
        early.timing.draft_nanos += nanos(arrive.saturating_sub(pending.issued_at));
        Ok(None)
    }

    /// After a round with early drafts that did not finish generation: when every draft
    /// was accepted, they become the next round (`self.carried`); otherwise they are
    /// dropped, and a draft request still running becomes stale.
    pub(super) fn carry(
        &mut self,
        mut early: Box<Early>,
        all_accepted: bool,
        emitted: &mut Vec<u32>,
        sources: &mut Vec<TokenSource>,
        counts: &mut TokenCounts,
        finish: &mut Option<FinishReason>,
    ) {
        let keep = all_accepted || self.parallel_bug == Some(ParallelBug::KeepAfterRejection);
        if !keep {
            self.stale = early.pending.take().map(|(_, request)| request);
            return;
        }
        if all_accepted
            && self.parallel_bug == Some(ParallelBug::TrustEarlyDraft)
            && early.pending.is_none()
            && let Some((token, rest)) = early.tree.split_first()
        {
            self.tokens.push(token);
            emitted.push(token);
            sources.push(TokenSource::Accepted);
            counts.accepted += 1;
            let generated = self.tokens.get(self.prompt_len..).unwrap_or_default();
            *finish = self.stopper.after_token(generated);
            early.tree = rest;
            early.depth = early.depth.saturating_sub(1);
            if finish.is_some() {
                return;
            }
        }
        let early_drafts = early.depth;
        let stage = if early.depth < early.tree.depth() {
            Stage::Draft(early.depth + 1)
        } else {
            Stage::Target
        };
        let mut next = RoundState::new(early.tree, stage, Some(early.rng));
        next.pending = early.pending.map(|(pending, _)| pending);
        next.draft_calls = early.draft_calls;
        next.timing = early.timing;
        next.early_drafts = early_drafts;
        self.carried = Some(next);
    }
}
