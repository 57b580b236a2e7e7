//! `specula plan`: runs one scheme's closed-form analysis. The report itself is built by
//! [`specula_core::report`], shared with the browser package's `plan()`; this module maps
//! the parsed flags in and the errors out, worded for the command line.

pub use specula_core::PlanReport;
use specula_core::{OTM_MAX_VARIABLES, PlanError, PlanInput, PlanSide};

use crate::args::PlanRequest;
use crate::error::CliError;

/// Builds the two distributions and runs the analysis.
///
/// # Errors
/// Invalid distributions or parameters (usage errors), or a failing LP solver.
pub fn run(request: &PlanRequest) -> Result<PlanReport, CliError> {
    let input = PlanInput {
        method: request.method.core(),
        target: request.target.clone(),
        draft: request.draft.clone(),
        normalize: request.normalize,
        params: request.params,
        bug: request.bug,
    };
    specula_core::plan_report(&input).map_err(cli_error)
}

fn cli_error(error: PlanError) -> CliError {
    match error {
        PlanError::Distribution { side, source } => {
            let flag = match side {
                PlanSide::Target => "--target",
                PlanSide::Draft => "--draft",
            };
            CliError::from_core(Some(flag), &source)
        }
        PlanError::Analysis(source) => CliError::from_core(None, &source),
        PlanError::OtmTooLarge {
            vocab,
            k,
            variables,
        } => {
            let count = variables.map_or_else(|| "more than 2^128".to_owned(), |v| v.to_string());
            CliError::usage(format!(
                "OTM is too large: vocabulary {vocab} with k = {k} drafts needs {vocab}^{} = {count} \
                 LP variables, the limit is {OTM_MAX_VARIABLES}; use a smaller vocabulary or fewer --drafts",
                k.saturating_add(1)
            ))
        }
        PlanError::MultiroundTooLarge { vocab, k } => CliError::usage(format!(
            "multi-round is too large: --drafts {k} over {vocab} tokens is {} draft-token \
             updates, the limit is {}; use fewer --drafts",
            (k as u128).saturating_mul(vocab as u128),
            specula_core::report::MULTIROUND_MAX_WORK
        )),
        PlanError::BugNotPlannable { .. } => CliError::usage(error.to_string()),
        PlanError::ParamsMismatch { method, params } => CliError::failure(format!(
            "internal: parameters {params:?} do not match --method {}",
            method.name()
        )),
    }
}
