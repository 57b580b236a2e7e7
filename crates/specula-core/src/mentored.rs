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

use std::cmp::Ordering;
use std::ops::{Add, Range};

use rand::Rng;
use serde::Serialize;

use crate::distribution::Distribution;
use crate::error::{Error, Result};
use crate::outcome::{DraftTest, TokenAnalysis, TokenOutcome, ratio};
use crate::residual::{Residual, check_same_len, draw};
use crate::speculative::{combine, finish};

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

/// Computes the optimal thresholds for the budget `kl_budget` (nats), to
/// [`DEFAULT_KL_TOLERANCE`].
///
/// ```
/// use specula_core::{Distribution, mentored_analysis, kl_divergence, speculative_analysis};
///
/// let target = Distribution::from_probs(vec![0.5, 0.5])?;
/// let draft = Distribution::from_probs(vec![0.8, 0.2])?;
/// let (plan, exact) = mentored_analysis(&target, &draft, 0.1)?;
/// assert!(plan.alpha < 1.0 && plan.beta > 1.0);
/// assert!(plan.acceptance > speculative_analysis(&target, &draft)?.acceptance);
/// assert!(kl_divergence(target.probs(), &exact.output) <= 0.1 * (1.0 + 1e-9));
/// # Ok::<(), specula_core::Error>(())
/// ```
///
/// # Errors
/// [`Error::LengthMismatch`], or [`Error::BadKlBudget`] when the budget is negative, NaN
/// or infinite.
pub fn mentored_plan(
    target: &Distribution,
    draft: &Distribution,
    kl_budget: f64,
) -> Result<MentoredPlan> {
    mentored_plan_with_tolerance(target, draft, kl_budget, DEFAULT_KL_TOLERANCE)
}

/// Like [`mentored_plan`] with a relative tolerance of your choice: the plan's KL lies in
/// `[D·(1 − tolerance), D]`, or as close below `D` as `f64` resolves, unless every draft
/// is accepted or the rejection probability is held at [`MIN_REJECTION`].
///
/// # Errors
/// As [`mentored_plan`], plus [`Error::BadTolerance`] when `tolerance` is not in `(0, 1)`.
pub fn mentored_plan_with_tolerance(
    target: &Distribution,
    draft: &Distribution,
    kl_budget: f64,
    tolerance: f64,
) -> Result<MentoredPlan> {
    check_same_len(target, draft)?;
    if !(kl_budget >= 0.0 && kl_budget.is_finite()) {
        return Err(Error::BadKlBudget(kl_budget));
    }
    if !(tolerance > 0.0 && tolerance < 1.0) {
        return Err(Error::BadTolerance(tolerance));
    }
    Ok(solve(target.probs(), draft.probs(), kl_budget, tolerance))
}

/// The acceptance probability `r` of every token under `plan` (see
/// [`MentoredPlan::accept_prob`]). Covers the common prefix if the lengths differ.
#[must_use]
pub fn mentored_accept_probs(
    target: &Distribution,
    draft: &Distribution,
    plan: &MentoredPlan,
) -> Vec<f64> {
    target
        .probs()
        .iter()
        .zip(draft.probs())
        .map(|(&t, &d)| plan.accept_prob(t, d))
        .collect()
}

/// Verifies one draft token `draft_token`, which must have been sampled from `draft`,
/// under the budget `kl_budget`. Returns the plan used and the outcome.
///
/// The plan is always computed (O(V)): the trace records `r(x)`, which needs α, even when
/// `u·d < t` would accept the token for every budget. Reuse a plan across draws with
/// [`mentored_sample_with_plan`].
///
/// # Errors
/// As [`mentored_plan`], plus [`Error::TokenOutOfRange`].
pub fn mentored_sample<R: Rng + ?Sized>(
    target: &Distribution,
    draft: &Distribution,
    draft_token: usize,
    kl_budget: f64,
    rng: &mut R,
) -> Result<(MentoredPlan, TokenOutcome)> {
    let plan = mentored_plan(target, draft, kl_budget)?;
    let outcome = mentored_sample_with_plan(target, draft, &plan, draft_token, rng)?;
    Ok((plan, outcome))
}

/// Like [`mentored_sample`] with a plan computed beforehand for the same pair: the test
/// is O(1) (one uniform); a rejection draws from the residual in O(V).
///
/// # Errors
/// [`Error::LengthMismatch`] or [`Error::TokenOutOfRange`].
pub fn mentored_sample_with_plan<R: Rng + ?Sized>(
    target: &Distribution,
    draft: &Distribution,
    plan: &MentoredPlan,
    draft_token: usize,
    rng: &mut R,
) -> Result<TokenOutcome> {
    check_same_len(target, draft)?;
    target.check_token(draft_token)?;
    let (t, d) = (target.prob(draft_token), draft.prob(draft_token));
    let u = rng.random::<f64>();
    let test = DraftTest {
        draft_index: 0,
        token: draft_token,
        draft_prob: d,
        target_prob: t,
        ratio: ratio(t, d),
        accept_prob: plan.accept_prob(t, d),
        uniform: Some(u),
        accepted: plan.accepts(t, d, u),
    };
    Ok(finish(test, || draw(plan.residual(), target, draft, rng)))
}

