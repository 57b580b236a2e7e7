//! `plan_report` with a bug planted (`specula plan --bug`, npm `plan({ bug })`): the
//! report's `output` is what the real buggy sampler draws, with the distributions
//! processed here independently, from the models' logits, as decoding processes them; its
//! `tv` is the output's distance from the processed target; the correct plan of the same
//! input is the target; schemes and bugs without a token-level plan are refused.

mod common;

use common::{assert_fits, buggy_speculative_counts, chi_square_p_value};
use specula_core::{
    Bug, BugPair, Distribution, PlanError, PlanInput, PlanMethod, PlanParams, PlanReport,
    SamplingConfig, plan_report, total_variation,
};

const DRAWS: usize = 100_000;
const ALPHA: f64 = 1e-4;

/// Logits of a target and a draft that disagree: the draft over-proposes tokens 0 and 3.
const TARGET_LOGITS: [f64; 6] = [0.3, 1.2, -0.4, 0.9, -1.5, 0.1];
const DRAFT_LOGITS: [f64; 6] = [1.0, 0.2, 0.1, 1.1, -0.2, -1.0];

fn softmax(logits: &[f64]) -> Vec<f64> {
    Distribution::from_logits(logits, &SamplingConfig::default())
        .unwrap()
        .into_probs()
}

fn sampling() -> SamplingConfig {
    SamplingConfig {
        temperature: 0.8,
        top_k: Some(4),
        top_p: None,
    }
}

fn report(bug: Option<Bug>, method: PlanMethod) -> Result<PlanReport, PlanError> {
    plan_report(&PlanInput {
        method,
        target: softmax(&TARGET_LOGITS),
        draft: softmax(&DRAFT_LOGITS),
        normalize: false,
        params: PlanParams::None,
        sampling: sampling(),
        bug,
    })
}

/// Tokens drawn by the real sampling path with `bug`, its distributions built from the
/// logits exactly as the decoding engine builds them.
fn sampled(bug: Bug, seed: u64) -> Vec<u64> {
    let s = sampling();
    let logits = |l: &[f64], c: &SamplingConfig| Distribution::from_logits(l, c).unwrap();
    let draft = logits(&DRAFT_LOGITS, &s);
    let tested_target = logits(&TARGET_LOGITS, &bug.tested_target_sampling(&s));
    let tested_draft = logits(&DRAFT_LOGITS, &bug.tested_draft_sampling(&s));
    let target = logits(&TARGET_LOGITS, &s);
    let pair = BugPair {
        target: &target,
        draft: &draft,
        tested_target: &tested_target,
        tested_draft: &tested_draft,
    };
    buggy_speculative_counts(bug, &pair, DRAWS, seed)
}

#[test]
fn every_token_level_bug_plans_the_output_its_sampler_draws() {
    let target = Distribution::from_logits(&TARGET_LOGITS, &sampling()).unwrap();
    for (seed, bug) in Bug::ALL
        .into_iter()
        .filter(|&b| b != Bug::CacheReset)
        .enumerate()
    {
        let report = report(Some(bug), PlanMethod::Speculative).unwrap();
        let counts = sampled(bug, seed as u64);
        assert_fits(bug.name(), &counts, &report.output, ALPHA);
        // The report is about the processed pair, and tv measures the mistake.
        let diff = total_variation(&report.target, target.probs());
        assert!(diff < 1e-12, "{bug}: processed target off by {diff}");
        let tv = report.tv.unwrap();
        assert_eq!(tv, report.tv_target_output);
        assert!((tv - total_variation(&report.output, target.probs())).abs() < 1e-12);
        assert!(tv > 0.01, "{bug}: tv {tv} shows no mistake");
        // Power at this sample size: the same counts reject the target itself.
        let p = chi_square_p_value(&counts, target.probs());
        assert!(p < 1e-6, "{bug}: the target fits too (p = {p:e})");
        let named = report.bug.as_ref().unwrap();
        assert_eq!((named.name, report.top_k), (bug, Some(4)));
    }
}

#[test]
fn without_a_bug_the_plan_is_the_target_and_has_no_bug_fields() {
    let report = report(None, PlanMethod::Speculative).unwrap();
    assert!(report.tv_target_output < 1e-12);
    assert_eq!((report.bug.clone(), report.tv), (None, None));
    let json = serde_json::to_value(&report).unwrap();
    assert!(
        json.get("bug").is_none() && json.get("tv").is_none(),
        "{json}"
    );
}

#[test]
fn plans_that_cannot_carry_a_bug_are_refused() {
    for method in PlanMethod::ALL
        .into_iter()
        .filter(|&m| m != PlanMethod::Speculative)
    {
        let err = report(Some(Bug::ResampleFromTarget), method).unwrap_err();
        assert!(matches!(err, PlanError::BugNotPlannable { .. }), "{err}");
    }
    let err = report(Some(Bug::CacheReset), PlanMethod::Speculative).unwrap_err();
    assert!(
        err.to_string()
            .contains("cache-reset acts only over a sequence"),
        "{err}"
    );
}
