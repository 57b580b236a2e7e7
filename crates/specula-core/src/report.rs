//! The closed-form report of one token-level scheme on one pair of distributions: what
//! `specula plan --json` prints and what the browser package's `plan()` returns, built in
//! one place so the two cannot drift apart. Front ends check their own inputs and word
//! their own errors; [`PlanError`] says which input was at fault.

use serde::Serialize;
use thiserror::Error;

mod bug_plan;
mod method;
mod notes;

pub use bug_plan::BugReport;
pub use method::{PlanMethod, PlanParams, PlanSelection};
pub use notes::{PlanNote, PlanNoteKind};

use crate::residual::check_same_len;
use crate::{
    Bug, Distribution, Greedy, KSeq, Mentored, MultiRound, OTM_MAX_VARIABLES, OtmPlan, Race,
    SamplingConfig, Speculative, Typical, kl_divergence, total_variation,
};

/// What to analyse.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanInput {
    /// The scheme.
    pub method: PlanMethod,
    /// Raw target entries.
    pub target: Vec<f64>,
    /// Raw draft entries.
    pub draft: Vec<f64>,
    /// Rescale the entries to sum to 1 instead of refusing them.
    pub normalize: bool,
    /// Method parameters (SpecTr's selection rule among them).
    pub params: PlanParams,
    /// Temperature, top-k and top-p, applied to both distributions as decoding applies
    /// them to the models' logits (`ln p`); [`SamplingConfig::default`] uses them as
    /// given. Temperature 0 is greedy verification, planned for standard speculative
    /// sampling without a bug only ([`PlanError::Greedy`]).
    pub sampling: SamplingConfig,
    /// A deliberate bug to plant (standard speculative sampling only); `None` for the
    /// correct scheme. `target` and `draft` are then the models' raw softmax, which the
    /// bug uses processed or not part by part.
    pub bug: Option<Bug>,
}

/// Which input distribution an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanSide {
    /// The target distribution.
    Target,
    /// The draft distribution.
    Draft,
}

/// Why [`plan_report`] refused its input.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PlanError {
    /// One distribution is invalid (NaN, negative, not summing to 1, empty).
    #[error("{side:?}: {source}")]
    Distribution {
        /// Which one.
        side: PlanSide,
        /// The core's reason.
        source: crate::Error,
    },
    /// The analysis refused the pair or the parameters (ρ below ρ*, bad KL budget, …).
    #[error("{0}")]
    Analysis(crate::Error),
    /// An OTM linear program above [`OTM_MAX_VARIABLES`].
    #[error("OTM needs vocab^(k+1) LP variables, more than the limit")]
    OtmTooLarge {
        /// Vocabulary size.
        vocab: usize,
        /// Drafts.
        k: usize,
        /// `vocab^(k+1)`, `None` beyond `u128`.
        variables: Option<u128>,
    },
    /// A multi-round analysis above [`MULTIROUND_MAX_WORK`] (drafts × vocabulary).
    #[error("multi-round analysis of {k} drafts over {vocab} tokens is too large")]
    MultiroundTooLarge {
        /// Vocabulary size.
        vocab: usize,
        /// Drafts.
        k: usize,
    },
    /// A bug planted in a scheme whose plan cannot carry it: token-level bugs are planned
    /// for standard speculative sampling only, and [`Bug::CacheReset`] acts only over a
    /// sequence.
    #[error(
        "the bug {bug} has no token-level plan for {}: bugs are planned for standard \
         speculative sampling (speculative), and cache-reset acts only over a sequence",
        .method.name()
    )]
    BugNotPlannable {
        /// The bug.
        bug: Bug,
        /// The method.
        method: PlanMethod,
    },
    /// Temperature 0 (greedy verification, which decoding uses for every method there)
    /// with a method other than standard speculative sampling, or with a bug, which
    /// greedy verification does not use.
    #[error(
        "temperature 0 is greedy verification, planned as method speculative without a bug \
         (got method {}, bug {:?})",
        .method.name(),
        .bug.map(Bug::name)
    )]
    Greedy {
        /// The method.
        method: PlanMethod,
        /// The bug, if any.
        bug: Option<Bug>,
    },
    /// Parameters that do not belong to the method (a front-end bug).
    #[error("parameters {params:?} do not match method {}", .method.name())]
    ParamsMismatch {
        /// The method.
        method: PlanMethod,
        /// The parameters given.
        params: PlanParams,
    },
}

