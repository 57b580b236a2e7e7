//! Multi-round rejection sampling (the SpecInfer-style baseline SpecTr compares with).
//!
//! Try the drafts in turn, each with the standard test against the current residual
//! `r` (initially the target); after a rejection `r ← norm(max(0, r − draft))`. If every
//! draft is rejected, sample the last residual. Exact, usually weaker than k-Seq.

use rand::Rng;

use crate::bug::Wiring;
use crate::distribution::{Distribution, sample_weights};
use crate::error::{Error, Result};
use crate::outcome::{ResidualDraw, TokenAnalysis, TokenOutcome};
use crate::residual::{RESIDUAL_EPSILON, Residual, check_same_len, draw};
use crate::speculative::{acceptance_test, combine, outcome, test_in_turn};

/// Tries `drafts` (each drawn i.i.d. from `draft`) in order.
///
/// # Errors
/// [`Error::LengthMismatch`], [`Error::NoDrafts`] for an empty slice,
/// [`Error::TokenOutOfRange`].
pub fn multiround_sample<R: Rng + ?Sized>(
    target: &Distribution,
    draft: &Distribution,
    drafts: &[usize],
    rng: &mut R,
) -> Result<TokenOutcome> {
    multiround_sample_wired(target, draft, drafts, Wiring::CORRECT, rng)
}

/// [`multiround_sample`] with its uniforms and final residual wired as `wiring` says.
pub(crate) fn multiround_sample_wired<R: Rng + ?Sized>(
    target: &Distribution,
    draft: &Distribution,
    drafts: &[usize],
    wiring: Wiring<'_>,
    rng: &mut R,
) -> Result<TokenOutcome> {
    check_same_len(target, draft)?;
    if drafts.is_empty() {
        return Err(Error::NoDrafts);
    }
    for &x in drafts {
        target.check_token(x)?;
    }
    let d = draft.probs();
    let mut current = target.probs().to_vec();
    let tests = test_in_turn(drafts, |i, x| {
        // Each rejection moves the test to the next residual.
        if i > 0 {
            next_residual(&mut current, d);
        }
        let u = wiring.uniform(i, rng);
        acceptance_test(i, x, current[x], d[x], 1.0, u)
    });
    Ok(outcome(tests, || {
        if wiring.residual_from_target {
            return draw(Residual::Target, target, draft, rng);
        }
        next_residual(&mut current, d);
        let u = rng.random::<f64>();
        ResidualDraw {
            residual: Residual::MultiRound {
                rounds: drafts.len(),
            },
            uniform: Some(u),
            token: sample_weights(&current, u, 1.0),
        }
    }))
}

/// The exact output distribution and acceptance with `k` drafts: round i is reached with
/// probability `∏_{j<i} (1 − βⱼ)`, where `βⱼ = Σ min(r_{j−1}, draft)`.
///
/// # Errors
/// [`Error::LengthMismatch`], [`Error::NoDrafts`] when `k == 0`.
pub fn multiround_analysis(
    target: &Distribution,
    draft: &Distribution,
    k: usize,
) -> Result<TokenAnalysis> {
    check_same_len(target, draft)?;
    if k == 0 {
        return Err(Error::NoDrafts);
    }
    let d = draft.probs();
    let mut current = target.probs().to_vec();
    let mut accepted = vec![0.0; d.len()];
    let mut reach = 1.0;
    for _ in 0..k {
        let mut beta = 0.0;
        for ((a, &r), &dx) in accepted.iter_mut().zip(&current).zip(d) {
            let m = r.min(dx);
            *a += reach * m;
            beta += m;
        }
        reach *= (1.0 - beta).max(0.0);
        next_residual(&mut current, d);
    }
    let residual = Distribution::from_weights(current)?;
    Ok(combine(accepted, &residual))
}

/// `r_rounds` for `rounds` rejections, normalised (with the same degenerate fallback
/// as the sampler: keep the previous residual).
pub(crate) fn residual_after(t: &[f64], d: &[f64], rounds: usize) -> Vec<f64> {
    let mut current = t.to_vec();
    for _ in 0..rounds {
        next_residual(&mut current, d);
    }
    current
}

/// `r ← norm(max(0, r − d))`; kept unchanged when that has no mass (then `r ≈ d` and the
/// round accepts with probability ≥ 1 − ε).
fn next_residual(current: &mut [f64], d: &[f64]) {
    let mass: f64 = current.iter().zip(d).map(|(r, dx)| (r - dx).max(0.0)).sum();
    if mass <= RESIDUAL_EPSILON {
        return;
    }
    let inv = 1.0 / mass;
    for (r, dx) in current.iter_mut().zip(d) {
        *r = (*r - dx).max(0.0) * inv;
    }
}
