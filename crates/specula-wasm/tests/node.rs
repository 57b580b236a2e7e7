//! wasm-bindgen tests in Node: `plan`, option validation from JavaScript values, and the
//! models on burn's CPU backend inside wasm (greedy text equal to the native reference),
//! plus the error paths that must leave the engine usable.
#![cfg(target_arch = "wasm32")]

mod common;
mod node_stages;
mod wasm_support;

use specula_core::{PlanInput, PlanMethod, PlanParams, SamplingConfig, plan_report};
use specula_engine::ErrorCode;
use specula_wasm::{
    BackendChoice, DraftBackend, Engine, ModuleKind, plan, retarget, theory,
    validate_generate_options,
};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

use wasm_support::{
    close, error_code, error_field, error_message, js, load_untrained, load_untrained_with,
    run_to_end, stringify,
};

#[wasm_bindgen_test]
fn plan_returns_the_cli_report() {
    let got = plan(js(
        r#"{"method":"spectr","selection":"kseq","target":[0.1,0.2,0.3,0.4],"draft":[0.5,0.3,0.15,0.05],"drafts":3}"#,
    ))
    .expect("plan runs");
    let input = PlanInput {
        method: PlanMethod::Spectr,
        target: vec![0.1, 0.2, 0.3, 0.4],
        draft: vec![0.5, 0.3, 0.15, 0.05],
        normalize: false,
        params: PlanParams::KSeq { k: 3, rho: None },
        sampling: SamplingConfig::default(),
        bug: None,
    };
    let expected = serde_json::to_value(plan_report(&input).expect("core plan")).expect("json");
    // k-Seq's root finding uses randomised selection: sums may differ in the last bit.
    assert!(close(&stringify(&got), &expected), "{got:?} vs {expected}");
    assert!(expected.get("rhoStar").is_some() && expected.get("klTargetOutput").is_some());
}

#[wasm_bindgen_test]
fn plan_errors_name_their_option() {
    // (options, the field named, a fragment of the message): the engine's PlanOptions.
    let cases = [
        (
            r#"{"method":"beam","target":[1],"draft":[1]}"#,
            "method",
            "method must be one of speculative",
        ),
        (
            r#"{"method":"speculative","target":"0.5,0.5","draft":[0.5,0.5]}"#,
            "target",
            "target must be an array of numbers, got the string",
        ),
        (
            r#"{"method":"speculative","target":[0.5,"x"],"draft":[0.5,0.5]}"#,
            "target[1]",
            "target[1] must be a number",
        ),
        (
            r#"{"method":"mentored","target":[0.5,0.5],"draft":[0.5,0.5],"kl":-1}"#,
            "kl",
            "kl must be a finite number >= 0",
        ),
        (
            r#"{"method":"speculative","target":[0.5,0.5],"draft":[0.5,0.5],"colour":1}"#,
            "colour",
            "unknown option \"colour\"",
        ),
        (
            r#"{"method":"speculative","target":[0.6,0.6],"draft":[0.5,0.5]}"#,
            "target",
            "set normalize to rescale them",
        ),
        ("42", "options", "options must be an object"),
    ];
    for (options, field, needle) in cases {
        let err = plan(js(options)).expect_err(options);
        let message = error_message(&err);
        assert!(message.contains(needle), "{options}: {message}");
        assert_eq!(error_code(&err), "invalid_option", "{options}");
        assert_eq!(error_field(&err), field, "{options}");
    }
}

