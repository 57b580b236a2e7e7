//! Decoding settings and their validation.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::options::MethodName;
use crate::options::limits::MAX_ROUND_NODES;

mod decode;

pub use decode::{DEFAULT_MAX_NEW_TOKENS, DecodeConfig, DecodeConfigBuilder};

/// How each round drafts and selects tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Method {
    /// One target call per token, no draft model: the baseline.
    Autoregressive,
    /// Standard speculative decoding (Leviathan et al.): γ draft tokens, one target call
    /// verifying γ + 1 positions, accept the longest prefix, resample or take a bonus.
    Speculative {
        /// Draft tokens per round (the starting value when the policy is dynamic).
        gamma: usize,
        /// How γ changes between rounds.
        #[serde(default)]
        policy: GammaPolicy,
    },
    /// SpecTr (Sun et al.): K draft sequences (i.i.d. or a prefix tree), and at every
    /// depth one token selected among the drafts that still agree with the accepted
    /// prefix by the selection rule: k-Seq (Algorithm 3, the default) or the ratio race,
    /// which reaches the optimal selection's (OTM's) acceptance.
    #[serde(rename = "spectr")]
    SpecTr {
        /// The draft set.
        drafts: DraftShape,
        /// How each depth selects among the drafts.
        #[serde(default)]
        selection: Selection,
    },
    /// The same draft sets as SpecTr, selected with multi-round rejection sampling
    /// (SpecInfer style).
    #[serde(rename = "multiround")]
    MultiRound {
        /// The draft set.
        drafts: DraftShape,
    },
    /// Mentored decoding: the speculative loop with a lossy per-position test that keeps
    /// `KL(target ‖ output) ≤ kl_budget` at every position.
    Mentored {
        /// Draft tokens per round (the starting value when the policy is dynamic).
        gamma: usize,
        /// The KL budget D ≥ 0 (nats) per position; 0 is standard speculative sampling.
        kl_budget: f64,
        /// How γ changes between rounds.
        #[serde(default)]
        policy: GammaPolicy,
    },
    /// Typical acceptance (Medusa): the speculative loop with a lossy per-position test
    /// that accepts a drafted token `x` when `target(x) > τ = min(ε, δ·exp(−H(target)))`,
    /// else draws the position's token from the target and ends the round.
    Typical {
        /// Draft tokens per round (the starting value when the policy is dynamic).
        gamma: usize,
        /// ε, the ceiling of the threshold, in `[0, 1]`.
        epsilon: f64,
        /// δ ≥ 0, the scale of `exp(−H(target))` in the threshold.
        delta: f64,
        /// How γ changes between rounds.
        #[serde(default)]
        policy: GammaPolicy,
    },
    /// Prompt lookup (n-gram drafting), no draft model: each round proposes the
    /// continuation of the most recent earlier occurrence of the context's last `n`
    /// tokens (`n = ngram` down to 1), up to γ tokens, as point masses verified by
    /// standard speculative sampling; lossless. No match: one token from the target.
    Lookup {
        /// The most tokens proposed per round.
        gamma: usize,
        /// The longest suffix of the context searched for (then shorter ones, down to 1).
        ngram: usize,
    },
}

impl Method {
    /// A short name for traces and tables.
    #[must_use]
    pub fn name(&self) -> &'static str {
        MethodName::from(self).as_str()
    }

    /// Whether the method uses a draft model (prompt lookup drafts without one).
    #[must_use]
    pub fn needs_draft(&self) -> bool {
        !matches!(self, Self::Autoregressive | Self::Lookup { .. })
    }
}

/// How SpecTr selects one token among the drafts at each depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Selection {
    /// k-Seq (SpecTr Algorithm 3): one test per draft with the ratio scaled by ρ*.
    #[default]
    #[serde(rename = "kseq")]
    KSeq,
    /// The ratio race of `specula_core::Race`: the draft with the largest fitted
    /// `w(x)/U`, then one test against the race's own selection distribution; it reaches
    /// the optimal selection's acceptance among i.i.d. drafts to within
    /// `specula_core::RACE_TOLERANCE` in most cases, at any vocabulary size.
    Race,
}

impl Selection {
    /// Both rules, in documentation order.
    pub const ALL: [Self; 2] = [Self::KSeq, Self::Race];

    /// The rule's name (`"kseq"`, `"race"`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::KSeq => "kseq",
            Self::Race => "race",
        }
    }
}

/// The set of draft sequences a SpecTr or multi-round round scores.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum DraftShape {
    /// K independent draft sequences of length L (SpecTr §7).
    Iid {
        /// K, the number of sequences.
        k: usize,
        /// L, the length of each.
        length: usize,
    },
    /// A prefix tree (SpecTr Appendix D): each node at depth i − 1 gets `branching[i−1]`
    /// children drawn i.i.d. from the draft conditional; its K leaves are the drafts.
    Tree {
        /// K, which must equal the product of `branching`.
        k: usize,
        /// k₁..k_L, one per depth.
        branching: Vec<usize>,
    },
}

impl DraftShape {
    /// Children per node at each depth. K i.i.d. sequences are the tree (K, 1, …, 1).
    #[must_use]
    pub fn branching(&self) -> Vec<usize> {
        match self {
            Self::Iid { k, length } => {
                let mut b = vec![1; *length];
                if let Some(first) = b.first_mut() {
                    *first = *k;
                }
                b
            }
            Self::Tree { branching, .. } => branching.clone(),
        }
    }

