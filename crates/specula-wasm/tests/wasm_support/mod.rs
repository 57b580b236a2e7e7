//! Helpers for the wasm tests: JS values from JSON, error fields, running a generation.
#![allow(dead_code)]

use specula_wasm::untrained::{Size, untrained_bundles};
use specula_wasm::{BackendChoice, BackendInfo, DraftBackend, Engine};
use wasm_bindgen::JsValue;

/// A JS value from JSON text.
pub fn js(json: &str) -> JsValue {
    js_sys::JSON::parse(json).expect("valid JSON")
}

/// A JS value as serde_json.
pub fn stringify(value: &JsValue) -> serde_json::Value {
    let text: String = js_sys::JSON::stringify(value).expect("stringify").into();
    serde_json::from_str(&text).expect("JSON")
}

/// The `message` of a thrown Error.
pub fn error_message(err: &JsValue) -> String {
    js_sys::Reflect::get(err, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_else(|| format!("not an Error: {err:?}"))
}

/// The `code` of a thrown SpeculaError.
pub fn error_code(err: &JsValue) -> String {
    let name = js_sys::Reflect::get(err, &"name".into())
        .ok()
        .and_then(|m| m.as_string());
    assert_eq!(name.as_deref(), Some("SpeculaError"), "{err:?}");
    js_sys::Reflect::get(err, &"code".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_default()
}

/// Loads the seeded test models, the draft where the target runs.
pub async fn load_untrained(engine: &Engine, choice: BackendChoice) -> BackendInfo {
    load_untrained_with(engine, choice, DraftBackend::Same).await
}

/// Loads the seeded test models with the draft placed as `draft` says.
pub async fn load_untrained_with(
    engine: &Engine,
    choice: BackendChoice,
    draft: DraftBackend,
) -> BackendInfo {
    let bundles = untrained_bundles(crate::common::SEED, Size::Test).expect("bundles");
    engine
        .load_bundles(choice, draft, bundles)
        .await
        .expect("models load")
}

/// Runs the started generation to the end; returns its text.
pub async fn run_to_end(engine: &Engine) -> String {
    let mut text = String::new();
    while let Some(round) = engine.next_round_rs().await.expect("round runs") {
        text.push_str(&round.text);
    }
    assert_eq!(engine.summary_rs().expect("summary").text, text);
    text
}

/// Yields to the microtask queue only: no timer, no macrotask, so what this waits for does
/// not depend on how fast the machine is. Futures spawned before the call (their first
/// poll is a microtask) run first.
pub async fn microtask() {
    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&JsValue::UNDEFINED))
        .await
        .expect("a resolved promise resolves");
}

/// JSON values equal up to 1e-12 (relative) in every number.
pub fn close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| close(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
        }
        _ => a == b,
    }
}

/// The `field` of a thrown SpeculaError (empty when it has none).
pub fn error_field(err: &JsValue) -> String {
    js_sys::Reflect::get(err, &"field".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_default()
}

/// Loads the synthetic GGUF pair of `common::gguf` through `load`'s JavaScript options,
/// as the package's worker passes downloaded files; resolves to the backend report.
pub async fn load_gguf(engine: &Engine, backend: &str) -> serde_json::Value {
    try_load_gguf(engine, backend)
        .await
        .expect("the GGUF pair loads")
}

/// [`load_gguf`], giving the error of a load that fails.
pub async fn try_load_gguf(engine: &Engine, backend: &str) -> Result<serde_json::Value, JsValue> {
    let (draft, target) = crate::common::gguf::files();
    let options = js_sys::Object::new();
    let set = |key: &str, value: JsValue| {
        js_sys::Reflect::set(&options, &key.into(), &value).expect("set");
    };
    set("backend", backend.into());
    set(
        "draftGguf",
        js_sys::Uint8Array::from(draft.as_slice()).into(),
    );
    set(
        "targetGguf",
        js_sys::Uint8Array::from(target.as_slice()).into(),
    );
    let info = wasm_bindgen_futures::JsFuture::from(engine.load(options.into())).await?;
    Ok(stringify(&info))
}

/// The GGUF case on a loaded engine: the target's logits at every prompt position within
/// `tolerance` of the native ones, and every method's greedy text equal to native.
pub async fn check_gguf_case(engine: &Engine, tolerance: f32) {
    use crate::common::gguf;
    let expected = gguf::expected();
    let prompt: Vec<u32> = serde_json::from_value(expected["promptTokens"].clone()).expect("ids");
    let tokens: Vec<i32> = engine
        .tokenize(gguf::PROMPT)
        .expect("the prompt encodes")
        .to_vec();
    assert_eq!(tokens, prompt.iter().map(|&t| t as i32).collect::<Vec<_>>());
    let queries: Vec<serde_json::Value> = (1..=prompt.len())
        .map(|n| serde_json::json!({ "sequence": 0, "prefixLen": n }))
        .collect();
    let request = serde_json::json!({
        "committedLen": 0,
        "sequences": [prompt],
        "queries": queries,
    });
    let logits = wasm_bindgen_futures::JsFuture::from(
        engine.forward("target".into(), js(&request.to_string())),
    )
    .await
    .expect("a forward pass");
    let logits = js_sys::Float32Array::from(logits).to_vec();
    let diff = gguf::max_abs_diff(&logits, &gguf::expected_logits());
    assert!(diff < tolerance, "logits differ from native by {diff}");
    for method in ["autoregressive", "speculative", "spectr"] {
        engine.start_with(&gguf::greedy(method)).expect("starts");
        assert_eq!(run_to_end(engine).await, gguf::expected_text(), "{method}");
    }
}
