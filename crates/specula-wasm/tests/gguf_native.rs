//! Native reference of the GGUF case (tests/common/gguf.rs): the synthetic pair on burn's
//! CPU backend must give the logits and greedy continuation of `tests/fixtures/gguf.json`,
//! which the wasm tests (CPU in Node and Chromium, WebGPU in Chromium) compare against.
//! `SPECULA_BLESS=1` rewrites the fixture, as for greedy.json (native_greedy.rs).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use burn::tensor::Device;
use common::gguf;
use specula_engine::{Decoder, ForwardRequest, LanguageModel, Query, Role, generate};
use specula_gguf::GgufModel;
use specula_host::DeviceLm;

struct Case {
    draft: DeviceLm,
    target: DeviceLm,
    model: GgufModel,
}

fn case() -> Case {
    let (draft, target) = gguf::files();
    let device = Device::flex();
    let draft = GgufModel::from_bytes(draft, None).expect("the draft file loads");
    let model = GgufModel::from_bytes(target, None).expect("the target file loads");
    Case {
        draft: DeviceLm::from_gguf(&draft, &device).expect("draft"),
        target: DeviceLm::from_gguf(&model, &device).expect("target"),
        model,
    }
}

/// Logits at every position of `tokens`, row-major.
fn every_position(lm: &mut DeviceLm, tokens: &[u32]) -> Vec<f32> {
    let request = ForwardRequest {
        role: Role::Target,
        committed_len: 0,
        sequences: vec![tokens.to_vec()],
        queries: (1..=tokens.len())
            .map(|prefix_len| Query {
                sequence: 0,
                prefix_len,
            })
            .collect(),
    };
    lm.forward(&request).expect("a forward pass").logits
}

/// The greedy continuation of `method`, stopping at the end token as the bindings do.
fn greedy(case: &mut Case, method: &str) -> Vec<u32> {
    let config = gguf::greedy(method)
        .resolve()
        .expect("valid options")
        .config;
    let mut stop_tokens = config.stop_tokens().to_vec();
    stop_tokens.extend(case.model.tokenizer.eos());
    let config = config.with_stop_tokens(stop_tokens);
    let prompt = case.model.tokenizer.encode(gguf::PROMPT).expect("encodes");
    let mut decoder = Decoder::new(config, prompt).expect("decoder");
    case.draft.reset();
    case.target.reset();
    generate(&mut decoder, &mut case.draft, &mut case.target)
        .expect("generation runs")
        .tokens
}

#[test]
fn the_synthetic_gguf_pair_reproduces_its_recorded_logits_and_greedy_text() {
    let mut case = case();
    let tokenizer = case.model.tokenizer.clone();
    let prompt = tokenizer.encode(gguf::PROMPT).expect("encodes");
    let logits = every_position(&mut case.target, &prompt);
    let tokens = greedy(&mut case, "autoregressive");
    assert!(
        tokens.len() >= 8,
        "only {} tokens: {tokens:?}",
        tokens.len()
    );
    for method in ["speculative", "spectr"] {
        assert_eq!(greedy(&mut case, method), tokens, "{method} is lossless");
    }
    // The closest call along the greedy path: WebGPU's logits differ from the CPU's by
    // rounding, so its greedy text can be compared only if no step is a near tie.
    let vocab = tokenizer.vocab_size();
    let path: Vec<u32> = prompt.iter().chain(&tokens).copied().collect();
    case.target.reset();
    let rows = every_position(&mut case.target, &path);
    let min_gap = rows
        .chunks(vocab)
        .skip(prompt.len() - 1)
        .take(tokens.len())
        .map(|row| {
            let mut sorted = row.to_vec();
            sorted.sort_by(|a, b| b.total_cmp(a));
            sorted[0] - sorted[1]
        })
        .fold(f32::INFINITY, f32::min);
    assert!(min_gap > 1e-2, "a near tie ({min_gap}) on the greedy path");
    let text = tokenizer.decode(&tokens).expect("decodes");

    if common::blessing() {
        let json = serde_json::json!({
            "prompt": gguf::PROMPT,
            "promptTokens": prompt,
            "maxTokens": gguf::MAX_TOKENS,
            "tokens": tokens,
            "text": text,
            "minGap": min_gap,
            "logits": logits,
        });
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/gguf.json");
        std::fs::write(
            path,
            serde_json::to_string(&json).expect("serialises") + "\n",
        )
        .expect("fixture written");
        return;
    }
    let expected = gguf::expected();
    assert_eq!(expected["promptTokens"], serde_json::json!(prompt));
    assert_eq!(expected["tokens"], serde_json::json!(tokens));
    assert_eq!(text, gguf::expected_text());
    let diff = gguf::max_abs_diff(&logits, &gguf::expected_logits());
    assert!(
        diff < 1e-5,
        "native logits moved by {diff}; rebless if intended"
    );
}

/// A model whose largest matrix exceeds the WebGPU device's largest buffer is named with
/// its figures before anything is uploaded (the browser's load then goes to the CPU for
/// "auto" and refuses "webgpu" with that reason).
#[test]
fn a_model_larger_than_the_gpu_buffer_limit_is_named_before_upload() {
    let (draft, target) = gguf::files();
    let shape = GgufModel::from_bytes(target.clone(), None)
        .expect("the target file loads")
        .config;
    let pair = specula_wasm::GgufPair::from_files(draft, target).expect("the pair");
    let (tensor, bytes) = shape.largest_matrix();
    assert_eq!(tensor, "token_embd.weight");
    assert_eq!(bytes, 4 * (shape.vocab_size * shape.d_model) as u64);
    assert_eq!(pair.gpu_misfit(bytes, true), None);
    let why = pair.gpu_misfit(bytes - 1, true).expect("one byte too many");
    for needle in [
        "target",
        tensor,
        &bytes.to_string(),
        &(bytes - 1).to_string(),
    ] {
        assert!(why.contains(needle), "{why} lacks {needle}");
    }
    assert!(
        why.contains(&shape.loaded_bytes().to_string()),
        "{why} lacks the model's whole size"
    );
}
