//! A plan with a deliberate bug planted ([`PlanInput::bug`]): the exact output
//! distribution of standard speculative sampling with the mistake ([`bug_analysis`]) and
//! its total variation from the target it should follow. The given distributions are the
//! models' raw softmax; the sampling settings process them as decoding does (logits
//! `ln p`), and the bug decides which processed or unprocessed form each part of the
//! sampler uses (docs/design.md, "The deliberate bugs").

use serde::Serialize;

use super::{PlanError, PlanMethod, PlanReport, processed};
use crate::{Bug, BugPair, Distribution, SamplingConfig, Speculative, TokenAnalysis, bug_analysis};

/// What a bugged plan adds to the report (the sampling settings are the report's own).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BugReport {
    /// The bug's name (kebab case).
    pub name: Bug,
    /// What the mistake is, in one line.
    pub description: &'static str,
}

/// Fills `report` (whose `target` and `draft` are the raw inputs) for `method` with
/// `bug` under `sampling`: the processed target and draft, the bug's residual. Returns the bug's exact
/// analysis and the processed target, which the output should have followed.
///
/// # Errors
/// [`PlanError::BugNotPlannable`] for a method other than standard speculative sampling
/// or a sequence-level bug, and [`PlanError::Analysis`] for bad sampling settings.
pub(super) fn plan_with_bug(
    method: PlanMethod,
    bug: Bug,
    sampling: SamplingConfig,
    raw_target: &Distribution,
    raw_draft: &Distribution,
    report: &mut PlanReport,
) -> Result<(TokenAnalysis, Distribution), PlanError> {
    if method != PlanMethod::Speculative || bug == Bug::CacheReset {
        return Err(PlanError::BugNotPlannable { bug, method });
    }
    let target = processed(raw_target, &sampling)?;
    let draft = processed(raw_draft, &sampling)?;
    let tested_target = processed(raw_target, &bug.tested_target_sampling(&sampling))?;
    let tested_draft = processed(raw_draft, &bug.tested_draft_sampling(&sampling))?;
    let pair = BugPair {
        target: &target,
        draft: &draft,
        tested_target: &tested_target,
        tested_draft: &tested_draft,
    };
    let analysis = bug_analysis(bug, &pair).map_err(PlanError::Analysis)?;
    let residual = match bug {
        Bug::ResampleFromTarget => target.clone(),
        _ => Speculative::new(&tested_target, &tested_draft)
            .map_err(PlanError::Analysis)?
            .residual_distribution(),
    };
    report.target = target.probs().to_vec();
    report.draft = draft.probs().to_vec();
    report.residual = Some(residual.into_probs());
    report.bug = Some(BugReport {
        name: bug,
        description: bug.description(),
    });
    Ok((analysis, target))
}