/// The plan for `kl_budget` and the exact output distribution and acceptance of
/// [`mentored_sample`], built from the scheme's own `r` and residual:
/// `π = d·r + (1 − Σ d·r)·s`.
///
/// # Errors
/// As [`mentored_plan`].
pub fn mentored_analysis(
    target: &Distribution,
    draft: &Distribution,
    kl_budget: f64,
) -> Result<(MentoredPlan, TokenAnalysis)> {
    let plan = mentored_plan(target, draft, kl_budget)?;
    let analysis = mentored_analysis_with_plan(target, draft, &plan)?;
    Ok((plan, analysis))
}

/// The exact output distribution and acceptance of [`mentored_sample_with_plan`] with
/// `plan`.
///
/// # Errors
/// [`Error::LengthMismatch`].
pub fn mentored_analysis_with_plan(
    target: &Distribution,
    draft: &Distribution,
    plan: &MentoredPlan,
) -> Result<TokenAnalysis> {
    check_same_len(target, draft)?;
    if plan.accepts_all {
        // Every draft is accepted: the output is the draft itself. Summing `d·r` and
        // taking `1 − Σ` would only add rounding that swamps tiny draft entries.
        return Ok(TokenAnalysis {
            acceptance: 1.0,
            output: draft.probs().to_vec(),
        });
    }
    let accepted = target
        .probs()
        .iter()
        .zip(draft.probs())
        .map(|(&t, &d)| d * plan.accept_prob(t, d))
        .collect();
    Ok(combine(
        accepted,
        &plan.residual().distribution(target, draft)?,
    ))
}

/// A token whose group (below α, between, above β) depends on the budget.
#[derive(Debug, Clone, Copy)]
struct Token {
    ratio: f64,
    t: f64,
    d: f64,
    /// `t·ln(t/d)`, its KL term while between the thresholds.
    w: f64,
}

/// Sums of `t`, `d` and `w` over a group of tokens.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    t: f64,
    d: f64,
    w: f64,
}

impl Add for Sums {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self {
            t: self.t + o.t,
            d: self.d + o.d,
            w: self.w + o.w,
        }
    }
}

fn sums(tokens: &[Token]) -> Sums {
    tokens.iter().fold(Sums::default(), |s, x| Sums {
        t: s.t + x.t,
        d: s.d + x.d,
        w: s.w + x.w,
    })
}

/// One threshold and its candidate tokens. The low side (α) has members with
/// `ratio ≤ α` and rejection mass `Σ (d − t/α)`; the high side (β) has members with
/// `ratio ≥ β` and mass `Σ (t/β − d)`. `tokens[lo..hi]` are still undecided and are
/// ordered members-first (ascending ratio for low, descending for high); `fixed` sums
/// the tokens known to be members.
struct Side {
    high: bool,
    tokens: Vec<Token>,
    lo: usize,
    hi: usize,
    fixed: Sums,
}

impl Side {
    fn new(high: bool, tokens: Vec<Token>, fixed: Sums) -> Self {
        let hi = tokens.len();
        Self {
            high,
            tokens,
            lo: 0,
            hi,
            fixed,
        }
    }

    fn open(&self) -> usize {
        self.hi - self.lo
    }

    fn members_first(high: bool) -> impl Fn(&Token, &Token) -> Ordering {
        move |a, b| {
            if high {
                b.ratio.total_cmp(&a.ratio)
            } else {
                a.ratio.total_cmp(&b.ratio)
            }
        }
    }

    /// The rejection mass with the threshold at `x` and members `s`. Along the
    /// members-first order it never decreases, which is what the searches rely on.
    fn mass(&self, s: Sums, x: f64) -> f64 {
        side_mass(self.high, s, x)
    }

    /// The threshold at which members `s` give rejection mass `a` (the inverse of
    /// [`Self::mass`]), clamped to α in `[0, 1]` and β ≥ 1 against rounding.
    fn threshold(&self, s: Sums, a: f64) -> f64 {
        if self.high {
            let den = a + s.d;
            if den > 0.0 {
                (s.t / den).max(1.0)
            } else {
                f64::INFINITY
            }
        } else if s.t <= 0.0 {
            0.0 // no member with t > 0: the α = 0 regime
        } else {
            let den = s.d - a;
            if den > s.t { s.t / den } else { 1.0 }
        }
    }

    /// Splits the undecided range around its median; returns the end of the members at
    /// that pivot (pivot included), their sums with `fixed`, and the pivot's ratio.
    fn split_at_median(&mut self) -> (usize, Sums, f64) {
        let m = (self.hi - self.lo) / 2;
        let range = &mut self.tokens[self.lo..self.hi];
        range.select_nth_unstable_by(m, Self::members_first(self.high));
        let end = self.lo + m + 1;
        (
            end,
            self.fixed + sums(&self.tokens[self.lo..end]),
            self.tokens[end - 1].ratio,
        )
    }

