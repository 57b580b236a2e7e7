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
use crate::residual::{Residual, check_same_len, distribution_or_target, pointwise_weights};
use crate::speculative::{acceptance_test, combine, outcome, test_in_turn, untested};
use crate::wiring::Wiring;

/// Relative slack allowed when an override ρ is compared with ρ*: ρ* is found to about
/// machine precision (bisection down to adjacent floats), so a user value that agrees
/// to 1e-12 is taken as equal.
pub const RHO_TOLERANCE: f64 = 1e-12;

/// The parameters k-Seq uses for one pair of distributions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
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

    /// `p_acc/b`: how much the acceptance of one draft is scaled up to the acceptance of
    /// the first accepted among k (0 when no draft can be accepted).
    fn scale(&self) -> f64 {
        if self.overlap > 0.0 {
            self.acceptance / self.overlap
        } else {
            0.0
        }
    }
}

/// SpecTr k-Seq for one pair of distributions and `k` drafts, with ρ* computed once:
/// [`sample`](Self::sample) then costs only the tests (and the residual after a
/// rejection).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KSeq<'a> {
    target: &'a Distribution,
    draft: &'a Distribution,
    plan: KSeqPlan,
}

impl<'a> KSeq<'a> {
    /// Computes ρ* and, with it (or with a valid override `rho`), the acceptance of k-Seq
    /// with `k` drafts.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::NoDrafts`] when `k == 0`, [`Error::BadRho`] when
    /// the override is not finite or below ρ*.
    pub fn new(
        target: &'a Distribution,
        draft: &'a Distribution,
        k: usize,
        rho: Option<f64>,
    ) -> Result<Self> {
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
        let plan = KSeqPlan {
            k,
            rho,
            rho_star,
            overlap,
            acceptance: acceptance_at(overlap, k),
        };
        Ok(Self {
            target,
            draft,
            plan,
        })
    }

    /// The parameters in use (what a trace records).
    #[must_use]
    pub fn plan(&self) -> &KSeqPlan {
        &self.plan
    }

    /// Selects among the draft tokens `drafts`, the plan's k draws i.i.d. from the draft,
    /// tested in order with one uniform each; one more uniform for the residual if every
    /// one is rejected.
    ///
    /// A token the draft gives probability 0 (one outside the vocabulary included) is
    /// rejected. Another number of drafts than k cannot be tested against this plan: then
    /// none is, and the token is drawn from the target (still exact, never accepted).
    pub fn sample<R: Rng + ?Sized>(&self, drafts: &[usize], rng: &mut R) -> TokenOutcome {
        self.sample_wired(drafts, Wiring::CORRECT, rng)
    }

    /// [`Self::sample`] with its uniforms and residual wired as `wiring` says.
    pub(crate) fn sample_wired<R: Rng + ?Sized>(
        &self,
        drafts: &[usize],
        wiring: Wiring<'_>,
        rng: &mut R,
    ) -> TokenOutcome {
        let (target, draft, plan) = (self.target, self.draft, &self.plan);
        if drafts.len() != plan.k {
            return untested(target, rng);
        }
        let tests = test_in_turn(drafts, |i, x| {
            let u = wiring.uniform(i, rng);
            acceptance_test(i, x, target.prob(x), draft.prob(x), plan.rho, u)
        });
        let weight = self.weight();
        outcome(tests, || {
            wiring.draw_pointwise(plan.residual(), target, draft, weight, rng)
        })
    }

    /// The exact output distribution and acceptance with the plan's k drafts, from its
    /// parts: `P(emit x by acceptance) = min(draft, target/ρ)·p_acc/b`, plus
    /// `(1 − p_acc)·res(x)`.
    #[must_use]
    pub fn analysis(&self) -> TokenAnalysis {
        let (rho, scale) = (self.plan.rho, self.plan.scale());
        let accepted = pointwise_weights(self.target, self.draft, |t, d| d.min(t / rho) * scale);
        combine(accepted, &self.residual_distribution())
    }

    /// The residual sampled after every draft is rejected ([`Residual::KSeq`]).
    #[must_use]
    pub fn residual(&self) -> Residual {
        self.plan.residual()
    }

    /// The residual `norm(max(0, target − min(draft, target/ρ)·p_acc/b))` whole; the
    /// target when it has no mass, as the sampler falls back.
    #[must_use]
    pub fn residual_distribution(&self) -> Distribution {
        distribution_or_target(
            pointwise_weights(self.target, self.draft, self.weight()),
            self.target,
        )
    }

    /// The residual's weight of a token with these probabilities.
    fn weight(&self) -> impl Fn(f64, f64) -> f64 + use<> {
        let (rho, scale) = (self.plan.rho, self.plan.scale());
        move |t, d| (t - d.min(t / rho) * scale).max(0.0)
    }
}

/// `b(ρ) = Σ min(d, t/ρ)`.
#[must_use]
pub fn overlap_at(t: &[f64], d: &[f64], rho: f64) -> f64 {
    overlap_scaled(t, d, 1.0 / rho)
}

