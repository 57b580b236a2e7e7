//! Runs one generation over the pair, reporting emitted tokens as they arrive, with the
//! context window sliding when it fills.
//!
//! The sliding policy, the same for both models and every method (so every method
//! samples exactly what autoregressive decoding under it samples): the models read at
//! most `W = min(max_seq)` positions. Generation runs as an ordinary decode of the
//! context while `context + new tokens <= W`; when the context reaches `W`, both models
//! forget their caches and continue from the last `W / 2` tokens (re-encoding them, as
//! nanoGPT's `generate` crops to its block size, but once per `W / 2` tokens rather than
//! at every token). A prompt of `W` tokens or more is cropped the same way before the
//! first token. Each stretch is one exact decode, so exactness carries over.

use std::time::{Duration, Instant};

use specula_engine::{
    DecodeConfig, Decoder, FinishReason, LanguageModel, Metrics, StdClock, Step, generate_parallel,
    slide_context, stretch_config, window_start,
};
use specula_host::DeviceLm;

use crate::error::CliError;
use crate::models::Pair;

/// One finished generation.
#[derive(Debug, Clone)]
pub struct Run {
    /// Generated tokens (without the prompt).
    pub tokens: Vec<u32>,
    /// Why it stopped.
    pub finish: FinishReason,
    /// The engine's totals (timed with the wall clock), summed over the window's slides.
    pub metrics: Metrics,
    /// Wall time of the whole generation.
    pub wall: Duration,
    /// Whether `on_tokens` stopped the run early (its reader went away).
    pub stopped: bool,
}

/// Decodes `prompt` with `config`, calling `on_tokens` with each batch of new tokens;
/// the run stops early (with [`Run::stopped`]) when `on_tokens` returns `false`. The
/// context window slides as the module documentation says.
///
/// # Errors
/// Usage errors for settings the engine refuses; failures when a model fails.
pub fn run(
    pair: &mut Pair,
    config: DecodeConfig,
    prompt: &[u32],
    on_tokens: impl FnMut(&[u32]) -> bool,
) -> Result<Run, CliError> {
    let window = pair.window();
    run_windowed(
        &mut pair.draft,
        &mut pair.target,
        window,
        config,
        prompt,
        on_tokens,
        |draft, target| {
            // New positions for every token: nothing cached still applies.
            draft.reset();
            target.reset();
        },
    )
}

/// [`run`] for any pair of models reading `window` positions; `slide` runs each time the
/// window slides (to drop the models' caches).
///
/// # Errors
/// As [`run`].
pub fn run_windowed<D: LanguageModel, T: LanguageModel>(
    draft: &mut D,
    target: &mut T,
    window: usize,
    config: DecodeConfig,
    prompt: &[u32],
    mut on_tokens: impl FnMut(&[u32]) -> bool,
    slide: impl FnMut(&mut D, &mut T),
) -> Result<Run, CliError> {
    let stretch = |draft: &mut D, target: &mut T, config, context: &[u32]| {
        run_stretch(draft, target, config, context, &mut on_tokens)
    };
    windowed(draft, target, window, config, prompt, stretch, slide)
}

/// [`run`] with the draft and the target model on two threads
/// ([`specula_engine::generate_parallel`]): with parallel drafting in `config` the next
/// round's drafts are drawn while the target verifies. Nothing is streamed.
///
/// # Errors
/// As [`run`].
pub fn run_parallel(
    pair: &mut Pair,
    config: DecodeConfig,
    prompt: &[u32],
) -> Result<Run, CliError> {
    let window = pair.window();
    run_windowed_parallel(
        &mut pair.draft,
        &mut pair.target,
        window,
        config,
        prompt,
        |draft: &mut DeviceLm, target: &mut DeviceLm| {
            draft.reset();
            target.reset();
        },
    )
}

/// [`run_parallel`] for any pair of models that can run on threads of their own, reading
/// `window` positions; `slide` runs each time the window slides.
///
/// # Errors
/// As [`run`].
pub fn run_windowed_parallel<D, T>(
    draft: &mut D,
    target: &mut T,
    window: usize,
    config: DecodeConfig,
    prompt: &[u32],
    slide: impl FnMut(&mut D, &mut T),
) -> Result<Run, CliError>
where
    D: LanguageModel + Send,
    T: LanguageModel + Send,
{
    let stretch = |draft: &mut D, target: &mut T, config, context: &[u32]| {
        let started = Instant::now();
        let mut decoder = Decoder::new(config, context.to_vec())
            .map_err(|e| CliError::engine_refused(e.to_string()))?
            .with_clock(StdClock::new());
        let out = generate_parallel(&mut decoder, draft, target)
            .map_err(|e| CliError::engine(e.to_string()))?;
        Ok(Run {
            tokens: out.tokens,
            finish: out.finish,
            metrics: out.metrics,
            wall: started.elapsed(),
            stopped: false,
        })
    };
    windowed(draft, target, window, config, prompt, stretch, slide)
}

