//! What `decode()` hands JavaScript: a report per round and the summary at the end. They
//! hold the same engine types as `generate()`'s rounds (the trace, counts, metrics and
//! their summary), without what only the bundled models have (text, backend).

use serde::Serialize;
use specula_engine::{FinishReason, Metrics, MetricsSummary, RoundTrace, TokenCounts};

/// One round of `decode()`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DecodeRound {
    /// 0-based round number.
    pub round: usize,
    /// The token ids emitted this round.
    pub tokens: Vec<u32>,
    /// Emitted tokens by source.
    pub counts: TokenCounts,
    /// Why decoding stopped, on the last round.
    pub finish: Option<FinishReason>,
    /// The engine's full record of the round (drafts, tests, uniforms, ratios).
    pub trace: RoundTrace,
    /// The run's metrics up to and including this round (vLLM's definitions).
    pub metrics: Metrics,
    /// The rates derived from [`Self::metrics`].
    pub summary: MetricsSummary,
}

/// The outcome of a whole `decode()` run: the iterator's return value, and the
/// `summary` of an "aborted" error.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DecodeSummary {
    /// The prompt's token ids.
    pub prompt: Vec<u32>,
    /// Every generated token id (without the prompt).
    pub tokens: Vec<u32>,
    /// Why it stopped; `None` when aborted.
    pub finish: Option<FinishReason>,
    /// Whether the abort signal stopped it.
    pub aborted: bool,
    /// Totals with vLLM's definitions.
    pub metrics: Metrics,
    /// The derived rates.
    pub summary: MetricsSummary,
}