/// The most `drafts × vocabulary` a multi-round plan analyses: each draft is one pass
/// over the vocabulary (twice: the output and the residual), so this bounds the work at
/// about 2^27 entry updates, under a second on one core (measured in docs/limits.md).
/// Larger requests are refused before any work.
pub const MULTIROUND_MAX_WORK: u128 = 1 << 27;

/// The most entries a plan's target or draft may have (its vocabulary): a million, which
/// every method analyses in seconds (docs/limits.md). Front ends refuse longer vectors
/// before building anything from them.
pub const MAX_PLAN_VOCAB: usize = 1 << 20;

/// Everything a plan reports. Non-finite numbers become `null` in JSON (serde_json's
/// rule). Optional fields are left out when they do not apply. Keys are camelCase on
/// every surface (`specula plan --json`, npm's `plan()`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlanReport {
    /// The method, by decoding's name.
    pub method: PlanMethod,
    /// SpecTr's selection rule (method `spectr` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<PlanSelection>,
    /// The temperature applied to both distributions (1: as given; 0: greedy
    /// verification).
    pub temperature: f64,
    /// Top-k applied to both distributions, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<usize>,
    /// Top-p applied to both distributions, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Target probabilities used (after normalising, if asked, and processed by the
    /// sampling settings).
    pub target: Vec<f64>,
    /// Draft probabilities used (after normalising, if asked, and processed by the
    /// sampling settings).
    pub draft: Vec<f64>,
    /// Vocabulary size.
    pub vocab: usize,
    /// Whether `normalize` was set (any positive total rescaled to 1). Without it, a sum
    /// within the tolerance of 1 is rescaled too, and [`Self::notes`] says so.
    pub normalized: bool,
    /// What the plan changed in its input without being asked (a sum within the
    /// tolerance of 1 rescaled, a ρ within the tolerance below ρ* raised): empty when
    /// the input was used as given.
    pub notes: Vec<PlanNote>,
    /// Number of drafts k (multi-draft methods only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafts: Option<usize>,
    /// Probability that a drafted token is accepted.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub acceptance: f64,
    /// The exact distribution of the emitted token.
    pub output: Vec<f64>,
    /// `KL(target ‖ output)` in nats.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub kl_target_output: f64,
    /// `TV(target, output)`.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub tv_target_output: f64,
    /// `KL(target ‖ draft)` in nats.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub kl_target_draft: f64,
    /// `TV(target, draft)`.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub tv_target_draft: f64,
    /// k-Seq: the ρ in use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rho: Option<f64>,
    /// k-Seq: the smallest valid ρ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rho_star: Option<f64>,
    /// k-Seq: `b(ρ) = Σ min(draft, target/ρ)`, the per-draft acceptance probability.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlap: Option<f64>,
    /// Mentored: the KL budget D.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kl_budget: Option<f64>,
    /// Mentored: lower ratio threshold α ≤ 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Mentored: upper ratio threshold β ≥ 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Mentored: acceptance probability of a drafted token the target rules out (non-zero
    /// only when `alpha` is 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero_target_accept: Option<f64>,
    /// Mentored: whether every draft is accepted (KL(target ‖ draft) ≤ D).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepts_all: Option<bool>,
    /// Typical acceptance: the threshold τ = min(ε, δ·exp(−H(target))).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Typical acceptance: the target's entropy H in nats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entropy: Option<f64>,
    /// OTM and the race: Lemma 3's bound, the best acceptance any selection among i.i.d.
    /// drafts reaches (attained; the race comes within its tolerance of it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upper_bound: Option<f64>,
    /// Per token x: the probability that x, once drafted, is accepted (for the race: once
    /// drafted and chosen, `min(1, target/r)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept_probs: Option<Vec<f64>>,
    /// The distribution sampled when every draft is rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residual: Option<Vec<f64>>,
    /// Per token x: the probability that x is emitted by an accepted draft, so that
    /// `acceptedMass + residualMass = output` (for standard speculative sampling,
    /// `min(target, draft)`); with `residual`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_mass: Option<Vec<f64>>,
    /// Per token x: the probability that x is emitted by the residual after every draft
    /// was rejected, `(1 − acceptance)·residual(x)`; with `residual`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residual_mass: Option<Vec<f64>>,
    /// The deliberate bug planted; `output` is then the buggy sampler's exact output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bug: Option<BugReport>,
    /// With a bug: `TV(target, output)`, how far the mistake moves the output (the same
    /// value as `tvTargetOutput`, under the name the bug lab uses).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tv: Option<f64>,
}

