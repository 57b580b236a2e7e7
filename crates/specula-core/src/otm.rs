//! OTM: optimal transport with membership cost (SpecTr, Sun et al. 2023, §4).
//!
//! With `k` draft tokens `x₁..x_k` drawn i.i.d. from `draft`, any valid selection scheme
//! is a coupling `π` of `draft^{⊗k}` (the drafts) and `target` (the emitted token `Y`).
//! The best possible acceptance is
//!
//! `α_k = max over couplings π of P(Y ∈ {x₁..x_k})`,
//!
//! a linear program over the `V^(k+1)` values `π(x^k, y)`. This module solves it exactly
//! for small problems (teaching, tests), returns the optimal coupling, and samples from
//! it. Problems larger than [`OTM_MAX_VARIABLES`] are refused, not attempted.
//!
//! # How the LP is solved
//!
//! Only the accepted mass `a(x^k, y)`, with `y` among the drafts, enters the objective.
//! Any `a ≥ 0` with row sums `≤ draft^{⊗k}(x^k)` and column sums `≤ target(y)` extends to
//! a full coupling: the row remainders and column remainders have the same total, and
//! their (normalised) product fills the gap. The problem is also symmetric in the order
//! of the drafts, so an optimal `a` may be taken to depend only on the multiset of the
//! drafts. The LP handed to `microlp` therefore has one variable per (multiset, distinct
//! token in it) and one constraint per multiset and per token — far fewer than
//! `V^(k+1)`, with the same optimum. The solution is then cleaned of round-off (clamped
//! into its bounds, rows and columns scaled down where they overshoot) and completed, so
//! the returned coupling's marginals are `draft^{⊗k}` and `target` to `f64` rounding,
//! whatever the solver's tolerance; its acceptance is within the solver's feasibility
//! tolerance (about 1e-10 per constraint) of `α_k`.

use microlp::{ComparisonOp, OptimizationDirection, Problem, SolveOptions, Variable};
use rand::Rng;
use serde::Serialize;

use crate::distribution::{Distribution, sample_weights};
use crate::error::{Error, Result};
use crate::outcome::{TokenAnalysis, TokenOutcome, ratio};
use crate::residual::{Residual, ResidualDraw, check_same_len};

/// The largest OTM problem accepted, counted as the `V^(k+1)` entries of the full
/// coupling (vocabulary `V`, `k` drafts). Larger problems return [`Error::OtmTooLarge`]
/// at once, before any work.
///
/// Chosen by timing release builds on a 2-core machine. The slowest shapes at this size
/// are k = 2..4 with near-uniform or identical distributions: k = 3, V = 22 took about
/// 0.33 s and k = 2, V = 64 about 0.25 s; every other shape tried was faster. At 2^19
/// the slowest took 1.2 s and at 2^20 1.7 s, too close to a 2 s budget once compiled to
/// WebAssembly. The plan stores the full coupling, `8·V^(k+1)` bytes (at most 2 MiB).
pub const OTM_MAX_VARIABLES: u128 = 1 << 18;

/// Up to this vocabulary size [`otm_upper_bound`] enumerates every subset of the
/// vocabulary (2^V of them); above it, only prefixes of the tokens sorted by
/// `target/draft`, which gives the same value (see [`otm_upper_bound`]).
pub const OTM_EXACT_BOUND_VOCAB: usize = 20;

/// The LP solver's absolute feasibility tolerance (the smallest `microlp` accepts). The
/// returned coupling's marginals do not depend on it (the solution is repaired
/// afterwards); only how close the acceptance is to the exact optimum does.
const LP_FEASIBILITY: f64 = 1e-10;

/// The optimal OTM coupling for one pair of distributions and `k` drafts, solved once by
/// [`OtmPlan::new`]; [`OtmPlan::sample`] then draws from it. The fields are read through
/// methods, so that `k`, the vocabulary and the coupling always agree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OtmPlan {
    /// Number of drafts.
    k: usize,
    /// Vocabulary size `V`.
    vocab: usize,
    /// The optimal acceptance `α_k`.
    acceptance: f64,
    /// Lemma 3's upper bound on `α_k`.
    upper_bound: f64,
    /// The coupling's `y`-marginal.
    output: Vec<f64>,
    /// `π(x^k, y)`; layout documented on [`OtmPlan::coupling`].
    coupling: Vec<f64>,
}

