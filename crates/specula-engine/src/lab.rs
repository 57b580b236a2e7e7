//! The lab's arithmetic: the exact distribution of the first or second generated token of
//! a decoding configuration, worked out from the models' logits at the prompt, and the
//! test of many runs' counts against it (total variation and Pearson's chi-square).
//!
//! Which distribution is exact depends on the method (docs/lab.md has each closed
//! form):
//! - a lossless method: the target's, processed by temperature, top-k and top-p; at the
//!   second position its mixture over the first, `Σ_x target(x)·target(· | prompt, x)`;
//! - mentored decoding and typical acceptance: their closed-form output at the first
//!   tested position;
//! - a token-level bug planted in standard speculative sampling: the bug's closed form
//!   (as `plan` reports it);
//! - the `cache-reset` bug, at the second position: after a rejection at the first
//!   position the caches restart from the resampled token alone, so the second token
//!   follows `target(· | x)` without the prompt with probability
//!   `target(x) − min(target, draft)(x)`, and `target(· | prompt, x)` otherwise.
//!
//! Every run generates [`RUN_TOKENS`] = 2 tokens: the engine drafts no more tokens than it
//! may still emit, so a run of one token would draft nothing and sample the target
//! directly, whatever the method; with two, it drafts exactly one token at the first
//! position, which is what the closed forms above describe.
//!
//! The context window (window.rs) is followed as the decoder follows it: a context that
//! leaves room for one token only makes each run emit its first token from the target
//! directly (nothing can be drafted), slide the window to its last half, and emit the
//! second, again from the target, after the slid context. Then both positions follow the
//! target whatever the method or bug, the second mixed over the slid contexts
//! ([`LabLogits::slides`]).

use serde::Serialize;
use specula_core::{
    Bug, Distribution, Mentored, PlanInput, PlanMethod, PlanParams, SamplingConfig, Typical,
    plan_report, total_variation,
};

use crate::config::{DecodeConfig, Method};
use crate::options::limits::MAX_SEED;
use crate::options::{DecodeOptions, OptionError, Resolved};

/// The positions the lab has closed forms for: the first and the second generated token.
pub const MAX_LAB_POSITION: usize = 2;

/// The tokens each of the lab's runs generates (see the module's documentation).
pub const RUN_TOKENS: usize = 2;

/// The most logits the second position's closed form may hold: one row of the vocabulary
/// per first token the target can emit. The bundled pair (65 tokens) always fits; a
/// 49,152-token BPE model fits 85 first tokens, so its lab at position 2 needs a top-k.
pub const MAX_SECOND_POSITION_LOGITS: usize = 1 << 22;

/// The exact distribution of one generated position.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Exact {
    /// The generated position, 1 or 2.
    pub position: usize,
    /// Where the distribution comes from: `target`, `mentored`, `typical` or a bug's name.
    pub kind: String,
    /// The exact distribution, one entry per token.
    pub expected: Vec<f64>,
    /// The target's own distribution at that position (processed; at the second position
    /// its mixture over the first), which a lossless method reproduces.
    pub target: Vec<f64>,
    /// Total variation between `expected` and `target`.
    pub tv_from_target: f64,
}

/// The logits the closed forms need: both models at the prompt, and for the second
/// position the target after each first token it can emit (with the prompt, and for
/// `cache-reset` without it). [`first_tokens`] lists those tokens and
/// [`contexts_for_second`] the sequences of the last two.
#[derive(Debug, Clone, Default)]
pub struct LabLogits {
    /// The target's logits after the prompt.
    pub target: Vec<f64>,
    /// The draft's logits after the prompt.
    pub draft: Vec<f64>,
    /// Whether the context leaves room for one token only, so that the runs draft nothing
    /// and the window slides between the two positions (see the module's documentation;
    /// [`slides_between`]): then the rows below follow the slid contexts.
    pub slides: bool,
    /// The token after which generation stops (a GGUF model's end of turn): a run that
    /// emits it first never reaches the second position, so that position's exact
    /// distribution is conditioned on a first token other than it.
    pub end_token: Option<u32>,
    /// The first tokens the rows below follow, in order (second position only): the
    /// support of the target's processed distribution after the prompt.
    pub first_tokens: Vec<u32>,
    /// Row `i`: the target's logits after the prompt followed by `first_tokens[i]`
    /// (second position only).
    pub after_prompt: Vec<Vec<f64>>,
    /// Row `i`: the target's logits after `first_tokens[i]` alone (second position under
    /// `cache-reset` only).
    pub alone: Vec<Vec<f64>>,
}

