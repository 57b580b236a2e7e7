//! What a token-level scheme reports: everything a teacher would show for one position,
//! and the exact closed-form behaviour of the scheme.

use serde::Serialize;

use crate::residual::ResidualDraw;

/// The rule an acceptance test applied, so that a trace says how each draft was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum TestRule {
    /// A coin: accepted when the uniform `u` falls below `accept_prob` (every lossless
    /// scheme and mentored decoding).
    Coin,
    /// Greedy verification (temperature 0): accepted exactly when the token is the
    /// target's most likely one, with no uniform.
    Argmax,
    /// Typical acceptance: accepted when `target_prob` is above the threshold τ, with no
    /// uniform.
    Threshold,
}

/// One acceptance test of one draft token.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DraftTest {
    /// Which draft this was (0-based, in the order tested).
    pub draft_index: usize,
    /// The draft token.
    pub token: usize,
    /// The draft probability of the token, `draft(x)`.
    pub draft_prob: f64,
    /// The probability the token is tested against: `target(x)`, or for multi-round the
    /// current residual's probability of `x`.
    pub target_prob: f64,
    /// `target_prob / draft_prob` (`+inf` when only the draft probability is 0; 0 when both are).
    pub ratio: f64,
    /// The probability with which this scheme accepts the token.
    pub accept_prob: f64,
    /// The uniform `u` in `[0, 1)` drawn for the test; `None` for deterministic tests
    /// (greedy, typical).
    pub uniform: Option<f64>,
    /// How the token was judged.
    pub rule: TestRule,
    /// Whether the token was accepted.
    pub accepted: bool,
}

/// The result of one token-level selection.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TokenOutcome {
    /// The token emitted.
    pub token: usize,
    /// The acceptance tests in the order they ran; later drafts are not tested once one
    /// is accepted.
    pub tests: Vec<DraftTest>,
    /// Index of the accepted draft, if any.
    pub accepted_draft: Option<usize>,
    /// The residual draw, when no draft was accepted.
    pub residual: Option<ResidualDraw>,
}

impl TokenOutcome {
    /// Whether a draft token was accepted.
    #[must_use]
    pub fn accepted(&self) -> bool {
        self.accepted_draft.is_some()
    }
}

/// The exact behaviour of a scheme on one pair of distributions, in closed form.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenAnalysis {
    /// The probability that a draft token is accepted.
    pub acceptance: f64,
    /// The exact distribution of the emitted token.
    pub output: Vec<f64>,
}

/// `t / d` with the conventions used in every trace: `+inf` when only `d` is 0, 0 when both are.
#[must_use]
pub fn ratio(target_prob: f64, draft_prob: f64) -> f64 {
    if draft_prob > 0.0 {
        target_prob / draft_prob
    } else if target_prob > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}
