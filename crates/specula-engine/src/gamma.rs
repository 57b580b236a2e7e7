//! Dynamic draft length for speculative and mentored decoding.

use specula_core::theory::optimal_gamma;

use crate::config::GammaPolicy;
use crate::trace::{RoundTrace, TokenSource};

/// Keeps γ and the running estimates a [`GammaPolicy`] needs.
#[derive(Debug, Clone)]
pub(crate) struct GammaController {
    policy: GammaPolicy,
    gamma: usize,
    tests: u64,
    accepted_tests: u64,
    draft_calls: u64,
    draft_nanos: u64,
    target_calls: u64,
    target_nanos: u64,
}

impl GammaController {
    pub(crate) fn new(gamma: usize, policy: GammaPolicy) -> Self {
        Self {
            policy,
            gamma,
            tests: 0,
            accepted_tests: 0,
            draft_calls: 0,
            draft_nanos: 0,
            target_calls: 0,
            target_nanos: 0,
        }
    }

    /// The γ to use for the next round.
    pub(crate) fn gamma(&self) -> usize {
        self.gamma
    }

    /// Updates γ after a round (its selection before any stop truncation).
    pub(crate) fn observe(&mut self, trace: &RoundTrace) {
        let depth = trace.branching.len();
        let accepted = trace
            .steps
            .iter()
            .filter(|s| s.source == TokenSource::Accepted)
            .count();
        self.tests += trace.steps.len() as u64;
        self.accepted_tests += accepted as u64;
        self.draft_calls += trace.draft_calls as u64;
        self.draft_nanos = self.draft_nanos.saturating_add(trace.timing.draft_nanos);
        self.target_calls += trace.target_calls as u64;
        self.target_nanos = self.target_nanos.saturating_add(trace.timing.target_nanos);
        match self.policy {
            GammaPolicy::Fixed => {}
            GammaPolicy::Heuristic { max_gamma } => {
                if depth == 0 {
                    return; // a round shortened to nothing by the token limit says nothing
                }
                self.gamma = if accepted == depth {
                    (self.gamma + 2).min(max_gamma)
                } else {
                    self.gamma.saturating_sub(1).max(1)
                };
            }
            GammaPolicy::Optimal {
                max_gamma,
                cost_ratio,
            } => {
                // Laplace's rule keeps the estimate inside (0, 1).
                let alpha = (self.accepted_tests as f64 + 1.0) / (self.tests as f64 + 2.0);
                let c = self.measured_cost_ratio().unwrap_or(cost_ratio);
                let cap = u32::try_from(max_gamma).unwrap_or(u32::MAX);
                if let Ok((gamma, _)) = optimal_gamma(alpha, c, cap) {
                    self.gamma = gamma as usize;
                }
            }
        }
    }

    /// Mean draft call time over mean target call time, once both were measured.
    fn measured_cost_ratio(&self) -> Option<f64> {
        if self.draft_calls == 0 || self.target_calls == 0 || self.target_nanos == 0 {
            return None;
        }
        let draft = self.draft_nanos as f64 / self.draft_calls as f64;
        let target = self.target_nanos as f64 / self.target_calls as f64;
        Some(draft / target).filter(|c| c.is_finite())
    }
}
