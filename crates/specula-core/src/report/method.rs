//! What a plan analyses: the method, named as decoding names it, SpecTr's selection rule
//! and each method's parameters.

use serde::Serialize;

/// A token-level scheme that [`plan_report`](super::plan_report) analyses, by decoding's
/// name for it (`specula generate --method`, npm `generate({ method })`). Greedy
/// verification is [`Self::Speculative`] at temperature 0, as in decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum PlanMethod {
    /// Standard speculative sampling (greedy verification at temperature 0).
    Speculative,
    /// SpecTr: one token selected among k i.i.d. drafts by a [`PlanSelection`].
    Spectr,
    /// Multi-round rejection sampling over k i.i.d. drafts.
    Multiround,
    /// Mentored decoding (lossy, bounded KL).
    Mentored,
    /// Typical acceptance (Medusa; lossy, no bound).
    Typical,
}

impl PlanMethod {
    /// Every method, in documentation order.
    pub const ALL: [Self; 5] = [
        Self::Speculative,
        Self::Spectr,
        Self::Multiround,
        Self::Mentored,
        Self::Typical,
    ];

    /// The name used on the command line and in JSON: decoding's name for the method.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Speculative => "speculative",
            Self::Spectr => "spectr",
            Self::Multiround => "multiround",
            Self::Mentored => "mentored",
            Self::Typical => "typical",
        }
    }

    /// The method called `name`, if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether the method uses several drafts.
    #[must_use]
    pub fn takes_drafts(self) -> bool {
        matches!(self, Self::Spectr | Self::Multiround)
    }
}

/// How a SpecTr plan selects one token among its drafts: decoding's two rules (option
/// `selection`) and the exact linear program, which only a plan solves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum PlanSelection {
    /// k-Seq (SpecTr Algorithm 3), the default.
    Kseq,
    /// The ratio race: OTM's optimal acceptance for i.i.d. drafts at any vocabulary size.
    Race,
    /// Optimal transport with membership cost, by its exact linear program (tiny
    /// vocabularies and k only; plans only: decoding uses the race, which reaches its
    /// acceptance).
    Otm,
}

impl PlanSelection {
    /// Every rule, in documentation order.
    pub const ALL: [Self; 3] = [Self::Kseq, Self::Race, Self::Otm];

    /// The rule's name (`"kseq"`, `"race"`, `"otm"`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Kseq => "kseq",
            Self::Race => "race",
            Self::Otm => "otm",
        }
    }

    /// The rule called `name`, if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Method-specific parameters, already checked by the front end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PlanParams {
    /// No extra parameters (standard speculative sampling, greedy verification).
    None,
    /// SpecTr with k-Seq: drafts and an optional ρ override (checked against ρ* here).
    KSeq {
        /// Number of drafts.
        k: usize,
        /// ρ override.
        rho: Option<f64>,
    },
    /// SpecTr with the ratio race: number of drafts.
    Race(usize),
    /// SpecTr with the exact OTM linear program: number of drafts.
    Otm(usize),
    /// Multi-round: number of drafts.
    Drafts(usize),
    /// Mentored: KL budget.
    Kl(f64),
    /// Typical acceptance: the threshold's ceiling ε and scale δ.
    Typical {
        /// ε, a probability.
        epsilon: f64,
        /// δ ≥ 0.
        delta: f64,
    },
}

impl PlanParams {
    /// SpecTr's selection rule these parameters are for, if any.
    #[must_use]
    pub fn selection(&self) -> Option<PlanSelection> {
        match self {
            Self::KSeq { .. } => Some(PlanSelection::Kseq),
            Self::Race(_) => Some(PlanSelection::Race),
            Self::Otm(_) => Some(PlanSelection::Otm),
            _ => None,
        }
    }
}

/// A scheme's human-readable title: the method, SpecTr's selection, and greedy
/// verification for standard speculative sampling at temperature 0.
#[must_use]
pub(super) fn title(
    method: PlanMethod,
    selection: Option<PlanSelection>,
    greedy: bool,
) -> &'static str {
    match (method, selection) {
        (PlanMethod::Speculative, _) if greedy => "greedy verification, temperature 0",
        (PlanMethod::Speculative, _) => "standard speculative sampling",
        (PlanMethod::Spectr, Some(PlanSelection::Race)) => {
            "SpecTr, ratio race: OTM's optimum for i.i.d. drafts at any vocabulary"
        }
        (PlanMethod::Spectr, Some(PlanSelection::Otm)) => {
            "SpecTr, optimal transport with membership cost, exact LP"
        }
        (PlanMethod::Spectr, _) => "SpecTr k-Seq",
        (PlanMethod::Multiround, _) => "multi-round rejection sampling",
        (PlanMethod::Mentored, _) => "mentored decoding, lossy with KL <= D",
        (PlanMethod::Typical, _) => "typical acceptance (Medusa), lossy",
    }
}
