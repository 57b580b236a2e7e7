//! The plain-data record of one round, for a page to animate and a test to replay.
//!
//! Token ids are `u32`, as at the model interface; inside the core's [`TokenOutcome`]
//! they are `usize` indices into the distributions.

use serde::Serialize;
use specula_core::{KSeqPlan, MentoredPlan, RacePlan, ResidualParts, TokenOutcome, TypicalPlan};

use crate::stopping::FinishReason;

/// How an emitted token was produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// A draft token that passed its acceptance test.
    Accepted,
    /// Drawn from a residual (or, for greedy, the target's argmax) after every draft at
    /// that depth was rejected.
    Resampled,
    /// Drawn from the target with no draft to test: after a fully surviving draft, and
    /// every token of autoregressive decoding (a round with γ = 0).
    Bonus,
}

/// One draft token of the round's draft set.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DraftNode {
    /// Index in [`RoundTrace::drafts`].
    pub id: usize,
    /// The node this one extends; `None` when it extends the committed context.
    pub parent: Option<usize>,
    /// 1-based depth: the position after the committed context.
    pub depth: usize,
    /// The draft token.
    pub token: u32,
    /// Its probability under the draft distribution it was drawn from.
    pub draft_prob: f64,
    /// That whole distribution, when the config asks for distributions.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub draft_probs: Option<Vec<f64>>,
}

/// The selection at one depth of the accepted path.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DepthStep {
    /// 1-based depth.
    pub depth: usize,
    /// The drafts tested here: ids of the draft nodes at this depth that still agree with
    /// the accepted prefix, in test order. `outcome.tests[i].draft_index` indexes this list.
    pub candidates: Vec<usize>,
    /// The candidates whose token equals the selected token: the drafts that survive to
    /// the next depth (empty ends the round; typical acceptance leaves it empty after a
    /// rejection).
    pub survivors: Vec<usize>,
    /// The token-level result: every uniform `u`, ratio and decision, and the residual
    /// draw when every candidate was rejected.
    pub outcome: TokenOutcome,
    /// The selected token.
    pub token: u32,
    /// Whether it was accepted or resampled.
    pub source: TokenSource,
    /// The target's most likely token here, when greedy decoding (temperature 0) verified
    /// this depth: the token each test's `argmax` rule compares with, and the one a
    /// rejection emits. `None` when a coin or a threshold decided.
    pub target_argmax: Option<u32>,
    /// The selection rule's parameters at this depth: k-Seq's ρ and acceptance, the
    /// fitted ratio race, mentored decoding's thresholds or typical acceptance's threshold;
    /// none for the other rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub plan: Option<StepPlan>,
    /// The target distribution tested against, when the config asks for distributions.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub target_probs: Option<Vec<f64>>,
    /// The draft distribution the candidates were drawn from, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub draft_probs: Option<Vec<f64>>,
    /// The residual distribution the replacement token was drawn from (the core scheme's
    /// `residual_distribution`, or the target when the outcome's residual is
    /// [`Residual::Target`](specula_core::Residual::Target)), when distributions are asked
    /// for and every draft was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub residual_probs: Option<Vec<f64>>,
    /// What that residual subtracts from what (`residualProbs` is
    /// `norm(max(0, base − sub))`), recorded with it, for pictures of the residual.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub residual_parts: Option<ResidualParts>,
}

/// The parameters a selection rule computed at one depth, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum StepPlan {
    /// SpecTr's k-Seq: ρ, ρ* and the acceptance.
    Kseq(KSeqPlan),
    /// SpecTr's ratio race: weights, the selection distribution r, acceptance and the
    /// optimum.
    Race(RacePlan),
    /// Mentored decoding: α, β and the KL achieved.
    Mentored(MentoredPlan),
    /// Typical acceptance: ε, δ, the target's entropy and the threshold τ.
    Typical(TypicalPlan),
}

impl StepPlan {
    /// k-Seq's plan, if this is one.
    #[must_use]
    pub fn kseq(&self) -> Option<&KSeqPlan> {
        match self {
            Self::Kseq(plan) => Some(plan),
            _ => None,
        }
    }

