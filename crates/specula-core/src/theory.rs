//! Closed-form theory of speculative decoding (Leviathan et al. 2023, §3; Sun et al. 2023).

use crate::distribution::Distribution;
use crate::error::{Error, Result};
use crate::kseq::KSeq;

/// The acceptance probability of standard speculative sampling, `β = Σ min(target, draft)`
/// (`1 − TV`).
///
/// # Errors
/// [`Error::LengthMismatch`].
pub fn acceptance(target: &Distribution, draft: &Distribution) -> Result<f64> {
    crate::residual::check_same_len(target, draft)?;
    Ok(crate::divergence::overlap(target.probs(), draft.probs()))
}

/// Expected tokens emitted per target call with draft length `gamma` and a per-token
/// acceptance rate `alpha`: `(1 − α^{γ+1})/(1 − α)`, and `γ + 1` when `α = 1`.
///
/// # Errors
/// [`Error::BadParameter`] when `alpha` is not in `[0, 1]`.
pub fn expected_tokens_per_round(alpha: f64, gamma: u32) -> Result<f64> {
    check_alpha(alpha)?;
    Ok(tokens_per_round(alpha, gamma))
}

/// The expected walltime improvement factor over autoregressive decoding,
/// `(1 − α^{γ+1}) / ((1 − α)(γc + 1))`, where `c` is the cost of one draft call relative
/// to one target call.
///
/// # Errors
/// [`Error::BadParameter`] when `alpha` is not in `[0, 1]` or `cost_ratio` is negative
/// or not finite.
pub fn walltime_factor(alpha: f64, gamma: u32, cost_ratio: f64) -> Result<f64> {
    check_alpha(alpha)?;
    check_cost(cost_ratio)?;
    Ok(tokens_per_round(alpha, gamma) / (f64::from(gamma) * cost_ratio + 1.0))
}

/// The draft length in `1..=max_gamma` that maximises [`walltime_factor`], with the factor
/// (the smallest such γ among ties).
///
/// # Errors
/// As [`walltime_factor`], and [`Error::BadParameter`] when `max_gamma == 0`.
pub fn optimal_gamma(alpha: f64, cost_ratio: f64, max_gamma: u32) -> Result<(u32, f64)> {
    check_alpha(alpha)?;
    check_cost(cost_ratio)?;
    if max_gamma == 0 {
        return Err(Error::BadParameter {
            name: "max_gamma",
            expected: "at least 1",
            value: 0.0,
        });
    }
    let mut best = (1, walltime_factor(alpha, 1, cost_ratio)?);
    for gamma in 2..=max_gamma {
        let f = walltime_factor(alpha, gamma, cost_ratio)?;
        if f > best.1 {
            best = (gamma, f);
        }
    }
    Ok(best)
}

/// k-Seq's acceptance probability `p_acc(ρ*)` for `k = 1..=max_k`.
///
/// # Errors
/// [`Error::LengthMismatch`].
pub fn kseq_acceptance_curve(
    target: &Distribution,
    draft: &Distribution,
    max_k: usize,
) -> Result<Vec<f64>> {
    (1..=max_k)
        .map(|k| KSeq::new(target, draft, k, None).map(|kseq| kseq.plan().acceptance))
        .collect()
}

fn tokens_per_round(alpha: f64, gamma: u32) -> f64 {
    if alpha >= 1.0 {
        f64::from(gamma) + 1.0
    } else {
        // Horner sum 1 + α + … + α^γ: stable near α = 1 where the quotient form cancels.
        (0..=gamma).fold(0.0, |acc, _| acc * alpha + 1.0)
    }
}

fn check_alpha(alpha: f64) -> Result<()> {
    if (0.0..=1.0).contains(&alpha) {
        Ok(())
    } else {
        Err(Error::BadParameter {
            name: "alpha",
            expected: "in [0, 1]",
            value: alpha,
        })
    }
}

fn check_cost(cost_ratio: f64) -> Result<()> {
    if cost_ratio.is_finite() && cost_ratio >= 0.0 {
        Ok(())
    } else {
        Err(Error::BadParameter {
            name: "cost_ratio",
            expected: "finite and >= 0",
            value: cost_ratio,
        })
    }
}