    /// Finds the threshold giving rejection mass `a`: returns the end of its members in
    /// the reordered undecided range, their sums with `fixed`, and the threshold.
    /// Quickselect, expected O(undecided).
    fn locate(&mut self, a: f64) -> (usize, Sums, f64) {
        let order = Self::members_first(self.high);
        let (mut lo, mut hi, mut s) = (self.lo, self.hi, self.fixed);
        while lo < hi {
            let m = (hi - lo) / 2;
            self.tokens[lo..hi].select_nth_unstable_by(m, &order);
            let p = lo + m;
            let with = s + sums(&self.tokens[lo..=p]);
            if self.mass(with, self.tokens[p].ratio) <= a {
                (lo, s) = (p + 1, with);
            } else {
                hi = p;
            }
        }
        (lo, s, self.threshold(s, a))
    }
}

/// Members' KL term `Σ t·ln(x/ratio) = T·ln x − W`; none with `t > 0` gives 0 (α = 0).
fn kl_term(s: Sums, x: f64) -> f64 {
    if s.t > 0.0 { s.t * x.ln() - s.w } else { -s.w }
}

/// α, β and KL at one rejection mass.
#[derive(Debug, Clone, Copy)]
struct Point {
    alpha: f64,
    beta: f64,
    kl: f64,
}

/// The ratio buckets of the first pass: `2^bits` per octave (the top `bits` mantissa
/// bits of the ratio) for ratios in `[2^-OCTAVES, 2^OCTAVES)`, the first and last
/// buckets also taking everything beyond. Bucket `one()` starts at ratio 1: below it the
/// low side, from it the high side. Larger vocabularies get finer buckets (64 per octave
/// from 16 384 tokens); small ones few, so the walk and the allocation stay small.
/// The bucket comes from the ratio's bits, not its logarithm, so the histogram's
/// addresses are known early and the first pass overlaps well.
#[derive(Debug, Clone, Copy)]
struct Grid {
    bits: u32,
}

const OCTAVES: usize = 32;
/// The bucket id of tokens that are in no bucket (t = 0, d = 0, ratio 1 or overflowed).
const NO_BUCKET: u16 = u16::MAX;

impl Grid {
    fn for_vocab(n: usize) -> Self {
        let log2 = usize::BITS - n.leading_zeros();
        Self {
            bits: log2.saturating_sub(9).min(6),
        }
    }

    fn len(self) -> usize {
        (2 * OCTAVES) << self.bits
    }

    fn one(self) -> usize {
        self.len() / 2
    }

    /// A ratio's bit pattern cut to `(exponent, top mantissa bits)`: monotone in the ratio.
    fn key(self, ratio: f64) -> i64 {
        i64::try_from(ratio.to_bits() >> (52 - self.bits)).unwrap_or(i64::MAX)
    }

    fn first_key(self) -> i64 {
        self.key(1.0) - ((OCTAVES as i64) << self.bits)
    }

    fn bucket(self, ratio: f64) -> usize {
        let k = (self.key(ratio) - self.first_key()).clamp(0, self.len() as i64 - 1);
        usize::try_from(k).unwrap_or(0)
    }

    /// Where bucket `k` starts: 0 for the first, `+inf` past the last.
    fn start(self, k: usize) -> f64 {
        match k {
            0 => 0.0,
            k if k >= self.len() => f64::INFINITY,
            k => f64::from_bits(
                u64::try_from(self.first_key() + k as i64).unwrap_or(0) << (52 - self.bits),
            ),
        }
    }
}

/// A side's rejection mass with threshold `x` and members `s`: `Σ d − Σ t/x` below α,
/// `Σ t/x − Σ d` above β (no `t/x` term without members with `t > 0`, where `x` may be 0).
fn side_mass(high: bool, s: Sums, x: f64) -> f64 {
    let scaled = if s.t > 0.0 { s.t / x } else { 0.0 };
    if high { scaled - s.d } else { s.d - scaled }
}

/// The first pass: everything that needs one look at each token.
struct Scan {
    grid: Grid,
    /// Sums and token counts per ratio bucket.
    buckets: Vec<Sums>,
    counts: Vec<u32>,
    /// Each token's bucket, or [`NO_BUCKET`].
    ids: Vec<u16>,
    /// The used buckets, trimmed: low side `lowest..low_end`, high side
    /// `high_bottom..=highest` (either may be empty).
    lowest: usize,
    low_end: usize,
    high_bottom: usize,
    highest: usize,
    /// `Σ t·ln(t/d)` over tokens with finite terms; `KL(t ‖ d)` unless `infinite`.
    w_total: f64,
    /// Some token has `d = 0 < t`.
    infinite: bool,
    /// `Σ max(0, d − t)`: the rejection mass of standard speculative sampling.
    tv: f64,
    /// `Σ d` over tokens with `t = 0` (ratio 0: below every α > 0).
    zero_target: f64,
    /// Tokens above every β: `d = 0 < t` (their `w` left out), or `t/d` overflowed.
    always_high: Sums,
}