/// Whether a run from a context of `context_len` tokens (the prompt as the window starts
/// it, [`crate::window_start`]) in a window of `window` positions has room for one token
/// only: it drafts nothing, and the window slides before the second token.
#[must_use]
pub fn slides_between(context_len: usize, window: usize) -> bool {
    context_len + 1 >= window.max(2)
}

/// What [`exact`] needs beyond the prompt's logits for `position` under `config`:
/// whether rows after the prompt, and rows after each token alone, are used (`slides`:
/// [`slides_between`]).
#[must_use]
pub fn needs(config: &DecodeConfig, position: usize, slides: bool) -> (bool, bool) {
    let second = position == 2;
    (
        second,
        second && !slides && config.bug() == Some(Bug::CacheReset),
    )
}

/// The first tokens whose rows the second position needs: those the target's processed
/// distribution after the prompt (`target_logits`) can emit. Every other token has
/// weight 0 in both mixtures of [`exact`].
///
/// # Errors
/// `topK` when their rows would hold more than [`MAX_SECOND_POSITION_LOGITS`] logits (a
/// large vocabulary without a top-k), `model` for logits that are not finite.
pub fn first_tokens(config: &DecodeConfig, target_logits: &[f64]) -> Result<Vec<u32>, OptionError> {
    let target = dist(target_logits, &config.sampling(), "the target's logits")?;
    let support: Vec<u32> = (0..target.len())
        .filter(|&x| target.prob(x) > 0.0)
        .map(|x| x as u32)
        .collect();
    let most = MAX_SECOND_POSITION_LOGITS / target.len().max(1);
    if support.len() > most {
        return Err(refuse(
            "topK",
            format!(
                "at most {most} tokens the target can emit first, for the closed form of \
                 position 2 over a vocabulary of {}",
                target.len()
            ),
            support.len().to_string(),
        ));
    }
    Ok(support)
}

/// The sequences whose target logits fill [`LabLogits::after_prompt`] (`prompt + [x]`,
/// slid as the decoder slides it when `prompt` fills `window` but one position) or
/// [`LabLogits::alone`] (`[x]`), one per token `x` of `first` (see [`first_tokens`]).
/// `prompt` is the context as the window starts it ([`crate::window_start`]).
#[must_use]
pub fn contexts_for_second(
    prompt: &[u32],
    first: &[u32],
    alone: bool,
    window: usize,
) -> Vec<Vec<u32>> {
    let slides = slides_between(prompt.len(), window);
    first
        .iter()
        .map(|&x| {
            if alone {
                return vec![x];
            }
            let mut context: Vec<u32> = prompt.iter().copied().chain([x]).collect();
            if slides {
                crate::slide_context(&mut context, window);
            }
            context
        })
        .collect()
}

/// The positions every sequence of [`contexts_for_second`] shares with the prompt, for
/// a request's `committed_len`: the prompt, or none once the window slid.
#[must_use]
pub fn shared_positions(prompt_len: usize, window: usize) -> usize {
    if slides_between(prompt_len, window) {
        0
    } else {
        prompt_len
    }
}

pub use crate::options::check_position;
use crate::options::{SampleSettings, position_error};

/// One call of the lab: the decoding options of every run, the position counted and the
/// number of runs, run `i` with seed `first_seed + i`.
#[derive(Debug, Clone, PartialEq)]
pub struct LabRequest {
    /// The options of every run, with [`RUN_TOKENS`] tokens each.
    pub resolved: Resolved,
    /// The generated position counted, 1 or 2.
    pub position: usize,
    /// How many runs.
    pub runs: u64,
    /// The first run's seed (the options' `seed`).
    pub first_seed: u64,
}

