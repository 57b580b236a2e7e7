//! Running totals with vLLM's definitions, so numbers compare with vLLM's spec-decode
//! metrics.
//!
//! - drafted tokens: draft tokens generated (every node of every draft set);
//! - accepted tokens: emitted tokens that were accepted drafts;
//! - acceptance rate: accepted / drafted;
//! - mean acceptance length: 1 + accepted / rounds;
//! - per-position acceptance: accepted at position i / rounds that drafted position i
//!   (vLLM divides by all rounds; with a fixed draft length the two agree);
//! - histogram of accepted lengths: rounds by number of accepted tokens;
//! - block efficiency: emitted tokens / target calls.
//!
//! Counts of emitted tokens cover only what was emitted: tokens selected after a stop
//! condition are not counted, so `emitted = accepted + resampled + bonus` always holds.

use serde::Serialize;

use crate::trace::{RoundTrace, Timing, TokenSource};

/// Totals over every round so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    /// Rounds completed (target calls that produced tokens).
    pub rounds: u64,
    /// Draft tokens generated.
    pub drafted_tokens: u64,
    /// Emitted tokens that were accepted drafts.
    pub accepted_tokens: u64,
    /// Emitted tokens drawn from a residual.
    pub resampled_tokens: u64,
    /// Emitted tokens drawn directly from the target (bonus; every autoregressive token).
    pub bonus_tokens: u64,
    /// Tokens emitted.
    pub emitted_tokens: u64,
    /// Draft model requests.
    pub draft_calls: u64,
    /// Target model requests.
    pub target_calls: u64,
    /// Rounds with drafts drawn while the last round's target request was outstanding
    /// (parallel drafting).
    pub early_rounds: u64,
    /// Draft depths drawn while the last round's target request was outstanding.
    pub early_drafts: u64,
    /// For each position i (0-based), rounds whose draft set reached depth i + 1.
    pub drafted_per_position: Vec<u64>,
    /// For each position i, rounds whose emitted token at depth i + 1 was an accepted draft.
    pub accepted_per_position: Vec<u64>,
    /// Entry n: rounds that emitted n accepted draft tokens.
    pub accepted_length_histogram: Vec<u64>,
    /// Time spent.
    pub timing: Timing,
}

/// The derived figures of [`Metrics`], for reports and JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MetricsSummary {
    /// Accepted / drafted.
    pub acceptance_rate: Option<f64>,
    /// 1 + accepted / rounds.
    pub mean_acceptance_length: Option<f64>,
    /// Accepted / drafted at each position.
    pub per_position_acceptance: Vec<f64>,
    /// Emitted tokens per target call.
    pub block_efficiency: Option<f64>,
    /// Engine time per emitted token, in nanoseconds.
    pub selection_nanos_per_token: Option<f64>,
    /// Emitted tokens per second of total measured time.
    pub tokens_per_second: Option<f64>,
    /// Accepted / tested positions (accepted + resampled): the per-position acceptance
    /// α of speculative decoding's theory.
    pub tested_acceptance: Option<f64>,
    /// Mean draft call time / mean target call time: the draft's cost c in target calls.
    pub cost_ratio: Option<f64>,
}

impl Metrics {
    /// Adds `other`'s totals to these (counts, per-position counts and the histogram
    /// entry by entry, timings): the metrics of one generation run as several decodes.
    pub fn add(&mut self, other: &Self) {
        self.rounds += other.rounds;
        self.drafted_tokens += other.drafted_tokens;
        self.accepted_tokens += other.accepted_tokens;
        self.resampled_tokens += other.resampled_tokens;
        self.bonus_tokens += other.bonus_tokens;
        self.emitted_tokens += other.emitted_tokens;
        self.draft_calls += other.draft_calls;
        self.target_calls += other.target_calls;
        self.early_rounds += other.early_rounds;
        self.early_drafts += other.early_drafts;
        for (sum, part) in [
            (&mut self.drafted_per_position, &other.drafted_per_position),
            (
                &mut self.accepted_per_position,
                &other.accepted_per_position,
            ),
            (
                &mut self.accepted_length_histogram,
                &other.accepted_length_histogram,
            ),
        ] {
            if sum.len() < part.len() {
                sum.resize(part.len(), 0);
            }
            sum.iter_mut().zip(part).for_each(|(s, p)| *s += p);
        }
        self.timing.add(&other.timing);
    }

