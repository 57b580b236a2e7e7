//! Native reference: the greedy continuation of the seeded test models on the host CPU
//! forward pass (what the models run on without WebGPU), for every method, must equal `tests/fixtures/greedy.json`, which the wasm tests
//! (CPU in wasm, WebGPU in Chromium) compare against too.
//!
//! `SPECULA_BLESS=1` rewrites the fixture instead of checking it, so with it set the
//! comparison with the fixture cannot fail. It is for a deliberate update on a developer's
//! machine only (`SPECULA_BLESS=1 cargo test -p specula-wasm --test native_greedy`, then
//! review the diff): `scripts/test.sh` and `.ci/run` refuse to run with it set, and this
//! test refuses it when `CI` is set. The methods are compared with autoregressive decoding
//! either way.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use burn::tensor::Device;
use specula_engine::{Decoder, generate};
use specula_host::DeviceLm;
use specula_wasm::untrained::{Size, untrained_bundles};

fn native_greedy(method: &str) -> String {
    let bundles = untrained_bundles(common::SEED, Size::Test).expect("test models build");
    let device = Device::flex();
    let mut draft = DeviceLm::build(&bundles.draft, &device).expect("draft builds");
    let mut target = DeviceLm::build(&bundles.target, &device).expect("target builds");
    let options = common::greedy(method).resolve().expect("valid options");
    let tokenizer = &bundles.target.meta.tokenizer;
    let prompt = tokenizer.encode(&options.prompt).expect("prompt encodes");
    let mut decoder = Decoder::new(options.config, prompt).expect("decoder");
    let out = generate(&mut decoder, &mut draft, &mut target).expect("generation runs");
    tokenizer.decode(&out.tokens).expect("tokens decode")
}

#[test]
fn every_method_reproduces_the_recorded_greedy_text() {
    let reference = native_greedy("autoregressive");
    assert_eq!(reference.chars().count(), common::MAX_TOKENS);
    if common::blessing() {
        let json = serde_json::json!({
            "seed": common::SEED,
            "size": "test",
            "prompt": common::PROMPT,
            "maxTokens": common::MAX_TOKENS,
            "text": reference,
        });
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/greedy.json");
        let text = serde_json::to_string_pretty(&json).expect("serialises") + "\n";
        std::fs::write(path, text).expect("fixture written");
    } else {
        assert_eq!(
            reference,
            common::expected_text(),
            "the native greedy text changed (new model init?); rerun with SPECULA_BLESS=1 if intended"
        );
    }
    for method in [
        "speculative",
        "spectr",
        "multiround",
        "mentored",
        "typical",
        "lookup",
    ] {
        assert_eq!(
            native_greedy(method),
            reference,
            "{method} greedy differs from autoregressive"
        );
    }
}