impl PlanReport {
    /// The scheme's human-readable title: the method, SpecTr's selection rule, and
    /// greedy verification at temperature 0.
    #[must_use]
    pub fn title(&self) -> &'static str {
        let greedy = SamplingConfig {
            temperature: self.temperature,
            ..SamplingConfig::default()
        }
        .is_greedy();
        method::title(self.method, self.selection, greedy)
    }
}

/// Builds the two distributions and runs the method's closed-form analysis.
///
/// # Errors
/// [`PlanError::Distribution`] for an invalid input distribution,
/// [`PlanError::OtmTooLarge`] before any OTM work that would exceed the limit,
/// [`PlanError::Analysis`] when the analysis refuses, [`PlanError::ParamsMismatch`].
pub fn plan_report(input: &PlanInput) -> Result<PlanReport, PlanError> {
    let mut notes = Vec::new();
    let target = build(PlanSide::Target, &input.target, input.normalize, &mut notes)?;
    let draft = build(PlanSide::Draft, &input.draft, input.normalize, &mut notes)?;
    let sampling = input.sampling;
    sampling.validate().map_err(PlanError::Analysis)?;
    let greedy = sampling.is_greedy();
    if greedy && (input.method != PlanMethod::Speculative || input.bug.is_some()) {
        return Err(PlanError::Greedy {
            method: input.method,
            bug: input.bug,
        });
    }
    let mut report = PlanReport {
        method: input.method,
        selection: input.params.selection(),
        temperature: sampling.temperature,
        top_k: sampling.top_k,
        top_p: sampling.top_p,
        target: target.probs().to_vec(),
        draft: draft.probs().to_vec(),
        vocab: target.len(),
        normalized: input.normalize,
        notes,
        drafts: None,
        acceptance: f64::NAN,
        output: Vec::new(),
        kl_target_output: f64::NAN,
        tv_target_output: f64::NAN,
        kl_target_draft: f64::NAN,
        tv_target_draft: f64::NAN,
        rho: None,
        rho_star: None,
        overlap: None,
        kl_budget: None,
        alpha: None,
        beta: None,
        zero_target_accept: None,
        accepts_all: None,
        threshold: None,
        entropy: None,
        upper_bound: None,
        accept_probs: None,
        residual: None,
        accepted_mass: None,
        residual_mass: None,
        bug: None,
        tv: None,
    };
    if let Some(bug) = input.bug {
        let (analysis, target) =
            bug_plan::plan_with_bug(input.method, bug, sampling, &target, &draft, &mut report)?;
        finish(&mut report, target.probs(), analysis);
        report.tv = Some(report.tv_target_output);
        return Ok(report);
    }
    // The pair the scheme sees: as given under the default settings, bit for bit.
    let target = processed(&target, &sampling)?;
    let draft = processed(&draft, &sampling)?;
    report.target = target.probs().to_vec();
    report.draft = draft.probs().to_vec();
    let analysis = match (input.method, input.params) {
        (PlanMethod::Speculative, PlanParams::None) if greedy => {
            // Both distributions are one-hot on their argmax: the draft proposes its
            // argmax, accepted when it is the target's.
            check_same_len(&target, &draft).map_err(PlanError::Analysis)?;
            let greedy = Greedy::new(&target);
            let best = target.argmax();
            let accept = (0..target.len()).map(|x| if x == best { 1.0 } else { 0.0 });
            report.accept_probs = Some(accept.collect());
            report.residual = Some(greedy.residual_distribution().into_probs());
            greedy.analysis(draft.argmax())
        }
        (PlanMethod::Speculative, PlanParams::None) => {
            let scheme = Speculative::new(&target, &draft).map_err(PlanError::Analysis)?;
            report.accept_probs = Some(scaled_accept_probs(&target, &draft, 1.0));
            report.residual = Some(scheme.residual_distribution().into_probs());
            scheme.analysis()
        }
        (PlanMethod::Spectr, PlanParams::KSeq { k, rho }) => {
            let kseq = KSeq::new(&target, &draft, k, rho).map_err(PlanError::Analysis)?;
            let plan = kseq.plan();
            if let Some(note) = rho.and_then(|r| PlanNote::rho_raised(r, plan.rho_star)) {
                report.notes.push(note);
            }
            report.drafts = Some(k);
            report.rho = Some(plan.rho);
            report.rho_star = Some(plan.rho_star);
            report.overlap = Some(plan.overlap);
            report.accept_probs = Some(scaled_accept_probs(&target, &draft, plan.rho));
            report.residual = Some(kseq.residual_distribution().into_probs());
            kseq.analysis()
        }
        (PlanMethod::Multiround, PlanParams::Drafts(k)) => {
            if (k as u128).saturating_mul(target.len() as u128) > MULTIROUND_MAX_WORK {
                return Err(PlanError::MultiroundTooLarge {
                    vocab: target.len(),
                    k,
                });
            }
            let multiround = MultiRound::new(&target, &draft, k).map_err(PlanError::Analysis)?;
            report.drafts = Some(k);
            report.residual = Some(multiround.residual_distribution().into_probs());
            multiround.analysis()
        }
        (PlanMethod::Spectr, PlanParams::Otm(k)) => {
            check_otm_size(target.len(), k)?;
            let plan = OtmPlan::new(&target, &draft, k).map_err(PlanError::Analysis)?;
            report.drafts = Some(k);
            report.upper_bound = Some(plan.upper_bound());
            plan.analysis()
        }
        (PlanMethod::Spectr, PlanParams::Race(k)) => {
            let race = Race::new(&target, &draft, k).map_err(PlanError::Analysis)?;
            let plan = race.plan();
            report.drafts = Some(k);
            report.upper_bound = Some(plan.optimum);
            report.accept_probs = Some(
                (0..target.len())
                    .map(|x| plan.accept_prob(x, target.prob(x)))
                    .collect(),
            );
            report.residual = Some(race.residual_distribution().into_probs());
            race.analysis()
        }
        (PlanMethod::Mentored, PlanParams::Kl(kl_budget)) => {
            let mentored =
                Mentored::new(&target, &draft, kl_budget).map_err(PlanError::Analysis)?;
            let plan = mentored.plan();
            report.kl_budget = Some(kl_budget);
            report.alpha = Some(plan.alpha);
            report.beta = Some(plan.beta);
            report.zero_target_accept = Some(plan.zero_target_accept);
            report.accepts_all = Some(plan.accepts_all);
            report.accept_probs = Some(mentored.accept_probs());
            report.residual = Some(mentored.residual_distribution().into_probs());
            mentored.analysis()
        }
        (PlanMethod::Typical, PlanParams::Typical { epsilon, delta }) => {
            let typical =
                Typical::new(&target, &draft, epsilon, delta).map_err(PlanError::Analysis)?;
            let plan = typical.plan();
            report.threshold = Some(plan.threshold);
            report.entropy = Some(plan.entropy);
            let accept = target.probs().iter().zip(draft.probs());
            let accept = accept.map(|(&t, &d)| f64::from(u8::from(d > 0.0 && typical.accepts(t))));
            report.accept_probs = Some(accept.collect());
            report.residual = Some(typical.residual_distribution().into_probs());
            typical.analysis()
        }
        (method, params) => return Err(PlanError::ParamsMismatch { method, params }),
    };
    finish(&mut report, target.probs(), analysis);
    Ok(report)
}