#[wasm_bindgen_test]
fn generate_options_are_checked_with_named_errors() {
    let ok = validate_generate_options(js(
        r#"{"prompt":"To be","method":"spectr","gamma":3,"drafts":2}"#,
    ));
    assert!(ok.is_ok());
    let tree =
        validate_generate_options(js(r#"{"prompt":"To be","method":"spectr","tree":[2,2,1]}"#));
    assert!(tree.is_ok());
    // (options, the field named, a fragment of the message): the engine's one options
    // parser (specula_engine::options) through the bindings.
    let cases = [
        (
            r#"{"prompt":"To be","method":"spectr","tree":"2,2"}"#,
            "tree",
            "tree must be an array of whole numbers",
        ),
        (
            r#"{"prompt":"To be","method":"spectr","tree":[2,0]}"#,
            "tree[1]",
            "tree[1] must be a whole number from 1",
        ),
        (
            r#"{"prompt":"To be","method":"speculative","tree":[2]}"#,
            "tree",
            "tree does not apply to method \"speculative\"",
        ),
        (
            r#"{"prompt":"To be","dynamicGamma":1}"#,
            "dynamicGamma",
            "dynamicGamma must be true or false",
        ),
        (
            r#"{"prompt":"To be","gamma":0}"#,
            "gamma",
            "gamma must be a whole number from 1",
        ),
        (
            r#"{"prompt":"To be","gamma":"3"}"#,
            "gamma",
            "gamma must be a number, got the string \"3\"",
        ),
        (
            r#"{"prompt":"To be","method":"mentored","kl":-0.5}"#,
            "kl",
            "kl must be a KL budget D from 0",
        ),
        (
            r#"{"prompt":"To be","method":"beam"}"#,
            "method",
            "method must be one of autoregressive",
        ),
        (
            r#"{"prompt":"To be","temprature":0.5}"#,
            "temprature",
            "unknown option \"temprature\"",
        ),
        (
            r#"{"prompt":42}"#,
            "prompt",
            "prompt must be a string, got the number 42",
        ),
        (
            r#"{"prompt":"To be","maxTokens":true}"#,
            "maxTokens",
            "maxTokens must be a number",
        ),
        ("null", "options", "options must be an object"),
        ("[1,2]", "options", "options must be an object"),
    ];
    for (options, field, needle) in cases {
        let err = validate_generate_options(js(options)).expect_err(options);
        assert_eq!(error_code(&err), "invalid_option", "{options}");
        assert_eq!(error_field(&err), field, "{options}");
        let message = error_message(&err);
        assert!(message.contains(needle), "{options}: {message}");
    }
    // NaN cannot be written in JSON.
    let nan = js(r#"{"prompt":"To be"}"#);
    js_sys::Reflect::set(&nan, &"temperature".into(), &f64::NAN.into()).expect("set");
    let message = error_message(&validate_generate_options(nan).expect_err("NaN"));
    assert!(
        message.contains("temperature") && message.contains("NaN"),
        "{message}"
    );
}

#[wasm_bindgen_test]
async fn cpu_model_in_wasm_matches_the_native_greedy_text() {
    let engine = Engine::new();
    let info = load_untrained(&engine, BackendChoice::Cpu).await;
    assert_eq!(info.backend, "cpu");
    let expected = common::expected_text();
    for method in ["autoregressive", "speculative", "spectr"] {
        engine.start_with(&common::greedy(method)).expect("starts");
        let text = run_to_end(&engine).await;
        assert_eq!(text, expected, "{method} on CPU in wasm");
    }
    // Greedy decoding is exact whatever the draft shape or γ schedule.
    let tree = specula_engine::options::DecodeOptions {
        gamma: None,
        drafts: None,
        tree: Some(vec![2.0, 1.0, 1.0]),
        ..common::greedy("spectr")
    };
    let dynamic = specula_engine::options::DecodeOptions {
        dynamic_gamma: Some(true),
        ..common::greedy("speculative")
    };
    for options in [tree, dynamic] {
        engine.start_with(&options).expect("starts");
        assert_eq!(run_to_end(&engine).await, expected, "{options:?}");
    }
}

#[wasm_bindgen_test]
async fn bad_calls_throw_and_leave_the_engine_usable() {
    let engine = Engine::new();
    let err = engine
        .start(js(r#"{"prompt":"To be"}"#))
        .expect_err("not loaded");
    assert_eq!(error_code(&err), "not_loaded");
    let err = engine.next_round_rs().await.expect_err("not loaded");
    assert_eq!(err.code().as_str(), "not_loaded");

    load_untrained(&engine, BackendChoice::Cpu).await;
    let err = engine.next_round_rs().await.expect_err("not started");
    assert_eq!(err.code().as_str(), "not_started");
    let err = engine
        .start(js(r#"{"prompt":"Tö be"}"#))
        .expect_err("unknown character");
    assert_eq!(error_code(&err), "bad_prompt");
    assert!(
        error_message(&err).contains("'ö'"),
        "{}",
        error_message(&err)
    );
    let err = engine
        .start(js(r#"{"prompt":"To be","gamma":0}"#))
        .expect_err("gamma 0");
    assert_eq!(error_code(&err), "invalid_option");
    assert_eq!(error_field(&err), "gamma");
    // Past the models' context the window slides; only maxTokens' own limit refuses.
    let err = engine
        .start(js(r#"{"prompt":"To be","maxTokens":65537}"#))
        .expect_err("too long");
    assert_eq!(error_field(&err), "maxTokens");
    assert!(
        error_message(&err).contains("maxTokens must be a whole number from 1 to 65536"),
        "{}",
        error_message(&err)
    );

    // Abort after one round: the next call says the generation is over.
    engine
        .start_with(&common::greedy("speculative"))
        .expect("starts");
    assert!(engine.next_round_rs().await.expect("round").is_some());
    engine.abort();
    assert!(engine.next_round_rs().await.expect("aborted").is_none());
    assert!(engine.summary_rs().expect("summary").aborted);

    // After all that, a full generation still gives the reference text.
    engine
        .start_with(&common::greedy("speculative"))
        .expect("starts again");
    assert_eq!(run_to_end(&engine).await, common::expected_text());
}

#[wasm_bindgen_test]
async fn the_draft_backend_option_is_checked_and_reported() {
    let engine = Engine::new();
    for (options, needle) in [
        (
            r#"{"draftBackend":"gpu"}"#,
            r#"draftBackend must be "same", "cpu" or "unfused", got "gpu""#,
        ),
        (r#"{"draftBackend":3}"#, "draftBackend"),
    ] {
        let err = JsFuture::from(engine.load(js(options)))
            .await
            .expect_err("refused");
        assert_eq!(error_code(&err), "invalid_option", "{options}");
        assert!(
            error_message(&err).contains(needle),
            "{}",
            error_message(&err)
        );
    }
    // With the target on the CPU the draft is there too, whatever was asked.
    let info = load_untrained_with(&engine, BackendChoice::Cpu, DraftBackend::Cpu).await;
    assert_eq!((info.backend, info.draft_backend), ("cpu", "cpu"));
    let reported = stringify(&engine.backend_info().expect("info"));
    assert_eq!(reported["draftBackend"], "cpu", "{reported}");
    engine
        .start_with(&common::greedy("speculative"))
        .expect("starts");
    assert_eq!(run_to_end(&engine).await, common::expected_text());
}

/// Node has no WebGPU, and the CPU-only module (`--no-default-features`) none at all:
/// `webgpu` is a typed refusal, `auto` the CPU, and the report names the module.
#[wasm_bindgen_test]
async fn the_module_reports_its_kind_and_webgpu_is_refused_without_a_gpu() {
    let engine = Engine::new();
    let bundles = || {
        specula_wasm::untrained::untrained_bundles(
            common::SEED,
            specula_wasm::untrained::Size::Test,
        )
        .expect("bundles")
    };
    let err = engine
        .load_bundles(BackendChoice::WebGpu, DraftBackend::Same, bundles())
        .await
        .expect_err("no WebGPU here");
    assert_eq!(err.code(), ErrorCode::BackendUnavailable, "{err}");
    let cpu_only = ModuleKind::THIS == ModuleKind::Cpu;
    let needle = if cpu_only {
        "CPU-only"
    } else {
        "navigator.gpu"
    };
    assert!(err.to_string().contains(needle), "{err}");
    let info = load_untrained(&engine, BackendChoice::Auto).await;
    assert_eq!((info.backend, info.module), ("cpu", ModuleKind::THIS));
    let reason = info.reason.unwrap_or_default();
    assert!(reason.contains(needle), "{reason}");
    let reported = stringify(&engine.backend_info().expect("info"));
    let module = if cpu_only { "cpu" } else { "full" };
    assert_eq!(reported["module"], module, "{reported}");
    engine
        .start_with(&common::greedy("speculative"))
        .expect("starts");
    assert_eq!(run_to_end(&engine).await, common::expected_text());
}

#[wasm_bindgen_test]
async fn tampered_weights_fail_the_checksum() {
    let parts = specula_wasm::untrained::untrained_bundles(1, specula_wasm::untrained::Size::Test)
        .expect("bundles");
    let mut weights = parts.draft.weights.clone();
    weights[100] ^= 1;
    let meta = serde_json::to_vec(&parts.draft.meta).expect("meta");
    let target_meta = serde_json::to_vec(&parts.target.meta).expect("meta");
    let err =
        specula_wasm::Bundles::from_parts(&meta, &weights, &target_meta, &parts.target.weights)
            .expect_err("checksum");
    assert_eq!(err.code().as_str(), "bad_weights");
    assert!(err.to_string().contains("checksum"), "{err}");
}

#[wasm_bindgen_test]
async fn an_edited_description_fails_its_own_checksum() {
    let parts = specula_wasm::untrained::untrained_bundles(1, specula_wasm::untrained::Size::Test)
        .expect("bundles");
    // Within every range, so only the description's own digest can tell.
    let mut meta = parts.draft.meta.clone();
    meta.config.max_seq -= 1;
    let meta = serde_json::to_vec(&meta).expect("meta");
    let target_meta = serde_json::to_vec(&parts.target.meta).expect("meta");
    let err = specula_wasm::Bundles::from_parts(
        &meta,
        &parts.draft.weights,
        &target_meta,
        &parts.target.weights,
    )
    .expect_err("checksum");
    assert_eq!(err.code().as_str(), "bad_weights");
    assert!(
        err.to_string()
            .contains("draft model: checksum mismatch for the draft description"),
        "{err}"
    );
}

#[wasm_bindgen_test]
fn theory_and_retarget_are_the_cores_closed_forms() {
    let curves =
        stringify(&theory(js(r#"{"alpha":0.8,"gammas":[1,4],"costRatio":0.1}"#)).expect("theory"));
    for (i, g) in [1_u32, 4].into_iter().enumerate() {
        let tokens = specula_core::theory::expected_tokens_per_round(0.8, g).unwrap();
        let factor = specula_core::theory::walltime_factor(0.8, g, 0.1).unwrap();
        assert_eq!(curves["expectedTokens"][i].as_f64(), Some(tokens));
        assert_eq!(curves["walltimeFactor"][i].as_f64(), Some(factor));
    }
    let err = theory(js(r#"{"alpha":1.5,"gammas":[1]}"#)).expect_err("alpha > 1");
    assert_eq!(
        (error_code(&err).as_str(), error_field(&err).as_str()),
        ("invalid_option", "alpha")
    );
    let err = theory(js(r#"{"alpha":0.5,"gammas":[1,0]}"#)).expect_err("gamma 0");
    assert_eq!(error_field(&err), "gammas[1]");

    let probs = [0.5, 0.3, 0.2];
    let same: Vec<f64> = serde_wasm_bindgen::from_value(
        retarget(js(
            r#"{"probs":[0.5,0.3,0.2],"from":0.8,"temperature":0.8}"#,
        ))
        .expect("same T"),
    )
    .unwrap();
    assert!(
        same.iter().zip(probs).all(|(a, b)| (a - b).abs() < 1e-12),
        "{same:?}"
    );
    // Halving the temperature squares the ratios: p ∝ q².
    let colder: Vec<f64> = serde_wasm_bindgen::from_value(
        retarget(js(r#"{"probs":[0.5,0.3,0.2],"from":1,"temperature":0.5}"#)).expect("T/2"),
    )
    .unwrap();
    let z: f64 = probs.iter().map(|q| q * q).sum();
    assert!(
        colder
            .iter()
            .zip(probs)
            .all(|(a, q)| (a - q * q / z).abs() < 1e-12),
        "{colder:?}"
    );
    let greedy: Vec<f64> = serde_wasm_bindgen::from_value(
        retarget(js(r#"{"probs":[0.2,0.5,0.3],"from":1,"temperature":0}"#)).expect("greedy"),
    )
    .unwrap();
    assert_eq!(greedy, [0.0, 1.0, 0.0]);
    let top2: Vec<f64> = serde_wasm_bindgen::from_value(
        retarget(js(r#"{"probs":[0.2,0.5,0.3],"from":1,"topK":2}"#)).expect("top-k"),
    )
    .unwrap();
    assert!(
        (top2[0]).abs() < 1e-15 && (top2[1] - 0.625).abs() < 1e-12,
        "{top2:?}"
    );
    let err = retarget(js(r#"{"probs":[0.5,0.5],"from":0}"#)).expect_err("from 0");
    assert_eq!(error_field(&err), "from");
}

#[wasm_bindgen_test]
async fn a_gguf_pair_on_the_cpu_in_wasm_matches_native() {
    let engine = Engine::new();
    let info = wasm_support::load_gguf(&engine, "cpu").await;
    assert_eq!(info["backend"], "cpu");
    // A GGUF model's tokens are BPE pieces: it has no alphabet to list, but every
    // token's text, which the prompt's tokens spell out.
    assert_eq!(engine.alphabet().expect("loaded"), "");
    let texts = engine.token_texts().expect("loaded");
    assert_eq!(texts.len(), engine.vocab_size().expect("loaded") as usize);
    let ids = engine
        .tokenize(common::gguf::PROMPT)
        .expect("encodes")
        .to_vec();
    let spelled: String = ids.iter().map(|&t| texts[t as usize].as_str()).collect();
    assert_eq!(spelled, common::gguf::PROMPT);
    wasm_support::check_gguf_case(&engine, 1e-4).await;
}

#[wasm_bindgen_test]
async fn gguf_load_options_are_checked() {
    let engine = Engine::new();
    let (draft, target) = common::gguf::files();
    let load = |pairs: Vec<(&str, JsValue)>| {
        let options = js_sys::Object::new();
        for (k, v) in pairs {
            js_sys::Reflect::set(&options, &k.into(), &v).expect("set");
        }
        JsFuture::from(engine.load(options.into()))
    };
    let bytes = |b: &[u8]| -> JsValue { js_sys::Uint8Array::from(b).into() };
    // One file alone, a file mixed with the bundled format, and a file that is not GGUF.
    let err = load(vec![("targetGguf", bytes(&target))])
        .await
        .expect_err("no draft");
    assert!(
        error_message(&err).contains("draftGguf"),
        "{}",
        error_message(&err)
    );
    let err = load(vec![
        ("targetGguf", bytes(&target)),
        ("draftGguf", bytes(&draft)),
        ("draftMeta", "{}".into()),
    ])
    .await
    .expect_err("mixed");
    assert_eq!(error_code(&err), "invalid_option");
    let err = load(vec![
        ("targetGguf", bytes(&target)),
        ("draftGguf", bytes(b"not a model")),
    ])
    .await
    .expect_err("not GGUF");
    assert_eq!(error_code(&err), "bad_weights");
    assert!(
        error_message(&err).contains("draft model"),
        "{}",
        error_message(&err)
    );
    // A draft with another vocabulary is refused before either model is built.
    let other = specula_gguf::synthetic::SyntheticLlama {
        vocab_size: specula_gguf::synthetic::BASE_VOCAB + 8,
        ..specula_gguf::synthetic::SyntheticLlama::tiny()
    }
    .build();
    let err = load(vec![
        ("targetGguf", bytes(&target)),
        ("draftGguf", bytes(&other)),
    ])
    .await
    .expect_err("different tokenizers");
    assert_eq!(error_code(&err), "bad_weights");
    assert!(
        error_message(&err).contains("tokenizer"),
        "{}",
        error_message(&err)
    );
}

#[wasm_bindgen_test]
async fn the_lab_works_over_a_gguf_vocabulary() {
    let engine = Engine::new();
    wasm_support::load_gguf(&engine, "cpu").await;
    let vocab = engine.vocab_size().expect("loaded") as usize;
    // Position 2 reads rows only for the first tokens the target can emit (top-k 4).
    let cases = [
        (1.0, r#"{"prompt":"the cat"}"#, vocab),
        (2.0, r#"{"prompt":"the cat","topK":4}"#, 4),
    ];
    for (position, options, at_least) in cases {
        let settings = js(&format!(r#"{{"position":{position},"runs":10}}"#));
        let exact = JsFuture::from(engine.exact(js(options), settings))
            .await
            .expect("the lab's exact distribution");
        let exact = wasm_support::stringify(&exact);
        assert_eq!(exact["kind"], "target");
        let expected: Vec<f64> = serde_json::from_value(exact["expected"].clone()).expect("probs");
        assert_eq!(expected.len(), vocab);
        assert!((expected.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let support = expected.iter().filter(|&&p| p > 0.0).count();
        assert!(
            support >= at_least.min(vocab),
            "position {position}: {support}"
        );
        assert_eq!(exact["expected"], exact["target"]);
    }
}
