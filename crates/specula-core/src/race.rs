//! The ratio race: a selection among k i.i.d. drafts that reaches SpecTr's optimal
//! acceptance α_k (the OTM optimum) to within [`RACE_TOLERANCE`], at any vocabulary size.
//!
//! Every draft `xⱼ` gets the key `w(xⱼ)/Uⱼ` with `Uⱼ` uniform on `(0, 1]`, and the draft
//! with the largest key is chosen (the first on a tie). The chosen token `z` is then tested
//! once against the rule's own selection distribution `r`: accepted with probability
//! `min(1, target(z)/r(z))`, else a draw from `norm(max(0, target − r))`. That emits
//! exactly the target for *any* weights `w` (`min(target, r) + max(0, target − r) =
//! target`), and accepts with probability `Σ min(target, r)`.
//!
//! The weights are fitted: starting from `w = target/draft`, repeated steps
//! `w ← w·(target/r)^β` move `r` towards the target; the best weights seen are kept. The
//! steps start over-relaxed, at β = 1.5, and fall back to plain steps
//! (β = 1) for good after the first step that lowers the acceptance. The
//! optimum is known exactly ([`otm_upper_bound`]: Lemma 3's bound is attained with
//! i.i.d. drafts), so the fit stops once it is within [`RACE_TOLERANCE`] of it, or after
//! [`RACE_MAX_STEPS`] steps. With `w = target/draft` the race is k-Seq's coin test
//! (`target/(draft·U) ≥ ρ`) run at every threshold ρ at once.
//!
//! `r` has a closed form. With `v = 1/key`, a draft keyed `w(y)/U` beats another draft
//! with probability `G(v) = Σ_{x: w(x)·v < 1} draft(x)·(1 − w(x)·v)`, so
//! `r(y) = k·draft(y)·w(y)·∫₀^{1/w(y)} G(v)^(k−1) dv`; between consecutive values of
//! `1/w`, `G` is linear in `v` and the integral is a polynomial. Drafts of weight 0 are
//! chosen only when every draft has weight 0: `r(y) = draft(y)·draft(W₀)^(k−1)`.
//! Computing `r` costs a sort, `O(V log V)`; a plan costs that per fitting step.

use rand::Rng;
use serde::Serialize;

use crate::distribution::Distribution;
use crate::error::{Error, Result};
use crate::otm::otm_upper_bound;
use crate::outcome::{DraftTest, TestRule, TokenAnalysis, TokenOutcome, ratio};
use crate::residual::{Residual, check_same_len, distribution_or_target, draw_from_weights};
use crate::speculative::{combine, untested};
use crate::wiring::{Wiring, draw_target};

/// The fit stops once the acceptance is this close to the optimum.
pub const RACE_TOLERANCE: f64 = 1e-6;

/// The most fitting steps a plan takes. Over the bundled models' validation positions
/// the median was 7–26 (mean 16–51) for k = 8 down to 2, and the few that stopped here
/// were at most 2.4e-4 short of the optimum (`race_scan`, measured in commit e1d9d1b).
pub const RACE_MAX_STEPS: usize = 1000;

/// The exponent β of the first fitting steps, 1.5 (computed as `x·√x`). Plain steps
/// (β = 1) approach the weights that the optimum needs, some of which grow without
/// bound, only geometrically; over-relaxed ones get there in about two thirds of the
/// steps over the bundled models' validation positions (commit e1d9d1b), and the fallback
/// to β = 1 keeps the cases where they would overshoot and oscillate (β = 2 does, often)
/// from stalling.
fn over_relaxed(ratio: f64) -> f64 {
    ratio * ratio.sqrt()
}

/// Weights are kept within this factor of their (draft-weighted) geometric mean, so that
/// `w` and `1/w` stay finite: a token whose weight keeps growing (its `r` cannot reach
/// the target's) or shrinking then no longer squeezes the others' ratios out of range.
/// Only a weight of exactly 0 (a token the target never emits) stays 0.
const WEIGHT_RANGE: f64 = 1e60;

