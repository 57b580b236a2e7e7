//! Standard speculative sampling (Leviathan et al. 2023; Chen et al. 2023) and its
//! greedy form.
//!
//! Draw `x ~ draft`; accept with probability `min(1, target(x)/draft(x))`, tested as
//! `u·draft(x) < target(x)` with `u` uniform in `[0, 1)`; on rejection draw from
//! `norm(max(0, target − draft))`. The emitted token is distributed exactly as `target`;
//! the acceptance probability is `Σ min(target, draft) = 1 − TV(target, draft)`.

use rand::Rng;

use crate::bug::Wiring;
use crate::distribution::Distribution;
use crate::error::Result;
use crate::outcome::{DraftTest, ResidualDraw, TokenAnalysis, TokenOutcome, ratio};
use crate::residual::{Residual, check_same_len, draw};

/// Verifies one draft token `draft_token`, which must have been sampled from `draft`.
///
/// A token with `draft(x) = 0` cannot have been sampled from `draft`; it is rejected.
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) or
/// [`Error::TokenOutOfRange`](crate::Error::TokenOutOfRange).
pub fn speculative_sample<R: Rng + ?Sized>(
    target: &Distribution,
    draft: &Distribution,
    draft_token: usize,
    rng: &mut R,
) -> Result<TokenOutcome> {
    speculative_sample_wired(target, draft, draft_token, Wiring::CORRECT, rng)
}

/// [`speculative_sample`] with its uniform and residual wired as `wiring` says.
pub(crate) fn speculative_sample_wired<R: Rng + ?Sized>(
    target: &Distribution,
    draft: &Distribution,
    draft_token: usize,
    wiring: Wiring<'_>,
    rng: &mut R,
) -> Result<TokenOutcome> {
    check_same_len(target, draft)?;
    target.check_token(draft_token)?;
    let test = acceptance_test(
        0,
        draft_token,
        target.prob(draft_token),
        draft.prob(draft_token),
        1.0,
        wiring.uniform(0, rng),
    );
    Ok(finish(test, || {
        draw(
            wiring.residual(Residual::TargetMinusDraft),
            target,
            draft,
            rng,
        )
    }))
}

/// The exact output distribution and acceptance probability of [`speculative_sample`]
/// when the draft token is drawn from `draft`, computed from the scheme's own parts
/// (acceptance probabilities and residual), not assumed.
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch).
pub fn speculative_analysis(target: &Distribution, draft: &Distribution) -> Result<TokenAnalysis> {
    check_same_len(target, draft)?;
    let accepted: Vec<f64> = target
        .probs()
        .iter()
        .zip(draft.probs())
        .map(|(&t, &d)| d * accept_prob(t, d, 1.0))
        .collect();
    Ok(combine(
        accepted,
        &Residual::TargetMinusDraft.distribution(target, draft)?,
    ))
}

/// Greedy verification (temperature 0): accept iff the draft token is the target's
/// argmax; otherwise emit the argmax. No randomness is used.
///
/// # Errors
/// [`Error::TokenOutOfRange`](crate::Error::TokenOutOfRange).
pub fn greedy_verify(target: &Distribution, draft_token: usize) -> Result<TokenOutcome> {
    target.check_token(draft_token)?;
    let best = target.argmax();
    let accepted = draft_token == best;
    let test = DraftTest {
        draft_index: 0,
        token: draft_token,
        draft_prob: 1.0,
        target_prob: target.prob(draft_token),
        ratio: target.prob(draft_token),
        accept_prob: if accepted { 1.0 } else { 0.0 },
        uniform: None,
        accepted,
    };
    Ok(finish(test, || ResidualDraw {
        residual: Residual::Target,
        uniform: None,
        token: best,
    }))
}

/// Closed form of greedy verification when the draft token is the draft's argmax: the
/// output is one-hot on the target's argmax; acceptance is 1 when the argmaxes agree.
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch).
pub fn greedy_analysis(target: &Distribution, draft: &Distribution) -> Result<TokenAnalysis> {
    check_same_len(target, draft)?;
    let best = target.argmax();
    let mut output = vec![0.0; target.len()];
    output[best] = 1.0;
    Ok(TokenAnalysis {
        acceptance: if draft.argmax() == best { 1.0 } else { 0.0 },
        output,
    })
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
        accepted: d > 0.0 && u * scale * d < t,
    }
}

/// Turns a single test into an outcome, drawing the residual only on rejection.
pub(crate) fn finish(test: DraftTest, residual: impl FnOnce() -> ResidualDraw) -> TokenOutcome {
    outcome(vec![test], residual)
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