    /// Adds one round.
    pub fn record(&mut self, trace: &RoundTrace) {
        self.rounds += 1;
        self.drafted_tokens += trace.drafts.len() as u64;
        self.accepted_tokens += trace.counts.accepted as u64;
        self.resampled_tokens += trace.counts.resampled as u64;
        self.bonus_tokens += trace.counts.bonus as u64;
        self.emitted_tokens += trace.emitted.len() as u64;
        self.draft_calls += trace.draft_calls as u64;
        self.target_calls += trace.target_calls as u64;
        self.early_rounds += u64::from(trace.early_drafts > 0);
        self.early_drafts += trace.early_drafts as u64;
        let depth = trace.branching.len();
        grow(&mut self.drafted_per_position, depth);
        grow(&mut self.accepted_per_position, depth);
        for n in self.drafted_per_position.iter_mut().take(depth) {
            *n += 1;
        }
        // Emitted token j of a round sits at depth j + 1 (the bonus at depth L + 1).
        for (slot, source) in self.accepted_per_position.iter_mut().zip(&trace.sources) {
            if *source == TokenSource::Accepted {
                *slot += 1;
            }
        }
        grow(
            &mut self.accepted_length_histogram,
            trace.counts.accepted + 1,
        );
        if let Some(bin) = self
            .accepted_length_histogram
            .get_mut(trace.counts.accepted)
        {
            *bin += 1;
        }
        self.timing.add(&trace.timing);
    }

    /// Accepted / drafted tokens; `None` before anything was drafted.
    #[must_use]
    pub fn acceptance_rate(&self) -> Option<f64> {
        ratio(self.accepted_tokens, self.drafted_tokens)
    }

    /// 1 + accepted tokens per round; `None` before the first round.
    #[must_use]
    pub fn mean_acceptance_length(&self) -> Option<f64> {
        ratio(self.accepted_tokens, self.rounds).map(|a| 1.0 + a)
    }

    /// Acceptance at each draft position (accepted / rounds that drafted it).
    #[must_use]
    pub fn per_position_acceptance(&self) -> Vec<f64> {
        self.accepted_per_position
            .iter()
            .zip(&self.drafted_per_position)
            .map(|(&a, &d)| ratio(a, d).unwrap_or(0.0))
            .collect()
    }

    /// Emitted tokens per target call (block efficiency); `None` before the first call.
    #[must_use]
    pub fn block_efficiency(&self) -> Option<f64> {
        ratio(self.emitted_tokens, self.target_calls)
    }

    /// Engine (selection) time per emitted token, in nanoseconds.
    #[must_use]
    pub fn selection_nanos_per_token(&self) -> Option<f64> {
        ratio(self.timing.selection_nanos, self.emitted_tokens)
    }

    /// Emitted tokens per second of measured time; `None` when no time was measured.
    #[must_use]
    pub fn tokens_per_second(&self) -> Option<f64> {
        ratio(self.emitted_tokens, self.timing.total_nanos()).map(|r| r * 1e9)
    }

    /// Accepted tokens / tested positions, where every tested position either kept a
    /// draft or was resampled (the drafts after a rejection are never tested, which is
    /// why this differs from [`Metrics::acceptance_rate`]): for standard speculative
    /// decoding the per-position acceptance α of docs/design.md's theory; `None` before
    /// any position was tested.
    #[must_use]
    pub fn tested_acceptance(&self) -> Option<f64> {
        ratio(
            self.accepted_tokens,
            self.accepted_tokens + self.resampled_tokens,
        )
    }

    /// The mean time of one draft call over that of one target call (the cost ratio c of
    /// docs/design.md's walltime factor); `None` until both models have a measured call.
    #[must_use]
    pub fn cost_ratio(&self) -> Option<f64> {
        let draft = ratio(self.timing.draft_nanos, self.draft_calls)?;
        let target = ratio(self.timing.target_nanos, self.target_calls)?;
        (target > 0.0).then(|| draft / target)
    }

    /// Every derived figure at once.
    #[must_use]
    pub fn summary(&self) -> MetricsSummary {
        MetricsSummary {
            acceptance_rate: self.acceptance_rate(),
            mean_acceptance_length: self.mean_acceptance_length(),
            per_position_acceptance: self.per_position_acceptance(),
            block_efficiency: self.block_efficiency(),
            selection_nanos_per_token: self.selection_nanos_per_token(),
            tokens_per_second: self.tokens_per_second(),
            tested_acceptance: self.tested_acceptance(),
            cost_ratio: self.cost_ratio(),
        }
    }
}

fn grow(v: &mut Vec<u64>, len: usize) {
    if v.len() < len {
        v.resize(len, 0);
    }
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}
