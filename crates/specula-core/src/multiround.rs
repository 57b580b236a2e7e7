//! Multi-round rejection sampling (the SpecInfer-style baseline SpecTr compares with).
//!
//! Try the drafts in turn, each with the standard test against the current residual
//! `r` (initially the target); after a rejection `r ← norm(max(0, r − draft))`. If every
//! draft is rejected, sample the last residual. Exact, usually weaker than k-Seq.

use rand::Rng;

use crate::distribution::{Distribution, sample_weights};
use crate::error::{Error, Result};
use crate::outcome::{TokenAnalysis, TokenOutcome};
use crate::residual::{
    RESIDUAL_EPSILON, Residual, ResidualDraw, check_same_len, distribution_or_target,
};
use crate::speculative::{acceptance_test, combine, outcome, test_in_turn, untested};
use crate::wiring::{Wiring, draw_target};

/// Multi-round rejection sampling for one pair of distributions and `k` drafts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MultiRound<'a> {
    target: &'a Distribution,
    draft: &'a Distribution,
    k: usize,
}

impl<'a> MultiRound<'a> {
    /// Multi-round rejection with `k` drafts.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::NoDrafts`] when `k == 0`.
    pub fn new(target: &'a Distribution, draft: &'a Distribution, k: usize) -> Result<Self> {
        check_same_len(target, draft)?;
        if k == 0 {
            return Err(Error::NoDrafts);
        }
        Ok(Self { target, draft, k })
    }

    /// The number of drafts.
    #[must_use]
    pub fn k(&self) -> usize {
        self.k
    }

    /// Tries `drafts`, the k draws i.i.d. from the draft, in order, each against the
    /// current residual with one uniform; one more uniform for the last residual if every
    /// one is rejected.
    ///
    /// A token the draft gives probability 0 (one outside the vocabulary included) is
    /// rejected. Another number of drafts than k is not tested: the token is drawn from
    /// the target (still exact, never accepted).
    pub fn sample<R: Rng + ?Sized>(&self, drafts: &[usize], rng: &mut R) -> TokenOutcome {
        self.sample_wired(drafts, Wiring::CORRECT, rng)
    }

    /// [`Self::sample`] with its uniforms and final residual wired as `wiring` says.
    pub(crate) fn sample_wired<R: Rng + ?Sized>(
        &self,
        drafts: &[usize],
        wiring: Wiring<'_>,
        rng: &mut R,
    ) -> TokenOutcome {
        let (target, draft) = (self.target, self.draft);
        if drafts.len() != self.k {
            return untested(target, rng);
        }
        let d = draft.probs();
        let mut current = target.probs().to_vec();
        let tests = test_in_turn(drafts, |i, x| {
            // Each rejection moves the test to the next residual.
            if i > 0 {
                next_residual(&mut current, d);
            }
            let u = wiring.uniform(i, rng);
            let at = |v: &[f64]| v.get(x).copied().unwrap_or(0.0);
            acceptance_test(i, x, at(&current), at(d), 1.0, u)
        });
        outcome(tests, || {
            if wiring.residual_from_target {
                return draw_target(target, draft, rng);
            }
            next_residual(&mut current, d);
            let u = rng.random::<f64>();
            ResidualDraw {
                residual: self.residual(),
                uniform: Some(u),
                token: sample_weights(&current, u, 1.0),
            }
        })
    }

    /// The exact output distribution and acceptance with k drafts: round i is reached
    /// with probability `∏_{j<i} (1 − βⱼ)`, where `βⱼ = Σ min(r_{j−1}, draft)`.
    #[must_use]
    pub fn analysis(&self) -> TokenAnalysis {
        let d = self.draft.probs();
        let mut current = self.target.probs().to_vec();
        let mut accepted = vec![0.0; d.len()];
        let mut reach = 1.0;
        for _ in 0..self.k {
            let mut beta = 0.0;
            for ((a, &r), &dx) in accepted.iter_mut().zip(&current).zip(d) {
                let m = r.min(dx);
                *a += reach * m;
                beta += m;
            }
            reach *= (1.0 - beta).max(0.0);
            next_residual(&mut current, d);
        }
        combine(accepted, &distribution_or_target(current, self.target))
    }

    /// The residual sampled after every draft is rejected:
    /// [`Residual::MultiRound`] after k rounds.
    #[must_use]
    pub fn residual(&self) -> Residual {
        Residual::MultiRound { rounds: self.k }
    }

    /// The residual after k rejections, `r_k`, whole.
    #[must_use]
    pub fn residual_distribution(&self) -> Distribution {
        let mut current = self.target.probs().to_vec();
        for _ in 0..self.k {
            next_residual(&mut current, self.draft.probs());
        }
        distribution_or_target(current, self.target)
    }
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
