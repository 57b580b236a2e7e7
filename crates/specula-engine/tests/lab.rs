//! The lab's closed forms against the engine's real sampling path: many seeded runs of
//! the decoder over synthetic models, their first or second token counted and tested by
//! chi-square against `lab::exact`, for every bug the lab reproduces and for lossless
//! methods at both positions. Power: the same counts must misfit the target wherever the
//! closed form is far from it, and each lossless check rejects a near miss (the runs
//! sampled at temperature 0.9) at the same runs and level.

use specula_core::{Bug, total_variation};
use specula_engine::lab::{LabLogits, contexts_for_second, exact, first_tokens, fit, needs};
use specula_engine::synthetic::MarkovModel;
use specula_engine::{DecodeConfig, Decoder, GammaPolicy, Method, SamplingConfig, generate};
use statrs::distribution::{ChiSquared, ContinuousCDF};

const RUNS: u64 = 20_000;
/// Tokens per run: with one token the engine drafts nothing (it drafts no more than it
/// may still emit), so every run generates two, as the lab's runs do.
const RUN_TOKENS: usize = specula_engine::lab::RUN_TOKENS;
const PROMPT: [u32; 3] = [1, 2, 3];
/// A correct method's runs must fit their closed form at this level.
const EXACT_P: f64 = 1e-4;
/// The near miss of the lossless checks: the runs sampled at this temperature.
const NEAR_TEMPERATURE: f64 = 0.9;

fn models() -> (MarkovModel, MarkovModel) {
    let target = MarkovModel::random(5, 2, 7, 2.0).unwrap();
    let draft = target.perturbed(8, 1.5).unwrap();
    (target, draft)
}

fn row(model: &MarkovModel, context: &[u32]) -> Vec<f64> {
    model
        .logits(context)
        .unwrap()
        .iter()
        .map(|&x| f64::from(x))
        .collect()
}

fn lab_logits(config: &DecodeConfig, position: usize) -> LabLogits {
    let (target, draft) = models();
    let (after, alone) = needs(config, position, false);
    let target_row = row(&target, &PROMPT);
    let first = if after {
        first_tokens(config, &target_row).unwrap()
    } else {
        Vec::new()
    };
    let rows = |alone: bool| {
        contexts_for_second(&PROMPT, &first, alone, 1024)
            .iter()
            .map(|c| row(&target, c))
            .collect()
    };
    LabLogits {
        draft: row(&draft, &PROMPT),
        after_prompt: if after { rows(false) } else { Vec::new() },
        alone: if alone { rows(true) } else { Vec::new() },
        first_tokens: first,
        target: target_row,
        slides: false,
        end_token: None,
    }
}

/// Counts of generated token `position` over `RUNS` seeds.
fn counts(config: &DecodeConfig, position: usize) -> Vec<u64> {
    let (mut target, mut draft) = models();
    let mut counts = vec![0; target.vocab()];
    for seed in 0..RUNS {
        let config = config
            .clone()
            .into_builder()
            .seed(seed)
            .max_new_tokens(RUN_TOKENS)
            .build()
            .unwrap();
        let mut decoder = Decoder::new(config, PROMPT.to_vec()).unwrap();
        let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
        counts[out.tokens[position - 1] as usize] += 1;
    }
    counts
}

fn speculative() -> Method {
    Method::Speculative {
        gamma: 3,
        policy: GammaPolicy::Fixed,
    }
}

fn check(method: Method, bug: Option<Bug>, position: usize) {
    check_with(method, bug, position, SamplingConfig::default());
}

fn check_with(method: Method, bug: Option<Bug>, position: usize, sampling: SamplingConfig) {
    let config = DecodeConfig::builder(method)
        .bug(bug)
        .sampling(sampling)
        .build()
        .unwrap();
    let e = exact(&config, position, &lab_logits(&config, position)).unwrap();
    let f = fit(&counts(&config, position), &e.expected, &e.target).unwrap();
    let what = format!("{bug:?} at position {position}: {e:?} {f:?}");
    assert!(
        f.p_value.expect("20,000 runs make a test") > EXACT_P,
        "the sampling path misfits its closed form: {what}"
    );
    // Far from the target (TV ≥ 0.03 at 20,000 runs), the runs must show it.
    if e.tv_from_target >= 0.03 {
        assert!(
            f.target_p_value.expect("20,000 runs make a test") < 1e-6,
            "no power against the target: {what}"
        );
    } else {
        assert!(
            e.kind == "target",
            "a bug too close to the target to test: {what}"
        );
    }
}