    /// Checks K, L and the branching.
    ///
    /// # Errors
    /// [`Error::NoDrafts`], [`Error::ZeroDraftLength`], [`Error::ZeroBranching`],
    /// [`Error::BranchingMismatch`], [`Error::TooManyDraftNodes`].
    pub fn validate(&self) -> Result<()> {
        let (k, branching) = match self {
            Self::Iid { k, length } => {
                if *k == 0 {
                    return Err(Error::NoDrafts);
                }
                if *length == 0 {
                    return Err(Error::ZeroDraftLength);
                }
                (*k, self.branching())
            }
            Self::Tree { k, branching } => {
                if *k == 0 {
                    return Err(Error::NoDrafts);
                }
                if branching.is_empty() {
                    return Err(Error::ZeroDraftLength);
                }
                if let Some(i) = branching.iter().position(|&b| b == 0) {
                    return Err(Error::ZeroBranching { depth: i + 1 });
                }
                let product = branching
                    .iter()
                    .try_fold(1_u128, |acc, &b| acc.checked_mul(b as u128))
                    .unwrap_or(u128::MAX);
                if product != *k as u128 {
                    return Err(Error::BranchingMismatch { product, k: *k });
                }
                (*k, branching.clone())
            }
        };
        let nodes = node_count(&branching);
        if nodes > MAX_ROUND_NODES as u128 || k > MAX_ROUND_NODES {
            return Err(Error::TooManyDraftNodes {
                nodes,
                limit: MAX_ROUND_NODES,
            });
        }
        Ok(())
    }
}

/// `Σ_i ∏_{j ≤ i} b_j`, saturating.
pub(crate) fn node_count(branching: &[usize]) -> u128 {
    let mut width = 1_u128;
    let mut total = 0_u128;
    for &b in branching {
        width = width.saturating_mul(b as u128);
        total = total.saturating_add(width);
    }
    total
}

/// How the draft length γ of speculative and mentored decoding changes between rounds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum GammaPolicy {
    /// γ never changes.
    #[default]
    Fixed,
    /// Hugging Face's heuristic: +2 after a round that accepted every draft, −1
    /// otherwise, never below 1 (nor above `max_gamma`).
    Heuristic {
        /// The cap.
        max_gamma: usize,
    },
    /// Picks γ in `1..=max_gamma` maximising the expected walltime factor
    /// `(1 − α^{γ+1}) / ((1 − α)(γc + 1))` from running estimates of α (accepted tests /
    /// tests, with a uniform prior) and c (mean draft call time / mean target call time
    /// from the decoder's clock; `cost_ratio` until both have been measured).
    Optimal {
        /// The cap.
        max_gamma: usize,
        /// c to assume until the clock has measured both models.
        cost_ratio: f64,
    },
}

impl GammaPolicy {
    /// Checks the policy against the starting γ.
    ///
    /// # Errors
    /// [`Error::BadMaxGamma`], [`Error::TooManyDraftNodes`], [`Error::BadCostRatio`].
    pub fn validate(&self, gamma: usize) -> Result<()> {
        let max_gamma = match *self {
            Self::Fixed => gamma,
            Self::Heuristic { max_gamma } => max_gamma,
            Self::Optimal {
                max_gamma,
                cost_ratio,
            } => {
                if !(cost_ratio.is_finite() && cost_ratio >= 0.0) {
                    return Err(Error::BadCostRatio(cost_ratio));
                }
                max_gamma
            }
        };
        if max_gamma < gamma {
            return Err(Error::BadMaxGamma { gamma, max_gamma });
        }
        if max_gamma > MAX_ROUND_NODES {
            return Err(Error::TooManyDraftNodes {
                nodes: max_gamma as u128,
                limit: MAX_ROUND_NODES,
            });
        }
        Ok(())
    }
}

/// The token-level rule a method applies at each depth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Rule {
    /// No drafts: sample the target.
    Autoregressive,
    /// Standard speculative sampling (one draft).
    Standard,
    /// SpecTr k-Seq over the surviving drafts.
    KSeq,
    /// Multi-round rejection over the surviving drafts.
    MultiRound,
    /// The ratio race over the surviving drafts (SpecTr's optimal selection).
    Race,
    /// Mentored decoding with this KL budget.
    Mentored(f64),
    /// Typical acceptance with this ε and δ.
    Typical {
        /// ε.
        epsilon: f64,
        /// δ.
        delta: f64,
    },
}

impl Rule {
    pub(crate) fn of(method: &Method) -> Self {
        match method {
            Method::Autoregressive => Self::Autoregressive,
            Method::Speculative { .. } => Self::Standard,
            Method::SpecTr {
                selection: Selection::KSeq,
                ..
            } => Self::KSeq,
            Method::SpecTr {
                selection: Selection::Race,
                ..
            } => Self::Race,
            Method::MultiRound { .. } => Self::MultiRound,
            Method::Mentored { kl_budget, .. } => Self::Mentored(*kl_budget),
            Method::Typical { epsilon, delta, .. } => Self::Typical {
                epsilon: *epsilon,
                delta: *delta,
            },
            // The point-mass drafts are verified by standard speculative sampling.
            Method::Lookup { .. } => Self::Standard,
        }
    }
}
