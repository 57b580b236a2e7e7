//! # specula-core
//!
//! Exact token-level speculative sampling, with no dependency on any model runtime.
//!
//! Notation: the sources swap `p` and `q`, so this crate never uses them. The **target**
//! is the large model whose distribution must be reproduced; the **draft** is the small
//! model that proposes tokens.
//!
//! Every scheme is parsed, then sampled, as `rand`'s distributions are: a fallible
//! constructor takes the target, the draft and the scheme's parameters, checks them once
//! and computes what the scheme needs (ρ*, the race's weights, mentored decoding's
//! thresholds, the OTM coupling). The value it returns then has
//! - `sample`, which takes the draft token(s) and an RNG and cannot fail: it returns a
//!   [`TokenOutcome`] recording each uniform, ratio and decision, and the residual draw;
//! - `analysis`, the exact output distribution and acceptance probability in closed form
//!   ([`TokenAnalysis`]), built from the scheme's own acceptance probabilities and
//!   residual;
//! - `residual` and `residual_distribution`, the distribution drawn from after every draft
//!   is rejected, as the short [`Residual`] a trace records and whole.
//!
//! | scheme | constructor | parameters (trace) |
//! |---|---|---|
//! | standard speculative sampling | [`Speculative::new`] | |
//! | greedy verification | [`Greedy::new`] | |
//! | SpecTr k-Seq | [`KSeq::new`] | [`KSeqPlan`] |
//! | multi-round rejection | [`MultiRound::new`] | |
//! | OTM (optimal transport, exact LP) | [`OtmPlan::new`] | [`OtmPlan`] |
//! | ratio race (OTM's optimum for i.i.d. drafts, any vocabulary) | [`Race::new`] | [`RacePlan`] |
//! | mentored decoding (lossy, KL ≤ D) | [`Mentored::new`] | [`MentoredPlan`] |
//!
//! A draft token the draft gives probability 0 (one outside the vocabulary included)
//! cannot have been drawn from it and is rejected; a multi-draft scheme handed another
//! number of drafts than its k tests none and draws from the target. Either way the output
//! stays exact and nothing panics. Randomness is always passed in; with a seeded RNG every
//! result is reproducible.
//!
//! For teaching, and for measuring the power of statistical tests, [`Bug`] names classic
//! mistakes in these samplers, carried out by [`draw_draft`] and the lossless schemes'
//! `sample_with_bug` (or [`buggy_sample`]) and analysed in closed form by
//! [`bug_analysis`].
//!
//! ```
//! use rand::SeedableRng;
//! use specula_core::{Distribution, KSeq};
//!
//! let target = Distribution::from_probs(vec![0.1, 0.2, 0.3, 0.4])?;
//! let draft = Distribution::from_probs(vec![0.5, 0.3, 0.15, 0.05])?;
//! // Parse: ρ* for three drafts, once.
//! let kseq = KSeq::new(&target, &draft, 3, None)?;
//! let exact = kseq.analysis();
//! assert!((exact.acceptance - kseq.plan().acceptance).abs() < 1e-12);
//!
//! // Sample: as many times as wanted, and it cannot fail.
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
//! for _ in 0..100 {
//!     let drafts: Vec<usize> = (0..3).map(|_| draft.sample(&mut rng)).collect();
//!     let outcome = kseq.sample(&drafts, &mut rng);
//!     assert!(outcome.token < 4);
//! }
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
mod typical;
mod wiring;

pub use bug::{
    Bug, BugPair, BugScheme, BuggySample, DraftDraw, bug_analysis, buggy_sample, draw_draft,
};
pub use distribution::{Distribution, NORMALIZATION_TOLERANCE};
pub use divergence::{kl_divergence, overlap, total_variation};
pub use error::{Error, Result};
pub use kseq::{KSeq, KSeqPlan, RHO_TOLERANCE, overlap_at};
pub use mentored::{DEFAULT_KL_TOLERANCE, MIN_REJECTION, Mentored, MentoredPlan};
pub use multiround::MultiRound;
pub use otm::{OTM_EXACT_BOUND_VOCAB, OTM_MAX_VARIABLES, OtmPlan, otm_upper_bound};
pub use outcome::{DraftTest, TestRule, TokenAnalysis, TokenOutcome, ratio};
pub use race::{RACE_MAX_STEPS, RACE_TOLERANCE, Race, RacePlan};
pub use report::{
    BugReport, PlanError, PlanInput, PlanMethod, PlanNote, PlanNoteKind, PlanParams, PlanReport,
    PlanSelection, PlanSide, plan_report,
};
pub use residual::{RESIDUAL_EPSILON, Residual, ResidualDraw, ResidualParts};
pub use sampling::SamplingConfig;
pub use speculative::{Greedy, Speculative};
pub use typical::{Typical, TypicalPlan};
