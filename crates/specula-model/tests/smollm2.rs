//! SmolLM2-135M-Instruct (GGUF, Q4_1) on burn's CPU backend against the independent
//! Python reference (scripts/reference/): logits at every position of four prompts,
//! greedy continuations, the cache's rollback, and the tokenizer on 1,229 strings.
//! The fixtures come from `scripts/smollm2-reference.sh` (the skipping policy is in
//! `common`).

use burn::tensor::Device;
use serde::Deserialize;
use specula_engine::{ForwardRequest, LanguageModel, Role};
use specula_model::LlamaLm;

use common::{Fixtures, Reference, check_greedy, fixtures, max_abs_diff, read_reference};

mod common;

/// Logits of the same dequantized weights in numpy (f32, another summation order) stay
/// within this of ours; the largest difference seen over the four prompts was 9e-5.
const LOGIT_TOLERANCE: f32 = 1e-3;

#[derive(Deserialize)]
struct BpeCases {
    cases: Vec<BpeCase>,
}

#[derive(Deserialize)]
struct BpeCase {
    text: String,
    ids: Vec<u32>,
    decoded: String,
}

fn reference(f: &Fixtures) -> (Reference, Vec<f32>) {
    read_reference(&f.dir)
}

fn model(f: &Fixtures) -> LlamaLm {
    LlamaLm::load(&f.model, &Device::flex()).expect("the pass builds")
}

#[test]
fn the_shape_is_read_from_the_file() {
    let Some(f) = fixtures() else { return };
    let c = &f.model.config;
    assert_eq!(
        (
            c.vocab_size,
            c.d_model,
            c.n_layers,
            c.n_heads,
            c.n_kv_heads,
            c.d_ff
        ),
        (49_152, 576, 30, 9, 3, 1536)
    );
    assert!(c.tied_output && !c.qkv_bias);
    assert_eq!(c.rope_base, 100_000.0);
}

#[test]
fn logits_at_every_position_equal_the_reference() {
    let Some(f) = fixtures() else { return };
    let (reference, expected) = reference(f);
    assert_eq!(reference.vocab, f.model.config.vocab_size);
    let lm = model(f);
    let mut offset = 0;
    for prompt in &reference.prompts {
        let n = prompt.len() * reference.vocab;
        let ours = lm.logits_uncached(prompt).expect("a forward pass");
        let diff = max_abs_diff(&ours, &expected[offset..offset + n]);
        eprintln!(
            "{} positions: largest logit difference {diff:.2e}",
            prompt.len()
        );
        assert!(diff < LOGIT_TOLERANCE, "difference {diff} over {prompt:?}");
        offset += n;
    }
    assert_eq!(offset, expected.len());
}

#[test]
fn greedy_continuations_equal_the_reference_up_to_a_near_tie() {
    let Some(f) = fixtures() else { return };
    let (reference, _) = reference(f);
    let compared = check_greedy(&mut model(f), &reference, LOGIT_TOLERANCE);
    assert!(compared >= 32, "only {compared} greedy steps were compared");
}

#[test]
fn rolling_back_and_rescoring_equals_scoring_from_scratch() {
    let Some(f) = fixtures() else { return };
    let (reference, _) = reference(f);
    let prompt = &reference.prompts[1];
    let first: Vec<u32> = prompt.iter().copied().chain([1838, 1838, 1838]).collect();
    let second: Vec<u32> = prompt
        .iter()
        .copied()
        .chain(reference.greedy[1][..4].iter().copied())
        .collect();
    let every = |tokens: &[u32]| ForwardRequest {
        role: Role::Target,
        committed_len: prompt.len(),
        sequences: vec![tokens.to_vec()],
        queries: (prompt.len()..=tokens.len())
            .map(|prefix_len| specula_engine::Query {
                sequence: 0,
                prefix_len,
            })
            .collect(),
    };
    let mut lm = model(f);
    lm.forward(&every(&first)).expect("the first suffix");
    let rescored = lm
        .forward(&every(&second))
        .expect("after the rollback")
        .logits;
    let fresh = model(f)
        .forward(&every(&second))
        .expect("from scratch")
        .logits;
    let diff = max_abs_diff(&rescored, &fresh);
    assert!(diff < 1e-3, "rescoring after a rollback differs by {diff}");
    let uncached = lm.logits_uncached(&second).expect("one pass");
    let tail = &uncached[(prompt.len() - 1) * reference.vocab..];
    let diff = max_abs_diff(&rescored, tail);
    assert!(
        diff < 1e-3,
        "the cached path differs from one pass by {diff}"
    );
}

#[test]
fn the_tokenizer_equals_the_reference_bpe_on_every_string() {
    let Some(f) = fixtures() else { return };
    let json = std::fs::read_to_string(f.dir.join("bpe_cases.json")).expect("bpe_cases.json");
    let cases: BpeCases = serde_json::from_str(&json).expect("bpe_cases.json parses");
    assert!(cases.cases.len() >= 1000);
    let tokenizer = &f.model.tokenizer;
    for case in &cases.cases {
        let ids = tokenizer.encode(&case.text).expect("encodes");
        assert_eq!(ids, case.ids, "encoding {:?}", case.text);
        assert_eq!(tokenizer.decode(&ids).expect("decodes"), case.decoded);
    }
}
