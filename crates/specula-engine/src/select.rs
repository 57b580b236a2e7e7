//! The token-level rule of each method at one depth: which of the candidate draft
//! tokens (i.i.d. draws from `draft`) to accept, or what to draw instead. All the math is
//! the core's: the rule's scheme is built once for the pair, then sampled.

use rand::Rng;
use specula_core::{
    Bug, Distribution, DraftDraw, Greedy, KSeq, Mentored, MultiRound, Race, Residual, Speculative,
    TokenOutcome, Typical,
};

use crate::config::Rule;
use crate::error::Result;
use crate::trace::StepPlan;

/// The outcome at one depth, with the scheme's parameters for the trace.
pub(crate) struct Selection {
    pub outcome: TokenOutcome,
    pub plan: Option<StepPlan>,
    /// The distribution the token was drawn from after every candidate was rejected,
    /// when distributions are recorded.
    pub residual_probs: Option<Vec<f64>>,
}

/// The core scheme a rule runs at one depth.
enum Scheme<'a> {
    Speculative(Speculative<'a>),
    KSeq(KSeq<'a>),
    MultiRound(MultiRound<'a>),
    Race(Race<'a>),
    Mentored(Mentored<'a>),
    Typical(Typical<'a>),
}

impl<'a> Scheme<'a> {
    /// The scheme of `rule` for `k` candidates. With a bug in the selection, the lossless
    /// scheme that carries it: standard sampling for one draft of the standard rule, else
    /// the rule's own multi-draft scheme, else k-Seq (the configuration refuses a bug for
    /// the other rules).
    fn new(
        rule: Rule,
        buggy: bool,
        target: &'a Distribution,
        draft: &'a Distribution,
        k: usize,
    ) -> Result<Self> {
        Ok(match rule {
            Rule::Standard if k == 1 => Self::Speculative(Speculative::new(target, draft)?),
            Rule::Autoregressive if k == 1 && !buggy => {
                Self::Speculative(Speculative::new(target, draft)?)
            }
            Rule::Mentored(kl_budget) if k == 1 && !buggy => {
                Self::Mentored(Mentored::new(target, draft, kl_budget)?)
            }
            Rule::Typical { epsilon, delta } if k == 1 && !buggy => {
                Self::Typical(Typical::new(target, draft, epsilon, delta)?)
            }
            Rule::MultiRound => Self::MultiRound(MultiRound::new(target, draft, k)?),
            Rule::Race => Self::Race(Race::new(target, draft, k)?),
            // k-Seq with k = 1 is standard speculative sampling, so it also covers a chain
            // rule handed several candidates (which the draft shapes never produce).
            _ => Self::KSeq(KSeq::new(target, draft, k, None)?),
        })
    }

    /// Samples the candidates `drawn`, with `bug` (one in the selection) planted.
    fn sample<R: Rng + ?Sized>(
        &self,
        bug: Option<Bug>,
        drawn: &[DraftDraw],
        rng: &mut R,
    ) -> TokenOutcome {
        let tokens: Vec<usize> = drawn.iter().map(|d| d.token).collect();
        // The single-draft schemes are built for one candidate only.
        let first = drawn.first().copied().unwrap_or(DraftDraw {
            token: 0,
            uniform: None,
        });
        match (self, bug) {
            (Self::Speculative(s), None) => s.sample(first.token, rng),
            (Self::Speculative(s), Some(bug)) => s.sample_with_bug(bug, first, rng),
            (Self::Mentored(s), _) => s.sample(first.token, rng),
            (Self::Typical(s), _) => s.sample(first.token, rng),
            (Self::KSeq(s), None) => s.sample(&tokens, rng),
            (Self::KSeq(s), Some(bug)) => s.sample_with_bug(bug, drawn, rng),
            (Self::MultiRound(s), None) => s.sample(&tokens, rng),
            (Self::MultiRound(s), Some(bug)) => s.sample_with_bug(bug, drawn, rng),
            (Self::Race(s), None) => s.sample(&tokens, rng),
            (Self::Race(s), Some(bug)) => s.sample_with_bug(bug, drawn, rng),
        }
    }

    /// The scheme's own residual, whole.
    fn residual_distribution(&self) -> Distribution {
        match self {
            Self::Speculative(s) => s.residual_distribution(),
            Self::KSeq(s) => s.residual_distribution(),
            Self::MultiRound(s) => s.residual_distribution(),
            Self::Race(s) => s.residual_distribution(),
            Self::Mentored(s) => s.residual_distribution(),
            Self::Typical(s) => s.residual_distribution(),
        }
    }

    /// The parameters the trace shows, for the schemes that have any worth showing.
    fn into_step_plan(self) -> Option<StepPlan> {
        match self {
            Self::KSeq(s) => Some(StepPlan::Kseq(*s.plan())),
            Self::Race(s) => Some(StepPlan::Race(s.into_plan())),
            Self::Mentored(s) => Some(StepPlan::Mentored(*s.plan())),
            Self::Typical(s) => Some(StepPlan::Typical(*s.plan())),
            Self::Speculative(_) | Self::MultiRound(_) => None,
        }
    }
}

/// Selects a token given the candidates drawn i.i.d. from `draft` (at least one), with
/// `bug` planted in the tests and the residual draw when it goes there; `record` asks for
/// the residual distribution after a rejection.
///
/// Greedy decoding (temperature 0) uses greedy verification for every method: emit the
/// target's argmax, accepting it when some candidate proposed it.
// One depth's inputs, each used once: a struct for them would only be unpacked here.
#[allow(clippy::too_many_arguments)]
pub(crate) fn select<R: Rng + ?Sized>(
    rule: Rule,
    greedy: bool,
    bug: Option<Bug>,
    target: &Distribution,
    draft: &Distribution,
    drawn: &[DraftDraw],
    record: bool,
    rng: &mut R,
) -> Result<Selection> {
    if greedy {
        let candidates: Vec<usize> = drawn.iter().map(|d| d.token).collect();
        let outcome = greedy_select(target, &candidates);
        let residual_probs = (record && outcome.residual.is_some())
            .then(|| Greedy::new(target).residual_distribution().into_probs());
        return Ok(Selection {
            outcome,
            plan: None,
            residual_probs,
        });
    }
    let bug = bug.filter(|bug| bug.in_selection());
    let scheme = Scheme::new(rule, bug.is_some(), target, draft, drawn.len())?;
    let outcome = scheme.sample(bug, drawn, rng);
    let residual_probs = match (&outcome.residual, record) {
        // The target itself: a degenerate residual's fallback, or a bug's.
        (Some(draw), true) if draw.residual == Residual::Target => Some(target.probs().to_vec()),
        (Some(_), true) => Some(scheme.residual_distribution().into_probs()),
        _ => None,
    };
    Ok(Selection {
        outcome,
        plan: scheme.into_step_plan(),
        residual_probs,
    })
}

/// Greedy verification over several candidates: test the one equal to the target's
/// argmax if any, else the first.
fn greedy_select(target: &Distribution, candidates: &[usize]) -> TokenOutcome {
    let best = target.argmax();
    let index = candidates.iter().position(|&c| c == best).unwrap_or(0);
    let token = candidates.get(index).copied().unwrap_or(best);
    let mut outcome = Greedy::new(target).sample(token);
    for test in &mut outcome.tests {
        test.draft_index = index;
    }
    if outcome.accepted_draft.is_some() {
        outcome.accepted_draft = Some(index);
    }
    outcome
}
