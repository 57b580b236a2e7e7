//! Applying the target's answer: the round's selection, the emitted tokens under the
//! stop conditions, the hand-over of early drafts (parallel drafting), and the trace.

use std::time::Duration;

use specula_core::Bug;

use super::{Decoder, RoundState, nanos};
use crate::config::Method;
use crate::draft_tree::DraftTree;
use crate::error::{Error, Result};
use crate::request::{ForwardResponse, Role};
use crate::round::select_round;
use crate::trace::{DraftNode, RoundTrace, TokenCounts, TokenSource};

impl Decoder {
    pub(super) fn apply_target(
        &mut self,
        state: &mut RoundState,
        response: &ForwardResponse,
        arrive: Duration,
    ) -> Result<Option<RoundTrace>> {
        let Some(pending) = state.pending.as_ref() else {
            return Err(Error::NoPendingRequest);
        };
        let issued_at = pending.issued_at;
        self.check_response(Role::Target, response, state.tree.paths.len())?;
        if matches!(self.config.method(), Method::Lookup { .. }) {
            // Every context token is now known to be inside the vocabulary.
            state.tree.set_point_masses(response.vocab)?;
        }
        let record = self.config.record_distributions();
        let selection = select_round(
            &state.tree,
            response,
            &self.config.sampling(),
            self.rule,
            self.config.bug(),
            record,
            state.early.is_none(),
            &mut self.rng,
        )?;
        state.pending = None;
        state.timing.target_nanos += nanos(arrive.saturating_sub(issued_at));

        let committed_len = self.tokens.len();
        let mut emitted = Vec::new();
        let mut sources = Vec::new();
        let mut counts = TokenCounts::default();
        let mut finish = None;
        for &(token, source) in &selection.tokens {
            self.tokens.push(token);
            emitted.push(token);
            sources.push(source);
            match source {
                TokenSource::Accepted => counts.accepted += 1,
                TokenSource::Resampled => counts.resampled += 1,
                TokenSource::Bonus => counts.bonus += 1,
            }
            let generated = self.tokens.get(self.prompt_len..).unwrap_or_default();
            if let Some(reason) = self.stopper.after_token(generated) {
                finish = Some(reason);
                break;
            }
        }
        if let Some(early) = state.early.take() {
            let all_accepted = selection.bonus.is_none()
                && counts.accepted == state.tree.depth()
                && selection.tokens.len() == emitted.len();
            if finish.is_none() {
                self.carry(
                    early,
                    all_accepted,
                    &mut emitted,
                    &mut sources,
                    &mut counts,
                    &mut finish,
                );
            }
        }
        if self.config.bug() == Some(Bug::CacheReset)
            && sources.last() == Some(&TokenSource::Resampled)
        {
            // The caches are emptied instead of rolled back, and only the tokens they
            // lack are fed from now on: the resampled one and what follows it.
            self.context_start = self.tokens.len() - 1;
        }
        let mut trace = RoundTrace {
            round: self.rounds,
            method: self.config.method().name(),
            committed_len,
            branching: state.tree.branching().to_vec(),
            drafts: draft_nodes(&state.tree, record),
            truncated: selection.tokens.len() - emitted.len(),
            steps: selection.steps,
            bonus: selection.bonus,
            emitted,
            sources,
            counts,
            draft_calls: state.draft_calls,
            early_drafts: state.early_drafts,
            target_calls: 1,
            timing: state.timing,
            next_gamma: None,
            finish,
        };
        if let Some(gamma) = self.gamma.as_mut() {
            gamma.observe(&trace);
            trace.next_gamma = Some(gamma.gamma());
        }
        self.rounds += 1;
        trace.timing.selection_nanos += nanos(self.clock.now().saturating_sub(arrive));
        self.metrics.record(&trace);
        Ok(Some(trace))
    }
}

fn draft_nodes(tree: &DraftTree, record: bool) -> Vec<DraftNode> {
    tree.nodes
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, node)| DraftNode {
            id: i - 1,
            parent: node.parent.checked_sub(1),
            depth: node.depth,
            token: node.token,
            draft_prob: node.draft_prob,
            draft_probs: if record {
                tree.nodes
                    .get(node.parent)
                    .and_then(|parent| tree.paths.get(parent.path))
                    .and_then(|path| path.draft.as_ref())
                    .map(|d| d.probs().to_vec())
            } else {
                None
            },
        })
        .collect()
}
