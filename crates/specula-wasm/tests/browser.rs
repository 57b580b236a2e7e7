//! wasm-bindgen tests in headless Chromium with WebGPU (`--enable-unsafe-webgpu`, see
//! webdriver.json): the models on WebGPU give the same greedy text as natively and as on
//! the CPU inside wasm, the draft through its fused pass or burn's; speculative greedy
//! equals autoregressive greedy; a lost device moves the generation to the CPU without
//! losing text; overlapping calls are refused.
#![cfg(target_arch = "wasm32")]

mod common;
mod wasm_support;

use specula_wasm::{BackendChoice, DraftBackend, Engine};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

use wasm_support::{error_code, load_untrained, load_untrained_with, run_to_end};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn webgpu_greedy_equals_native_and_cpu_in_wasm() {
    let expected = common::expected_text();
    let gpu = Engine::new();
    let info = load_untrained(&gpu, BackendChoice::WebGpu).await;
    assert_eq!(info.backend, "webgpu", "{info:?}");
    assert!(
        info.adapter.as_deref().is_some_and(|a| !a.is_empty()),
        "{info:?}"
    );
    let cpu = Engine::new();
    assert_eq!(
        load_untrained(&cpu, BackendChoice::Cpu).await.backend,
        "cpu"
    );
    for method in ["autoregressive", "speculative"] {
        gpu.start_with(&common::greedy(method)).expect("starts");
        assert_eq!(run_to_end(&gpu).await, expected, "{method} on WebGPU");
        cpu.start_with(&common::greedy(method)).expect("starts");
        assert_eq!(
            run_to_end(&cpu).await,
            expected,
            "{method} on CPU in the browser"
        );
    }
    // The GPU engine kept the GPU throughout.
    assert_eq!(gpu.summary_rs().expect("summary").backend.backend, "webgpu");
}

#[wasm_bindgen_test]
async fn auto_picks_webgpu_and_a_lost_device_falls_back_to_cpu_without_losing_text() {
    let engine = Engine::new();
    let info = load_untrained(&engine, BackendChoice::Auto).await;
    assert_eq!(info.backend, "webgpu", "{info:?}");
    engine
        .start_with(&common::greedy("speculative"))
        .expect("starts");
    let first = engine
        .next_round_rs()
        .await
        .expect("round")
        .expect("not done");
    assert_eq!(first.backend, "webgpu");
    let mut text = first.text;
    engine.simulate_device_loss();
    let mut fell_back = false;
    while let Some(round) = engine.next_round_rs().await.expect("round runs") {
        assert_eq!(round.backend, "cpu");
        fell_back |= round.fallback.is_some();
        text.push_str(&round.text);
    }
    assert!(fell_back, "one round reports the fallback");
    assert_eq!(text, common::expected_text());
    let summary = engine.summary_rs().expect("summary");
    assert_eq!(summary.text, text);
    assert_eq!(summary.backend.backend, "cpu");
    assert!(summary.backend.reason.is_some_and(|r| r.contains("lost")));
}

#[wasm_bindgen_test]
async fn a_cpu_draft_beside_a_webgpu_target_gives_the_same_text_and_survives_device_loss() {
    let engine = Engine::new();
    let info = load_untrained_with(&engine, BackendChoice::WebGpu, DraftBackend::Cpu).await;
    assert_eq!(
        (info.backend, info.draft_backend),
        ("webgpu", "cpu"),
        "{info:?}"
    );
    for method in ["autoregressive", "speculative", "spectr"] {
        engine.start_with(&common::greedy(method)).expect("starts");
        assert_eq!(
            run_to_end(&engine).await,
            common::expected_text(),
            "{method} with the draft on the CPU"
        );
    }
    // The target leaves the lost GPU; the draft stays where it was; no text is lost.
    engine
        .start_with(&common::greedy("speculative"))
        .expect("starts");
    let mut text = engine
        .next_round_rs()
        .await
        .expect("round")
        .expect("not done")
        .text;
    engine.simulate_device_loss();
    while let Some(round) = engine.next_round_rs().await.expect("round runs") {
        assert_eq!(round.backend, "cpu");
        text.push_str(&round.text);
    }
    assert_eq!(text, common::expected_text());
    let summary = engine.summary_rs().expect("summary");
    assert_eq!(
        (summary.backend.backend, summary.backend.draft_backend),
        ("cpu", "cpu")
    );
}

