//! `specula sample --compare`: the first generated character of many runs against its
//! exact distribution, worked out from the models at the prompt. For a lossless method it
//! is the target's (processed by temperature, top-k and top-p; prompt lookup included, as
//! it is lossless); for mentored decoding and typical acceptance the closed-form output of
//! their first tested position; for a token-level bug planted in
//! standard speculative sampling, the bug's closed form (as `specula plan --bug` reports
//! it). The counts are compared with it by total variation and a chi-square test, and
//! with the target's own distribution too, so a bug shows as a fit to its own closed form
//! and a misfit to the target.

use serde::Serialize;
use specula_core::{
    Bug, Distribution, Mentored, PlanBug, PlanInput, PlanMethod, PlanParams, SamplingConfig,
    Typical, total_variation,
};
use specula_engine::{DecodeConfig, ForwardRequest, LanguageModel, Method, Query, Role};
use statrs::distribution::{ChiSquared, ContinuousCDF};

use crate::error::CliError;
use crate::models::Pair;

/// What the counts were compared with.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The runs.
    pub samples: u64,
    /// Where the exact distribution comes from: `target`, `mentored`, `typical` or the
    /// bug's name.
    pub exact: String,
    /// The characters, in token order.
    pub alphabet: String,
    /// The exact distribution of the first generated character.
    pub expected: Vec<f64>,
    /// How often each character came first.
    pub counts: Vec<u64>,
    /// Total variation between the empirical and the exact distribution.
    pub tv: f64,
    /// Pearson's chi-square of the counts against the exact distribution.
    pub chi_square: f64,
    /// Its degrees of freedom (bins with expected counts below 5 pooled into one).
    pub degrees_of_freedom: usize,
    /// Its p-value: small when the counts do not follow the exact distribution.
    pub p_value: f64,
    /// The same test against the target's distribution (for a lossless method the same
    /// as `pValue`; for a lossy rule or a bug, small once there are enough runs).
    pub target_p_value: f64,
    /// Total variation between the exact distribution and the target's.
    pub tv_exact_target: f64,
}

/// One model's next-token logits after `prompt`.
fn logits(
    model: &mut impl LanguageModel,
    role: Role,
    prompt: &[u32],
) -> Result<Vec<f64>, CliError> {
    let request = ForwardRequest {
        role,
        committed_len: prompt.len(),
        sequences: vec![prompt.to_vec()],
        queries: vec![Query {
            sequence: 0,
            prefix_len: prompt.len(),
        }],
    };
    let response = model
        .forward(&request)
        .map_err(|e| CliError::failure(format!("the {role} model failed: {e}")))?;
    Ok(response.logits.iter().map(|&x| f64::from(x)).collect())
}

fn distribution(logits: &[f64], sampling: &SamplingConfig) -> Result<Distribution, CliError> {
    Distribution::from_logits(logits, sampling)
        .map_err(|e| CliError::failure(format!("the models' logits: {e}")))
}