/// The fitted race for one pair of distributions and `k` drafts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RacePlan {
    /// Number of drafts.
    pub k: usize,
    /// The fitted weight `w(x)` of every token (only their ratios matter).
    pub weights: Vec<f64>,
    /// `r(x)`: the probability that the race chooses a draft of token `x`.
    pub selection: Vec<f64>,
    /// `Σ min(target, r)`: the probability that the chosen draft is accepted.
    pub acceptance: f64,
    /// The optimal acceptance α_k over every selection rule ([`otm_upper_bound`]).
    pub optimum: f64,
    /// Fitting steps taken.
    pub steps: usize,
}

/// The ratio race for one pair of distributions and `k` drafts, with its weights fitted
/// once: [`sample`](Self::sample) then costs the race and one test (and the residual
/// after a rejection).
#[derive(Debug, Clone, PartialEq)]
pub struct Race<'a> {
    target: &'a Distribution,
    draft: &'a Distribution,
    plan: RacePlan,
}

impl<'a> Race<'a> {
    /// Fits the race's weights for `k` drafts (see the module documentation).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::NoDrafts`] when `k == 0`.
    pub fn new(target: &'a Distribution, draft: &'a Distribution, k: usize) -> Result<Self> {
        check_same_len(target, draft)?;
        if k == 0 {
            return Err(Error::NoDrafts);
        }
        let optimum = otm_upper_bound(target, draft, k)?;
        let plan = fit(target.probs(), draft.probs(), k, optimum);
        Ok(Self {
            target,
            draft,
            plan,
        })
    }

    /// The fitted race (what a trace records).
    #[must_use]
    pub fn plan(&self) -> &RacePlan {
        &self.plan
    }

    /// The fitted race, without copying it.
    #[must_use]
    pub fn into_plan(self) -> RacePlan {
        self.plan
    }

    /// Runs the race among the draft tokens `drafts`, the plan's k draws i.i.d. from the
    /// draft, then the one acceptance test. The outcome's single [`DraftTest`] is the
    /// chosen draft's (`accept_prob = min(1, target/r)`); the race's own uniforms, one per
    /// draft, are drawn first, in draft order, then the test's, then the residual's after
    /// a rejection.
    ///
    /// A token outside the vocabulary has weight 0 and is never accepted. Another number
    /// of drafts than k cannot race under this plan: then none is tested, and the token is
    /// drawn from the target (still exact, never accepted).
    pub fn sample<R: Rng + ?Sized>(&self, drafts: &[usize], rng: &mut R) -> TokenOutcome {
        self.sample_wired(drafts, Wiring::CORRECT, rng)
    }

    /// [`Self::sample`] with its acceptance uniform and residual wired as `wiring` says
    /// (the race's own uniforms are always fresh).
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
        let mut chosen = (0, f64::NEG_INFINITY);
        for (j, &x) in drafts.iter().enumerate() {
            let weight = plan.weights.get(x).copied().unwrap_or(0.0);
            // `1 − u` is uniform on (0, 1], so the key is finite.
            let key = weight / (1.0 - rng.random::<f64>());
            if key > chosen.1 {
                chosen = (j, key);
            }
        }
        let index = chosen.0;
        let z = drafts.get(index).copied().unwrap_or_default();
        let t = target.prob(z);
        let accept_prob = plan.accept_prob(z, t);
        let u = wiring.uniform(index, rng);
        let accepted = u < accept_prob;
        let test = DraftTest {
            draft_index: index,
            token: z,
            draft_prob: draft.prob(z),
            target_prob: t,
            ratio: ratio(t, draft.prob(z)),
            accept_prob,
            uniform: Some(u),
            rule: TestRule::Coin,
            accepted,
        };
        if accepted {
            return TokenOutcome {
                token: z,
                tests: vec![test],
                accepted_draft: Some(index),
                residual: None,
            };
        }
        let resampled = if wiring.residual_from_target {
            draw_target(target, draft, rng)
        } else {
            draw_from_weights(
                self.residual(),
                &self.residual_weights(),
                target,
                rng.random(),
            )
        };
        TokenOutcome {
            token: resampled.token,
            tests: vec![test],
            accepted_draft: None,
            residual: Some(resampled),
        }
    }

    /// The exact output distribution and acceptance of the race with its k drafts:
    /// `min(target, r)` by acceptance, plus the rejection mass times the residual.
    #[must_use]
    pub fn analysis(&self) -> TokenAnalysis {
        let accepted = self
            .target
            .probs()
            .iter()
            .zip(&self.plan.selection)
            .map(|(&t, &r)| t.min(r))
            .collect();
        combine(accepted, &self.residual_distribution())
    }

    /// The residual sampled after a rejection ([`Residual::Race`]).
    #[must_use]
    pub fn residual(&self) -> Residual {
        Residual::Race { k: self.plan.k }
    }

    /// The residual `norm(max(0, target − r))` whole; the target when it has no mass, as
    /// the sampler falls back.
    #[must_use]
    pub fn residual_distribution(&self) -> Distribution {
        distribution_or_target(self.residual_weights(), self.target)
    }

    /// `max(0, target − r)`.
    fn residual_weights(&self) -> Vec<f64> {
        self.target
            .probs()
            .iter()
            .zip(&self.plan.selection)
            .map(|(&t, &r)| (t - r).max(0.0))
            .collect()
    }
}