/// The figures every report derives from the analysis against `target` and from the
/// report's pair.
fn finish(report: &mut PlanReport, target: &[f64], analysis: crate::TokenAnalysis) {
    report.kl_target_draft = kl_divergence(&report.target, &report.draft);
    report.tv_target_draft = total_variation(&report.target, &report.draft);
    report.kl_target_output = kl_divergence(target, &analysis.output);
    report.tv_target_output = total_variation(target, &analysis.output);
    // Summed rounding can leave the acceptance a few ulps above 1.
    report.acceptance = analysis.acceptance.min(1.0);
    report.output = analysis.output;
    // The output is what accepted drafts emit plus what the residual emits after every
    // draft was rejected (docs/design.md); the residual's share is the latter.
    if let Some(residual) = &report.residual {
        let rejected = 1.0 - report.acceptance;
        let residual_mass: Vec<f64> = residual.iter().map(|r| rejected * r).collect();
        let accepted = report.output.iter().zip(&residual_mass);
        report.accepted_mass = Some(accepted.map(|(o, r)| (o - r).max(0.0)).collect());
        report.residual_mass = Some(residual_mass);
    }
}

/// `raw` processed by `sampling` as decoding processes the models' logits (`ln p`);
/// unchanged, bit for bit, under the default settings.
fn processed(raw: &Distribution, sampling: &SamplingConfig) -> Result<Distribution, PlanError> {
    if *sampling == SamplingConfig::default() {
        return Ok(raw.clone());
    }
    let logits: Vec<f64> = raw.probs().iter().map(|p| p.ln()).collect();
    Distribution::from_logits(&logits, sampling).map_err(PlanError::Analysis)
}

