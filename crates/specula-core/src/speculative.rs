//! Standard speculative sampling (Leviathan et al. 2023; Chen et al. 2023) and its
//! greedy form.
//!
//! Draw `x ~ draft`; accept with probability `min(1, target(x)/draft(x))`, tested as
//! `u·draft(x) < target(x)` with `u` uniform in `[0, 1)`; on rejection draw from
//! `norm(max(0, target − draft))`. The emitted token is distributed exactly as `target`;
//! the acceptance probability is `Σ min(target, draft) = 1 − TV(target, draft)`.

use rand::Rng;

use crate::distribution::Distribution;
use crate::error::Result;
use crate::outcome::{DraftTest, TestRule, TokenAnalysis, TokenOutcome, ratio};
use crate::residual::{
    Residual, ResidualDraw, check_same_len, distribution_or_target, pointwise_weights,
};
use crate::wiring::Wiring;

/// Standard speculative sampling for one pair of distributions: checked once, then
/// [`sample`](Self::sample) as often as wanted.
///
/// ```
/// use rand::SeedableRng;
/// use specula_core::{Distribution, Speculative};
///
/// let target = Distribution::from_probs(vec![0.1, 0.2, 0.3, 0.4])?;
/// let draft = Distribution::from_probs(vec![0.5, 0.3, 0.15, 0.05])?;
/// let scheme = Speculative::new(&target, &draft)?;
/// assert!((scheme.analysis().acceptance - 0.5).abs() < 1e-12); // Σ min(target, draft)
///
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
/// let x = draft.sample(&mut rng);
/// assert!(scheme.sample(x, &mut rng).token < 4);
/// # Ok::<(), specula_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Speculative<'a> {
    target: &'a Distribution,
    draft: &'a Distribution,
}

impl<'a> Speculative<'a> {
    /// Checks that the target and the draft cover the same vocabulary.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch).
    pub fn new(target: &'a Distribution, draft: &'a Distribution) -> Result<Self> {
        check_same_len(target, draft)?;
        Ok(Self { target, draft })
    }

    /// Verifies one draft token `draft_token`, which must have been sampled from the
    /// draft: one uniform for the test, one more for the residual after a rejection.
    ///
    /// A token the draft gives probability 0 (one outside the vocabulary included) cannot
    /// have been sampled from it; it is rejected.
    pub fn sample<R: Rng + ?Sized>(&self, draft_token: usize, rng: &mut R) -> TokenOutcome {
        self.sample_wired(draft_token, Wiring::CORRECT, rng)
    }

    /// [`Self::sample`] with its uniform and residual wired as `wiring` says.
    pub(crate) fn sample_wired<R: Rng + ?Sized>(
        &self,
        draft_token: usize,
        wiring: Wiring<'_>,
        rng: &mut R,
    ) -> TokenOutcome {
        let (target, draft) = (self.target, self.draft);
        let test = acceptance_test(
            0,
            draft_token,
            target.prob(draft_token),
            draft.prob(draft_token),
            1.0,
            wiring.uniform(0, rng),
        );
        finish(test, || {
            wiring.draw_pointwise(self.residual(), target, draft, target_minus_draft, rng)
        })
    }

    /// The exact output distribution and acceptance probability of [`Self::sample`] when
    /// the draft token is drawn from the draft, computed from the scheme's own parts
    /// (acceptance probabilities and residual), not assumed.
    #[must_use]
    pub fn analysis(&self) -> TokenAnalysis {
        let accepted: Vec<f64> =
            pointwise_weights(self.target, self.draft, |t, d| d * accept_prob(t, d, 1.0));
        combine(accepted, &self.residual_distribution())
    }

    /// The residual sampled after a rejection: [`Residual::TargetMinusDraft`].
    #[must_use]
    pub fn residual(&self) -> Residual {
        Residual::TargetMinusDraft
    }

    /// The residual `norm(max(0, target − draft))` whole; the target when it has no mass,
    /// as the sampler falls back.
    #[must_use]
    pub fn residual_distribution(&self) -> Distribution {
        distribution_or_target(
            pointwise_weights(self.target, self.draft, target_minus_draft),
            self.target,
        )
    }
}

/// Greedy verification (temperature 0) against one target: accept a draft token iff it
/// is the target's argmax, otherwise emit the argmax. No randomness is used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Greedy<'a> {
    target: &'a Distribution,
}

impl<'a> Greedy<'a> {
    /// Greedy verification against `target` (any distribution will do).
    #[must_use]
    pub fn new(target: &'a Distribution) -> Self {
        Self { target }
    }

    /// Verifies `draft_token`. A token outside the vocabulary is not the argmax: it is
    /// rejected.
    #[must_use]
    pub fn sample(&self, draft_token: usize) -> TokenOutcome {
        let best = self.target.argmax();
        let accepted = draft_token == best;
        let test = DraftTest {
            draft_index: 0,
            token: draft_token,
            draft_prob: 1.0,
            target_prob: self.target.prob(draft_token),
            ratio: self.target.prob(draft_token),
            accept_prob: if accepted { 1.0 } else { 0.0 },
            uniform: None,
            rule: TestRule::Argmax,
            accepted,
        };
        finish(test, || ResidualDraw {
            residual: Residual::Target,
            uniform: None,
            token: best,
        })
    }

