//! Metrics under vLLM's speculative-decoding names, for JSON and text output.

use serde::Serialize;
use specula_engine::Metrics;

/// vLLM-named figures of one generation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VllmMetrics {
    /// Rounds (target verification calls that produced tokens).
    pub num_drafts: u64,
    /// Draft tokens proposed.
    pub num_draft_tokens: u64,
    /// Draft tokens accepted.
    pub num_accepted_tokens: u64,
    /// Accepted tokens at each draft position.
    pub num_accepted_tokens_per_pos: Vec<u64>,
    /// num_accepted_tokens / num_draft_tokens.
    pub draft_acceptance_rate: Option<f64>,
    /// 1 + num_accepted_tokens / num_drafts.
    pub mean_acceptance_length: Option<f64>,
    /// Accepted / drafted at each position.
    pub per_position_acceptance_rate: Vec<f64>,
    /// Rounds by number of accepted tokens.
    pub accepted_length_histogram: Vec<u64>,
    /// Generated tokens per target call.
    pub block_efficiency: Option<f64>,
    /// Generated tokens.
    pub num_generated_tokens: u64,
    /// Target model calls.
    pub num_target_calls: u64,
    /// Draft model calls.
    pub num_draft_calls: u64,
    /// Seconds in draft calls, target calls and the engine.
    pub draft_seconds: f64,
    /// See `draft_seconds`.
    pub target_seconds: f64,
    /// See `draft_seconds`.
    pub engine_seconds: f64,
    /// Generated tokens per second of measured time.
    pub tokens_per_second: Option<f64>,
}

impl From<&Metrics> for VllmMetrics {
    fn from(m: &Metrics) -> Self {
        Self {
            num_drafts: m.rounds,
            num_draft_tokens: m.drafted_tokens,
            num_accepted_tokens: m.accepted_tokens,
            num_accepted_tokens_per_pos: m.accepted_per_position.clone(),
            draft_acceptance_rate: m.acceptance_rate(),
            mean_acceptance_length: m.mean_acceptance_length(),
            per_position_acceptance_rate: m.per_position_acceptance(),
            accepted_length_histogram: m.accepted_length_histogram.clone(),
            block_efficiency: m.block_efficiency(),
            num_generated_tokens: m.emitted_tokens,
            num_target_calls: m.target_calls,
            num_draft_calls: m.draft_calls,
            draft_seconds: m.timing.draft_nanos as f64 * 1e-9,
            target_seconds: m.timing.target_nanos as f64 * 1e-9,
            engine_seconds: m.timing.selection_nanos as f64 * 1e-9,
            tokens_per_second: m.tokens_per_second(),
        }
    }
}

/// A short human-readable summary, one figure per line.
#[must_use]
pub fn text(m: &VllmMetrics) -> String {
    let opt = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
    format!(
        "generated tokens      {}\n\
         target calls          {}\n\
         draft calls           {}\n\
         acceptance rate       {}\n\
         mean accept. length   {}\n\
         block efficiency      {}\n\
         tokens per second     {} (decoding time only; the wall figure above counts all)\n\
         draft / target / engine time  {:.3} / {:.3} / {:.3} s\n",
        m.num_generated_tokens,
        m.num_target_calls,
        m.num_draft_calls,
        opt(m.draft_acceptance_rate),
        opt(m.mean_acceptance_length),
        opt(m.block_efficiency),
        m.tokens_per_second
            .map_or_else(|| "-".to_string(), |v| format!("{v:.1}")),
        m.draft_seconds,
        m.target_seconds,
        m.engine_seconds,
    )
}