/// The exact distribution of the first character under `config`, and what it is.
///
/// # Errors
/// A usage error for a method and bug without a closed form at one position (a bug in
/// SpecTr or multi-round decoding); failures when a model fails.
pub fn exact_first(
    pair: &mut Pair,
    config: &DecodeConfig,
    prompt: &[u32],
) -> Result<(Vec<f64>, Distribution, String), CliError> {
    let sampling = &config.sampling;
    let target_logits = logits(&mut pair.target, Role::Target, prompt)?;
    let target = distribution(&target_logits, sampling)?;
    let mut draft =
        || -> Result<Vec<f64>, CliError> { logits(&mut pair.draft, Role::Draft, prompt) };
    let greedy = sampling.temperature == 0.0;
    // A reset cache acts only from the second position on.
    let bug = config.bug.filter(|&bug| bug != Bug::CacheReset);
    match (&config.method, bug) {
        (_, Some(bug)) if greedy => Err(CliError::usage(format!(
            "--compare knows the closed form of --bug {} only with a temperature above 0",
            bug.name()
        ))),
        (Method::Speculative { .. }, Some(bug)) => {
            let raw = SamplingConfig::default();
            let input = PlanInput {
                method: PlanMethod::Speculative,
                target: distribution(&target_logits, &raw)?.into_probs(),
                draft: distribution(&draft()?, &raw)?.into_probs(),
                normalize: true,
                params: PlanParams::None,
                bug: Some(PlanBug {
                    bug,
                    sampling: *sampling,
                }),
            };
            let report = specula_core::plan_report(&input)
                .map_err(|e| CliError::failure(format!("the bug's closed form: {e}")))?;
            Ok((report.output, target, bug.name().to_owned()))
        }
        (_, Some(bug)) => Err(CliError::usage(format!(
            "--compare knows the closed form of --bug {} only with --method speculative",
            bug.name()
        ))),
        (Method::Mentored { kl_budget, .. }, None) if !greedy => {
            let draft = distribution(&draft()?, sampling)?;
            let output = Mentored::new(&target, &draft, *kl_budget)
                .map_err(|e| CliError::failure(format!("mentored decoding's plan: {e}")))?
                .analysis()
                .output;
            Ok((output, target, "mentored".to_owned()))
        }
        (Method::Typical { epsilon, delta, .. }, None) if !greedy => {
            let draft = distribution(&draft()?, sampling)?;
            let output = Typical::new(&target, &draft, *epsilon, *delta)
                .map_err(|e| CliError::failure(format!("typical acceptance's plan: {e}")))?
                .analysis()
                .output;
            Ok((output, target, "typical".to_owned()))
        }
        _ => Ok((target.probs().to_vec(), target, "target".to_owned())),
    }
}

/// Pearson's chi-square of `counts` against `expected`, pooling bins with expected counts
/// below 5: (statistic, degrees of freedom, p-value). A count where the expected
/// probability is 0 gives p = 0.
#[must_use]
pub fn chi_square(counts: &[u64], expected: &[f64]) -> (f64, usize, f64) {
    let n = counts.iter().sum::<u64>() as f64;
    let (mut stat, mut bins) = (0.0, 0_usize);
    let (mut pooled_obs, mut pooled_exp) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(expected) {
        let e = p * n;
        if p <= 0.0 {
            if c > 0 {
                return (f64::INFINITY, bins, 0.0);
            }
        } else if e < 5.0 {
            pooled_obs += c as f64;
            pooled_exp += e;
        } else {
            stat += (c as f64 - e).powi(2) / e;
            bins += 1;
        }
    }
    if pooled_exp > 0.0 {
        stat += (pooled_obs - pooled_exp).powi(2) / pooled_exp;
        bins += 1;
    }
    if bins < 2 {
        return (stat, 0, 1.0);
    }
    let df = bins - 1;
    let p = ChiSquared::new(df as f64).map_or(1.0, |d| d.sf(stat));
    (stat, df, p)
}

/// The comparison of `counts` with `expected` (and with the target's `target`).
#[must_use]
pub fn compare(
    samples: u64,
    exact: String,
    alphabet: String,
    expected: Vec<f64>,
    counts: Vec<u64>,
    target: &[f64],
) -> Comparison {
    let n = samples.max(1) as f64;
    let empirical: Vec<f64> = counts.iter().map(|&c| c as f64 / n).collect();
    let (chi, df, p) = chi_square(&counts, &expected);
    let (_, _, target_p) = chi_square(&counts, target);
    Comparison {
        samples,
        exact,
        alphabet,
        tv: total_variation(&empirical, &expected),
        chi_square: chi,
        degrees_of_freedom: df,
        p_value: p,
        target_p_value: target_p,
        tv_exact_target: total_variation(&expected, target),
        expected,
        counts,
    }
}

#[cfg(test)]
mod tests {
    use super::chi_square;

    #[test]
    fn chi_square_tells_a_fit_from_a_misfit() {
        let expected = [0.5, 0.3, 0.2];
        let (_, df, p) = chi_square(&[500, 300, 200], &expected);
        assert_eq!(df, 2);
        assert!(p > 0.99, "{p}");
        let (_, _, p) = chi_square(&[700, 200, 100], &expected);
        assert!(p < 1e-10, "{p}");
        assert_eq!(chi_square(&[1, 0], &[0.0, 1.0]).2, 0.0);
    }
}
