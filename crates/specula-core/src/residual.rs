//! Residual (correction) distributions: what is sampled when every draft is rejected.
//!
//! A [`Residual`] is a small description, cheap to put in a trace. The distribution itself
//! belongs to the scheme that draws from it: every plan gives its own whole
//! ([`Speculative::residual_distribution`](crate::Speculative::residual_distribution),
//! [`KSeq::residual_distribution`](crate::KSeq::residual_distribution), …). This module
//! holds only what the schemes share (the description, the [`ResidualDraw`] a trace
//! records, the fallback to the target when a residual has no mass, the inverse-CDF
//! draws), so it depends on no scheme.

mod parts;

use serde::Serialize;

pub use parts::ResidualParts;

use crate::distribution::{Distribution, sample_iter, sample_weights};
use crate::error::{Error, Result};

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
    #[serde(rename = "kseq")]
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
    #[serde(rename = "multiround")]
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
    /// selection distribution of the race fitted for this pair. The fit is deterministic,
    /// so [`Race::new`](crate::Race::new) on the same pair gives `r` again.
    Race {
        /// Number of drafts.
        k: usize,
    },
}

/// A draw from a residual (correction) distribution after every draft was rejected.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ResidualDraw {
    /// Which residual distribution was sampled (the scheme's `residual_distribution` gives
    /// it whole).
    pub residual: Residual,
    /// The uniform in `[0, 1)` used for inverse-CDF sampling; `None` for greedy.
    pub uniform: Option<f64>,
    /// The token drawn.
    pub token: usize,
}

/// Unnormalised residual weights as a distribution; the target when their mass is at most
/// [`RESIDUAL_EPSILON`], exactly as the samplers fall back.
pub(crate) fn distribution_or_target(weights: Vec<f64>, target: &Distribution) -> Distribution {
    let mass: f64 = weights.iter().sum();
    if mass <= RESIDUAL_EPSILON {
        return target.clone();
    }
    // Weights built from two valid distributions are finite and non-negative, so this
    // cannot fail; the target is the fallback all the same.
    Distribution::from_weights(weights).unwrap_or_else(|_| target.clone())
}

/// `weight(target(x), draft(x))` for every token.
pub(crate) fn pointwise_weights(
    target: &Distribution,
    draft: &Distribution,
    weight: impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    target
        .probs()
        .iter()
        .zip(draft.probs())
        .map(|(&t, &d)| weight(t, d))
        .collect()
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

/// A draw with the uniform `u` from the residual whose weight at each token is
/// `weight(target(x), draft(x))`, without allocating (the target when the weights are
/// degenerate).
pub(crate) fn draw_pointwise(
    residual: Residual,
    target: &Distribution,
    draft: &Distribution,
    weight: impl Fn(f64, f64) -> f64,
    u: f64,
) -> ResidualDraw {
    let (t, d) = (target.probs(), draft.probs());
    let weights = || t.iter().zip(d).map(|(&a, &b)| weight(a, b));
    let mass: f64 = weights().sum();
    let (residual, token) = if mass <= RESIDUAL_EPSILON {
        (Residual::Target, target.sample_with_uniform(u))
    } else {
        (residual, sample_iter(weights(), u * mass))
    };
    ResidualDraw {
        residual,
        uniform: Some(u),
        token,
    }
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