/// Checks the lab's options: the decoding options as for a generation, less `maxTokens`
/// and `stop` (every run generates [`RUN_TOKENS`] tokens), the position (default 1) and
/// the runs (default [`DEFAULT_LAB_RUNS`](crate::options::limits::DEFAULT_LAB_RUNS), at
/// most [`MAX_LAB_RUNS`](crate::options::limits::MAX_LAB_RUNS), their seeds within
/// [`MAX_SEED`]).
///
/// # Errors
/// [`OptionError`] naming the option at fault.
pub fn lab_request(
    mut options: DecodeOptions,
    position: Option<f64>,
    runs: Option<f64>,
) -> Result<LabRequest, OptionError> {
    for (field, given) in [
        ("maxTokens", options.max_tokens.is_some()),
        ("stop", options.stop.is_some()),
    ] {
        if given {
            return Err(refuse(
                field,
                format!("left out: every run of the lab generates {RUN_TOKENS} tokens"),
                "a value",
            ));
        }
    }
    let checked = SampleSettings {
        runs,
        position,
        ..SampleSettings::default()
    }
    .resolve()?;
    let (position, runs) = (checked.position, checked.runs);
    options.max_tokens = Some(RUN_TOKENS as f64);
    let resolved = options.resolve()?;
    let first_seed = resolved.config.seed();
    if first_seed + (runs - 1) > MAX_SEED {
        return Err(refuse(
            "runs",
            format!(
                "at most {} runs from seed {first_seed}",
                MAX_SEED - first_seed + 1
            ),
            runs.to_string(),
        ));
    }
    Ok(LabRequest {
        resolved,
        position,
        runs,
        first_seed,
    })
}

fn refuse(field: &str, expected: impl Into<String>, got: impl Into<String>) -> OptionError {
    OptionError::invalid(field, expected, got)
}

/// The field of the refusals of [`first_tokens`] and [`exact`] that are the models'
/// doing, not an option's: logits that are not finite, a missing row. No surface has an
/// option of this name; each reports these as a failure of the models
/// ([`model_fault`]), as it reports such logits while decoding.
pub const MODEL_FAULT: &str = "model";

/// The message of a refusal about the models' logits ([`MODEL_FAULT`]), naming no
/// option; `None` for a refusal of an option.
#[must_use]
pub fn model_fault(error: &OptionError) -> Option<String> {
    (error.field == MODEL_FAULT).then(|| {
        format!(
            "the models' logits cannot give the exact distribution: {} (it needs {})",
            error.got, error.expected
        )
    })
}

fn dist(
    logits: &[f64],
    sampling: &SamplingConfig,
    what: &str,
) -> Result<Distribution, OptionError> {
    Distribution::from_logits(logits, sampling)
        .map_err(|e| refuse(MODEL_FAULT, "finite logits", format!("{what}: {e}")))
}

/// The exact distribution of generated `position` (1 or 2) under `config`.
///
/// # Errors
/// [`OptionError`] naming `bug`, `method` or `position` for a combination without a
/// closed form here (a bug outside standard speculative sampling, a token-level bug at
/// temperature 0, a lossy method or a token-level bug at the second position), or
/// `model` for logits that are not finite or a missing row.
pub fn exact(
    config: &DecodeConfig,
    position: usize,
    logits: &LabLogits,
) -> Result<Exact, OptionError> {
    let sampling = &config.sampling();
    let target = dist(&logits.target, sampling, "the target's logits")?;
    let (kind, expected, target_probs) = match position {
        // No draft fits before the slide: both positions are the target's own draws.
        1 if logits.slides => (
            "target".to_owned(),
            target.probs().to_vec(),
            target.probs().to_vec(),
        ),
        2 if logits.slides => {
            let mixed = second_mixture(&target, logits, sampling)?;
            ("target".to_owned(), mixed.clone(), mixed)
        }
        1 => {
            let (kind, expected) = exact_first(config, &target, logits)?;
            (kind, expected, target.probs().to_vec())
        }
        2 => exact_second(config, &target, logits)?,
        other => return Err(position_error(other.to_string())),
    };
    Ok(Exact {
        position,
        tv_from_target: total_variation(&expected, &target_probs),
        kind,
        expected,
        target: target_probs,
    })
}