/// A distribution from raw entries, strict or rescaled; a strict one whose sum the
/// tolerance let through adds its note to `notes`.
fn build(
    side: PlanSide,
    values: &[f64],
    normalize: bool,
    notes: &mut Vec<PlanNote>,
) -> Result<Distribution, PlanError> {
    let mut values = values.to_vec();
    let built = if normalize {
        prescale(&mut values);
        Distribution::from_weights(values)
    } else {
        let sum: f64 = values.iter().sum();
        let len = values.len();
        let built = Distribution::from_probs(values);
        if built.is_ok() {
            let field = match side {
                PlanSide::Target => "target",
                PlanSide::Draft => "draft",
            };
            notes.extend(PlanNote::rescaled(field, sum, len));
        }
        built
    };
    built.map_err(|source| PlanError::Distribution { side, source })
}

/// Divides valid weights (finite, `>= 0`, some positive) by their largest entry when
/// their total, or its reciprocal, would not be finite (`1e-320, 1e-320` or
/// `1e308, 1e308`), so that rescaling finite input never reports an infinity. Other
/// input is left as given, for the distribution's own checks and their messages.
fn prescale(values: &mut [f64]) {
    if values.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
        return;
    }
    let sum: f64 = values.iter().sum();
    let max = values.iter().copied().fold(0.0, f64::max);
    if max > 0.0 && !(sum.is_finite() && (1.0 / sum).is_finite()) {
        values.iter_mut().for_each(|v| *v /= max);
    }
}

/// `min(1, target/(scale·draft))` per token; 0 where the draft is 0 (never drafted).
fn scaled_accept_probs(target: &Distribution, draft: &Distribution, scale: f64) -> Vec<f64> {
    target
        .probs()
        .iter()
        .zip(draft.probs())
        .map(|(&t, &d)| {
            if d > 0.0 {
                (t / (scale * d)).min(1.0)
            } else {
                0.0
            }
        })
        .collect()
}

/// Refuses an OTM problem above the core's limit before any work is done.
fn check_otm_size(vocab: usize, k: usize) -> Result<(), PlanError> {
    let exponent = u32::try_from(k.saturating_add(1)).unwrap_or(u32::MAX);
    let variables = (vocab as u128).checked_pow(exponent);
    if variables.is_none_or(|v| v > OTM_MAX_VARIABLES) {
        return Err(PlanError::OtmTooLarge {
            vocab,
            k,
            variables,
        });
    }
    Ok(())
}
