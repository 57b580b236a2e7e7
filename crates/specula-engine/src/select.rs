//! The token-level rule of each method at one depth: which of the candidate draft
//! tokens (i.i.d. draws from `draft`) to accept, or what to draw instead. All the math is
//! the core's.

use rand::Rng;
use specula_core::{
    Bug, BugScheme, Distribution, DraftDraw, TokenOutcome, buggy_sample, greedy_verify,
    kseq_sample, mentored_sample, multiround_sample, race_sample, speculative_sample,
};

use crate::config::Rule;
use crate::error::Result;
use crate::trace::StepPlan;

/// The outcome at one depth, with the scheme's parameters for the trace.
pub(crate) struct Selection {
    pub outcome: TokenOutcome,
    pub plan: Option<StepPlan>,
}

impl Selection {
    fn plain(outcome: TokenOutcome) -> Self {
        Self {
            outcome,
            plan: None,
        }
    }
}

/// Selects a token given the candidates drawn i.i.d. from `draft` (at least one), with
/// `bug` planted in the tests and the residual draw when it goes there.
///
/// Greedy decoding (temperature 0) uses greedy verification for every method: emit the
/// target's argmax, accepting it when some candidate proposed it.
pub(crate) fn select<R: Rng + ?Sized>(
    rule: Rule,
    greedy: bool,
    bug: Option<Bug>,
    target: &Distribution,
    draft: &Distribution,
    drawn: &[DraftDraw],
    rng: &mut R,
) -> Result<Selection> {
    let candidates: Vec<usize> = drawn.iter().map(|d| d.token).collect();
    let candidates = &candidates[..];
    if greedy {
        return greedy_select(target, candidates).map(Selection::plain);
    }
    if let Some(bug) = bug.filter(|bug| bug.in_selection()) {
        return buggy_select(bug, rule, target, draft, drawn, rng);
    }
    let first = candidates.first().copied().unwrap_or(0);
    Ok(match rule {
        Rule::Standard | Rule::Autoregressive if candidates.len() == 1 => {
            Selection::plain(speculative_sample(target, draft, first, rng)?)
        }
        Rule::Mentored(kl_budget) if candidates.len() == 1 => {
            let (plan, outcome) = mentored_sample(target, draft, first, kl_budget, rng)?;
            Selection {
                outcome,
                plan: Some(StepPlan::Mentored(plan)),
            }
        }
        Rule::MultiRound => Selection::plain(multiround_sample(target, draft, candidates, rng)?),
        Rule::Race => {
            let (plan, outcome) = race_sample(target, draft, candidates, rng)?;
            Selection {
                outcome,
                plan: Some(StepPlan::Race(plan)),
            }
        }
        // k-Seq with k = 1 is standard speculative sampling, so it also covers a chain
        // rule handed several candidates (which the draft shapes never produce).
        _ => {
            let (plan, outcome) = kseq_sample(target, draft, candidates, None, rng)?;
            Selection {
                outcome,
                plan: Some(StepPlan::Kseq(plan)),
            }
        }
    })
}

/// The selection of a decoder with `bug` in its tests or residual draw (the lossless
/// rules only: the configuration refuses a bug for the others).
fn buggy_select<R: Rng + ?Sized>(
    bug: Bug,
    rule: Rule,
    target: &Distribution,
    draft: &Distribution,
    drawn: &[DraftDraw],
    rng: &mut R,
) -> Result<Selection> {
    let scheme = match rule {
        Rule::Standard if drawn.len() == 1 => BugScheme::Speculative,
        Rule::MultiRound => BugScheme::MultiRound,
        Rule::Race => BugScheme::Race,
        _ => BugScheme::KSeq,
    };
    let sample = buggy_sample(bug, scheme, target, draft, drawn, rng)?;
    Ok(Selection {
        outcome: sample.outcome,
        plan: sample
            .kseq
            .map(StepPlan::Kseq)
            .or(sample.race.map(StepPlan::Race)),
    })
}

/// Greedy verification over several candidates: test the one equal to the target's
/// argmax if any, else the first.
fn greedy_select(target: &Distribution, candidates: &[usize]) -> Result<TokenOutcome> {
    let best = target.argmax();
    let index = candidates.iter().position(|&c| c == best).unwrap_or(0);
    let token = candidates.get(index).copied().unwrap_or(best);
    let mut outcome = greedy_verify(target, token)?;
    for test in &mut outcome.tests {
        test.draft_index = index;
    }
    if outcome.accepted_draft.is_some() {
        outcome.accepted_draft = Some(index);
    }
    Ok(outcome)
}
