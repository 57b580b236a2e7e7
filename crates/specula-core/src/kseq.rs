//! SpecTr's k-sequential selection (k-Seq; Sun et al. 2023, Algorithm 2).
//!
//! Given k i.i.d. draft tokens `x₁..x_k ~ draft`, accept `xᵢ` with probability
//! `min(1, target(xᵢ)/(ρ·draft(xᵢ)))` and return the first accepted; if none is, draw
//! from `res(x) = (target(x) − min(draft(x), target(x)/ρ)·p_acc/b) / (1 − p_acc)` with
//! `b(ρ) = Σ min(draft, target/ρ)` and `p_acc(ρ) = 1 − (1 − b(ρ))^k`. The output is
//! exactly `target` whenever `ρ ≥ ρ*`, the root of `p_acc(ρ) = ρ·b(ρ)` in `[1, k]`.

use rand::Rng;
use serde::Serialize;

use crate::distribution::Distribution;
use crate::error::{Error, Result};
use crate::outcome::{TokenAnalysis, TokenOutcome};
use crate::residual::{Residual, check_same_len, draw};
use crate::speculative::{acceptance_test, combine};

/// Relative slack allowed when an override ρ is compared with ρ*: ρ* is found to about
/// machine precision (bisection down to adjacent floats), so a user value that agrees
/// to 1e-12 is taken as equal.
pub const RHO_TOLERANCE: f64 = 1e-12;

/// The parameters k-Seq uses for one pair of distributions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KSeqPlan {
    /// Number of drafts.
    pub k: usize,
    /// The ρ in use (ρ* unless overridden).
    pub rho: f64,
    /// The smallest valid ρ.
    pub rho_star: f64,
    /// `b(ρ) = Σ min(draft, target/ρ)`: the per-draft acceptance probability.
    pub overlap: f64,
    /// `p_acc(ρ) = 1 − (1 − b(ρ))^k`: the probability that some draft is accepted.
    pub acceptance: f64,
}

impl KSeqPlan {
    /// The residual sampled when every draft is rejected.
    #[must_use]
    pub fn residual(&self) -> Residual {
        Residual::KSeq {
            rho: self.rho,
            acceptance: self.acceptance,
            overlap: self.overlap,
        }
    }
}

/// Computes ρ* and, with it (or with a valid override), the acceptance of k-Seq.
///
/// # Errors
/// [`Error::LengthMismatch`], [`Error::NoDrafts`] when `k == 0`, [`Error::BadRho`] when
/// the override is not finite or below ρ*.
pub fn kseq_plan(
    target: &Distribution,
    draft: &Distribution,
    k: usize,
    rho: Option<f64>,
) -> Result<KSeqPlan> {
    check_same_len(target, draft)?;
    if k == 0 {
        return Err(Error::NoDrafts);
    }
    let (t, d) = (target.probs(), draft.probs());
    let rho_star = rho_star(t, d, k);
    let rho = match rho {
        None => rho_star,
        Some(r) if r.is_finite() && r >= rho_star * (1.0 - RHO_TOLERANCE) => r.max(rho_star),
        Some(r) => return Err(Error::BadRho { rho: r, rho_star }),
    };
    let overlap = overlap_at(t, d, rho);
    Ok(KSeqPlan {
        k,
        rho,
        rho_star,
        overlap,
        acceptance: acceptance_at(overlap, k),
    })
}

/// Selects among the draft tokens `drafts` (k = `drafts.len()`, each drawn i.i.d. from
/// `draft`). Returns the plan used and the outcome.
///
/// # Errors
/// As [`kseq_plan`], plus [`Error::TokenOutOfRange`] for a draft token.
pub fn kseq_sample<R: Rng + ?Sized>(
    target: &Distribution,
    draft: &Distribution,
    drafts: &[usize],
    rho: Option<f64>,
    rng: &mut R,
) -> Result<(KSeqPlan, TokenOutcome)> {
    let plan = kseq_plan(target, draft, drafts.len(), rho)?;
    let outcome = kseq_sample_with_plan(target, draft, &plan, drafts, rng)?;
    Ok((plan, outcome))
}

/// Like [`kseq_sample`] with a plan computed beforehand (for example shared by many
/// positions with the same distributions).
///
/// # Errors
/// [`Error::LengthMismatch`], [`Error::TokenOutOfRange`], and [`Error::NoDrafts`] when
/// `drafts.len()` differs from `plan.k` (the plan is only valid for its own k).
pub fn kseq_sample_with_plan<R: Rng + ?Sized>(
    target: &Distribution,
    draft: &Distribution,
    plan: &KSeqPlan,
    drafts: &[usize],
    rng: &mut R,
) -> Result<TokenOutcome> {
    check_same_len(target, draft)?;
    if drafts.is_empty() || drafts.len() != plan.k {
        return Err(Error::NoDrafts);
    }
    for &x in drafts {
        target.check_token(x)?;
    }
    let mut tests = Vec::with_capacity(drafts.len());
    for (i, &x) in drafts.iter().enumerate() {
        let test = acceptance_test(i, x, target.prob(x), draft.prob(x), plan.rho, rng);
        let accepted = test.accepted;
        tests.push(test);
        if accepted {
            return Ok(TokenOutcome {
                token: x,
                tests,
                accepted_draft: Some(i),
                residual: None,
            });
        }
    }
    let draw = draw(plan.residual(), target, draft, rng);
    Ok(TokenOutcome {
        token: draw.token,
        tests,
        accepted_draft: None,
        residual: Some(draw),
    })
}

