//! Typical acceptance (Cai et al. 2024, Medusa): a lossy rule that accepts a drafted
//! token `x` whenever the target finds it plausible enough,
//! `target(x) > τ` with `τ = min(ε, δ·exp(−H(target)))`, where `H` is the target's
//! entropy in nats. On a rejection the token is drawn from the target itself.
//!
//! With `A = {x : target(x) > τ}` and acceptance `R = Σ_{x∈A} draft(x)`, the output is
//! `π(x) = draft(x)·1[x ∈ A] + (1 − R)·target(x)`: not the target unless the draft
//! happens to put exactly the target's mass on `A` in the target's proportions. A larger
//! `τ` accepts less and follows the target more closely; `τ ≥ max target` accepts nothing
//! and is exact. docs/design.md compares it with mentored decoding, the KL-optimal rule.

use rand::Rng;
use serde::Serialize;

use crate::distribution::Distribution;
use crate::error::{Error, Result};
use crate::outcome::{DraftTest, TestRule, TokenAnalysis, TokenOutcome, ratio};
use crate::residual::{Residual, ResidualDraw, check_same_len, pointwise_weights};
use crate::speculative::{combine, finish};

/// The parameters of one typical-acceptance test, as a trace records them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TypicalPlan {
    /// ε, the hard ceiling on the threshold (a probability).
    pub epsilon: f64,
    /// δ, the scale of the entropy-dependent threshold.
    pub delta: f64,
    /// `H(target)` in nats.
    pub entropy: f64,
    /// `τ = min(ε, δ·exp(−H))`: a drafted token is accepted when `target(x) > τ`.
    pub threshold: f64,
}

/// Typical acceptance on one pair of distributions.
#[derive(Debug, Clone)]
pub struct Typical<'a> {
    target: &'a Distribution,
    draft: &'a Distribution,
    plan: TypicalPlan,
}

impl<'a> Typical<'a> {
    /// The rule with ceiling `epsilon` and scale `delta` (Medusa uses ε around 0.09 and
    /// δ around 0.3).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], or [`Error::BadParameter`] when `epsilon` is not in
    /// `[0, 1]` or `delta` is negative or not finite.
    pub fn new(
        target: &'a Distribution,
        draft: &'a Distribution,
        epsilon: f64,
        delta: f64,
    ) -> Result<Self> {
        check_same_len(target, draft)?;
        if !(0.0..=1.0).contains(&epsilon) {
            return Err(Error::BadParameter {
                name: "epsilon",
                expected: "a probability in [0, 1]",
                value: epsilon,
            });
        }
        if !(delta >= 0.0 && delta.is_finite()) {
            return Err(Error::BadParameter {
                name: "delta",
                expected: "a finite number >= 0",
                value: delta,
            });
        }
        let entropy: f64 = target
            .probs()
            .iter()
            .filter(|&&t| t > 0.0)
            .map(|&t| -t * t.ln())
            .sum();
        let threshold = epsilon.min(delta * (-entropy).exp());
        Ok(Self {
            target,
            draft,
            plan: TypicalPlan {
                epsilon,
                delta,
                entropy,
                threshold,
            },
        })
    }

    /// The threshold and what it was made from.
    #[must_use]
    pub fn plan(&self) -> &TypicalPlan {
        &self.plan
    }

    /// Whether a drafted token with target probability `t` is accepted.
    #[must_use]
    pub fn accepts(&self, t: f64) -> bool {
        t > self.plan.threshold
    }

    /// Verifies one draft token `draft_token`, sampled from the draft. The test is
    /// deterministic (no uniform); after a rejection one uniform draws from the target.
    pub fn sample<R: Rng + ?Sized>(&self, draft_token: usize, rng: &mut R) -> TokenOutcome {
        let (t, d) = (self.target.prob(draft_token), self.draft.prob(draft_token));
        // A token the draft gives no mass cannot have been drafted: rejected.
        let accepted = d > 0.0 && self.accepts(t);
        let test = DraftTest {
            draft_index: 0,
            token: draft_token,
            draft_prob: d,
            target_prob: t,
            ratio: ratio(t, d),
            accept_prob: if accepted { 1.0 } else { 0.0 },
            uniform: None,
            rule: TestRule::Threshold,
            accepted,
        };
        finish(test, || {
            let u = rng.random::<f64>();
            ResidualDraw {
                residual: Residual::Target,
                uniform: Some(u),
                token: self.target.sample_with_uniform(u),
            }
        })
    }

    /// The exact output distribution and acceptance of [`Self::sample`]:
    /// `π = draft·1[target > τ] + (1 − R)·target`.
    #[must_use]
    pub fn analysis(&self) -> TokenAnalysis {
        let accepted = pointwise_weights(self.target, self.draft, |t, d| {
            if self.accepts(t) { d } else { 0.0 }
        });
        combine(accepted, self.target)
    }

    /// The residual sampled after a rejection: the target itself.
    #[must_use]
    pub fn residual(&self) -> Residual {
        Residual::Target
    }

    /// The residual whole: the target.
    #[must_use]
    pub fn residual_distribution(&self) -> Distribution {
        self.target.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{kl_divergence, total_variation};

    fn pair() -> (Distribution, Distribution) {
        (
            Distribution::from_probs(vec![0.5, 0.3, 0.15, 0.05]).unwrap(),
            Distribution::from_probs(vec![0.1, 0.2, 0.3, 0.4]).unwrap(),
        )
    }

    #[test]
    fn the_threshold_is_the_smaller_of_epsilon_and_the_entropy_term() {
        let (target, draft) = pair();
        let h =
            -(0.5f64 * 0.5f64.ln() + 0.3 * 0.3f64.ln() + 0.15 * 0.15f64.ln() + 0.05 * 0.05f64.ln());
        let rule = Typical::new(&target, &draft, 0.09, 0.3).unwrap();
        assert!((rule.plan().entropy - h).abs() < 1e-12);
        assert!((rule.plan().threshold - 0.09f64.min(0.3 * (-h).exp())).abs() < 1e-15);
    }

    #[test]
    fn the_output_mixes_accepted_drafts_and_the_target() {
        let (target, draft) = pair();
        // τ = 0.1: tokens 0, 1, 2 pass (target 0.5, 0.3, 0.15), token 3 does not.
        let rule = Typical::new(&target, &draft, 0.1, 1.0).unwrap();
        let a = rule.analysis();
        assert!((a.acceptance - 0.6).abs() < 1e-12);
        let expected = [
            0.1 + 0.4 * 0.5,
            0.2 + 0.4 * 0.3,
            0.3 + 0.4 * 0.15,
            0.4 * 0.05,
        ];
        for (o, e) in a.output.iter().zip(expected) {
            assert!((o - e).abs() < 1e-12, "{:?}", a.output);
        }
        assert!(kl_divergence(target.probs(), &a.output) > 0.0);
        assert!(total_variation(target.probs(), &a.output) > 0.0);
    }

    #[test]
    fn a_threshold_above_every_target_probability_is_exact() {
        let (target, draft) = pair();
        let a = Typical::new(&target, &draft, 1.0, 1e9).unwrap().analysis();
        assert_eq!(a.acceptance, 0.0);
        assert!(total_variation(target.probs(), &a.output) < 1e-15);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let (target, draft) = pair();
        for (e, d) in [
            (-0.1, 0.3),
            (1.5, 0.3),
            (f64::NAN, 0.3),
            (0.1, -1.0),
            (0.1, f64::INFINITY),
        ] {
            assert!(matches!(
                Typical::new(&target, &draft, e, d),
                Err(Error::BadParameter { .. })
            ));
        }
    }
}