impl OtmPlan {
    /// Solves the OTM linear program: the optimal acceptance `α_k` and an optimal coupling.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::NoDrafts`] when `k == 0`, [`Error::OtmTooLarge`]
    /// when `V^(k+1) >` [`OTM_MAX_VARIABLES`] (checked before any work), and
    /// [`Error::LinearProgram`] if the solver fails (not expected: the problem is always
    /// feasible and bounded).
    pub fn new(target: &Distribution, draft: &Distribution, k: usize) -> Result<Self> {
        check_same_len(target, draft)?;
        if k == 0 {
            return Err(Error::NoDrafts);
        }
        let vocab = target.len();
        let variables = variable_count(vocab, k);
        let too_large = Error::OtmTooLarge {
            variables,
            vocab,
            k,
            limit: OTM_MAX_VARIABLES,
        };
        if variables > OTM_MAX_VARIABLES {
            return Err(too_large);
        }
        // V^k fits: it is at most the limit.
        let tuples = usize::try_from(variables / vocab as u128).map_err(|_| too_large)?;

        let sets = Multisets::enumerate(draft.probs(), k, tuples);
        let accepted = solve_accepted(&sets, target.probs())?;
        let joint = complete(&sets, target.probs(), accepted);

        // Spread each multiset's row over its ordered tuples in proportion to their mass.
        let mut coupling = vec![0.0; tuples * vocab];
        let mut output = vec![0.0; vocab];
        for (t, row) in coupling.chunks_exact_mut(vocab).enumerate() {
            let m = sets.tuple_set[t];
            if sets.prob[m] > 0.0 {
                let share = sets.tuple_prob[t] / sets.prob[m];
                for ((cell, &j), out) in row.iter_mut().zip(&joint[m]).zip(output.iter_mut()) {
                    *cell = share * j;
                    *out += *cell;
                }
            }
        }
        let acceptance = joint
            .iter()
            .zip(&sets.tokens)
            .map(|(row, tokens)| tokens.iter().map(|&y| row[y]).sum::<f64>())
            .sum::<f64>()
            .clamp(0.0, 1.0);
        Ok(Self {
            k,
            vocab,
            acceptance,
            upper_bound: otm_upper_bound(target, draft, k)?,
            output,
            coupling,
        })
    }

    /// The plan's [`TokenAnalysis`]: the acceptance `α_k` and the output distribution, the
    /// coupling's `y`-marginal.
    #[must_use]
    pub fn analysis(&self) -> TokenAnalysis {
        TokenAnalysis {
            acceptance: self.acceptance,
            output: self.output.clone(),
        }
    }

    /// Number of drafts `k`.
    #[must_use]
    pub fn k(&self) -> usize {
        self.k
    }

    /// Vocabulary size `V`.
    #[must_use]
    pub fn vocab(&self) -> usize {
        self.vocab
    }

    /// The optimal acceptance `α_k = P(Y ∈ {x₁..x_k})` under the coupling.
    #[must_use]
    pub fn acceptance(&self) -> f64 {
        self.acceptance
    }

    /// Lemma 3's upper bound on `α_k` ([`otm_upper_bound`]).
    #[must_use]
    pub fn upper_bound(&self) -> f64 {
        self.upper_bound
    }

    /// The distribution of the emitted token: the coupling's `y`-marginal, computed from
    /// the coupling (equal to the target up to `f64` rounding).
    #[must_use]
    pub fn output(&self) -> &[f64] {
        &self.output
    }

    /// The coupling `π(x^k, y)`, `V^(k+1)` entries. The drafts `x₁..x_k` are read as a
    /// number in base `V` with `x₁` most significant, and `y` is the last digit:
    /// entry `(x₁·V^(k−1) + … + x_k)·V + y`. Rows (fixed drafts) sum to
    /// `Π draft(xᵢ)`; columns (fixed `y`) sum to `target(y)`.
    #[must_use]
    pub fn coupling(&self) -> &[f64] {
        &self.coupling
    }

    /// The row `π(x^k, ·)` of the coupling for the drafts `drafts` (in order): `V` joint
    /// probabilities summing to `Π draft(xᵢ)`. Divide by that sum for the distribution
    /// of the emitted token given the drafts.
    ///
    /// # Errors
    /// [`Error::DraftCountMismatch`] when `drafts.len() != self.k()` (a plan is only valid
    /// for its own `k`), [`Error::TokenOutOfRange`] for a draft token `≥ vocab`.
    pub fn row(&self, drafts: &[usize]) -> Result<&[f64]> {
        let mismatch = Error::DraftCountMismatch {
            expected: self.k,
            got: drafts.len(),
        };
        if drafts.is_empty() || drafts.len() != self.k {
            return Err(mismatch);
        }
        let mut index = 0usize;
        for &x in drafts {
            if x >= self.vocab {
                return Err(Error::TokenOutOfRange {
                    token: x,
                    vocab: self.vocab,
                });
            }
            index = index
                .checked_mul(self.vocab)
                .and_then(|i| i.checked_add(x))
                .ok_or_else(|| mismatch.clone())?;
        }
        let start = index
            .checked_mul(self.vocab)
            .ok_or_else(|| mismatch.clone())?;
        let end = start
            .checked_add(self.vocab)
            .ok_or_else(|| mismatch.clone())?;
        self.coupling.get(start..end).ok_or(mismatch)
    }