fn exact_first(
    config: &DecodeConfig,
    target: &Distribution,
    logits: &LabLogits,
) -> Result<(String, Vec<f64>), OptionError> {
    let sampling = &config.sampling();
    let greedy = sampling.temperature == 0.0;
    // A reset cache acts only from the second position on.
    let bug = config.bug().filter(|&bug| bug != Bug::CacheReset);
    match (config.method(), bug) {
        (_, Some(bug)) if greedy => Err(refuse(
            "temperature",
            format!("above 0 for the closed form of bug {:?}", bug.name()),
            "0",
        )),
        (Method::Speculative { .. }, Some(bug)) => {
            let raw = SamplingConfig::default();
            let input = PlanInput {
                method: PlanMethod::Speculative,
                target: dist(&logits.target, &raw, "the target's logits")?.into_probs(),
                draft: dist(&logits.draft, &raw, "the draft's logits")?.into_probs(),
                normalize: true,
                params: PlanParams::None,
                sampling: *sampling,
                bug: Some(bug),
            };
            let report = plan_report(&input)
                .map_err(|e| refuse("bug", "a bug with a closed form", e.to_string()))?;
            Ok((bug.name().to_owned(), report.output))
        }
        (method, Some(bug)) => Err(refuse(
            "method",
            format!(
                "\"speculative\" for the closed form of bug {:?}",
                bug.name()
            ),
            format!("{:?}", method.name()),
        )),
        (Method::Mentored { kl_budget, .. }, None) if !greedy => {
            let draft = dist(&logits.draft, sampling, "the draft's logits")?;
            let output = Mentored::new(target, &draft, *kl_budget)
                .map_err(|e| refuse("kl", "a budget mentored decoding accepts", e.to_string()))?
                .analysis()
                .output;
            Ok(("mentored".to_owned(), output))
        }
        (Method::Typical { epsilon, delta, .. }, None) if !greedy => {
            let draft = dist(&logits.draft, sampling, "the draft's logits")?;
            let output = Typical::new(target, &draft, *epsilon, *delta)
                .map_err(|e| {
                    refuse(
                        "epsilon",
                        "a threshold typical acceptance accepts",
                        e.to_string(),
                    )
                })?
                .analysis()
                .output;
            Ok(("typical".to_owned(), output))
        }
        _ => Ok(("target".to_owned(), target.probs().to_vec())),
    }
}

/// The second position: the target's mixture over the first token, or the cache-reset
/// bug's mixture of the two contexts.
fn exact_second(
    config: &DecodeConfig,
    target: &Distribution,
    logits: &LabLogits,
) -> Result<(String, Vec<f64>, Vec<f64>), OptionError> {
    let sampling = &config.sampling();
    let lossy = matches!(
        config.method(),
        Method::Mentored { .. } | Method::Typical { .. }
    );
    match config.bug() {
        Some(Bug::CacheReset) if !matches!(config.method(), Method::Speculative { .. }) => {
            return Err(refuse(
                "method",
                "\"speculative\" for the closed form of bug \"cache-reset\" at position 2",
                format!("{:?}", config.method().name()),
            ));
        }
        Some(bug) if bug != Bug::CacheReset => {
            return Err(refuse(
                "position",
                format!("1 for the closed form of bug {:?}", bug.name()),
                "2",
            ));
        }
        None if lossy => {
            return Err(refuse(
                "position",
                format!("1 for the closed form of {:?}", config.method().name()),
                "2",
            ));
        }
        _ => {}
    }
    let greedy = sampling.temperature == 0.0;
    if config.bug() == Some(Bug::CacheReset) && greedy {
        return Err(refuse(
            "temperature",
            "above 0 for the closed form of bug \"cache-reset\"",
            "0",
        ));
    }
    let target_mixture = second_mixture(target, logits, sampling)?;
    if config.bug() != Some(Bug::CacheReset) {
        return Ok(("target".to_owned(), target_mixture.clone(), target_mixture));
    }
    let first = &logits.first_tokens;
    let after = checked_rows(
        logits,
        &logits.after_prompt,
        sampling,
        "after the prompt and each token",
    )?;
    let draft = dist(&logits.draft, sampling, "the draft's logits")?;
    let alone = checked_rows(logits, &logits.alone, sampling, "after each token alone")?;
    let kept = |x: usize| target.prob(x).min(draft.prob(x));
    // Position 1 follows the target under cache-reset, so the end token's share is the
    // target's there too.
    let reach = reach_second(target, logits)?;
    let accepted = mixture(&after, first, |x| reach.weight(x, kept(x)));
    let reset = mixture(&alone, first, |x| {
        reach.weight(x, (target.prob(x) - kept(x)).max(0.0))
    });
    let buggy = accepted.iter().zip(&reset).map(|(a, r)| a + r).collect();
    Ok((Bug::CacheReset.name().to_owned(), buggy, target_mixture))
}