    /// The ratio race's plan, if this is one.
    #[must_use]
    pub fn race(&self) -> Option<&RacePlan> {
        match self {
            Self::Race(plan) => Some(plan),
            _ => None,
        }
    }

    /// Mentored decoding's plan, if this is one.
    #[must_use]
    pub fn mentored(&self) -> Option<&MentoredPlan> {
        match self {
            Self::Mentored(plan) => Some(plan),
            _ => None,
        }
    }

    /// Typical acceptance's plan, if this is one.
    #[must_use]
    pub fn typical(&self) -> Option<&TypicalPlan> {
        match self {
            Self::Typical(plan) => Some(plan),
            _ => None,
        }
    }
}

/// The bonus token drawn from the target after a draft survived every depth.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BonusStep {
    /// The token.
    pub token: u32,
    /// The inverse-CDF uniform used; `None` for greedy.
    pub uniform: Option<f64>,
    /// The target's most likely token, when greedy decoding took it (then it is `token`);
    /// `None` when the token was sampled.
    pub target_argmax: Option<u32>,
    /// The target distribution sampled, when the config asks for distributions.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub target_probs: Option<Vec<f64>>,
}

/// Emitted tokens by source. `accepted + resampled + bonus` is the number emitted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TokenCounts {
    /// Accepted draft tokens.
    pub accepted: usize,
    /// Tokens from a residual.
    pub resampled: usize,
    /// Tokens drawn directly from the target.
    pub bonus: usize,
}

impl TokenCounts {
    /// The total.
    #[must_use]
    pub fn total(&self) -> usize {
        self.accepted + self.resampled + self.bonus
    }
}

/// Time spent, in nanoseconds of the decoder's [`Clock`](crate::Clock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Timing {
    /// Between handing out a draft request and receiving its logits.
    pub draft_nanos: u64,
    /// Between handing out a target request and receiving its logits.
    pub target_nanos: u64,
    /// Inside the engine: building requests, logits to distributions, drawing drafts,
    /// selection, bookkeeping.
    pub selection_nanos: u64,
}

impl Timing {
    /// Adds another span of time.
    pub fn add(&mut self, other: &Self) {
        self.draft_nanos = self.draft_nanos.saturating_add(other.draft_nanos);
        self.target_nanos = self.target_nanos.saturating_add(other.target_nanos);
        self.selection_nanos = self.selection_nanos.saturating_add(other.selection_nanos);
    }

    /// All three together.
    #[must_use]
    pub fn total_nanos(&self) -> u64 {
        self.draft_nanos
            .saturating_add(self.target_nanos)
            .saturating_add(self.selection_nanos)
    }
}

/// Everything that happened in one round.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RoundTrace {
    /// 0-based round number.
    pub round: usize,
    /// The method's name ([`Method::name`](crate::Method::name)).
    pub method: &'static str,
    /// Tokens (prompt and generated) committed before this round.
    pub committed_len: usize,
    /// Children per node at each depth this round (`γ` ones for speculative decoding;
    /// shorter than configured when few tokens remain).
    pub branching: Vec<usize>,
    /// The draft set, parents before children.
    pub drafts: Vec<DraftNode>,
    /// The selection at each depth of the accepted path.
    pub steps: Vec<DepthStep>,
    /// The bonus token, when a draft survived every depth.
    pub bonus: Option<BonusStep>,
    /// The tokens emitted this round, in order.
    pub emitted: Vec<u32>,
    /// How each emitted token was produced.
    pub sources: Vec<TokenSource>,
    /// Selected tokens not emitted because generation stopped inside the round.
    pub truncated: usize,
    /// Emitted tokens by source.
    pub counts: TokenCounts,
    /// Draft model requests this round.
    pub draft_calls: usize,
    /// Under parallel drafting, how many of this round's draft depths were drawn while
    /// the last round's target request was outstanding (before its answer was supplied);
    /// 0 otherwise.
    pub early_drafts: usize,
    /// Target model requests this round (1).
    pub target_calls: usize,
    /// Time spent this round.
    pub timing: Timing,
    /// γ for the next round, for the single-sequence drafting methods (speculative,
    /// mentored, typical; for prompt lookup the most tokens it may propose).
    pub next_gamma: Option<usize>,
    /// Why generation stopped, when it stopped in this round.
    pub finish: Option<FinishReason>,
}