impl Scan {
    /// The only place `ln` is taken for every token.
    fn new(target: &[f64], draft: &[f64]) -> Self {
        let grid = Grid::for_vocab(target.len());
        let mut s = Self {
            grid,
            buckets: vec![Sums::default(); grid.len()],
            counts: vec![0; grid.len()],
            ids: Vec::with_capacity(target.len()),
            lowest: grid.one(),
            low_end: grid.one(),
            high_bottom: grid.one(),
            highest: grid.one() - 1,
            w_total: 0.0,
            infinite: false,
            tv: 0.0,
            zero_target: 0.0,
            always_high: Sums::default(),
        };
        // Hot loop: one branch for the common case (0 < ratio < ∞, ratio ≠ 1) and no
        // floating-point accumulator (they would be spilled around every `ln` call);
        // the totals come from the buckets afterwards.
        let (mut lowest, mut highest) = (s.lowest, s.highest);
        for (&t, &d) in target.iter().zip(draft) {
            let ratio = t / d;
            if ratio > 0.0 && ratio < f64::INFINITY && ratio != 1.0 {
                let w = t * ratio.ln();
                let b = grid.bucket(ratio);
                let sums = &mut s.buckets[b];
                (sums.t, sums.d, sums.w) = (sums.t + t, sums.d + d, sums.w + w);
                s.counts[b] += 1;
                (lowest, highest) = (lowest.min(b), highest.max(b));
                s.ids.push(u16::try_from(b).unwrap_or(NO_BUCKET));
            } else {
                s.add_rare(t, d, ratio);
                s.ids.push(NO_BUCKET);
            }
        }
        let one = grid.one();
        (s.lowest, s.highest) = (lowest, highest);
        // Trim the empty buckets next to ratio 1, so the walk skips them.
        s.low_end = (lowest..one)
            .rev()
            .find(|&b| s.counts[b] > 0)
            .map_or(lowest, |b| b + 1);
        s.high_bottom = (one..=highest)
            .find(|&b| s.counts[b] > 0)
            .unwrap_or(highest + 1);
        let used = &s.buckets[lowest..=highest.max(lowest)];
        s.w_total = used.iter().map(|b| b.w).sum::<f64>() + s.always_high.w;
        // Σ max(0, d − t): d − t on every token below ratio 1, d on those with t = 0.
        s.tv = s.zero_target
            + s.buckets[lowest..one]
                .iter()
                .map(|b| b.d - b.t)
                .sum::<f64>();
        s
    }

    /// Tokens in no bucket.
    fn add_rare(&mut self, t: f64, d: f64, ratio: f64) {
        if t <= 0.0 {
            self.zero_target += d; // ratio 0: below every α > 0
        } else if d <= 0.0 {
            self.always_high.t += t; // infinite ratio: above every β, infinite KL term
            self.infinite = true;
        } else if ratio.is_infinite() {
            // t/d overflowed: far above every β, but its KL term is finite.
            let w = t * (t.ln() - d.ln());
            self.always_high = self.always_high + Sums { t, d, w };
        }
        // Otherwise the ratio is exactly 1: between the thresholds for every budget.
    }

    /// The largest ratio (β when every draft is accepted), from the top bucket's tokens.
    fn max_ratio(&self, target: &[f64], draft: &[f64]) -> f64 {
        let top = u16::try_from(self.highest).unwrap_or(NO_BUCKET);
        let mut max = 1.0_f64;
        for ((&id, &t), &d) in self.ids.iter().zip(target).zip(draft) {
            if id == top {
                max = max.max(t / d);
            }
        }
        max
    }

    /// Both sides' histograms on the grid: low buckets ascending, high buckets
    /// descending, each side's last bucket stretched to ratio 1 over the empty ones.
    fn hists(&self) -> (Hist, Hist) {
        let grid = self.grid;
        let low_buckets = self.lowest..self.low_end;
        let high_buckets = self.high_bottom..self.highest + 1;
        let low = Hist::new(
            false,
            low_buckets
                .clone()
                .map(|k| grid.start(k))
                .chain([1.0])
                .collect(),
            self.buckets[low_buckets.clone()].to_vec(),
            self.counts[low_buckets].to_vec(),
            Sums {
                d: self.zero_target,
                ..Sums::default()
            },
        );
        let high = Hist::new(
            true,
            high_buckets
                .clone()
                .rev()
                .map(|k| grid.start(k + 1))
                .chain([1.0])
                .collect(),
            self.buckets[high_buckets.clone()]
                .iter()
                .rev()
                .copied()
                .collect(),
            self.counts[high_buckets].iter().rev().copied().collect(),
            self.always_high,
        );
        (low, high)
    }

    /// The grid buckets (as id ranges) of the first walk's undecided stretch: low bucket
    /// `i` is grid bucket `lowest + i`, high bucket `i` is `highest − i`.
    fn id_ranges(&self, region: &Region) -> (Range<usize>, Range<usize>) {
        (
            self.lowest + region.low.start..self.lowest + region.low.end,
            self.highest + 1 - region.high.end..self.highest + 1 - region.high.start,
        )
    }