/// Decodes stretch after stretch with `stretch`, sliding the window between them.
fn windowed<D, T>(
    draft: &mut D,
    target: &mut T,
    window: usize,
    config: DecodeConfig,
    prompt: &[u32],
    mut stretch_run: impl FnMut(&mut D, &mut T, DecodeConfig, &[u32]) -> Result<Run, CliError>,
    mut slide: impl FnMut(&mut D, &mut T),
) -> Result<Run, CliError> {
    let started = Instant::now();
    let window = window.max(2);
    let total = config.max_new_tokens();
    let mut context = window_start(prompt, window).to_vec();
    let mut tokens = Vec::new();
    let mut metrics = Metrics::default();
    let mut stretch = 0_u64;
    let (finish, stopped) = loop {
        if stretch > 0 {
            slide(draft, target);
        }
        let room = window - context.len();
        let part_config = stretch_config(&config, stretch, room.min(total - tokens.len()));
        let part = stretch_run(draft, target, part_config, &context)?;
        metrics.add(&part.metrics);
        context.extend_from_slice(&part.tokens);
        tokens.extend_from_slice(&part.tokens);
        let done = part.stopped
            || tokens.len() >= total
            || !matches!(part.finish, FinishReason::MaxNewTokens);
        if done {
            break (part.finish, part.stopped);
        }
        slide_context(&mut context, window);
        stretch += 1;
    };
    Ok(Run {
        tokens,
        finish,
        metrics,
        wall: started.elapsed(),
        stopped,
    })
}

/// One decode that fits the window.
fn run_stretch<D: LanguageModel, T: LanguageModel>(
    draft: &mut D,
    target: &mut T,
    config: DecodeConfig,
    prompt: &[u32],
    on_tokens: &mut impl FnMut(&[u32]) -> bool,
) -> Result<Run, CliError> {
    let started = Instant::now();
    let mut decoder = Decoder::new(config, prompt.to_vec())
        .map_err(|e| CliError::engine_refused(e.to_string()))?
        .with_clock(StdClock::new());
    decoder
        .set_vocab_size(target.vocab_size())
        .map_err(|e| CliError::engine_refused(e.to_string()))?;
    let mut shown = 0;
    let mut stopped = false;
    let finish = loop {
        let step = decoder
            .next_request()
            .map_err(|e| CliError::engine(e.to_string()))?;
        let response = match step {
            // One model at a time: the draft half of a parallel step first.
            Step::Draft(request) | Step::Parallel { draft: request, .. } => draft.forward(&request),
            Step::Target(request) => target.forward(&request),
            Step::Done(reason) => break reason,
        }
        .map_err(|e| CliError::model_failed(format!("model: {e}")))?;
        decoder
            .supply(response)
            .map_err(|e| CliError::engine(e.to_string()))?;
        let generated = decoder.generated();
        if generated.len() > shown {
            let go_on = on_tokens(&generated[shown..]);
            shown = generated.len();
            if !go_on {
                stopped = true;
                break FinishReason::MaxNewTokens;
            }
        }
    };
    Ok(Run {
        tokens: decoder.generated().to_vec(),
        finish,
        metrics: decoder.metrics().clone(),
        wall: started.elapsed(),
        stopped,
    })
}

#[cfg(test)]
mod tests {
    use specula_engine::synthetic::MarkovModel;
    use specula_engine::{DraftShape, GammaPolicy, Method, SamplingConfig, Selection};
    use statrs::distribution::{ChiSquared, ContinuousCDF};

    use super::*;

    /// The window of the synthetic pair: small, so that four new tokens slide it.
    const WINDOW: usize = 4;

    fn pair() -> (MarkovModel, MarkovModel) {
        // Order 3 > WINDOW / 2: after a slide the models see a shorter (left-padded)
        // context than before, so the policy shows in the distribution.
        let target = MarkovModel::random(3, 3, 11, 1.5).expect("target");
        let draft = target.perturbed(12, 1.0).expect("draft");
        (draft, target)
    }

    fn methods() -> Vec<Method> {
        let iid = |k, length| DraftShape::Iid { k, length };
        vec![
            Method::Autoregressive,
            Method::Speculative {
                gamma: 3,
                policy: GammaPolicy::Fixed,
            },
            Method::SpecTr {
                drafts: iid(2, 2),
                selection: Selection::KSeq,
            },
            Method::MultiRound { drafts: iid(3, 2) },
            Method::SpecTr {
                drafts: iid(2, 3),
                selection: Selection::Race,
            },
        ]
    }

    fn decode(method: Method, sampling: SamplingConfig, n: usize, seed: u64) -> Vec<u32> {
        let (mut draft, mut target) = pair();
        let config = DecodeConfig::builder(method)
            .sampling(sampling)
            .max_new_tokens(n)
            .seed(seed)
            .build()
            .unwrap();
        run_windowed(
            &mut draft,
            &mut target,
            WINDOW,
            config,
            &[1, 2],
            |_| true,
            |_, _| {},
        )
        .expect("decodes")
        .tokens
    }

