//! Mentored decoding (Tran-Thien 2023): lossy speculative sampling that accepts more
//! drafts while keeping `KL(target ‖ output) ≤ D`.
//!
//! Notation: the source writes `q` for the target and `p` for the draft; here
//! `t = target`, `d = draft` and `ratio = t/d`. Draw `x ~ draft`, accept it with
//! probability `r(x)`, otherwise draw from the residual `s`. The output is
//! `π = d·r + (1 − R)·s` with acceptance `R = Σ d·r`; we maximise `R` subject to
//! `KL(t ‖ π) ≤ D`. The optimum has two thresholds `α ≤ 1 ≤ β` on the ratio:
//!
//! | ratio | accept `r` | residual weight | output `π` |
//! |---|---|---|---|
//! | `≤ α` | `t/(α·d)` | 0 | `t/α` |
//! | between | 1 | 0 | `d` |
//! | `≥ β` | 1 | `t/β − d` | `t/β` |
//!
//! The residual is `s = norm(max(0, target/β − draft))` ([`Residual::Mentored`]; its
//! unnormalised mass is `1 − R`, which is the seed's missing `1/(1 − R)`). With the
//! rejection mass `A = 1 − R`, α solves `A = Σ max(0, d − t/α)`, β solves
//! `A = Σ max(0, t/β − d)`, and
//! `KL = ln α·Σ_{≤α} t + Σ_{between} t ln(t/d) + ln β·Σ_{≥β} t`, with `dKL/dA = α − β < 0`.
//! `D = 0` is standard speculative sampling (`α = β = 1`); `KL(t ‖ d) ≤ D` accepts every
//! draft (`π = d`). A token with `d = 0 < t` has an infinite ratio: it is always above β
//! and makes `KL(t ‖ d)` infinite.
//!
//! **Tokens the target rules out** (`t = 0 < d`, ratio 0) are never accepted while
//! `α > 0`, so α alone only reaches acceptance `1 − Σ_{t=0} d`. Larger budgets use
//! `α = 0`: every token with `t > 0` is accepted and a drafted `t = 0` token is accepted
//! with a common probability ([`MentoredPlan::zero_target_accept`]). In the variables
//! `(d·r, (1 − R)·s)` the problem is convex, and this point satisfies its KKT conditions
//! (accepting a `t = 0` token costs KL at rate β per unit of acceptance, more than any
//! other token), so it is the optimum. The seed's bisection on α alone cannot reach such
//! budgets.
//!
//! **Algorithm** (expected O(V), no sort). The search runs on the rejection mass `A`,
//! along which α rises and β falls monotonically.
//! 1. One pass takes `t·ln(t/d)` for each token (the only `ln` per token) and sums `t`,
//!    `d` and that term per ratio bucket (up to 64 per octave, cut from the ratio's bits).
//! 2. A walk over the bucket boundaries, at the masses where α or β crosses them, bounds
//!    KL between crossings two ways: by the buckets' ends, and by integrating
//!    `dKL/dA = α − β` from `A = 1 − Σ min(t, d)`, where KL is exactly 0. It keeps the
//!    few buckets where the bounds cannot tell KL from `D`. When many tokens remain
//!    (ratios crowded into a few buckets, as with a draft very close to the target),
//!    they are bucketed again, finer, over their own span.
//! 3. The remaining tokens (typically a few hundred) are decided exactly by quickselect:
//!    take the median ratio of the larger undecided set, evaluate KL there exactly
//!    (locating the other threshold by a nested quickselect), keep the half holding the
//!    solution.
//! 4. With every token's group fixed, KL is a smooth function of `A`; a bisection that
//!    always keeps one end over the budget and one within it (the seed's slip was to
//!    move the bracket to the new point instead) brings KL within the tolerance of `D`.
//!
//! At V = 32 000 on LM-like pairs a plan costs about 12–15 times reading both vectors
//! once (the `ln` pass alone is 5); about 30 times when the draft is within 1% of the
//! target everywhere.

mod exact;
mod scan;
mod solve;
mod walk;

use rand::Rng;
use serde::Serialize;

use crate::distribution::Distribution;
use crate::error::{Error, Result};
use crate::outcome::{DraftTest, TestRule, TokenAnalysis, TokenOutcome, ratio};
use crate::residual::{
    Residual, check_same_len, distribution_or_target, draw_pointwise, pointwise_weights,
};
use crate::speculative::{combine, finish};

use solve::solve;