    /// Draws the emitted token from the coupling given the drafts: `y ~ π(· | x^k)`, by
    /// inverse-CDF sampling over token ids with one uniform from `rng`. When the drafts
    /// are k i.i.d. draws from the plan's draft distribution, `y` is distributed as the
    /// target and lands among the drafts with probability [`Self::acceptance`].
    ///
    /// Recorded in the [`TokenOutcome`]: `token = y`; `accepted_draft` is the index of the
    /// first draft equal to `y`, if any. OTM runs no per-draft tests (it makes one joint
    /// draw), so `tests` is empty. When `y` is not among the drafts, `residual` records the
    /// draw with [`Residual::Target`] and the uniform used; note that `y` was drawn from
    /// the coupling's conditional, not from the target itself (the trace has no variant
    /// for it).
    ///
    /// Drafts the draft cannot produce have no probability under `draft^{⊗k}`: an
    /// all-zero row (a token of draft probability 0), or no row at all (another number of
    /// drafts than k, a token outside the vocabulary). Then `y` is drawn from
    /// [`Self::output`] (the target), and for the drafts without a row none is accepted.
    pub fn sample<R: Rng + ?Sized>(&self, drafts: &[usize], rng: &mut R) -> TokenOutcome {
        let row = self.row(drafts).ok();
        let u = rng.random::<f64>();
        let mass: f64 = row.map_or(0.0, |row| row.iter().sum());
        let token = match row {
            Some(row) if mass > 0.0 => sample_weights(row, u, mass),
            _ => sample_weights(&self.output, u, self.output.iter().sum()),
        };
        let accepted_draft = row.and_then(|_| drafts.iter().position(|&x| x == token));
        let residual = accepted_draft.is_none().then_some(ResidualDraw {
            residual: Residual::Target,
            uniform: Some(u),
            token,
        });
        TokenOutcome {
            token,
            tests: Vec::new(),
            accepted_draft,
            residual,
        }
    }
}

/// Lemma 3's upper bound on the optimal acceptance:
/// `min over subsets W of the vocabulary of 1 − max(0, draft(W)^k − target(W))`
/// (if all `k` drafts fall in `W`, which happens with probability `draft(W)^k`, they can
/// only be accepted when `Y ∈ W`).
///
/// All `2^V` subsets are tried for `V ≤` [`OTM_EXACT_BOUND_VOCAB`]. For larger vocabularies
/// only the prefixes of the tokens sorted by increasing `target/draft` are, which loses
/// nothing: if the best `W` held a token `a` and not a token `b` (both drafted with
/// positive probability), removing `a` and adding `b` would not help, so by the convexity
/// of `s ↦ s^k`, `target(a)/draft(a) < k·draft(W)^(k−1) < target(b)/draft(b)` (for `k ≥ 2`;
/// at `k = 1` it is the total-variation identity). With i.i.d. drafts the bound is also
/// attained, so it is α_k itself: choosing one of the drafts can give the chosen token any
/// distribution `r` with `r(A) ≤ 1 − (1 − draft(A))^k` for every set `A` (a supply–demand
/// condition), and the best such `r` overlaps the target by exactly the bound. The tests
/// check the prefixes against all subsets (V ≤ 20, k ≤ 8) and the bound against the LP's
/// optimum (V ≤ 5, k ≤ 3).
///
/// # Errors
/// [`Error::LengthMismatch`], [`Error::NoDrafts`] when `k == 0`.
pub fn otm_upper_bound(target: &Distribution, draft: &Distribution, k: usize) -> Result<f64> {
    check_same_len(target, draft)?;
    if k == 0 {
        return Err(Error::NoDrafts);
    }
    let (t, d) = (target.probs(), draft.probs());
    let power = i32::try_from(k).unwrap_or(i32::MAX);
    let gap = |draft_mass: f64, target_mass: f64| draft_mass.min(1.0).powi(power) - target_mass;
    let mut worst = 0.0_f64;
    if t.len() <= OTM_EXACT_BOUND_VOCAB {
        // Subset sums of each half of the vocabulary, combined: no long running sums.
        let half = t.len() / 2;
        let (low_d, low_t) = (subset_sums(&d[..half]), subset_sums(&t[..half]));
        let (high_d, high_t) = (subset_sums(&d[half..]), subset_sums(&t[half..]));
        for (&hd, &ht) in high_d.iter().zip(&high_t) {
            for (&ld, &lt) in low_d.iter().zip(&low_t) {
                worst = worst.max(gap(hd + ld, ht + lt));
            }
        }
    } else {
        let mut order: Vec<usize> = (0..t.len()).collect();
        order.sort_unstable_by(|&a, &b| ratio(t[a], d[a]).total_cmp(&ratio(t[b], d[b])));
        let (mut draft_mass, mut target_mass) = (0.0, 0.0);
        for i in order {
            draft_mass += d[i];
            target_mass += t[i];
            worst = worst.max(gap(draft_mass, target_mass));
        }
    }
    Ok((1.0 - worst).clamp(0.0, 1.0))
}