    /// The closed form when the draft proposes `draft_token` (under greedy drafting, the
    /// draft's argmax): the output is one-hot on the target's argmax; acceptance is 1 when
    /// the two agree.
    #[must_use]
    pub fn analysis(&self, draft_token: usize) -> TokenAnalysis {
        let best = self.target.argmax();
        let mut output = vec![0.0; self.target.len()];
        output[best] = 1.0;
        TokenAnalysis {
            acceptance: if draft_token == best { 1.0 } else { 0.0 },
            output,
        }
    }

    /// What a rejection emits, recorded as [`Residual::Target`] (with no uniform).
    #[must_use]
    pub fn residual(&self) -> Residual {
        Residual::Target
    }

    /// The distribution a rejection emits from: one-hot on the target's argmax.
    #[must_use]
    pub fn residual_distribution(&self) -> Distribution {
        // The argmax is inside the vocabulary, so `one_hot` cannot fail.
        Distribution::one_hot(self.target.len(), self.target.argmax())
            .unwrap_or_else(|_| self.target.clone())
    }
}

/// The residual weight `max(0, t − d)` of standard sampling.
fn target_minus_draft(t: f64, d: f64) -> f64 {
    (t - d).max(0.0)
}

/// `min(1, t / (scale·d))`, and 0 when `d = 0` (such a token cannot have been drafted).
pub(crate) fn accept_prob(t: f64, d: f64, scale: f64) -> f64 {
    if d > 0.0 {
        (t / (scale * d)).min(1.0)
    } else {
        0.0
    }
}

/// Runs one randomised test with the uniform `u`: accept iff `u·scale·d < t`, no
/// division on the decision path.
pub(crate) fn acceptance_test(
    draft_index: usize,
    token: usize,
    t: f64,
    d: f64,
    scale: f64,
    u: f64,
) -> DraftTest {
    DraftTest {
        draft_index,
        token,
        draft_prob: d,
        target_prob: t,
        ratio: ratio(t, d),
        accept_prob: accept_prob(t, d, scale),
        uniform: Some(u),
        rule: TestRule::Coin,
        accepted: d > 0.0 && u * scale * d < t,
    }
}

/// Turns a single test into an outcome, drawing the residual only on rejection.
pub(crate) fn finish(test: DraftTest, residual: impl FnOnce() -> ResidualDraw) -> TokenOutcome {
    outcome(vec![test], residual)
}

/// The outcome when the draws cannot be the plan's `k` i.i.d. drafts (another number of
/// them): no draft is tested and the token is drawn from the target, which keeps the
/// output exact. One uniform from `rng`.
pub(crate) fn untested<R: Rng + ?Sized>(target: &Distribution, rng: &mut R) -> TokenOutcome {
    let u = rng.random::<f64>();
    let token = target.sample_with_uniform(u);
    TokenOutcome {
        token,
        tests: Vec::new(),
        accepted_draft: None,
        residual: Some(ResidualDraw {
            residual: Residual::Target,
            uniform: Some(u),
            token,
        }),
    }
}

/// Runs `test(i, x)` on the drafts in order and stops after the first acceptance:
/// the shared loop of every scheme that tries drafts one after another.
pub(crate) fn test_in_turn(
    drafts: &[usize],
    mut test: impl FnMut(usize, usize) -> DraftTest,
) -> Vec<DraftTest> {
    let mut tests = Vec::with_capacity(drafts.len());
    for (i, &x) in drafts.iter().enumerate() {
        let result = test(i, x);
        let accepted = result.accepted;
        tests.push(result);
        if accepted {
            break;
        }
    }
    tests
}

/// The outcome of a run of tests: the accepted draft if the last test accepted, else a
/// residual draw (made only then).
pub(crate) fn outcome(
    tests: Vec<DraftTest>,
    residual: impl FnOnce() -> ResidualDraw,
) -> TokenOutcome {
    match tests.last() {
        Some(last) if last.accepted => TokenOutcome {
            token: last.token,
            accepted_draft: Some(last.draft_index),
            tests,
            residual: None,
        },
        _ => {
            let draw = residual();
            TokenOutcome {
                token: draw.token,
                tests,
                accepted_draft: None,
                residual: Some(draw),
            }
        }
    }
}

/// `output = accepted + (1 − Σ accepted)·residual`, where `accepted[x]` is the probability
/// of emitting `x` through acceptance.
pub(crate) fn combine(accepted: Vec<f64>, residual: &Distribution) -> TokenAnalysis {
    let acceptance: f64 = accepted.iter().sum();
    let rejection = (1.0 - acceptance).max(0.0);
    let output = accepted
        .iter()
        .zip(residual.probs())
        .map(|(a, r)| a + rejection * r)
        .collect();
    TokenAnalysis { acceptance, output }
}