    /// Calls `visit(high, token)` for every token in `ids` whose ratio lies in `spans`,
    /// with its `ln` taken again (only these tokens are read).
    fn each_candidate(
        &self,
        (target, draft): (&[f64], &[f64]),
        ids: &(Range<usize>, Range<usize>),
        spans: ((f64, f64), (f64, f64)),
        mut visit: impl FnMut(bool, Token),
    ) {
        for (i, &id) in self.ids.iter().enumerate() {
            let b = usize::from(id);
            let (high, span) = if ids.0.contains(&b) {
                (false, spans.0)
            } else if ids.1.contains(&b) {
                (true, spans.1)
            } else {
                continue;
            };
            if let (Some(&t), Some(&d)) = (target.get(i), draft.get(i)) {
                let ratio = t / d;
                if span.0 <= ratio && ratio < span.1 {
                    // Exactly as in the first pass.
                    visit(
                        high,
                        Token {
                            ratio,
                            t,
                            d,
                            w: t * ratio.ln(),
                        },
                    );
                }
            }
        }
    }
}

/// One side's tokens summed per ratio bucket, members first (ascending ratio below α,
/// descending above β): bucket `i` lies between `bounds[i]` and `bounds[i + 1]`, and
/// `base` sums the tokens known to be members before bucket 0.
struct Hist {
    high: bool,
    bounds: Vec<f64>,
    sums: Vec<Sums>,
    counts: Vec<u32>,
    base: Sums,
}

/// Where the surviving tokens are read from: the arrays (through the first pass's bucket
/// ids) or copies already made.
enum Source<'a> {
    Arrays(
        &'a Scan,
        (&'a [f64], &'a [f64]),
        &'a (Range<usize>, Range<usize>),
    ),
    Tokens(&'a [Token], &'a [Token]),
}

/// Buckets per side when the surviving tokens are bucketed again.
const REFINE_BUCKETS: u64 = 1024;

/// Below this many surviving tokens the exact search takes over.
const EXACT_LIMIT: usize = 1024;

/// Below this many surviving tokens they are copied out of the arrays (32 bytes each).
const GATHER_LIMIT: usize = 4096;

/// Buckets cut from a ratio's bit pattern (nearly log-uniform) across a span of ratios.
#[derive(Debug, Clone, Copy)]
struct BitGrid {
    high: bool,
    origin: u64,
    shift: u32,
    n: usize,
}

impl BitGrid {
    /// At most [`REFINE_BUCKETS`] buckets covering ratios in `[lo, hi)`.
    fn over(high: bool, (lo, hi): (f64, f64)) -> Self {
        let (origin, top) = (lo.to_bits(), hi.to_bits().max(lo.to_bits() + 1));
        let span = top - origin;
        let mut shift = 0;
        while (span - 1) >> shift >= REFINE_BUCKETS {
            shift += 1;
        }
        Self {
            high,
            origin,
            shift,
            n: usize::try_from(((span - 1) >> shift) + 1).unwrap_or(1),
        }
    }

    /// The bucket of a ratio in the span, members first.
    fn index(self, ratio: f64) -> usize {
        let k =
            usize::try_from(ratio.to_bits().saturating_sub(self.origin) >> self.shift).unwrap_or(0);
        let k = k.min(self.n - 1);
        if self.high { self.n - 1 - k } else { k }
    }

    /// Bucket boundaries, members first.
    fn bounds(self) -> Vec<f64> {
        let at = |k: usize| {
            let bits = self.origin.saturating_add((k as u64) << self.shift);
            f64::from_bits(bits.min(f64::INFINITY.to_bits()))
        };
        (0..=self.n)
            .map(|i| if self.high { at(self.n - i) } else { at(i) })
            .collect()
    }
}

impl Hist {
    fn new(high: bool, bounds: Vec<f64>, sums: Vec<Sums>, counts: Vec<u32>, base: Sums) -> Self {
        Self {
            high,
            bounds,
            sums,
            counts,
            base,
        }
    }

    /// Buckets the candidate tokens of both sides again, finer, over their spans.
    fn refine(
        spans: ((f64, f64), (f64, f64)),
        fixed: (Sums, Sums),
        source: Source<'_>,
    ) -> (Self, Self) {
        let grids = [BitGrid::over(false, spans.0), BitGrid::over(true, spans.1)];
        let mut sums = [
            vec![Sums::default(); grids[0].n],
            vec![Sums::default(); grids[1].n],
        ];
        let mut counts = [vec![0; grids[0].n], vec![0; grids[1].n]];
        let mut add = |high: bool, x: Token| {
            let side = usize::from(high);
            let b = grids[side].index(x.ratio);
            sums[side][b] = sums[side][b]
                + Sums {
                    t: x.t,
                    d: x.d,
                    w: x.w,
                };
            counts[side][b] += 1;
        };
        match source {
            Source::Arrays(scan, arrays, ids) => scan.each_candidate(arrays, ids, spans, add),
            Source::Tokens(low, high) => {
                low.iter().for_each(|&x| add(false, x));
                high.iter().for_each(|&x| add(true, x));
            }
        }
        let [low_sums, high_sums] = sums;
        let [low_counts, high_counts] = counts;
        (
            Self::new(false, grids[0].bounds(), low_sums, low_counts, fixed.0),
            Self::new(true, grids[1].bounds(), high_sums, high_counts, fixed.1),
        )
    }

