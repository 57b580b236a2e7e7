//! Residual (correction) distributions: what is sampled when every draft is rejected.
//!
//! A [`Residual`] is a small description, cheap to put in a trace; the full distribution
//! is recomputed on demand from the target and draft with [`Residual::distribution`].

use rand::Rng;
use serde::Serialize;

use crate::distribution::{Distribution, sample_iter, sample_weights};
use crate::error::{Error, Result};
use crate::outcome::ResidualDraw;

/// Below this total unnormalised mass a residual is treated as degenerate and the
/// target is sampled instead. The probability of reaching the residual equals its mass,
/// so the fallback moves the output by at most this much in total variation.
pub const RESIDUAL_EPSILON: f64 = 1e-12;

/// Which residual distribution a scheme samples after rejecting every draft.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Residual {
    /// `norm(max(0, target − draft))`: standard speculative sampling.
    TargetMinusDraft,
    /// The target itself: the fallback when a residual has (numerically) no mass.
    Target,
    /// SpecTr k-Seq: `norm(max(0, target − min(draft, target/ρ)·acceptance/overlap))`.
    KSeq {
        /// The ρ used (≥ ρ*).
        rho: f64,
        /// `p_acc(ρ) = 1 − (1 − b(ρ))^k`.
        acceptance: f64,
        /// `b(ρ) = Σ min(draft, target/ρ)`.
        overlap: f64,
    },
    /// Multi-round rejection sampling after `rounds` rejections:
    /// `r₀ = target`, `rᵢ = norm(max(0, rᵢ₋₁ − draft))`.
    MultiRound {
        /// How many drafts were rejected (≥ 1).
        rounds: usize,
    },
    /// Mentored decoding: `s ∝ max(0, target/β − draft)`.
    Mentored {
        /// The upper ratio threshold β ≥ 1.
        beta: f64,
    },
    /// The ratio race with `k` drafts: `norm(max(0, target − r))`, where `r` is the
    /// selection distribution of the race fitted for this pair (`race_plan`, which is
    /// deterministic, so `r` is recomputed from the target and the draft).
    Race {
        /// Number of drafts.
        k: usize,
    },
}

impl Residual {
    /// The unnormalised weight of one token, for the point-wise residuals.
    fn pointwise_weight(&self, t: f64, d: f64) -> f64 {
        match *self {
            Self::TargetMinusDraft => (t - d).max(0.0),
            Self::KSeq {
                rho,
                acceptance,
                overlap,
            } => {
                let scale = if overlap > 0.0 {
                    acceptance / overlap
                } else {
                    0.0
                };
                (t - d.min(t / rho) * scale).max(0.0)
            }
            Self::Mentored { beta } => (t / beta - d).max(0.0),
            // Not point-wise: `weights` and `draw` compute these whole.
            Self::Target | Self::MultiRound { .. } | Self::Race { .. } => t,
        }
    }

    /// The unnormalised residual weights (they sum to the probability of reaching the
    /// residual for the single-step schemes).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`].
    pub fn weights(&self, target: &Distribution, draft: &Distribution) -> Result<Vec<f64>> {
        check_same_len(target, draft)?;
        Ok(match *self {
            Self::MultiRound { rounds } => {
                crate::multiround::residual_after(target.probs(), draft.probs(), rounds)
            }
            Self::Race { k } => {
                let plan = crate::race::race_plan(target, draft, k)?;
                crate::race::residual_weights(target.probs(), &plan.selection)
            }
            _ => target
                .probs()
                .iter()
                .zip(draft.probs())
                .map(|(&t, &d)| self.pointwise_weight(t, d))
                .collect(),
        })
    }

    /// The residual as a distribution; the target when the residual is degenerate
    /// (mass ≤ [`RESIDUAL_EPSILON`]), exactly as the samplers do.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`].
    pub fn distribution(
        &self,
        target: &Distribution,
        draft: &Distribution,
    ) -> Result<Distribution> {
        distribution_from_weights(self.weights(target, draft)?, target)
    }
}

/// Unnormalised residual weights as a distribution, the target when they are degenerate.
pub(crate) fn distribution_from_weights(
    weights: Vec<f64>,
    target: &Distribution,
) -> Result<Distribution> {
    let mass: f64 = weights.iter().sum();
    if mass <= RESIDUAL_EPSILON {
        return Ok(target.clone());
    }
    Distribution::from_weights(weights)
}

/// A draw with the uniform `u` from the residual `residual` given as whole weights (the
/// target when they are degenerate).
pub(crate) fn draw_from_weights(
    residual: Residual,
    weights: &[f64],
    target: &Distribution,
    u: f64,
) -> ResidualDraw {
    let mass: f64 = weights.iter().sum();
    let (residual, token) = if mass <= RESIDUAL_EPSILON {
        (Residual::Target, target.sample_with_uniform(u))
    } else {
        (residual, sample_weights(weights, u, mass))
    };
    ResidualDraw {
        residual,
        uniform: Some(u),
        token,
    }
}

/// Samples the residual without allocating (except for multi-round and the race), falling back to
/// the target when the residual is degenerate.
pub(crate) fn draw<R: Rng + ?Sized>(
    residual: Residual,
    target: &Distribution,
    draft: &Distribution,
    rng: &mut R,
) -> ResidualDraw {
    let u = rng.random::<f64>();
    let (t, d) = (target.probs(), draft.probs());
    let (residual, token) = match residual {
        Residual::MultiRound { .. } | Residual::Race { .. } => {
            // Both `Ok` for a target and a draft of the same length, which every caller
            // has checked; the target is the fallback all the same.
            let weights = residual
                .weights(target, draft)
                .unwrap_or_else(|_| t.to_vec());
            return draw_from_weights(residual, &weights, target, u);
        }
        _ => {
            let mass: f64 = t
                .iter()
                .zip(d)
                .map(|(&a, &b)| residual.pointwise_weight(a, b))
                .sum();
            if mass <= RESIDUAL_EPSILON {
                (Residual::Target, target.sample_with_uniform(u))
            } else {
                (residual, sample_pointwise(residual, t, d, u * mass))
            }
        }
    };
    ResidualDraw {
        residual,
        uniform: Some(u),
        token,
    }
}

/// Inverse-CDF scan over point-wise residual weights.
fn sample_pointwise(residual: Residual, t: &[f64], d: &[f64], threshold: f64) -> usize {
    let weights = t
        .iter()
        .zip(d)
        .map(|(&a, &b)| residual.pointwise_weight(a, b));
    sample_iter(weights, threshold)
}

/// Target and draft must cover the same vocabulary.
///
/// # Errors
/// [`Error::LengthMismatch`].
pub(crate) fn check_same_len(target: &Distribution, draft: &Distribution) -> Result<()> {
    if target.len() == draft.len() {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            target: target.len(),
            draft: draft.len(),
        })
    }
}