/// `Σ min(d, t·inv)` with four independent accumulators, so the loop vectorises and is
/// not bound by the latency of one chain of additions.
fn overlap_scaled(t: &[f64], d: &[f64], inv: f64) -> f64 {
    // Written as a comparison (not f64::min) so it compiles to one min instruction.
    let min = |ti: f64, di: f64| {
        let scaled = ti * inv;
        if scaled < di { scaled } else { di }
    };
    let mut lanes = [0.0; 4];
    let (t4, d4) = (t.chunks_exact(4), d.chunks_exact(4));
    let tail: f64 = t4
        .remainder()
        .iter()
        .zip(d4.remainder())
        .map(|(&ti, &di)| min(ti, di))
        .sum();
    for (tc, dc) in t4.zip(d4) {
        for lane in 0..4 {
            lanes[lane] += min(tc[lane], dc[lane]);
        }
    }
    lanes.iter().sum::<f64>() + tail
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

/// How many values of ρ the first pass evaluates at once.
const PROBES: usize = 8;

/// ρ*: the smallest ρ in `[1, k]` with `f(ρ) ≤ 0`, to about machine precision.
///
/// `b(ρ)` is piecewise `A + B/ρ` with breakpoints at the ratios `target/draft`; only
/// ratios in `(1, k)` matter. A first branch-free pass evaluates `b` at [`PROBES`]
/// evenly spaced ρ at once (independent accumulators, so it costs about one plain read
/// of both vectors) and brackets the root; a second pass sums the tokens outside the
/// bracket and collects the few inside; a quickselect over those finds the exact
/// segment, and bisection inside it costs O(1) per step. Expected O(V) in all, versus
/// the paper's O(V log(k/δ)) plain bisection (the tests compare the two).
fn rho_star(t: &[f64], d: &[f64], k: usize) -> f64 {
    if k == 1 {
        return 1.0;
    }
    let kf = k as f64;
    let step = (kf - 1.0) / PROBES as f64;
    let probes: [f64; PROBES] = std::array::from_fn(|j| 1.0 + (j + 1) as f64 * step);
    let inverse: [f64; PROBES] = probes.map(|rho| 1.0 / rho);
    let b = inverse.map(|inv| overlap_scaled(t, d, inv));
    // f(1) ≥ 0 and f(k) ≤ 0, so the first probe with f ≤ 0 closes the bracket.
    let j = (0..PROBES)
        .find(|&j| excess(b[j], probes[j], k) <= 0.0)
        .unwrap_or(PROBES - 1);
    let lo = if j == 0 { 1.0 } else { probes[j - 1] };
    let hi = if j + 1 == PROBES { kf } else { probes[j] };
    // Ratio ≤ lo: contributes target/ρ throughout the bracket; ≥ hi: contributes draft.
    // Tokens with a zero probability land in one of these and add 0. Both loops are
    // branch-free (flags multiply and index): about half the ratios fall on each side,
    // so branches would be mispredicted constantly.
    let side = |ti: f64, di: f64| (ti <= lo * di, ti >= hi * di);
    let mut below_target = 0.0;
    let mut above_draft = 0.0;
    let mut inside = 0usize;
    for (&ti, &di) in t.iter().zip(d) {
        let (below, above) = side(ti, di);
        below_target += ti * f64::from(u8::from(below));
        above_draft += di * f64::from(u8::from(above && !below));
        inside += usize::from(!below && !above);
    }
    // One spare slot: every token is written, and only those inside advance the cursor.
    let mut mid = vec![(0.0, 0.0, 0.0); inside + 1];
    let mut cursor = 0;
    for (&ti, &di) in t.iter().zip(d) {
        let (below, above) = side(ti, di);
        if let Some(slot) = mid.get_mut(cursor) {
            *slot = (0.0, di, ti);
        }
        cursor += usize::from(!below && !above);
    }
    mid.truncate(inside);
    for entry in &mut mid {
        entry.0 = entry.2 / entry.1;
    }
    root_in_bracket(mid, above_draft, below_target, lo, hi, k)
}

/// Finishes the ρ* search inside a bracket: quickselect over its breakpoints
/// down to a segment without any, then bisection to adjacent floats.
fn root_in_bracket(
    mut mid: Vec<(f64, f64, f64)>,
    mut above_draft: f64,
    mut below_target: f64,
    mut lo: f64,
    mut hi: f64,
    k: usize,
) -> f64 {
    while !mid.is_empty() {
        let m = mid.len() / 2;
        mid.select_nth_unstable_by(m, |a, b| a.0.total_cmp(&b.0));
        let pivot = mid[m].0;
        let mut b = above_draft + below_target / pivot;
        for &(r, di, ti) in &mid {
            b += if r >= pivot { di } else { ti / pivot };
        }
        if excess(b, pivot, k) > 0.0 {
            lo = lo.max(pivot);
            mid.retain(|&(r, _, ti)| {
                let keep = r > pivot;
                if !keep {
                    below_target += ti;
                }
                keep
            });
        } else {
            hi = hi.min(pivot);
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