    /// The ratios `[lo, hi)` covered by buckets `range`.
    fn span(&self, range: &Range<usize>) -> (f64, f64) {
        let (a, b) = (self.bounds[range.start], self.bounds[range.end]);
        if self.high { (b, a) } else { (a, b) }
    }

    fn count(&self, range: &Range<usize>) -> usize {
        self.counts[range.clone()].iter().map(|&c| c as usize).sum()
    }

    /// Crossing `i`: the threshold at `bounds[i]`, members `base + sums[..i]`. Their
    /// rejection masses increase with `i` on both sides.
    fn crossings(&self) -> Vec<Crossing> {
        let mut members = self.base;
        self.bounds
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                if i > 0 {
                    members = members + self.sums[i - 1];
                }
                Crossing {
                    a: side_mass(self.high, members, x),
                    g: kl_term(members, x),
                    members,
                }
            })
            .collect()
    }

    /// The range of the threshold with `c` crossings passed.
    fn threshold_range(&self, c: usize) -> (f64, f64) {
        let (b, n) = (&self.bounds, self.sums.len());
        match (self.high, c) {
            (true, 0) => (b[0], f64::INFINITY),
            (true, c) if c > n => (1.0, b[n]),
            (true, c) => (b[c], b[c - 1]),
            (false, 0) => (0.0, b[0]),
            (false, c) if c > n => (b[n], 1.0),
            (false, c) => (b[c - 1], b[c]),
        }
    }

    /// Bounds on the side's KL term `Σ_members t·ln(x/ratio)` with `c` crossings passed.
    /// The term grows with the threshold (a token joining or leaving adds 0), so its
    /// values where the threshold's range starts and ends bound it.
    fn kl_bounds(&self, crossings: &[Crossing], c: usize) -> (f64, f64) {
        let n = self.sums.len();
        if c == 0 || c > n {
            // Members fixed (none of the buckets, or all): the term at the range's ends.
            let ((lo, hi), members) = (self.threshold_range(c), crossings[c.min(n)].members);
            return (kl_term(members, lo), kl_term(members, hi));
        }
        let (a, b) = (crossings[c - 1].g, crossings[c].g);
        (a.min(b), a.max(b))
    }
}

/// One bucket boundary on one side: the rejection mass when the threshold sits there,
/// the side's KL term there, and its members.
#[derive(Debug, Clone, Copy)]
struct Crossing {
    a: f64,
    g: f64,
    members: Sums,
}

/// Where the solution lies: a bracket on the rejection mass, the buckets of each side
/// (members-first indices) whose tokens may change group inside it, the sums of the
/// members before them, and bounds on KL at `a_hi`.
#[derive(Debug)]
struct Region {
    a_lo: f64,
    a_hi: f64,
    low: Range<usize>,
    high: Range<usize>,
    fixed: (Sums, Sums),
    anchor: (f64, f64),
}

/// Narrows the bracket `(a_lo, a_hi]` on the rejection mass `A` using bucket sums only;
/// `anchor` bounds `KL(a_hi)`.
///
/// Each threshold moves monotonically with `A` and crosses its side's bucket boundaries
/// at known masses; between two consecutive crossings both thresholds stay inside one
/// bucket each. There KL is bounded two ways: directly by [`Hist::kl_bounds`], and by
/// integrating `dKL/dA = α − β` down from the anchor with α and β bounded by their
/// buckets. The second keeps the walk sharp when both thresholds are close to 1 and KL
/// is small (second order in the bucket width, where the first is first order). Walking
/// down from `a_hi`, the stretches certainly within budget are passed, and the walk stops
/// at the first stretch certainly over it (or below `floor`).
fn walk(
    low: &Hist,
    high: &Hist,
    w_total: f64,
    budget: f64,
    floor: f64,
    bracket: (f64, f64),
    anchor: (f64, f64),
) -> Region {
    let (a_lo, a_hi) = bracket;
    let (lc, hc) = (low.crossings(), high.crossings());
    // Crossings passed just below `top`.
    let (mut cl, mut ch) = (
        lc.partition_point(|c| c.a < a_hi),
        hc.partition_point(|c| c.a < a_hi),
    );
    let (mut top, mut kl_top) = (a_hi, anchor);
    let mut region = Region {
        a_lo,
        a_hi,
        low: 0..0,
        high: 0..0,
        fixed: (low.base, high.base),
        anchor,
    };
    // The (low, high) states at the top and the bottom of the stretch kept.
    let mut kept: Option<((usize, usize), (usize, usize))> = None;
    while top > a_lo {
        let below = |cs: &[Crossing], c: usize| {
            if c > 0 {
                cs[c - 1].a
            } else {
                f64::NEG_INFINITY
            }
        };
        let bottom = below(&lc, cl).max(below(&hc, ch)).max(a_lo);
        let (gl, gh) = (low.kl_bounds(&lc, cl), high.kl_bounds(&hc, ch));
        let direct = (w_total + gl.0 + gh.0, w_total + gl.1 + gh.1);
        let (alpha, beta) = (low.threshold_range(cl), high.threshold_range(ch));
        let width = top - bottom;
        let kl_bottom = (
            direct.0.max(kl_top.0 + width * (beta.0 - alpha.1)),
            direct.1.min(kl_top.1 + width * (beta.1 - alpha.0)),
        );
        // KL decreases in A: on this stretch it lies in [KL(top), KL(bottom)].
        if kl_top.0.max(direct.0) > budget || top <= floor {
            region.a_lo = top; // certainly over budget: the solution is at or above top
            break;
        }
        if kl_bottom.1 <= budget && bottom >= floor {
            // Certainly within budget; kept only for its buckets, which hold the
            // thresholds at the new a_hi.
            (region.a_hi, region.anchor) = (bottom, kl_bottom);
            kept = Some(((cl, ch), (cl, ch)));
        } else {
            kept = Some((kept.map_or((cl, ch), |k| k.0), (cl, ch)));
        }
        (top, kl_top) = (bottom, kl_bottom);
        while cl > 0 && lc[cl - 1].a >= top {
            cl -= 1;
        }
        while ch > 0 && hc[ch - 1].a >= top {
            ch -= 1;
        }
    }
    let ((l1, h1), (l0, h0)) = kept.unwrap_or(((cl, ch), (cl, ch)));
    // State c in 1..=n has the threshold in bucket c − 1; states 0 and n + 1 in none.
    region.low = l0.max(1) - 1..l1.min(low.sums.len());
    region.high = h0.max(1) - 1..h1.min(high.sums.len());
    region.fixed = (lc[region.low.start].members, hc[region.high.start].members);
    region
}