/// The default relative tolerance on the KL budget: the plan's KL lies in
/// `[D·(1 − tolerance), D]` (up to rounding, about 1e-15 in absolute terms), unless
/// every draft is accepted or the rejection probability is held at [`MIN_REJECTION`].
/// The final bisection is O(1) per step, so a tight value costs nothing measurable.
pub const DEFAULT_KL_TOLERANCE: f64 = 1e-6;

/// The smallest rejection probability a plan uses unless it accepts every draft. Below
/// it the residual's mass (about `1 − R`) drowns in rounding: `1 − R` loses its digits
/// and the residual falls back to the target at [`RESIDUAL_EPSILON`](crate::RESIDUAL_EPSILON).
/// A budget that would need less rejection (close to `KL(target ‖ draft)`, or large
/// with a token the draft lacks) gets this much, with KL somewhat below the budget and
/// acceptance within `MIN_REJECTION` of the optimum.
pub const MIN_REJECTION: f64 = 1e-9;

/// Relative rounding slack in the test `KL(target ‖ draft) ≤ D` that accepts every draft.
const ACCEPT_ALL_SLACK: f64 = 1e-12;

/// Steps of the final bisection; about 40 reach the default tolerance, and a budget that
/// `f64` cannot resolve further ends earlier when the bracket stops shrinking.
const MAX_REFINE_STEPS: usize = 200;

/// The thresholds mentored decoding uses for one pair of distributions and one budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MentoredPlan {
    /// The KL budget `D` (nats).
    pub kl_budget: f64,
    /// Lower ratio threshold α in `[0, 1]`: a draft with `t/d ≤ α` is accepted with
    /// probability `t/(α·d)`. 0 when every draft with `t > 0` is accepted.
    pub alpha: f64,
    /// Upper ratio threshold β ≥ 1: the residual is `norm(max(0, t/β − d))`.
    pub beta: f64,
    /// Acceptance probability of a drafted token the target gives probability 0; 0 unless
    /// `alpha == 0` (see the module notes), 1 when `accepts_all`.
    pub zero_target_accept: f64,
    /// `R = Σ d·r`: the probability that the draft token is accepted.
    pub acceptance: f64,
    /// `KL(target ‖ output)` achieved (nats).
    pub kl: f64,
    /// `KL(target ‖ draft) ≤ D` (up to a relative 1e-12 of rounding): every draft is
    /// accepted and the output is the draft.
    pub accepts_all: bool,
}

impl MentoredPlan {
    /// The residual sampled after a rejection: [`Residual::Mentored`] with this β.
    #[must_use]
    pub fn residual(&self) -> Residual {
        Residual::Mentored { beta: self.beta }
    }

    /// The probability `r` of accepting a drafted token with these probabilities:
    /// `min(1, t/(α·d))`, [`Self::zero_target_accept`] when `t = 0`, and 0 when `d = 0`
    /// (such a token cannot have been drafted).
    #[must_use]
    pub fn accept_prob(&self, target_prob: f64, draft_prob: f64) -> f64 {
        if draft_prob <= 0.0 {
            0.0
        } else if target_prob <= 0.0 {
            self.zero_target_accept
        } else if self.alpha <= 0.0 {
            1.0
        } else {
            (target_prob / (self.alpha * draft_prob)).min(1.0)
        }
    }

    /// The acceptance decision for the uniform `u` in `[0, 1)`: `u·α·d < t`, with no
    /// division, so that it agrees with [`Self::accept_prob`] to the last bit.
    #[must_use]
    pub fn accepts(&self, target_prob: f64, draft_prob: f64, u: f64) -> bool {
        if draft_prob <= 0.0 {
            false
        } else if target_prob <= 0.0 {
            u < self.zero_target_accept
        } else {
            u * self.alpha * draft_prob < target_prob
        }
    }
}

/// Mentored decoding for one pair of distributions and one KL budget, with the optimal
/// thresholds computed once: [`sample`](Self::sample) then costs one test (and the
/// residual after a rejection).
///
/// ```
/// use specula_core::{Distribution, Mentored, Speculative, kl_divergence};
///
/// let target = Distribution::from_probs(vec![0.5, 0.5])?;
/// let draft = Distribution::from_probs(vec![0.8, 0.2])?;
/// let mentored = Mentored::new(&target, &draft, 0.1)?;
/// let plan = mentored.plan();
/// assert!(plan.alpha < 1.0 && plan.beta > 1.0);
/// assert!(plan.acceptance > Speculative::new(&target, &draft)?.analysis().acceptance);
/// let exact = mentored.analysis();
/// assert!(kl_divergence(target.probs(), &exact.output) <= 0.1 * (1.0 + 1e-9));
/// # Ok::<(), specula_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mentored<'a> {
    target: &'a Distribution,
    draft: &'a Distribution,
    plan: MentoredPlan,
}

