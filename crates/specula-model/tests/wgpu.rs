//! The bundled models on burn-wgpu natively (a GPU, or Mesa lavapipe — a software Vulkan
//! device — on GPU-less Linux: `apt-get install mesa-vulkan-drivers libvulkan1`). Not in
//! CI (the `wgpu` feature makes the build much longer); run on demand with
//! `cargo test --release -p specula-model --features wgpu --test wgpu`.
#![cfg(feature = "wgpu")]

use specula_engine::{
    DecodeConfig, Decoder, GammaPolicy, Method, SamplingConfig, generate, generate_autoregressive,
};
use specula_model::{Backend, ModelRole, bundled};

const PROMPT: &str = "ROMEO:\n";

fn greedy(method: Method) -> DecodeConfig {
    DecodeConfig::builder(method)
        .sampling(SamplingConfig::greedy())
        .max_new_tokens(24)
        .build()
        .unwrap()
}

/// Greedy autoregressive and greedy speculative text from the pair on one backend.
fn texts(backend: Backend) -> (String, String) {
    let tokenizer = bundled::tokenizer().unwrap();
    let prompt = tokenizer.encode(PROMPT).unwrap();
    let mut target = bundled::load(ModelRole::Target, backend).unwrap();
    let mut draft = bundled::load(ModelRole::Draft, backend).unwrap();
    let mut decoder = Decoder::new(greedy(Method::Autoregressive), prompt.clone()).unwrap();
    let plain = generate_autoregressive(&mut decoder, &mut target).unwrap();
    target.reset();
    let method = Method::Speculative {
        gamma: 4,
        policy: GammaPolicy::Fixed,
    };
    let mut decoder = Decoder::new(greedy(method), prompt).unwrap();
    let fast = generate(&mut decoder, &mut draft, &mut target).unwrap();
    (
        tokenizer.decode(&plain.tokens).unwrap(),
        tokenizer.decode(&fast.tokens).unwrap(),
    )
}

#[test]
fn wgpu_reproduces_the_cpu_greedy_text_and_speculative_equals_autoregressive() {
    let (cpu, _) = texts(Backend::Cpu);
    let (gpu_plain, gpu_fast) = texts(Backend::Wgpu);
    assert_eq!(gpu_plain, cpu, "wgpu greedy text differs from the CPU's");
    assert_eq!(gpu_fast, gpu_plain, "greedy speculative differs on wgpu");
}