impl RacePlan {
    /// `min(1, target(x)/r(x))`: the chance that a chosen draft of token `x`, whose target
    /// probability is `target_prob`, is accepted (0 for a token the race never chooses).
    #[must_use]
    pub fn accept_prob(&self, x: usize, target_prob: f64) -> f64 {
        match self.selection.get(x) {
            Some(&r) if r > 0.0 => (target_prob / r).min(1.0),
            _ => 0.0,
        }
    }
}

/// The fit: from `w = target/draft`, steps `w ← w·(target/r)^β` until the acceptance is
/// within [`RACE_TOLERANCE`] of `optimum` or [`RACE_MAX_STEPS`] were taken; the best
/// weights seen are kept.
fn fit(t: &[f64], d: &[f64], k: usize, optimum: f64) -> RacePlan {
    let mut weights: Vec<f64> = t
        .iter()
        .zip(d)
        .map(|(&t, &d)| if d > 0.0 { t / d } else { 0.0 })
        .collect();
    normalise(&mut weights, d);
    let mut best: Option<(f64, Vec<f64>, Vec<f64>)> = None;
    let mut steps = 0;
    let mut over = true;
    let mut last = f64::NEG_INFINITY;
    loop {
        let selection = race_selection(&weights, d, k);
        let acceptance = overlap_with(t, &selection);
        if best.as_ref().is_none_or(|(a, ..)| acceptance > *a) {
            best = Some((acceptance, weights.clone(), selection.clone()));
        }
        if acceptance >= optimum - RACE_TOLERANCE || steps == RACE_MAX_STEPS {
            break;
        }
        over &= acceptance >= last;
        last = acceptance;
        for ((w, &r), &t) in weights.iter_mut().zip(&selection).zip(t) {
            if r > 0.0 {
                let ratio = t / r;
                *w *= if over { over_relaxed(ratio) } else { ratio };
            }
        }
        normalise(&mut weights, d);
        steps += 1;
    }
    let (acceptance, weights, selection) = best.unwrap_or_default();
    RacePlan {
        k,
        weights,
        selection,
        acceptance,
        optimum,
        steps,
    }
}

/// `Σ min(t, r)`.
fn overlap_with(t: &[f64], r: &[f64]) -> f64 {
    t.iter().zip(r).map(|(&t, &r)| t.min(r)).sum()
}

/// Divides the weights by their geometric mean over the drafted tokens (weighted by the
/// draft) and keeps the positive ones within [`WEIGHT_RANGE`] of 1.
fn normalise(weights: &mut [f64], draft: &[f64]) {
    let (mut log_sum, mut mass) = (0.0, 0.0);
    for (&w, &d) in weights.iter().zip(draft) {
        if w > 0.0 && d > 0.0 {
            log_sum += d * w.ln();
            mass += d;
        }
    }
    let mean = if mass > 0.0 {
        (log_sum / mass).exp()
    } else {
        1.0
    };
    let mean = if mean > 0.0 && mean.is_finite() {
        mean
    } else {
        1.0
    };
    for w in weights.iter_mut().filter(|w| **w > 0.0) {
        *w = (*w / mean).clamp(1.0 / WEIGHT_RANGE, WEIGHT_RANGE);
    }
}

