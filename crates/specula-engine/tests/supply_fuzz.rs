//! The decoder's boundary under arbitrary input: random settings (huge γ and K, trees,
//! every method), prompts with tokens past the vocabulary, and responses that are often
//! malformed (wrong lengths, NaN and ±∞ logits, a row of all −∞, empty or absurd
//! vocabulary sizes). Every call returns a result or a typed error, never a panic; a
//! refused response leaves the decoder waiting for the same request; and well-formed
//! models can still finish the job afterwards.
//!
//! 10,000 cases in CI; `SPECULA_PROPTEST_CASES=1000000 cargo test --release -p
//! specula-engine --test supply_fuzz` is the long run whose figures BENCHMARKS.md quotes.

mod common;

use common::{lookup, mentored, spectr_iid, speculative, typical};
use proptest::prelude::*;
use specula_engine::synthetic::MarkovModel;
use specula_engine::{
    DecodeConfig, Decoder, DraftShape, FinishReason, ForwardResponse, LanguageModel, Method,
    SamplingConfig, Selection, Step, generate,
};

/// The vocabulary of the well-formed models.
const VOCAB: usize = 6;

fn cases() -> u32 {
    std::env::var("SPECULA_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

fn arb_method() -> impl Strategy<Value = Method> {
    let huge = prop_oneof![Just(1_usize << 17), Just(1 << 40), Just(usize::MAX)];
    prop_oneof![
        Just(Method::Autoregressive),
        (0_usize..5).prop_map(speculative),
        huge.clone().prop_map(speculative),
        (0_usize..4, 0_usize..4).prop_map(|(k, l)| spectr_iid(k, l)),
        (huge.clone(), 1_usize..3).prop_map(|(k, l)| spectr_iid(k, l)),
        (0_usize..6, proptest::collection::vec(0_usize..3, 0..4)).prop_map(|(k, branching)| {
            Method::MultiRound {
                drafts: DraftShape::Tree { k, branching },
            }
        }),
        (1_usize..4, 1_usize..3).prop_map(|(k, length)| Method::SpecTr {
            drafts: DraftShape::Iid { k, length },
            selection: Selection::Race,
        }),
        (
            0_usize..4,
            prop_oneof![-1.0_f64..1.0, Just(f64::NAN), Just(f64::INFINITY)]
        )
            .prop_map(|(g, d)| mentored(g, d)),
        (
            0_usize..4,
            prop_oneof![-0.5_f64..1.5, Just(f64::NAN)],
            prop_oneof![-1.0_f64..2.0, Just(f64::INFINITY)]
        )
            .prop_map(|(g, e, d)| typical(g, e, d)),
        (
            prop_oneof![0_usize..5, huge.clone()],
            prop_oneof![0_usize..4, Just(usize::MAX)]
        )
            .prop_map(|(g, n)| lookup(g, n)),
    ]
}

/// A response of a random shape: a claimed vocabulary (sometimes absurd) and logits.
fn arb_logits() -> impl Strategy<Value = (usize, Vec<f32>)> {
    let value = prop_oneof![
        8 => -5.0_f32..5.0,
        1 => Just(f32::NAN),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(f32::INFINITY),
    ];
    let vocab = prop_oneof![
        8 => 0_usize..8,
        1 => Just(1_usize << 40),
        1 => Just(usize::MAX),
    ];
    (vocab, proptest::collection::vec(value, 0..40))
}

/// What a response is: the well-formed model's, the same with its first row all −∞, or a
/// random one.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Good,
    NegInfRow,
    Random,
}

fn arb_kind() -> impl Strategy<Value = Kind> {
    prop_oneof![3 => Just(Kind::Good), 1 => Just(Kind::NegInfRow), 6 => Just(Kind::Random)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn never_panics(
        method in arb_method(),
        prompt in proptest::collection::vec(prop_oneof![9 => 0_u32..6, 1 => 6_u32..u32::MAX], 0..3),
        max_new_tokens in 0_usize..6,
        temperature in prop_oneof![Just(0.0), 0.1_f64..2.0, Just(-1.0), Just(f64::NAN)],
        responses in proptest::collection::vec((arb_kind(), arb_logits()), 0..12),
    ) {
        let config = DecodeConfig::builder(method)
            .max_new_tokens(max_new_tokens)
            .sampling(SamplingConfig { temperature, ..SamplingConfig::default() })
            .build();
        // A bad setting is refused when the configuration is built, a bad prompt here.
        let Ok(config) = config else { return Ok(()) };
        let Ok(mut decoder) = Decoder::new(config, prompt.clone()) else { return Ok(()) };
        let mut target = MarkovModel::random(VOCAB, 1, 1, 1.0).unwrap();
        let mut draft = target.perturbed(2, 1.0).unwrap();
        let prompt_fits = prompt.iter().all(|&t| (t as usize) < VOCAB);
        // The vocabulary the decoder learns: that of the first response of the right shape
        // whose vocabulary the prompt fits.
        let mut learned: Option<usize> = None;
        for (kind, (vocab, logits)) in responses {
            let step = decoder.next_request();
            prop_assert!(step.is_ok(), "{:?}", step);
            let step = step.unwrap();
            let request = match &step {
                Step::Done(_) => break,
                Step::Draft(request)
                | Step::Target(request)
                | Step::Parallel { draft: request, .. } => request,
            };
            let model: &mut MarkovModel = if matches!(step, Step::Draft(_) | Step::Parallel { .. }) { &mut draft } else { &mut target };
            let response = match kind {
                Kind::Random => ForwardResponse::new(vocab, logits),
                Kind::Good | Kind::NegInfRow => match model.forward(request) {
                    Ok(mut good) => {
                        if matches!(kind, Kind::NegInfRow) {
                            let row = good.vocab.min(good.logits.len());
                            good.logits[..row].fill(f32::NEG_INFINITY);
                        }
                        good
                    }
                    // A prompt token past the model's vocabulary: the model refuses.
                    Err(_) => ForwardResponse::new(vocab, logits),
                },
            };
            let shaped = request.positions().checked_mul(response.vocab) == Some(response.logits.len());
            let well_shaped = response.vocab > 0 && shaped;
            let vocab = response.vocab;
            let candidate = well_shaped && prompt.iter().all(|&t| (t as usize) < vocab);
            match decoder.supply(response) {
                Ok(_) => {
                    if learned.is_none() && candidate {
                        learned = Some(vocab);
                    }
                }
                Err(e) => {
                    // A refused response leaves the decoder waiting for the same request.
                    prop_assert_eq!(decoder.next_request(), Ok(step), "after {}", e);
                }
            }
        }
        // The well-formed models finish the job from wherever the decoder is, unless the
        // prompt does not fit their vocabulary or a response fixed another one.
        let result = generate(&mut decoder, &mut draft, &mut target);
        if !prompt_fits || learned.is_some_and(|v| v != VOCAB) {
            prop_assert!(result.is_err(), "{:?}", result);
        } else {
            prop_assert!(result.is_ok(), "{:?}", result);
            let finished = result.unwrap();
            prop_assert_eq!(finished.finish, FinishReason::MaxNewTokens);
            prop_assert_eq!(decoder.generated().len(), max_new_tokens);
            prop_assert!(finished.tokens.iter().all(|&t| (t as usize) < VOCAB));
        }
    }
}
