//! One casing for every object the package returns: each key of every object the wasm
//! module hands to JavaScript (rounds and their traces, the summary and its metrics,
//! `BackendInfo`, `load()`'s result, a model's `stageTimes()`, `plan()`, `theory()`,
//! `retarget()`, the lab's `exact()` and `fit()`, the checked options, the limits, the
//! thrown errors) is
//! camelCase, walked through the values as JavaScript sees them. A planted snake_case key
//! shows that the walk finds one.
#![cfg(target_arch = "wasm32")]

mod common;
mod wasm_support;

use js_sys::{Array, ArrayBuffer, Object};
use specula_wasm::{Engine, fit, limits, plan, retarget, theory, validate_generate_options};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

use wasm_support::js;

/// Whether `key` is camelCase: a lowercase ASCII letter, then ASCII letters and digits.
fn camel(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

/// The paths of every key of `value`, or of any object inside it, that is not camelCase.
fn bad_keys(value: &JsValue, path: &str, out: &mut Vec<String>) {
    if Array::is_array(value) {
        for (i, item) in value.unchecked_ref::<Array>().iter().enumerate() {
            bad_keys(&item, &format!("{path}[{i}]"), out);
        }
    } else if value.is_object() && !value.is_function() && !ArrayBuffer::is_view(value) {
        for key in Object::keys(value.unchecked_ref::<Object>()).iter() {
            let key = key.as_string().unwrap_or_default();
            let inner = js_sys::Reflect::get(value, &key.as_str().into()).unwrap_or_default();
            if !camel(&key) {
                out.push(format!("{path}.{key}"));
            }
            bad_keys(&inner, &format!("{path}.{key}"), out);
        }
    }
}

fn check(what: &str, value: &JsValue) {
    let mut bad = Vec::new();
    bad_keys(value, what, &mut bad);
    assert!(bad.is_empty(), "keys that are not camelCase: {bad:?}");
}

#[wasm_bindgen_test]
fn the_walk_finds_a_planted_snake_case_key() {
    let mut bad = Vec::new();
    bad_keys(
        &js(r#"{"fine":[{"alsoFine":{"not_fine":1}}]}"#),
        "planted",
        &mut bad,
    );
    assert_eq!(bad, ["planted.fine[0].alsoFine.not_fine"]);
    assert!(!camel("Upper") && !camel("") && camel("pValue2"));
}

#[wasm_bindgen_test]
fn the_math_calls_return_camel_case() {
    let probs = r#""target":[0.1,0.2,0.3,0.4],"draft":[0.5,0.3,0.15,0.05]"#;
    for options in [
        format!(r#"{{"method":"spectr","selection":"kseq",{probs},"drafts":3}}"#),
        format!(r#"{{"method":"spectr","selection":"otm",{probs},"drafts":2}}"#),
        format!(r#"{{"method":"speculative",{probs},"temperature":0}}"#),
        format!(r#"{{"method":"mentored",{probs},"kl":0.1}}"#),
        format!(r#"{{"method":"typical",{probs}}}"#),
        format!(r#"{{"method":"speculative",{probs},"bug":"argmax-draft"}}"#),
        r#"{"method":"speculative","target":[1,1],"draft":[1,1],"normalize":true}"#.to_owned(),
    ] {
        check("plan()", &plan(js(&options)).expect("plan"));
    }
    let curves = theory(js(r#"{"alpha":0.8,"gammas":[1,4],"costRatio":0.1}"#)).expect("theory");
    check("theory()", &curves);
    let probs = retarget(js(r#"{"probs":[0.5,0.5],"from":1,"topK":1}"#)).expect("retarget");
    check("retarget()", &probs);
    let checked =
        validate_generate_options(js(r#"{"prompt":"To be","method":"spectr","tree":[2,1]}"#));
    check("checkOptions()", &checked.expect("valid"));
    check("limits()", &limits().expect("limits"));
    check(
        "fit()",
        &fit(vec![3.0, 1.0], vec![0.7, 0.3], vec![0.7, 0.3]).expect("fit"),
    );
    for error in [
        plan(js(r#"{"method":"spectr"}"#)).expect_err("no target"),
        theory(js(r#"{"alpha":2,"gammas":[1]}"#)).expect_err("alpha 2"),
        retarget(js(r#"{"probs":[1]}"#)).expect_err("no from"),
        validate_generate_options(js(r#"{"prompt":"x","topK":0}"#)).expect_err("topK 0"),
    ] {
        check("a thrown error", &error);
    }
}

#[wasm_bindgen_test]
async fn a_loaded_engine_returns_camel_case() {
    let engine = Engine::new();
    let files = specula_wasm::untrained_bundles(js(r#"{"seed":1}"#)).expect("bundles");
    js_sys::Reflect::set(&files, &"backend".into(), &"cpu".into()).expect("set");
    let info = JsFuture::from(engine.load(files)).await.expect("load()");
    check("load()", &info);
    check("backendInfo()", &engine.backend_info().expect("info"));
    engine
        .profile_stages("target", JsValue::TRUE)
        .expect("the target's stage profile");
    for options in [
        r#"{"prompt":"To be","maxTokens":6,"recordDistributions":true}"#,
        r#"{"prompt":"To be","maxTokens":6,"method":"spectr","selection":"race","tree":[2,1],"recordDistributions":true}"#,
        r#"{"prompt":"To be","maxTokens":6,"method":"multiround","drafts":2}"#,
        r#"{"prompt":"To be","maxTokens":6,"method":"mentored","kl":0.5,"recordDistributions":true}"#,
        r#"{"prompt":"To be","maxTokens":6,"method":"typical","recordDistributions":true}"#,
        r#"{"prompt":"To be","maxTokens":6,"method":"lookup"}"#,
    ] {
        engine.start(js(options)).expect("starts");
        loop {
            let round = JsFuture::from(engine.next_round()).await.expect("a round");
            if round.is_null() {
                break;
            }
            check(options, &round);
        }
        check("summary()", &engine.summary().expect("summary"));
    }
    let exact = JsFuture::from(engine.exact(
        js(r#"{"prompt":"To be"}"#),
        js(r#"{"runs":3,"position":2}"#),
    ))
    .await
    .expect("exact()");
    check("exact()", &exact);
    let stages = engine
        .stage_times("target", JsValue::UNDEFINED)
        .expect("stageTimes()");
    check("stageTimes()", &stages);
    let refused = JsFuture::from(engine.exact(js(r#"{"prompt":"To be"}"#), js(r#"{"runz":3}"#)))
        .await
        .expect_err("an unknown setting");
    check("a thrown error", &refused);
    let refused = JsFuture::from(engine.load(js(r#"{"backend":"metal"}"#)))
        .await
        .expect_err("an unknown backend");
    check("a thrown error", &refused);
}
