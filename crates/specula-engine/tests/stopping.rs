//! Stopping: max new tokens, stop tokens, stop strings (token table or detokenizer
//! function). Nothing is emitted past a stop, and stopping only truncates: the tokens
//! before the stop are the ones the same seed gives without it.

mod common;

use common::{all_methods, pair, run};
use specula_engine::{
    DecodeConfig, DecodeConfigBuilder, Decoder, FinishReason, Method, generate,
    generate_autoregressive,
};

const TEXT: [&str; 5] = ["a", "b", "c", "d", "e"];

#[test]
fn max_new_tokens_is_exact_for_every_method() {
    let (mut target, mut draft) = pair(5, 1, 60, 1.0);
    for method in all_methods() {
        for max_new_tokens in [0, 1, 2, 3, 7, 20] {
            let config = DecodeConfig::builder(method.clone())
                .max_new_tokens(max_new_tokens)
                .build()
                .unwrap();
            let out = run(config, &[0], &mut draft, &mut target);
            assert_eq!(out.tokens.len(), max_new_tokens, "{}", method.name());
            assert_eq!(out.finish, FinishReason::MaxNewTokens);
            // Rounds never draft positions that could not be emitted.
            for round in &out.rounds {
                assert_eq!(round.truncated, 0, "{}", method.name());
            }
        }
    }
}

/// Runs `method` with and without `edit` applied to the config (same seed).
fn with_and_without(
    method: &Method,
    seed: u64,
    edit: impl Fn(DecodeConfigBuilder) -> DecodeConfigBuilder,
) -> (Vec<u32>, Vec<u32>, FinishReason) {
    let (mut target, mut draft) = pair(5, 1, 61, 1.0);
    let base = DecodeConfig::builder(method.clone())
        .max_new_tokens(40)
        .seed(seed)
        .build()
        .unwrap();
    let free = run(base.clone(), &[0], &mut draft, &mut target).tokens;
    let config = edit(base.into_builder()).build().unwrap();
    let stopped = run(config, &[0], &mut draft, &mut target);
    (free, stopped.tokens, stopped.finish)
}

#[test]
fn stop_tokens_end_generation_at_the_first_one() {
    for method in all_methods() {
        for seed in 0..10 {
            let (free, stopped, finish) =
                with_and_without(&method, seed, |c| c.stop_tokens(vec![3]));
            match free.iter().position(|&t| t == 3) {
                Some(i) => {
                    assert_eq!(stopped, free[..=i], "{}", method.name());
                    assert_eq!(finish, FinishReason::StopToken { token: 3 });
                }
                None => assert_eq!(stopped, free),
            }
        }
    }
}

fn text(tokens: &[u32]) -> String {
    tokens.iter().map(|&t| TEXT[t as usize]).collect()
}

#[test]
fn stop_strings_from_a_token_table_end_generation_right_after_them() {
    for method in all_methods() {
        for seed in 0..10 {
            let (free, stopped, finish) = with_and_without(&method, seed, |c| {
                c.stop_strings(vec!["zz".into(), "ca".into()])
                    .token_text(Some(TEXT.iter().map(|s| (*s).to_string()).collect()))
            });
            let full = text(&free);
            match full.find("ca") {
                Some(i) => {
                    // Each token is one character: the stop string ends at token i + 1.
                    assert_eq!(stopped, free[..i + 2], "{}", method.name());
                    assert_eq!(finish, FinishReason::StopString { index: 1 });
                }
                None => assert_eq!(stopped, free),
            }
            assert_eq!(
                text(&stopped).matches("ca").count(),
                usize::from(text(&stopped).ends_with("ca"))
            );
        }
    }
}

#[test]
fn stop_strings_with_a_detokenizer_function_span_tokens() {
    // Multi-character and empty token texts: "bc" can span a boundary.
    let table = ["xb", "c", "", "bc", "y"];
    let detok = move |tokens: &[u32]| {
        tokens
            .iter()
            .map(|&t| table[t as usize])
            .collect::<String>()
    };
    let (mut target, mut draft) = pair(5, 1, 62, 1.0);
    let mut hits = 0;
    for seed in 0..30 {
        let base = DecodeConfig::builder(common::spectr_iid(2, 3))
            .max_new_tokens(30)
            .seed(seed)
            .build()
            .unwrap();
        let mut decoder = Decoder::new(base.clone(), vec![0]).unwrap();
        let free = generate(&mut decoder, &mut draft, &mut target)
            .unwrap()
            .tokens;
        let config = base
            .into_builder()
            .stop_strings(vec!["bc".into()])
            .build()
            .unwrap();
        let mut decoder = Decoder::with_detokenizer(config, vec![0], detok).unwrap();
        let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
        // The first prefix of the free run whose text contains the stop string.
        let cut = (1..=free.len()).find(|&n| detok(&free[..n]).contains("bc"));
        match cut {
            Some(n) => {
                hits += 1;
                assert_eq!(out.tokens, free[..n]);
                assert_eq!(out.finish, FinishReason::StopString { index: 0 });
            }
            None => assert_eq!(out.tokens, free),
        }
    }
    assert!(hits > 5);
}

#[test]
fn autoregressive_stops_too() {
    let (mut target, _) = pair(5, 1, 63, 1.0);
    let config = DecodeConfig::default()
        .into_builder()
        .max_new_tokens(100)
        .stop_tokens(vec![0, 1])
        .build()
        .unwrap();
    let mut decoder = Decoder::new(config, vec![2]).unwrap();
    let out = generate_autoregressive(&mut decoder, &mut target).unwrap();
    let last = *out.tokens.last().unwrap();
    assert!(last < 2);
    assert!(out.tokens[..out.tokens.len() - 1].iter().all(|&t| t >= 2));
    assert_eq!(out.finish, FinishReason::StopToken { token: last });
    assert_eq!(
        decoder.finish_reason(),
        Some(&FinishReason::StopToken { token: last })
    );
}