/// The exact output distribution and acceptance of k-Seq with `k` drafts, from its parts:
/// `P(emit x by acceptance) = min(draft, target/ρ)·p_acc/b`, plus `(1 − p_acc)·res(x)`.
///
/// # Errors
/// As [`kseq_plan`].
pub fn kseq_analysis(
    target: &Distribution,
    draft: &Distribution,
    k: usize,
    rho: Option<f64>,
) -> Result<(KSeqPlan, TokenAnalysis)> {
    let plan = kseq_plan(target, draft, k, rho)?;
    let scale = if plan.overlap > 0.0 {
        plan.acceptance / plan.overlap
    } else {
        0.0
    };
    let accepted = target
        .probs()
        .iter()
        .zip(draft.probs())
        .map(|(&t, &d)| d.min(t / plan.rho) * scale)
        .collect();
    let residual = plan.residual().distribution(target, draft)?;
    Ok((plan, combine(accepted, &residual)))
}

/// `b(ρ) = Σ min(d, t/ρ)`.
#[must_use]
pub fn overlap_at(t: &[f64], d: &[f64], rho: f64) -> f64 {
    let inv = 1.0 / rho;
    t.iter().zip(d).map(|(&t, &d)| d.min(t * inv)).sum()
}

/// `p_acc = 1 − (1 − b)^k`.
fn acceptance_at(overlap: f64, k: usize) -> f64 {
    let miss = (1.0 - overlap).clamp(0.0, 1.0);
    1.0 - miss.powi(i32::try_from(k).unwrap_or(i32::MAX))
}

/// `f(ρ) = p_acc(ρ) − ρ·b(ρ)`, decreasing in ρ; k-Seq is exact where `f ≤ 0`.
fn excess(overlap: f64, rho: f64, k: usize) -> f64 {
    acceptance_at(overlap, k) - rho * overlap
}

/// ρ*: the smallest ρ in `[1, k]` with `f(ρ) ≤ 0`, to about machine precision.
///
/// `b(ρ)` is piecewise `A + B/ρ` with breakpoints at the ratios `t/d`. Only ratios in
/// `(1, k)` matter; a quickselect over them (expected linear time) finds the segment
/// holding the root, then bisection inside it costs O(1) per step. This replaces the
/// O(V log(k/δ)) plain bisection of the paper with expected O(V).
fn rho_star(t: &[f64], d: &[f64], k: usize) -> f64 {
    if k == 1 {
        return 1.0;
    }
    let kf = k as f64;
    // Tokens whose ratio is >= every candidate ρ contribute d; <= every candidate, t/ρ.
    let mut above_draft = 0.0;
    let mut below_target = 0.0;
    let mut mid: Vec<(f64, f64, f64)> = Vec::new();
    for (&ti, &di) in t.iter().zip(d) {
        if ti <= 0.0 || di <= 0.0 {
            continue; // min(d, t/ρ) = 0 for every ρ
        }
        let r = ti / di;
        if r <= 1.0 {
            below_target += ti;
        } else if r >= kf {
            above_draft += di;
        } else {
            mid.push((r, di, ti));
        }
    }
    let (mut lo, mut hi) = (1.0_f64, kf);
    while !mid.is_empty() {
        let m = mid.len() / 2;
        mid.select_nth_unstable_by(m, |a, b| a.0.total_cmp(&b.0));
        let pivot = mid[m].0;
        let mut b = above_draft + below_target / pivot;
        for &(r, di, ti) in &mid {
            b += if r >= pivot { di } else { ti / pivot };
        }
        if excess(b, pivot, k) > 0.0 {
            lo = pivot;
            mid.retain(|&(r, _, ti)| {
                let keep = r > pivot;
                if !keep {
                    below_target += ti;
                }
                keep
            });
        } else {
            hi = pivot;
            mid.retain(|&(r, di, _)| {
                let keep = r < pivot;
                if !keep {
                    above_draft += di;
                }
                keep
            });
        }
    }
    // No breakpoint inside (lo, hi): b(ρ) = above + below/ρ there.
    loop {
        let m = 0.5 * (lo + hi);
        if m <= lo || m >= hi {
            return hi;
        }
        if excess(above_draft + below_target / m, m, k) > 0.0 {
            lo = m;
        } else {
            hi = m;
        }
    }
}