/// The plan of standard speculative sampling (`D = 0`), which needs no logarithm.
fn standard_plan(target: &[f64], draft: &[f64]) -> MentoredPlan {
    let tv: f64 = target
        .iter()
        .zip(draft)
        .map(|(&t, &d)| (d - t).max(0.0))
        .sum();
    MentoredPlan {
        kl_budget: 0.0,
        alpha: 1.0,
        beta: 1.0,
        zero_target_accept: 0.0,
        acceptance: 1.0 - tv,
        kl: 0.0,
        accepts_all: false,
    }
}

/// The whole solve: first pass, bucket walks, exact search on the few tokens left.
fn solve(target: &[f64], draft: &[f64], budget: f64, tolerance: f64) -> MentoredPlan {
    let standard = (budget == 0.0).then(|| standard_plan(target, draft));
    if let Some(plan) = standard {
        // Pinsker (KL ≥ 2·TV²): only a pair this close can have KL(t ‖ d) = 0 after
        // rounding and so accept everything; others skip the logarithms.
        if plan.acceptance < 1.0 - 1e-6 {
            return plan;
        }
    }
    let scan = Scan::new(target, draft);
    let kl_draft = if scan.infinite {
        f64::INFINITY
    } else {
        scan.w_total.max(0.0)
    };
    if let Some(plan) = standard.filter(|_| kl_draft > 0.0) {
        return plan;
    }
    // Up to rounding: sums taken in another order may put KL(t ‖ d) an ulp above D.
    if kl_draft <= budget * (1.0 + ACCEPT_ALL_SLACK) {
        return MentoredPlan {
            kl_budget: budget,
            alpha: 0.0,
            beta: scan.max_ratio(target, draft),
            zero_target_accept: 1.0,
            acceptance: 1.0,
            kl: kl_draft,
            accepts_all: true,
        };
    }
    let floor = MIN_REJECTION.min(scan.tv);
    let arrays = (target, draft);
    let hists = scan.hists();
    // At A = TV both thresholds are 1 and KL is exactly 0.
    let mut region = walk(
        &hists.0,
        &hists.1,
        scan.w_total,
        budget,
        floor,
        (0.0, scan.tv),
        (0.0, 0.0),
    );
    let ids = scan.id_ranges(&region);

    let mut spans = (hists.0.span(&region.low), hists.1.span(&region.high));
    let mut count = hists.0.count(&region.low) + hists.1.count(&region.high);
    // Many tokens left (ratios crowded into a few buckets): bucket them again, finer.
    // They are read from the arrays until few enough to hold in memory (a large buffer
    // costs more in page faults than a second pass).
    let in_span = |span: (f64, f64), x: &Token| span.0 <= x.ratio && x.ratio < span.1;
    let mut tokens: Option<(Vec<Token>, Vec<Token>)> = None;
    loop {
        if tokens.is_none() && count <= GATHER_LIMIT {
            let (mut low, mut high) = (Vec::with_capacity(count), Vec::new());
            scan.each_candidate(arrays, &ids, spans, |is_high, x| {
                if is_high { high.push(x) } else { low.push(x) }
            });
            tokens = Some((low, high));
        }
        if count <= EXACT_LIMIT {
            break;
        }
        let source = match &tokens {
            None => Source::Arrays(&scan, arrays, &ids),
            Some((low, high)) => Source::Tokens(low, high),
        };
        let hists = Hist::refine(spans, region.fixed, source);
        let next = walk(
            &hists.0,
            &hists.1,
            scan.w_total,
            budget,
            floor,
            (region.a_lo, region.a_hi),
            region.anchor,
        );
        let left = hists.0.count(&next.low) + hists.1.count(&next.high);
        spans = (hists.0.span(&next.low), hists.1.span(&next.high));
        region = next;
        if let Some((low, high)) = &mut tokens {
            low.retain(|x| in_span(spans.0, x));
            high.retain(|x| in_span(spans.1, x));
        }
        if 2 * left > count {
            break; // ties or a pathological spread: the exact search copes
        }
        count = left;
    }
    let (low, high) = tokens.unwrap_or_else(|| {
        let (mut low, mut high) = (Vec::new(), Vec::new());
        scan.each_candidate(arrays, &ids, spans, |is_high, x| {
            if is_high { high.push(x) } else { low.push(x) }
        });
        (low, high)
    });
    let mut solver = Solver {
        low: Side::new(false, low, region.fixed.0),
        high: Side::new(true, high, region.fixed.1),
        w_total: scan.w_total,
    };
    let (lo, hi) = solver.bracket(budget, floor, region.a_lo, region.a_hi);
    let (a, point) = solver.refine(lo, hi, budget, tolerance, floor);
    let zero_target_accept = if point.alpha > 0.0 || scan.zero_target <= 0.0 {
        0.0
    } else {
        (1.0 - a / scan.zero_target).clamp(0.0, 1.0)
    };
    MentoredPlan {
        kl_budget: budget,
        alpha: point.alpha,
        beta: point.beta,
        zero_target_accept,
        acceptance: 1.0 - a,
        kl: point.kl,
        accepts_all: false,
    }
}