#[test]
fn token_level_bugs_follow_their_closed_forms() {
    for bug in [
        Bug::ResampleFromTarget,
        Bug::ArgmaxDraft,
        Bug::SharedUniform,
    ] {
        check(speculative(), Some(bug), 1);
    }
    // These two only act when the distributions are processed.
    let top_k = SamplingConfig {
        top_k: Some(2),
        ..SamplingConfig::default()
    };
    check_with(speculative(), Some(Bug::FilteredDraft), 1, top_k);
    let cooled = SamplingConfig {
        temperature: 0.5,
        top_k: Some(3),
        ..SamplingConfig::default()
    };
    check_with(speculative(), Some(Bug::UnprocessedTarget), 1, cooled);
}

#[test]
fn cache_reset_follows_its_closed_form_at_the_second_position() {
    check(speculative(), Some(Bug::CacheReset), 2);
}

/// The near miss of a lossless check: the same runs sampled at temperature 0.9, tested
/// against the closed form at temperature 1, must be rejected at the same runs and level.
fn check_power(method: Method, position: usize) {
    let config = DecodeConfig::builder(method).build().unwrap();
    let near = config
        .clone()
        .into_builder()
        .sampling(SamplingConfig {
            temperature: NEAR_TEMPERATURE,
            ..SamplingConfig::default()
        })
        .build()
        .unwrap();
    let e = exact(&config, position, &lab_logits(&config, position)).unwrap();
    let q = exact(&near, position, &lab_logits(&near, position))
        .unwrap()
        .expected;
    let lambda: f64 = e
        .expected
        .iter()
        .zip(&q)
        .filter(|(p, _)| **p > 0.0)
        .map(|(p, q)| RUNS as f64 * (q - p).powi(2) / p)
        .sum();
    let f = fit(&counts(&near, position), &e.expected, &e.target).unwrap();
    let critical = ChiSquared::new(f.degrees_of_freedom as f64)
        .unwrap()
        .inverse_cdf(1.0 - EXACT_P);
    let what = format!(
        "{} at position {position}, temperature {NEAR_TEMPERATURE}: TV {:.4}, λ {lambda:.0}, χ² {:.1} at {} df, critical {critical:.1}",
        config.method().name(),
        total_variation(&e.expected, &q),
        f.chi_square,
        f.degrees_of_freedom
    );
    eprintln!("{what}");
    assert!(f.chi_square > critical, "the near miss passed: {what}");
}

/// Power at the same runs and level: [`check_power`]'s near miss, TV 0.021 from the
/// target at the first position (λ 51) and 0.020 at the second (λ 45, power ≈ 0.97).
/// Measured at 20,000 runs: speculative χ² 52.6 (first) and 44.2 (second), SpecTr 58.0
/// (second), each at 4 degrees of freedom against the critical value 23.5 at p = 1e-4.
#[test]
fn lossless_methods_follow_the_target_at_both_positions() {
    let spectr = Method::SpecTr {
        drafts: specula_engine::DraftShape::Iid { k: 3, length: 2 },
        selection: specula_engine::Selection::KSeq,
    };
    for (method, position) in [(speculative(), 1), (speculative(), 2), (spectr, 2)] {
        check(method.clone(), None, position);
        check_power(method, position);
    }
}

#[test]
fn typical_acceptance_follows_its_closed_form() {
    let method = Method::Typical {
        gamma: 3,
        epsilon: 0.3,
        delta: 1.0,
        policy: GammaPolicy::Fixed,
    };
    check(method, None, 1);
}

/// Power at the same runs and level: [`check_power`]'s near miss (TV 0.021, λ 51; TV
/// 0.020, λ 45). Measured at 20,000 runs: χ² 56.4 (first position) and 38.3 (second) at
/// 4 degrees of freedom against the critical value 23.5 at p = 1e-4.
#[test]
fn prompt_lookup_follows_the_target() {
    for position in [1, 2] {
        check(Method::Lookup { gamma: 3, ngram: 2 }, None, position);
        check_power(Method::Lookup { gamma: 3, ngram: 2 }, position);
    }
}

#[test]
fn mentored_follows_its_closed_form() {
    let method = Method::Mentored {
        gamma: 3,
        kl_budget: 0.3,
        policy: GammaPolicy::Fixed,
    };
    check(method, None, 1);
}
