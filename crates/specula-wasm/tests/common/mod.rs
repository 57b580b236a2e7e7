//! The reference case shared by the native test and the wasm tests: seeded untrained
//! models, a prompt, greedy decoding. Its continuation is recorded in
//! `tests/fixtures/greedy.json` by the native test (`SPECULA_BLESS=1` rewrites it), and
//! every other backend must reproduce it exactly.
#![allow(dead_code)]

use specula_engine::options::{DecodeOptions, MethodName};

pub mod gguf;

/// The model seed.
pub const SEED: u64 = 7;
/// The prompt.
pub const PROMPT: &str = "ROMEO:\nBut soft, what light";
/// Tokens to generate.
pub const MAX_TOKENS: usize = 24;
/// The recorded continuation.
pub const FIXTURE: &str = include_str!("../fixtures/greedy.json");

/// Greedy options for `method` (γ = 3, K = 2 and D = 0 where they apply: an option the
/// method does not use is refused).
pub fn greedy(method: &str) -> DecodeOptions {
    let name: MethodName = method.parse().expect("a method");
    DecodeOptions {
        prompt: Some(PROMPT.into()),
        method: Some(method.into()),
        gamma: name.drafts().then_some(3.0),
        drafts: name.multi_draft().then_some(2.0),
        kl: (name == MethodName::Mentored).then_some(0.0),
        temperature: Some(0.0),
        max_tokens: Some(MAX_TOKENS as f64),
        ..DecodeOptions::default()
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

/// Whether this run rewrites the fixtures (`SPECULA_BLESS`) instead of checking them;
/// refused in CI, where a blessed run could not fail.
///
/// # Panics
/// When `SPECULA_BLESS` and `CI` are both set.
pub fn blessing() -> bool {
    let bless = std::env::var_os("SPECULA_BLESS").is_some();
    assert!(
        !(bless && std::env::var_os("CI").is_some()),
        "SPECULA_BLESS is set in CI: a blessed run rewrites the fixture instead of checking it"
    );
    bless
}