#[wasm_bindgen_test]
async fn overlapping_calls_and_abort_mid_round_leave_the_engine_usable() {
    let engine = Engine::new();
    load_untrained(&engine, BackendChoice::WebGpu).await;
    engine
        .start_with(&common::greedy("speculative"))
        .expect("starts");
    // The first call awaits the GPU, so the second finds the engine busy.
    let first = engine.next_round();
    let second = JsFuture::from(engine.next_round()).await;
    assert_eq!(error_code(&second.expect_err("busy")), "busy");
    let err = engine
        .start_with(&common::greedy("speculative"))
        .expect_err("busy");
    assert_eq!(err.code().as_str(), "busy");
    JsFuture::from(first).await.expect("first round completes");
    // Abort while a round is waiting for the GPU: the round gives null. The round's first
    // poll marks the engine busy and starts a model call that only a GPU readback (a later
    // task) can finish, so yielding to microtasks alone finds it in flight, whatever the
    // machine's speed; the abort then lands mid-round.
    let pending = engine.next_round();
    let mut yields = 0;
    while engine.summary().is_ok() {
        assert!(yields < 100, "the round never started");
        wasm_support::microtask().await;
        yields += 1;
    }
    engine.abort();
    let result = JsFuture::from(pending).await.expect("resolves");
    assert!(result.is_null(), "an aborted round resolves to null");
    assert!(engine.summary_rs().expect("summary").aborted);
    // And the engine still generates the reference text.
    engine
        .start_with(&common::greedy("speculative"))
        .expect("starts again");
    assert_eq!(run_to_end(&engine).await, common::expected_text());
}

#[wasm_bindgen_test]
async fn the_fused_draft_and_burns_draft_give_the_recorded_greedy_text() {
    // "same" runs the WebGPU draft through the fused pass, "unfused" through burn's.
    for draft in [DraftBackend::Same, DraftBackend::Unfused] {
        let engine = Engine::new();
        let info = load_untrained_with(&engine, BackendChoice::WebGpu, draft).await;
        assert_eq!((info.backend, info.draft_backend), ("webgpu", "webgpu"));
        for method in ["speculative", "spectr"] {
            engine.start_with(&common::greedy(method)).expect("starts");
            assert_eq!(
                run_to_end(&engine).await,
                common::expected_text(),
                "{method}, draft {draft:?}"
            );
        }
    }
}

#[wasm_bindgen_test]
async fn a_gguf_pair_on_webgpu_and_on_the_cpu_in_chromium_matches_native() {
    let cpu = Engine::new();
    wasm_support::load_gguf(&cpu, "cpu").await;
    wasm_support::check_gguf_case(&cpu, 1e-4).await;
    let gpu = Engine::new();
    let info = wasm_support::load_gguf(&gpu, "webgpu").await;
    assert_eq!(info["backend"], "webgpu", "{info}");
    // Another summation order on the GPU: within 1e-3, far below the greedy path's
    // closest call (minGap in the fixture).
    wasm_support::check_gguf_case(&gpu, 1e-3).await;
    // A device that cannot bind the embedding in one buffer: refused before any upload
    // for "webgpu", on the CPU with the reason for "auto".
    let small = Engine::new();
    small.simulate_gpu_buffer_limit(1000.0).expect("idle");
    let err = wasm_support::try_load_gguf(&small, "webgpu")
        .await
        .expect_err("too large for the device");
    let message = wasm_support::error_message(&err);
    assert_eq!(
        wasm_support::error_code(&err),
        "backend_unavailable",
        "{message}"
    );
    for needle in [
        "target model's token_embd.weight",
        "1000 bytes",
        "backend \"cpu\"",
    ] {
        assert!(message.contains(needle), "{message} lacks {needle}");
    }
    let info = wasm_support::load_gguf(&small, "auto").await;
    assert_eq!(info["backend"], "cpu", "{info}");
    let reason = info["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("token_embd.weight"), "{info}");
    wasm_support::check_gguf_case(&small, 1e-4).await;
}
