//! The stage profile of a loaded model's host forward pass through the bindings
//! (`profileStages`, `stageTimes`): every stage named, the stages within the pass and the
//! pass within the measured call, the same logits as without it, typed errors for misuse.

use js_sys::Float32Array;
use specula_engine::ForwardStage;
use specula_wasm::{BackendChoice, Engine};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::wasm_support::{error_code, error_field, js, load_untrained, stringify};

/// `performance.now()`, read through `globalThis` (an import of the same name as the
/// module's own clock would clash with it at link time).
fn performance_now() -> f64 {
    let performance =
        js_sys::Reflect::get(&js_sys::global(), &"performance".into()).expect("performance");
    let now: js_sys::Function = js_sys::Reflect::get(&performance, &"now".into())
        .expect("performance.now")
        .into();
    now.call0(&performance)
        .ok()
        .and_then(|t| t.as_f64())
        .expect("a time")
}

/// A prompt of 12 tokens, then 5 new positions, all queried.
const REQUEST: &str = r#"{"committedLen":12,"sequences":[[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]],
    "queries":[{"sequence":0,"prefixLen":13},{"sequence":0,"prefixLen":14},
    {"sequence":0,"prefixLen":15},{"sequence":0,"prefixLen":16},{"sequence":0,"prefixLen":17}]}"#;

/// The prompt's 12 tokens, cached by a first call.
const PROMPT: &str = r#"{"committedLen":12,"sequences":[[1,2,3,4,5,6,7,8,9,10,11,12]],
    "queries":[{"sequence":0,"prefixLen":12}]}"#;

async fn prompt(engine: &Engine) {
    JsFuture::from(engine.forward("target".into(), js(PROMPT)))
        .await
        .expect("the target answers");
}

/// The target's logits for `REQUEST` and the call's milliseconds.
async fn target_logits(engine: &Engine) -> (Vec<f32>, f64) {
    let started = performance_now();
    let logits = JsFuture::from(engine.forward("target".into(), js(REQUEST)))
        .await
        .expect("the target answers");
    let ms = performance_now() - started;
    (Float32Array::from(logits).to_vec(), ms)
}

#[wasm_bindgen_test]
async fn the_stage_profile_times_every_stage_without_changing_a_logit() {
    let plain = Engine::new();
    load_untrained(&plain, BackendChoice::Cpu).await;
    prompt(&plain).await;
    let (want, _) = target_logits(&plain).await;

    let engine = Engine::new();
    let err = engine
        .profile_stages("target", JsValue::TRUE)
        .expect_err("not loaded");
    assert_eq!(error_code(&err), "not_loaded");
    load_untrained(&engine, BackendChoice::Cpu).await;
    prompt(&engine).await;
    engine
        .profile_stages("target", JsValue::TRUE)
        .expect("the profile turns on");
    let (got, call_ms) = target_logits(&engine).await;
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&want), "the profile changes no logit");

    let report = stringify(
        &engine
            .stage_times("target", js(r#"{"reset":true}"#))
            .expect("read"),
    );
    assert_eq!(report["enabled"], true, "{report}");
    // One pass of the 5 new positions after the cached prompt.
    assert_eq!(report["passes"], 1, "{report}");
    assert_eq!(report["positions"], 5, "{report}");
    let stages = report["stagesMs"].as_object().expect("stagesMs");
    // serde_json's map sorts its keys: compare as sorted lists.
    let names: Vec<&str> = stages.keys().map(String::as_str).collect();
    let mut want = ForwardStage::ALL.map(ForwardStage::name);
    want.sort_unstable();
    assert_eq!(names, want, "{report}");
    let ms: Vec<f64> = stages.values().map(|v| v.as_f64().expect("ms")).collect();
    assert!(ms.iter().all(|&ms| ms >= 0.0), "{report}");
    let total = report["totalMs"].as_f64().expect("totalMs");
    let sum: f64 = ms.iter().sum();
    // Durations round to nanoseconds on the way in and out.
    assert!(
        sum <= total + 1e-5 && total <= call_ms + 1e-5,
        "{report} in {call_ms} ms"
    );
    assert!(total > 0.0, "{report}");

    // Read with reset: zero again, still on; off, a call adds nothing.
    let again = stringify(
        &engine
            .stage_times("target", JsValue::UNDEFINED)
            .expect("read"),
    );
    assert_eq!(
        (again["passes"].as_u64(), again["totalMs"].as_f64()),
        (Some(0), Some(0.0)),
        "{again}"
    );
    engine
        .profile_stages("target", JsValue::FALSE)
        .expect("off");
    target_logits(&engine).await;
    let off = stringify(&engine.stage_times("target", JsValue::NULL).expect("read"));
    assert_eq!(
        (&off["enabled"], &off["passes"]),
        (&false.into(), &0.into())
    );
    // The draft has its own profile.
    engine
        .profile_stages("draft", JsValue::TRUE)
        .expect("the draft's");

    for (err, code, field) in [
        (
            engine
                .profile_stages("middle", JsValue::TRUE)
                .expect_err("role"),
            "invalid_option",
            "role",
        ),
        (
            engine.profile_stages("target", js("1")).expect_err("on"),
            "invalid_option",
            "on",
        ),
        (
            engine
                .stage_times("target", js(r#"{"reset":1}"#))
                .expect_err("reset"),
            "invalid_option",
            "reset",
        ),
        (
            engine
                .stage_times("target", js(r#"{"rest":true}"#))
                .expect_err("name"),
            "invalid_option",
            "rest",
        ),
        (
            engine.stage_times("draft", js("[]")).expect_err("shape"),
            "invalid_option",
            "options",
        ),
    ] {
        assert_eq!(
            (error_code(&err).as_str(), error_field(&err).as_str()),
            (code, field)
        );
    }
}