impl<'a> Mentored<'a> {
    /// Computes the optimal thresholds for the budget `kl_budget` (nats), to
    /// [`DEFAULT_KL_TOLERANCE`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], or [`Error::BadKlBudget`] when the budget is negative,
    /// NaN or infinite.
    pub fn new(target: &'a Distribution, draft: &'a Distribution, kl_budget: f64) -> Result<Self> {
        Self::with_tolerance(target, draft, kl_budget, DEFAULT_KL_TOLERANCE)
    }

    /// Like [`Self::new`] with a relative tolerance of your choice: the plan's KL lies in
    /// `[D·(1 − tolerance), D]`, or as close below `D` as `f64` resolves, unless every
    /// draft is accepted or the rejection probability is held at [`MIN_REJECTION`].
    ///
    /// # Errors
    /// As [`Self::new`], plus [`Error::BadTolerance`] when `tolerance` is not in `(0, 1)`.
    pub fn with_tolerance(
        target: &'a Distribution,
        draft: &'a Distribution,
        kl_budget: f64,
        tolerance: f64,
    ) -> Result<Self> {
        check_same_len(target, draft)?;
        if !(kl_budget >= 0.0 && kl_budget.is_finite()) {
            return Err(Error::BadKlBudget(kl_budget));
        }
        if !(tolerance > 0.0 && tolerance < 1.0) {
            return Err(Error::BadTolerance(tolerance));
        }
        Ok(Self {
            target,
            draft,
            plan: solve(target.probs(), draft.probs(), kl_budget, tolerance),
        })
    }

    /// The thresholds in use (what a trace records).
    #[must_use]
    pub fn plan(&self) -> &MentoredPlan {
        &self.plan
    }

    /// The acceptance probability `r` of every token (see [`MentoredPlan::accept_prob`]).
    #[must_use]
    pub fn accept_probs(&self) -> Vec<f64> {
        pointwise_weights(self.target, self.draft, |t, d| self.plan.accept_prob(t, d))
    }

    /// Verifies one draft token `draft_token`, which must have been sampled from the
    /// draft: one uniform for the test, one more for the residual after a rejection. A
    /// token the draft gives probability 0 (one outside the vocabulary included) is
    /// rejected.
    pub fn sample<R: Rng + ?Sized>(&self, draft_token: usize, rng: &mut R) -> TokenOutcome {
        let (t, d) = (self.target.prob(draft_token), self.draft.prob(draft_token));
        let u = rng.random::<f64>();
        let test = DraftTest {
            draft_index: 0,
            token: draft_token,
            draft_prob: d,
            target_prob: t,
            ratio: ratio(t, d),
            accept_prob: self.plan.accept_prob(t, d),
            uniform: Some(u),
            rule: TestRule::Coin,
            accepted: self.plan.accepts(t, d, u),
        };
        finish(test, || {
            let beta = self.plan.beta;
            let u = rng.random::<f64>();
            draw_pointwise(self.residual(), self.target, self.draft, weight(beta), u)
        })
    }

    /// The exact output distribution and acceptance of [`Self::sample`], built from the
    /// scheme's own `r` and residual: `π = d·r + (1 − Σ d·r)·s`.
    #[must_use]
    pub fn analysis(&self) -> TokenAnalysis {
        if self.plan.accepts_all {
            // Every draft is accepted: the output is the draft itself. Summing `d·r` and
            // taking `1 − Σ` would only add rounding that swamps tiny draft entries.
            return TokenAnalysis {
                acceptance: 1.0,
                output: self.draft.probs().to_vec(),
            };
        }
        let accepted = pointwise_weights(self.target, self.draft, |t, d| {
            d * self.plan.accept_prob(t, d)
        });
        combine(accepted, &self.residual_distribution())
    }

    /// The residual sampled after a rejection: [`Residual::Mentored`] with the plan's β.
    #[must_use]
    pub fn residual(&self) -> Residual {
        self.plan.residual()
    }

    /// The residual `norm(max(0, target/β − draft))` whole; the target when it has no
    /// mass, as the sampler falls back.
    #[must_use]
    pub fn residual_distribution(&self) -> Distribution {
        distribution_or_target(
            pointwise_weights(self.target, self.draft, weight(self.plan.beta)),
            self.target,
        )
    }
}

/// The residual's weight `max(0, t/β − d)`.
fn weight(beta: f64) -> impl Fn(f64, f64) -> f64 {
    move |t, d| (t / beta - d).max(0.0)
}
