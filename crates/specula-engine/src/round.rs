//! Sequence-level selection over one round's draft set (SpecTr, Algorithm 3).
//!
//! Starting at the committed context, at each depth the candidates are the children of
//! every draft node whose path equals the accepted prefix. Given that prefix they are
//! i.i.d. draws from the draft conditional, in draw order, so the method's token-level
//! rule applies with k = their number. The selected token is emitted; the candidates
//! carrying it survive and the next depth continues from them. The round ends when no
//! candidate carries the selected token, or, after the last depth, with a bonus token
//! from the target at the surviving path. Each emitted token therefore follows the
//! target's conditional given everything before it (Theorem 2 of SpecTr); one draft
//! (γ ones) is standard speculative decoding, the empty tree is autoregressive decoding.
//!
//! The residuals of standard sampling, k-Seq (at ρ*) and multi-round rejection put no
//! mass on a token any candidate carries (such a token would have been accepted), so in
//! practice a resampled token ends the round; the filter only matters when a degenerate
//! residual falls back to the target.

use rand::Rng;
use specula_core::{Bug, Distribution, DraftDraw, ResidualParts, SamplingConfig};

use crate::config::Rule;
use crate::draft_tree::{DraftTree, ROOT};
use crate::error::{Error, Result};
use crate::request::{ForwardResponse, Role};
use crate::select::select;
use crate::trace::{BonusStep, DepthStep, StepPlan, TokenSource};

/// What one round selected, before stop conditions.
pub(crate) struct RoundSelection {
    pub steps: Vec<DepthStep>,
    pub bonus: Option<BonusStep>,
    /// The selected tokens in order, with their sources.
    pub tokens: Vec<(u32, TokenSource)>,
}

/// Runs the selection. `target` holds one row per path of `tree` (row `i` = path `i`).
/// A `bug` changes what the target rows are turned into and how the rule selects. Without
/// `bonus` a round whose drafts all survive ends there, drawing no bonus token (parallel
/// drafting: the next round's drafts, already drawn, are tested at that position instead).
#[allow(clippy::too_many_arguments)]
pub(crate) fn select_round<R: Rng + ?Sized>(
    tree: &DraftTree,
    target: &ForwardResponse,
    sampling: &SamplingConfig,
    rule: Rule,
    bug: Option<Bug>,
    record: bool,
    bonus: bool,
    rng: &mut R,
) -> Result<RoundSelection> {
    let greedy = sampling.is_greedy();
    let target_sampling = bug.map_or(*sampling, |bug| bug.tested_target_sampling(sampling));
    let target_at = |path: usize| -> Result<Distribution> {
        let row = target.row(path).ok_or(Error::WrongResponseLength {
            role: Role::Target,
            queries: tree.paths.len(),
            vocab: target.vocab,
            expected: tree.paths.len().saturating_mul(target.vocab),
            got: target.logits.len(),
        })?;
        Distribution::from_logits(row, &target_sampling).map_err(|source| Error::InvalidLogits {
            role: Role::Target,
            row: path,
            source,
        })
    };
    let mut steps = Vec::new();
    let mut tokens = Vec::new();
    let mut frontier = vec![ROOT];
    let mut path = 0;
    for depth in 1..=tree.depth() {
        let candidates: Vec<usize> = frontier
            .iter()
            .flat_map(|&n| tree.nodes[n].children.iter().copied())
            .collect();
        let Some(draft) = tree.paths[path].tested_draft() else {
            break; // the draft model answered every path above the leaves; unreachable
        };
        if candidates.is_empty() {
            break;
        }
        let target_dist = target_at(path)?;
        let drawn: Vec<DraftDraw> = candidates
            .iter()
            .map(|&n| DraftDraw {
                token: tree.nodes[n].token as usize,
                uniform: tree.nodes[n].uniform,
            })
            .collect();
        let selection = select(rule, greedy, bug, &target_dist, draft, &drawn, record, rng)?;
        let token = to_u32(selection.outcome.token, target_dist.len())?;
        // Typical acceptance ends the round at a rejection even when the target's draw
        // equals a drafted token (its residual is the target itself, so it can).
        let ends_round = matches!(rule, Rule::Typical { .. }) && !selection.outcome.accepted();
        let survivors: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&n| !ends_round && tree.nodes[n].token == token)
            .collect();
        let source = if selection.outcome.accepted() {
            TokenSource::Accepted
        } else {
            TokenSource::Resampled
        };
        tokens.push((token, source));
        let residual_parts = residual_parts(&selection, &target_dist, draft);
        let target_argmax = greedy
            .then(|| to_u32(target_dist.argmax(), target_dist.len()))
            .transpose()?;
        steps.push(DepthStep {
            depth,
            candidates: candidates.iter().map(|&n| n - 1).collect(),
            survivors: survivors.iter().map(|&n| n - 1).collect(),
            outcome: selection.outcome,
            token,
            source,
            target_argmax,
            residual_parts,
            plan: selection.plan,
            target_probs: record.then(|| target_dist.probs().to_vec()),
            draft_probs: record.then(|| draft.probs().to_vec()),
            residual_probs: selection.residual_probs,
        });
        match survivors.first() {
            Some(&first) => path = tree.nodes[first].path,
            None => {
                return Ok(RoundSelection {
                    steps,
                    bonus: None,
                    tokens,
                });
            }
        }
        frontier = survivors;
    }
    if !bonus && tree.depth() > 0 {
        return Ok(RoundSelection {
            steps,
            bonus: None,
            tokens,
        });
    }
    // A draft survived every depth (or there were none): one more token from the target.
    let target_dist = target_at(path)?;
    let (index, uniform) = if greedy {
        (target_dist.argmax(), None)
    } else {
        let u = rng.random::<f64>();
        (target_dist.sample_with_uniform(u), Some(u))
    };
    let token = to_u32(index, target_dist.len())?;
    tokens.push((token, TokenSource::Bonus));
    Ok(RoundSelection {
        steps,
        bonus: Some(BonusStep {
            token,
            uniform,
            target_argmax: greedy.then_some(token),
            target_probs: record.then(|| target_dist.probs().to_vec()),
        }),
        tokens,
    })
}

fn to_u32(index: usize, vocab: usize) -> Result<u32> {
    u32::try_from(index).map_err(|_| Error::TokenOutOfRange {
        token: u32::MAX,
        vocab,
    })
}

/// What the drawn residual subtracts from what, when distributions are recorded and every
/// candidate was rejected (the residual's probabilities are recorded then).
fn residual_parts(
    selection: &crate::select::Selection,
    target: &Distribution,
    draft: &Distribution,
) -> Option<ResidualParts> {
    selection.residual_probs.as_ref()?;
    let residual = selection.outcome.residual.as_ref()?.residual;
    let race = match &selection.plan {
        Some(StepPlan::Race(plan)) => Some(plan.selection.as_slice()),
        _ => None,
    };
    residual.parts(target.probs(), draft.probs(), race)
}
