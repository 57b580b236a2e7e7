//! `specula sample --compare`: the first (or second) generated token of many runs against its
//! exact distribution, worked out from the models at the prompt. For a lossless method it
//! is the target's (processed by temperature, top-k and top-p; prompt lookup included, as
//! it is lossless); for mentored decoding and typical acceptance the closed-form output of
//! their first tested position; for a token-level bug planted in
//! standard speculative sampling, the bug's closed form (as `specula plan --bug` reports
//! it). The counts are compared with it by total variation and a chi-square test, and
//! with the target's own distribution too, so a bug shows as a fit to its own closed form
//! and a misfit to the target.

use serde::Serialize;
use specula_engine::lab::{self, Exact, LabLogits};
use specula_engine::{DecodeConfig, ForwardRequest, LanguageModel, Role};

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
    /// The characters, in token order (empty for a BPE vocabulary: see `top`).
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
    /// Its p-value: small when the counts do not follow the exact distribution; null when
    /// no test is possible (`noTest` says why).
    pub p_value: Option<f64>,
    /// The same test against the target's distribution (for a lossless method the same
    /// as `pValue`; for a lossy rule or a bug, small once there are enough runs).
    pub target_p_value: Option<f64>,
    /// Why there is no p-value, when there is none.
    pub no_test: Option<String>,
    /// Runs that ended (at the model's end token) before the counted position: they are
    /// not in `counts`, and the exact distribution is conditioned on the same.
    pub unreached: u64,
    /// Total variation between the exact distribution and the target's.
    pub tv_exact_target: f64,
    /// The most likely tokens under the exact distribution, most likely first: what a
    /// large (BPE) vocabulary's `expected` and `counts` say at a glance.
    pub top: Vec<TopToken>,
    /// Every other token, pooled.
    pub rest: Pooled,
}

/// One of [`Comparison::top`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopToken {
    /// The token id.
    pub token: u32,
    /// Its text.
    pub text: String,
    /// Its exact probability.
    pub expected: f64,
    /// How often it was counted.
    pub count: u64,
}

/// The tokens outside [`Comparison::top`], together.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pooled {
    /// How many tokens.
    pub tokens: usize,
    /// Their exact probability.
    pub expected: f64,
    /// How often one of them was counted.
    pub count: u64,
}

/// How many tokens [`Comparison::top`] lists.
pub const TOP_TOKENS: usize = 12;

/// One model's next-token logits at the end of each of `sequences` (sharing their first
/// `committed` tokens), one row each.
fn last_rows(
    model: &mut impl LanguageModel,
    role: Role,
    committed: usize,
    sequences: Vec<Vec<u32>>,
) -> Result<Vec<Vec<f64>>, CliError> {
    let request = ForwardRequest::last_positions(role, committed, sequences);
    let response = model
        .forward(&request)
        .map_err(|e| CliError::model_failed(format!("the {role} model failed: {e}")))?;
    let vocab = model.vocab_size().max(1);
    Ok(response
        .logits
        .chunks(vocab)
        .map(|row| row.iter().map(|&x| f64::from(x)).collect())
        .collect())
}

/// The exact distribution of generated character `position` (1 or 2) under `config`
/// (the engine's [`lab::exact`]), from the models' logits after `prompt` (the context
/// as the window starts it) and, for the second position, after each continuation of
/// it, slid as the decoder slides it when `prompt` leaves room for one token only.
///
/// # Errors
/// A usage error naming the flag at fault for a method and bug without a closed form
/// there (a bug in SpecTr or multi-round decoding, a bug at temperature 0, a lossy method
/// or a token-level bug at the second position); failures when a model fails.
pub fn exact(
    pair: &mut Pair,
    config: &DecodeConfig,
    prompt: &[u32],
    position: usize,
) -> Result<Exact, CliError> {
    let last = |rows: Vec<Vec<f64>>| rows.into_iter().next().unwrap_or_default();
    let n = prompt.len();
    let mut logits = LabLogits {
        target: last(last_rows(
            &mut pair.target,
            Role::Target,
            n,
            vec![prompt.to_vec()],
        )?),
        draft: last(last_rows(
            &mut pair.draft,
            Role::Draft,
            n,
            vec![prompt.to_vec()],
        )?),
        end_token: pair.tokenizer.end_token(),
        ..LabLogits::default()
    };
    let window = pair.window();
    let slides = lab::slides_between(n, window);
    logits.slides = slides;
    let (after, alone) = lab::needs(config, position, slides);
    let refused = |e: specula_engine::options::OptionError| {
        if let Some(message) = lab::model_fault(&e) {
            // The models' doing, as `generate` reports such logits: no flag is at fault.
            CliError::engine(message)
        } else if e.field == "position" {
            CliError::option(&e, "--position")
        } else {
            option_error(&e)
        }
    };
    if after {
        logits.first_tokens = lab::first_tokens(config, &logits.target).map_err(refused)?;
        let contexts = lab::contexts_for_second(prompt, &logits.first_tokens, false, window);
        let shared = lab::shared_positions(n, window);
        logits.after_prompt = last_rows(&mut pair.target, Role::Target, shared, contexts)?;
    }
    if alone {
        let contexts = lab::contexts_for_second(prompt, &logits.first_tokens, true, window);
        logits.alone = last_rows(&mut pair.target, Role::Target, 0, contexts)?;
    }
    lab::exact(config, position, &logits).map_err(refused)
}

/// The comparison of `counts` with the exact distribution `exact`.
///
/// # Errors
/// A failure when `counts` does not have one entry per token of `exact`.
pub fn compare(
    samples: u64,
    unreached: u64,
    exact: Exact,
    alphabet: String,
    token_texts: &[String],
    counts: Vec<u64>,
) -> Result<Comparison, CliError> {
    let fit = lab::fit(&counts, &exact.expected, &exact.target)
        .map_err(|e| CliError::failure(format!("the counts: {e}")))?;
    let mut order: Vec<usize> = (0..exact.expected.len()).collect();
    order.sort_by(|&a, &b| exact.expected[b].total_cmp(&exact.expected[a]));
    let (shown, others) = order.split_at(TOP_TOKENS.min(order.len()));
    let top = shown
        .iter()
        .map(|&t| TopToken {
            token: t as u32,
            text: token_texts.get(t).cloned().unwrap_or_default(),
            expected: exact.expected[t],
            count: counts[t],
        })
        .collect();
    let rest = Pooled {
        tokens: others.len(),
        expected: others.iter().map(|&t| exact.expected[t]).sum(),
        count: others.iter().map(|&t| counts[t]).sum(),
    };
    Ok(Comparison {
        top,
        rest,
        samples,
        exact: exact.kind,
        alphabet,
        tv: fit.tv,
        chi_square: fit.chi_square,
        degrees_of_freedom: fit.degrees_of_freedom,
        p_value: fit.p_value,
        target_p_value: fit.target_p_value,
        no_test: fit.no_test,
        unreached,
        tv_exact_target: exact.tv_from_target,
        expected: exact.expected,
        counts,
    })
}