/// `rows` as distributions, one per first token, after checking that every token the
/// target can emit first has one.
fn checked_rows(
    logits: &LabLogits,
    rows: &[Vec<f64>],
    sampling: &SamplingConfig,
    what: &str,
) -> Result<Vec<Distribution>, OptionError> {
    let first = &logits.first_tokens;
    let target = dist(&logits.target, sampling, "the target's logits")?;
    let listed = |x: usize| first.contains(&(x as u32));
    if let Some(x) = (0..target.len()).find(|&x| target.prob(x) > 0.0 && !listed(x)) {
        return Err(refuse(
            MODEL_FAULT,
            "a row for every token the target can emit first",
            format!("none for token {x}"),
        ));
    }
    if rows.len() != first.len() {
        return Err(refuse(
            MODEL_FAULT,
            format!("{} rows of logits {what}", first.len()),
            rows.len().to_string(),
        ));
    }
    rows.iter().map(|row| dist(row, sampling, what)).collect()
}

/// The target's second token: its next rows mixed by its first token.
fn second_mixture(
    target: &Distribution,
    logits: &LabLogits,
    sampling: &SamplingConfig,
) -> Result<Vec<f64>, OptionError> {
    let after = checked_rows(
        logits,
        &logits.after_prompt,
        sampling,
        "after the prompt and each token",
    )?;
    let reach = reach_second(target, logits)?;
    Ok(mixture(&after, &logits.first_tokens, |x| {
        reach.weight(x, target.prob(x))
    }))
}

/// How the runs that reach the second position are weighed: a first token that ends
/// generation ([`LabLogits::end_token`]) leaves the run at one token, so the rest are
/// renormalised by the chance of not emitting it.
struct Reach {
    end: Option<usize>,
    scale: f64,
}

impl Reach {
    fn weight(&self, x: usize, weight: f64) -> f64 {
        if Some(x) == self.end {
            0.0
        } else {
            weight * self.scale
        }
    }
}

/// [`Reach`] for `logits`; refused when every run ends after its first token.
fn reach_second(target: &Distribution, logits: &LabLogits) -> Result<Reach, OptionError> {
    let end = logits
        .end_token
        .map(|e| e as usize)
        .filter(|&e| e < target.len());
    let stop = end.map_or(0.0, |e| target.prob(e));
    if stop >= 1.0 {
        return Err(refuse(
            "position",
            "1: every run ends after its first token (the model's end token), so none reaches position 2",
            "2",
        ));
    }
    Ok(Reach {
        end,
        scale: 1.0 / (1.0 - stop),
    })
}

/// `Σᵢ weight(first[i])·next[i]`: the distributions `next` (one per first token) mixed
/// by `weight`.
fn mixture(next: &[Distribution], first: &[u32], weight: impl Fn(usize) -> f64) -> Vec<f64> {
    let mut mixed = vec![0.0; next.first().map_or(0, Distribution::len)];
    for (&x, row) in first.iter().zip(next) {
        let w = weight(x as usize);
        for (m, &p) in mixed.iter_mut().zip(row.probs()) {
            *m += w * p;
        }
    }
    mixed
}

#[path = "lab_fit.rs"]
mod fit;
pub use fit::{Fit, chi_square, fit};

#[cfg(test)]
#[path = "lab_tests.rs"]
mod tests;
