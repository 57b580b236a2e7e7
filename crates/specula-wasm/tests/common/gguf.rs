//! The GGUF reference case: a small synthetic Llama pair (random weights, written by
//! `specula_gguf::synthetic`), a prompt, the target's logits at every prompt position
//! and the greedy continuation, recorded in `tests/fixtures/gguf.json` by the native
//! test (`SPECULA_BLESS=1` rewrites it); wasm on the CPU and on WebGPU must reproduce it.

use specula_engine::options::{DecodeOptions, MethodName};
use specula_gguf::synthetic::SyntheticLlama;

/// The prompt.
pub const PROMPT: &str = "the cat sat on the mat";
/// Tokens to generate.
pub const MAX_TOKENS: usize = 20;
/// The recorded logits and continuation.
pub const FIXTURE: &str = include_str!("../fixtures/gguf.json");

/// The draft's and the target's files
/// ([`SyntheticLlama::reference_pair`]).
pub fn files() -> (Vec<u8>, Vec<u8>) {
    let (draft, target) = SyntheticLlama::reference_pair();
    (draft.build(), target.build())
}

/// Greedy options for `method` (γ = 3, K = 2 where they apply).
pub fn greedy(method: &str) -> DecodeOptions {
    let name: MethodName = method.parse().expect("a method");
    DecodeOptions {
        prompt: Some(PROMPT.into()),
        method: Some(method.into()),
        gamma: name.drafts().then_some(3.0),
        drafts: name.multi_draft().then_some(2.0),
        temperature: Some(0.0),
        max_tokens: Some(MAX_TOKENS as f64),
        ..DecodeOptions::default()
    }
}

/// The recorded case.
pub fn expected() -> serde_json::Value {
    serde_json::from_str(FIXTURE).expect("gguf.json is JSON")
}

/// The recorded target logits, every prompt position, row-major.
pub fn expected_logits() -> Vec<f32> {
    expected()["logits"]
        .as_array()
        .expect("logits")
        .iter()
        .map(|x| x.as_f64().expect("a number") as f32)
        .collect()
}

/// The recorded greedy continuation's text.
pub fn expected_text() -> String {
    expected()["text"].as_str().expect("text").to_owned()
}

/// The largest difference between two rows of logits.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "logit counts differ");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}