/// `V^(k+1)`, saturated at `u128::MAX`.
fn variable_count(vocab: usize, k: usize) -> u128 {
    let exponent = k.checked_add(1).and_then(|e| u32::try_from(e).ok());
    match exponent {
        Some(e) => (vocab as u128).checked_pow(e).unwrap_or(u128::MAX),
        None if vocab <= 1 => vocab as u128,
        None => u128::MAX,
    }
}

/// Sums of `values` over every subset, indexed by bit mask.
fn subset_sums(values: &[f64]) -> Vec<f64> {
    let mut sums = vec![0.0; 1 << values.len()];
    for mask in 1..sums.len() {
        let low = mask.trailing_zeros() as usize;
        sums[mask] = sums[mask & (mask - 1)] + values[low];
    }
    sums
}

/// The draft tuples `x^k` grouped by multiset (the order of the drafts does not matter
/// to the optimum).
struct Multisets {
    /// For each ordered tuple (indexed in base `V`), its multiset.
    tuple_set: Vec<usize>,
    /// For each ordered tuple, `Π draft(xᵢ)`.
    tuple_prob: Vec<f64>,
    /// For each multiset, its distinct tokens, increasing.
    tokens: Vec<Vec<usize>>,
    /// For each multiset, the total probability of its ordered tuples.
    prob: Vec<f64>,
}

impl Multisets {
    /// Walks the `tuples = V^k` ordered tuples like an odometer, `x_k` fastest.
    fn enumerate(draft: &[f64], k: usize, tuples: usize) -> Self {
        let vocab = draft.len();
        let mut set_of_sorted = vec![usize::MAX; tuples];
        let mut sets = Self {
            tuple_set: Vec::with_capacity(tuples),
            tuple_prob: Vec::with_capacity(tuples),
            tokens: Vec::new(),
            prob: Vec::new(),
        };
        let mut digits = vec![0usize; k];
        let mut sorted = vec![0usize; k];
        for _ in 0..tuples {
            sorted.copy_from_slice(&digits);
            sorted.sort_unstable();
            let key = sorted.iter().fold(0, |acc, &x| acc * vocab + x);
            if set_of_sorted[key] == usize::MAX {
                set_of_sorted[key] = sets.tokens.len();
                let mut distinct = sorted.clone();
                distinct.dedup();
                sets.tokens.push(distinct);
                sets.prob.push(0.0);
            }
            let m = set_of_sorted[key];
            let prob: f64 = digits.iter().map(|&x| draft[x]).product();
            sets.prob[m] += prob;
            sets.tuple_set.push(m);
            sets.tuple_prob.push(prob);
            // Advance the odometer.
            for digit in digits.iter_mut().rev() {
                *digit += 1;
                if *digit < vocab {
                    break;
                }
                *digit = 0;
            }
        }
        sets
    }
}

