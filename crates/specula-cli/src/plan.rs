//! `specula plan`: runs one scheme's closed-form analysis and builds a serialisable report.

use serde::Serialize;
use specula_core::{
    Distribution, OTM_MAX_VARIABLES, Residual, greedy_analysis, kl_divergence, kseq_analysis,
    mentored_accept_probs, mentored_analysis, multiround_analysis, otm_analysis,
    speculative_analysis, total_variation,
};

use crate::args::{Method, Params, PlanRequest};
use crate::error::CliError;

/// Everything `plan` reports. Serialised as-is for `--json`; non-finite numbers become
/// `null` there (serde_json's rule). Optional fields are left out when they do not apply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanReport {
    /// The scheme.
    pub method: Method,
    /// Target probabilities used (after `--normalize`, if given).
    pub target: Vec<f64>,
    /// Draft probabilities used (after `--normalize`, if given).
    pub draft: Vec<f64>,
    /// Vocabulary size.
    pub vocab: usize,
    /// Whether the inputs were rescaled by `--normalize`.
    pub normalized: bool,
    /// Number of drafts k (multi-draft methods only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafts: Option<usize>,
    /// Probability that a drafted token is accepted.
    pub acceptance: f64,
    /// The exact distribution of the emitted token.
    pub output: Vec<f64>,
    /// `KL(target ‖ output)` in nats.
    pub kl_target_output: f64,
    /// `TV(target, output)`.
    pub tv_target_output: f64,
    /// `KL(target ‖ draft)` in nats.
    pub kl_target_draft: f64,
    /// `TV(target, draft)`.
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
    /// OTM: an upper bound on the best achievable acceptance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upper_bound: Option<f64>,
    /// Per token x: the probability that x, once drafted, is accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept_probs: Option<Vec<f64>>,
    /// The distribution sampled when every draft is rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residual: Option<Vec<f64>>,
}

/// Builds the two distributions and runs the analysis.
///
/// # Errors
/// Invalid distributions or parameters (usage errors), or a failing LP solver.
pub fn run(request: &PlanRequest) -> Result<PlanReport, CliError> {
    let target = build("--target", &request.target, request.normalize)?;
    let draft = build("--draft", &request.draft, request.normalize)?;
    let core = |e: specula_core::Error| CliError::from_core(None, &e);
    let mut report = PlanReport {
        method: request.method,
        target: target.probs().to_vec(),
        draft: draft.probs().to_vec(),
        vocab: target.len(),
        normalized: request.normalize,
        drafts: None,
        acceptance: f64::NAN,
        output: Vec::new(),
        kl_target_output: f64::NAN,
        tv_target_output: f64::NAN,
        kl_target_draft: kl_divergence(target.probs(), draft.probs()),
        tv_target_draft: total_variation(target.probs(), draft.probs()),
        rho: None,
        rho_star: None,
        overlap: None,
        kl_budget: None,
        alpha: None,
        beta: None,
        zero_target_accept: None,
        accepts_all: None,
        upper_bound: None,
        accept_probs: None,
        residual: None,
    };
    let analysis = match (request.method, request.params) {
        (Method::Speculative, _) => {
            report.accept_probs = Some(scaled_accept_probs(&target, &draft, 1.0));
            report.residual = Some(residual(Residual::TargetMinusDraft, &target, &draft)?);
            speculative_analysis(&target, &draft).map_err(core)?
        }
        (Method::Greedy, _) => {
            let best = target.argmax();
            let accept = (0..target.len()).map(|x| if x == best { 1.0 } else { 0.0 });
            report.accept_probs = Some(accept.collect());
            report.residual = Some(
                Distribution::one_hot(target.len(), best)
                    .map_err(core)?
                    .into_probs(),
            );
            greedy_analysis(&target, &draft).map_err(core)?
        }
        (Method::Kseq, Params::KSeq { k, rho }) => {
            let (plan, analysis) = kseq_analysis(&target, &draft, k, rho).map_err(core)?;
            report.drafts = Some(k);
            report.rho = Some(plan.rho);
            report.rho_star = Some(plan.rho_star);
            report.overlap = Some(plan.overlap);
            report.accept_probs = Some(scaled_accept_probs(&target, &draft, plan.rho));
            report.residual = Some(residual(plan.residual(), &target, &draft)?);
            analysis
        }
        (Method::Multiround, Params::Drafts(k)) => {
            report.drafts = Some(k);
            report.residual = Some(residual(
                Residual::MultiRound { rounds: k },
                &target,
                &draft,
            )?);
            multiround_analysis(&target, &draft, k).map_err(core)?
        }
        (Method::Otm, Params::Drafts(k)) => {
            check_otm_size(target.len(), k)?;
            let (plan, analysis) = otm_analysis(&target, &draft, k).map_err(core)?;
            report.drafts = Some(k);
            report.upper_bound = Some(plan.upper_bound);
            analysis
        }
        (Method::Mentored, Params::Kl(kl_budget)) => {
            let (plan, analysis) = mentored_analysis(&target, &draft, kl_budget).map_err(core)?;
            report.kl_budget = Some(kl_budget);
            report.alpha = Some(plan.alpha);
            report.beta = Some(plan.beta);
            report.zero_target_accept = Some(plan.zero_target_accept);
            report.accepts_all = Some(plan.accepts_all);
            report.accept_probs = Some(mentored_accept_probs(&target, &draft, &plan));
            report.residual = Some(residual(plan.residual(), &target, &draft)?);
            analysis
        }
        (method, params) => {
            return Err(CliError::failure(format!(
                "internal: parameters {params:?} do not match --method {}",
                method.name()
            )));
        }
    };
    report.kl_target_output = kl_divergence(target.probs(), &analysis.output);
    report.tv_target_output = total_variation(target.probs(), &analysis.output);
    report.acceptance = analysis.acceptance;
    report.output = analysis.output;
    Ok(report)
}

/// A distribution from a flag's entries, strict or rescaled.
fn build(flag: &str, values: &[f64], normalize: bool) -> Result<Distribution, CliError> {
    let values = values.to_vec();
    let built = if normalize {
        Distribution::from_weights(values)
    } else {
        Distribution::from_probs(values)
    };
    built.map_err(|e| CliError::from_core(Some(flag), &e))
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

/// A residual rule as a probability vector.
fn residual(
    rule: Residual,
    target: &Distribution,
    draft: &Distribution,
) -> Result<Vec<f64>, CliError> {
    rule.distribution(target, draft)
        .map(Distribution::into_probs)
        .map_err(|e| CliError::from_core(None, &e))
}

/// Refuses an OTM problem above the core's limit before any work is done.
fn check_otm_size(vocab: usize, k: usize) -> Result<(), CliError> {
    let exponent = u32::try_from(k.saturating_add(1)).unwrap_or(u32::MAX);
    let variables = (vocab as u128).checked_pow(exponent);
    if variables.is_none_or(|v| v > OTM_MAX_VARIABLES) {
        let count = variables.map_or_else(|| "more than 2^128".to_owned(), |v| v.to_string());
        return Err(CliError::usage(format!(
            "OTM is too large: vocabulary {vocab} with k = {k} drafts needs {vocab}^{} = {count} \
             LP variables, the limit is {OTM_MAX_VARIABLES}; use a smaller vocabulary or fewer --drafts",
            k.saturating_add(1)
        )));
    }
    Ok(())
}