/// The exact search over the tokens the bucket walk left undecided.
struct Solver {
    low: Side,
    high: Side,
    /// `Σ t·ln(t/d)` over tokens with finite terms.
    w_total: f64,
}

impl Solver {
    /// Decides every candidate token, returning a bracket `(lo, hi]` on the rejection
    /// mass, inside which no token changes group, with `hi` feasible (`KL ≤ D` and at
    /// least `floor`) and `lo` not.
    fn bracket(&mut self, budget: f64, floor: f64, mut a_lo: f64, mut a_hi: f64) -> (f64, f64) {
        let Self { low, high, w_total } = self;
        while low.open() + high.open() > 0 {
            let (pivot, other) = if low.open() >= high.open() {
                (&mut *low, &mut *high)
            } else {
                (&mut *high, &mut *low)
            };
            let (end, members, x) = pivot.split_at_median();
            let a = pivot.mass(members, x);
            // Outside the bracket the answer is known, and the other side's fixed groups
            // may not hold there, so only pivots inside it are evaluated.
            let more = if a <= a_lo || a < floor {
                true
            } else if a >= a_hi {
                false
            } else {
                let (other_end, other_members, y) = other.locate(a);
                let kl = *w_total + kl_term(members, x) + kl_term(other_members, y);
                if kl > budget {
                    (other.lo, other.fixed) = (other_end, other_members);
                } else {
                    other.hi = other_end;
                }
                kl > budget
            };
            if more {
                // More rejection needed: α rises and β falls, so the members stay.
                a_lo = a_lo.max(a);
                (pivot.lo, pivot.fixed) = (end, members);
            } else {
                // Less rejection: the non-members (and the pivot) stay out.
                a_hi = a_hi.min(a);
                pivot.hi = end - 1;
            }
        }
        (a_lo, a_hi)
    }

    /// α, β and KL at rejection mass `a`, with the groups fixed by [`Self::bracket`].
    fn eval(&self, a: f64) -> Point {
        let alpha = self.low.threshold(self.low.fixed, a);
        let beta = self.high.threshold(self.high.fixed, a);
        let kl = self.w_total + kl_term(self.low.fixed, alpha) + kl_term(self.high.fixed, beta);
        Point { alpha, beta, kl }
    }

    /// Bisection on the rejection mass inside the bracket, keeping the feasible end `hi`
    /// (`KL ≤ D`) until its KL is within the tolerance of `D`; `floor` if that is feasible.
    fn refine(
        &self,
        mut lo: f64,
        mut hi: f64,
        budget: f64,
        tolerance: f64,
        floor: f64,
    ) -> (f64, Point) {
        let mut best = self.eval(hi);
        if hi <= floor {
            return (hi, best);
        }
        if lo < floor {
            let point = self.eval(floor);
            if point.kl <= budget {
                return (floor, point);
            }
            lo = floor;
        }
        for _ in 0..MAX_REFINE_STEPS {
            if best.kl >= budget * (1.0 - tolerance) {
                break;
            }
            // Geometric steps while the bracket spans orders of magnitude: with a token
            // the draft lacks, the root can sit near A = exp(−D/t).
            let floor = lo.max(f64::MIN_POSITIVE);
            let mid = if hi > 4.0 * floor {
                floor.sqrt() * hi.sqrt()
            } else {
                0.5 * (lo + hi)
            };
            if !(mid > lo && mid < hi) {
                break;
            }
            let point = self.eval(mid);
            if point.kl > budget {
                lo = mid;
            } else {
                (hi, best) = (mid, point);
            }
        }
        (hi, best)
    }
}