/// `r`: the probability that the race among `k` drafts from `draft` with weights
/// `weights` chooses a draft of each token (module documentation).
pub(crate) fn race_selection(weights: &[f64], draft: &[f64], k: usize) -> Vec<f64> {
    let power = i32::try_from(k).unwrap_or(i32::MAX);
    let mut order: Vec<usize> = (0..draft.len())
        .filter(|&i| draft[i] > 0.0 && weights[i] > 0.0)
        .collect();
    order.sort_unstable_by(|&a, &b| weights[b].total_cmp(&weights[a]));
    // Sums over each suffix of `order` (the drafts still in play), added from the small
    // end so that none is a difference of large terms.
    let n = order.len();
    let (mut mass, mut weighted) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for j in (0..n).rev() {
        let i = order[j];
        mass[j] = mass[j + 1] + draft[i];
        weighted[j] = weighted[j + 1] + draft[i] * weights[i];
    }
    // The drafts of weight 0 lose to every other draft.
    let zero_mass: f64 = (0..draft.len())
        .filter(|&i| draft[i] > 0.0 && weights[i] <= 0.0)
        .map(|i| draft[i])
        .sum();
    let mut selection = vec![0.0; draft.len()];
    let (mut v_lo, mut integral) = (0.0, 0.0);
    for (j, &i) in order.iter().enumerate() {
        let v_hi = 1.0 / weights[i];
        if v_hi > v_lo {
            let (a, b) = (mass[j] + zero_mass, weighted[j]);
            integral += segment(a - b * v_lo, b * (v_hi - v_lo), v_hi - v_lo, k);
            v_lo = v_hi;
        }
        selection[i] = k as f64 * draft[i] * weights[i] * integral;
    }
    if zero_mass > 0.0 {
        let all_zero = zero_mass.powi(power - 1);
        for i in (0..draft.len()).filter(|&i| draft[i] > 0.0 && weights[i] <= 0.0) {
            selection[i] = draft[i] * all_zero;
        }
    }
    selection
}

/// `∫ (a − b·v)^(k−1) dv` over an interval of length `width` on which `a − b·v` falls
/// from `x` to `x − drop` (`drop = b·width`): `width·(x^k − (x − drop)^k)/(k·drop)`,
/// written as `width·x^k·fallen(drop/x)/(k·drop)` so that it does not cancel when `drop`
/// is small.
fn segment(x: f64, drop: f64, width: f64, k: usize) -> f64 {
    let x = x.max(0.0);
    let power = i32::try_from(k).unwrap_or(i32::MAX);
    if drop <= 0.0 {
        return width * x.powi(power - 1);
    }
    if x <= 0.0 {
        return 0.0;
    }
    width * x.powi(power) * fallen((drop / x).min(1.0), k) / (k as f64 * drop)
}

/// `1 − (1 − f)^k` for `f` in `[0, 1]`. The plan runs it once per token and fitting
/// step, so the common cases avoid `ln_1p`/`exp_m1`: where `k·f < 0.05`, eight terms of
/// the binomial series (the next is below 2e-16 of the sum); else where `k ≤ 16`, the
/// power itself (its rounding error is then below 5e-14 of the result); otherwise
/// `−expm1(k·ln(1 − f))`, whose cost does not grow with `k`.
fn fallen(f: f64, k: usize) -> f64 {
    let kf = k as f64 * f;
    if kf < 0.05 {
        let (mut term, mut sum) = (kf, kf);
        for j in 1..8 {
            term *= -(k as f64 - f64::from(j)) * f / f64::from(j + 1);
            sum += term;
        }
        sum
    } else if k <= 16 {
        1.0 - (1.0 - f).powi(k as i32)
    } else {
        -(k as f64 * (-f).ln_1p()).exp_m1()
    }
}

#[cfg(test)]
mod tests {
    use super::fallen;

    /// The fast branches against the accurate expression they replace.
    #[test]
    fn fallen_matches_the_accurate_expression_on_every_branch() {
        for k in [1_usize, 2, 3, 4, 8, 16, 17, 64, 1000] {
            for f in [
                0.0_f64, 1e-15, 1e-9, 1e-6, 1e-4, 1.2e-3, 3e-3, 1e-2, 0.1, 0.5, 0.99, 1.0,
            ] {
                let accurate = -(k as f64 * (-f).ln_1p()).exp_m1();
                let got = fallen(f, k);
                assert!(
                    (got - accurate).abs() <= 1e-13 * accurate,
                    "k = {k}, f = {f}: {got} against {accurate}"
                );
            }
        }
    }
}
