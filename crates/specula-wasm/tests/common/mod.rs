//! The reference case shared by the native test and the wasm tests: seeded untrained
//! models, a prompt, greedy decoding. Its continuation is recorded in
//! `tests/fixtures/greedy.json` by the native test (`SPECULA_BLESS=1` rewrites it), and
//! every other backend must reproduce it exactly.
#![allow(dead_code)]

use specula_wasm::options::GenerateOptions;

/// The model seed.
pub const SEED: u64 = 7;
/// The prompt.
pub const PROMPT: &str = "ROMEO:\nBut soft, what light";
/// Tokens to generate.
pub const MAX_TOKENS: usize = 24;
/// The recorded continuation.
pub const FIXTURE: &str = include_str!("../fixtures/greedy.json");

/// Greedy options for `method` (γ = 3 and K = 2 where they apply).
pub fn greedy(method: &str) -> GenerateOptions {
    GenerateOptions {
        prompt: Some(PROMPT.into()),
        method: Some(method.into()),
        gamma: Some(3.0),
        drafts: Some(2.0),
        kl: Some(0.0),
        temperature: Some(0.0),
        max_tokens: Some(MAX_TOKENS as f64),
        ..GenerateOptions::default()
    }
}

/// The recorded greedy continuation.
pub fn expected_text() -> String {
    let json: serde_json::Value = serde_json::from_str(FIXTURE).expect("greedy.json is JSON");
    json["text"]
        .as_str()
        .expect("greedy.json has a text")
        .to_string()
}