    /// The probability of `tokens` after the prompt `[1, 2]` under autoregressive
    /// decoding with the sliding policy: before each token, a context of `WINDOW`
    /// tokens or more is cut to its last `WINDOW / 2`. With `slide = false`, the plain
    /// autoregressive probability (the window never slides).
    fn policy_prob(target: &MarkovModel, tokens: &[u32], slide: bool) -> f64 {
        let mut context = vec![1, 2];
        let mut prob = 1.0;
        for &t in tokens {
            if slide && context.len() >= WINDOW {
                context.drain(..context.len() - WINDOW / 2);
            }
            let dist = target
                .distribution(&context, &SamplingConfig::default())
                .expect("distribution");
            prob *= dist.prob(t as usize);
            context.push(t);
        }
        prob
    }

    /// Parallel drafting on two threads, across slides, gives the tokens it gives one model
    /// call at a time for the same seed.
    #[test]
    fn parallel_drafting_on_threads_matches_one_call_at_a_time() {
        let mut early = 0;
        for seed in 0..8 {
            let config = DecodeConfig::builder(Method::Speculative {
                gamma: 2,
                policy: GammaPolicy::Fixed,
            })
            .max_new_tokens(30)
            .seed(seed)
            .parallel_draft(true)
            .build()
            .unwrap();
            let (mut draft, mut target) = pair();
            let one = run_windowed(
                &mut draft,
                &mut target,
                12, // room for rounds that draft early between slides (as below)
                config.clone(),
                &[1, 2],
                |_| true,
                |_, _| {},
            )
            .expect("decodes");
            let (mut draft, mut target) = pair();
            let two =
                run_windowed_parallel(&mut draft, &mut target, 12, config, &[1, 2], |_, _| {})
                    .expect("decodes");
            assert_eq!(one.tokens, two.tokens, "seed {seed}");
            assert_eq!(one.tokens.len(), 30);
            early += one.metrics.early_rounds;
        }
        assert!(early > 0);
    }

    #[test]
    fn greedy_methods_agree_with_autoregressive_across_slides() {
        let reference = decode(Method::Autoregressive, SamplingConfig::greedy(), 40, 0);
        assert_eq!(reference.len(), 40);
        for method in methods() {
            let name = method.name();
            assert_eq!(
                decode(method, SamplingConfig::greedy(), 40, 0),
                reference,
                "{name}"
            );
        }
    }

    #[test]
    fn every_method_samples_the_sliding_policy_exactly() {
        let (_, target) = pair();
        const N: usize = 4;
        let cells: Vec<Vec<u32>> = (0..81_u32)
            .map(|i| (0..N as u32).map(|j| i / 3_u32.pow(j) % 3).collect())
            .collect();
        let expected: Vec<f64> = cells
            .iter()
            .map(|c| policy_prob(&target, c, true))
            .collect();
        let plain: Vec<f64> = cells
            .iter()
            .map(|c| policy_prob(&target, c, false))
            .collect();
        assert!((expected.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        // The slide changes the distribution, so agreeing with it is a real check.
        let tv: f64 = 0.5
            * expected
                .iter()
                .zip(&plain)
                .map(|(a, b)| (a - b).abs())
                .sum::<f64>();
        assert!(tv > 0.05, "the slide changes too little: TV {tv}");
        let samples = 20_000;
        for method in methods() {
            let name = method.name();
            let mut counts = vec![0_u64; cells.len()];
            for seed in 0..samples {
                let tokens = decode(method.clone(), SamplingConfig::default(), N, seed);
                let cell = tokens
                    .iter()
                    .enumerate()
                    .map(|(j, &t)| t as usize * 3_usize.pow(j as u32))
                    .sum::<usize>();
                counts[cell] += 1;
            }
            let chi_square = |probs: &[f64]| -> (f64, f64) {
                let stat: f64 = counts
                    .iter()
                    .zip(probs)
                    .filter(|&(&o, &p)| o > 0 || p > 0.0)
                    .map(|(&o, &p)| {
                        let e = p * samples as f64;
                        (o as f64 - e).powi(2) / e
                    })
                    .sum();
                let df = (cells.len() - 1) as f64;
                (stat, 1.0 - ChiSquared::new(df).expect("df").cdf(stat))
            };
            let (stat, p_value) = chi_square(&expected);
            assert!(
                p_value > 1e-4,
                "{name}: chi-square {stat:.1}, p = {p_value:e}"
            );
            // Power at this sample size: the same counts reject a decoder that does not
            // slide (it keeps the whole context), the near miss this test guards against.
            let (wrong_stat, wrong_p) = chi_square(&plain);
            assert!(
                wrong_p < 1e-6,
                "{name}: cannot tell the sliding policy from no slide (chi-square \
                 {wrong_stat:.1}, p = {wrong_p:e})"
            );
        }
    }
}