/// Solves the reduced LP: maximise the accepted mass `a(m, y)` (`y` a token of multiset
/// `m`) with `Σ_y a(m, y) ≤ draft(m)` and `Σ_m a(m, y) ≤ target(y)`. Returns `a`
/// aligned with `sets.tokens`, cleaned so every constraint holds exactly.
fn solve_accepted(sets: &Multisets, target: &[f64]) -> Result<Vec<Vec<f64>>> {
    let mut problem = Problem::new(OptimizationDirection::Maximize);
    let mut vars: Vec<Vec<Option<Variable>>> = Vec::with_capacity(sets.tokens.len());
    let mut columns: Vec<Vec<Variable>> = vec![Vec::new(); target.len()];
    for (tokens, &mass) in sets.tokens.iter().zip(&sets.prob) {
        let row: Vec<Option<Variable>> = tokens
            .iter()
            .map(|&y| {
                // Zero-mass cells are fixed at 0: leave them out of the LP.
                (mass > 0.0 && target[y] > 0.0).then(|| {
                    let v = problem.add_var(1.0, (0.0, mass.min(target[y])));
                    columns[y].push(v);
                    v
                })
            })
            .collect();
        let present: Vec<(Variable, f64)> = row.iter().flatten().map(|&v| (v, 1.0)).collect();
        // A single variable is already bounded by its own upper bound.
        if present.len() > 1 {
            problem.add_constraint(present, ComparisonOp::Le, mass);
        }
        vars.push(row);
    }
    for (column, &mass) in columns.iter().zip(target) {
        if column.len() > 1 {
            problem.add_constraint(column.iter().map(|&v| (v, 1.0)), ComparisonOp::Le, mass);
        }
    }

    let mut accepted: Vec<Vec<f64>> = sets.tokens.iter().map(|t| vec![0.0; t.len()]).collect();
    if columns.iter().all(Vec::is_empty) {
        return Ok(accepted); // nothing can be accepted (disjoint supports)
    }
    let mut options = SolveOptions::default();
    options.tolerances.feasibility = LP_FEASIBILITY;
    let solution = problem
        .solve_with(options)
        .map_err(|e| Error::LinearProgram(e.to_string()))?
        .into_solution()
        .map_err(|_| Error::LinearProgram("the solve was interrupted".into()))?;

    // Clamp into the bounds, then scale down any row or column that overshoots.
    let mut column_sums = vec![0.0; target.len()];
    for ((row, values), (tokens, &mass)) in vars
        .iter()
        .zip(accepted.iter_mut())
        .zip(sets.tokens.iter().zip(&sets.prob))
    {
        for ((var, value), &y) in row.iter().zip(values.iter_mut()).zip(tokens) {
            if let Some(v) = var {
                *value = solution.var_value(*v).clamp(0.0, mass.min(target[y]));
            }
        }
        let sum: f64 = values.iter().sum();
        if sum > mass {
            values.iter_mut().for_each(|a| *a *= mass / sum);
        }
        for (&a, &y) in values.iter().zip(tokens) {
            column_sums[y] += a;
        }
    }
    let column_scale: Vec<f64> = column_sums
        .iter()
        .zip(target)
        .map(|(&s, &t)| if s > t { t / s } else { 1.0 })
        .collect();
    for (values, tokens) in accepted.iter_mut().zip(&sets.tokens) {
        for (a, &y) in values.iter_mut().zip(tokens) {
            *a *= column_scale[y];
        }
    }
    Ok(accepted)
}

/// Completes the accepted mass into a full coupling at the multiset level:
/// `J(m, y) = a(m, y) + r(m)·c(y)/C`, where `r` and `c` are the row and column
/// remainders and `C = Σ c`. Rows then sum to `draft(m)` and columns to `target(y)`.
fn complete(sets: &Multisets, target: &[f64], accepted: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    let mut column_left = target.to_vec();
    for (values, tokens) in accepted.iter().zip(&sets.tokens) {
        for (&a, &y) in values.iter().zip(tokens) {
            column_left[y] -= a;
        }
    }
    column_left.iter_mut().for_each(|c| *c = c.max(0.0));
    let total_left: f64 = column_left.iter().sum();
    accepted
        .into_iter()
        .zip(sets.tokens.iter().zip(&sets.prob))
        .map(|(values, (tokens, &mass))| {
            let row_left = (mass - values.iter().sum::<f64>()).max(0.0);
            let fill = if total_left > 0.0 {
                row_left / total_left
            } else {
                0.0
            };
            let mut joint: Vec<f64> = column_left.iter().map(|&c| c * fill).collect();
            for (&a, &y) in values.iter().zip(tokens) {
                joint[y] += a;
            }
            joint
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_count_saturates() {
        assert_eq!(variable_count(3, 2), 27);
        assert_eq!(variable_count(1, usize::MAX), 1);
        assert_eq!(variable_count(2, usize::MAX), u128::MAX);
        assert_eq!(variable_count(usize::MAX, 4), u128::MAX);
    }
}
