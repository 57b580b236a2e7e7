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
use specula_engine::lab::{self, Exact, Fit, LabLogits};
use specula_engine::{DecodeConfig, ForwardRequest, LanguageModel, Query, Role};

use crate::decode_args::option_error;
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

/// The exact distribution of the first character under `config` (the engine's
/// [`lab::exact`]), from both models' logits after `prompt`.
///
/// # Errors
/// A usage error naming the flag at fault for a method and bug without a closed form at
/// one position (a bug in SpecTr or multi-round decoding, a bug at temperature 0);
/// failures when a model fails.
pub fn exact_first(
    pair: &mut Pair,
    config: &DecodeConfig,
    prompt: &[u32],
) -> Result<Exact, CliError> {
    let logits = LabLogits {
        target: logits(&mut pair.target, Role::Target, prompt)?,
        draft: logits(&mut pair.draft, Role::Draft, prompt)?,
        ..LabLogits::default()
    };
    lab::exact(config, 1, &logits).map_err(|e| option_error(&e, "--length"))
}

/// The comparison of `counts` with the exact distribution `exact`.
#[must_use]
pub fn compare(samples: u64, exact: Exact, alphabet: String, counts: Vec<u64>) -> Comparison {
    // `counts` has one entry per token, as `exact` does.
    let fit = lab::fit(&counts, &exact.expected, &exact.target).unwrap_or(Fit {
        samples,
        tv: f64::NAN,
        chi_square: f64::NAN,
        degrees_of_freedom: 0,
        p_value: f64::NAN,
        target_p_value: f64::NAN,
    });
    Comparison {
        samples,
        exact: exact.kind,
        alphabet,
        tv: fit.tv,
        chi_square: fit.chi_square,
        degrees_of_freedom: fit.degrees_of_freedom,
        p_value: fit.p_value,
        target_p_value: fit.target_p_value,
        tv_exact_target: exact.tv_from_target,
        expected: exact.expected,
        counts,
    }
}
