//! # specula-core
//!
//! Exact token-level speculative sampling, with no dependency on any model runtime.
//!
//! Notation: the sources swap `p` and `q`, so this crate never uses them. The **target**
//! is the large model whose distribution must be reproduced; the **draft** is the small
//! model that proposes tokens.
//!
//! Every scheme comes in two forms:
//! - a sampling function that takes the draft token(s), both distributions and an RNG and
//!   returns a [`TokenOutcome`] recording each uniform, ratio and decision, and the residual
//!   draw;
//! - an analysis function giving the exact output distribution and acceptance probability
//!   in closed form ([`TokenAnalysis`]), built from the scheme's own acceptance
//!   probabilities and residual.
//!
//! | scheme | sample | closed form |
//! |---|---|---|
//! | standard speculative sampling | [`speculative_sample`] | [`speculative_analysis`] |
//! | greedy verification | [`greedy_verify`] | [`greedy_analysis`] |
//! | SpecTr k-Seq | [`kseq_sample`] | [`kseq_analysis`] |
//! | multi-round rejection | [`multiround_sample`] | [`multiround_analysis`] |
//! | OTM (optimal transport, exact LP) | [`otm_sample`] | [`otm_analysis`] |
//! | ratio race (OTM's optimum for i.i.d. drafts, any vocabulary) | [`race_sample`] | [`race_analysis`] |
//! | mentored decoding (lossy, KL ≤ D) | [`mentored_sample`] | [`mentored_analysis`] |
//!
//! Randomness is always passed in; with a seeded RNG every result is reproducible.
//!
//! For teaching, and for measuring the power of statistical tests, [`Bug`] names classic
//! mistakes in these samplers, carried out by [`draw_draft`] and [`buggy_sample`] and
//! analysed in closed form by [`bug_analysis`].
//!
//! ```
//! use rand::SeedableRng;
//! use specula_core::{Distribution, speculative_analysis, speculative_sample};
//!
//! let target = Distribution::from_probs(vec![0.1, 0.2, 0.3, 0.4])?;
//! let draft = Distribution::from_probs(vec![0.5, 0.3, 0.15, 0.05])?;
//! let exact = speculative_analysis(&target, &draft)?;
//! assert!((exact.acceptance - 0.5).abs() < 1e-12); // Σ min(target, draft)
//!
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
//! let x = draft.sample(&mut rng);
//! let outcome = speculative_sample(&target, &draft, x, &mut rng)?;
//! assert!(outcome.token < 4);
//! # Ok::<(), specula_core::Error>(())
//! ```
#![deny(missing_docs)]

mod bug;
mod distribution;
mod divergence;
mod error;
mod kseq;
mod mentored;
mod multiround;
mod otm;
mod outcome;
mod race;
pub mod report;
mod residual;
mod sampling;
mod speculative;
pub mod theory;

pub use bug::{
    Bug, BugPair, BugScheme, BuggySample, DraftDraw, bug_analysis, buggy_sample, draw_draft,
};
pub use distribution::{Distribution, NORMALIZATION_TOLERANCE};
pub use divergence::{kl_divergence, overlap, total_variation};
pub use error::{Error, Result};
pub use kseq::{
    KSeqPlan, RHO_TOLERANCE, kseq_analysis, kseq_plan, kseq_sample, kseq_sample_with_plan,
    overlap_at,
};
pub use mentored::*;
pub use multiround::{multiround_analysis, multiround_sample};
pub use otm::*;
pub use outcome::{DraftTest, ResidualDraw, TokenAnalysis, TokenOutcome, ratio};
pub use race::{RACE_MAX_STEPS, RACE_TOLERANCE, RacePlan, race_analysis, race_plan, race_sample};
pub use report::{
    BugReport, PlanBug, PlanError, PlanInput, PlanMethod, PlanParams, PlanReport, PlanSide,
    plan_report,
};
pub use residual::{RESIDUAL_EPSILON, Residual};
pub use sampling::SamplingConfig;
pub use speculative::{greedy_analysis, greedy_verify, speculative_analysis, speculative_sample};
