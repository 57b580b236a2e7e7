//! The committed weights: checksums, size, and a pinned greedy continuation of each model
//! (and of greedy speculative decoding over the pair, which must equal the target's).

use specula_engine::{
    DecodeConfig, Decoder, GammaPolicy, Method, SamplingConfig, generate, generate_autoregressive,
};
use specula_model::{Backend, BurnLm, ModelRole, bundled, sha256_hex};

const PROMPT: &str = "ROMEO:\n";
const LENGTH: usize = 48;
/// Greedy continuations of PROMPT, recorded when the weights were committed.
const PINNED_TARGET: &str = "I have not so see the sea the sea straight\nThe p";
const PINNED_DRAFT: &str = "The should be so so soul be so so soul.\n\nROMEO:\n";

fn greedy(method: Method) -> DecodeConfig {
    DecodeConfig {
        sampling: SamplingConfig::greedy(),
        max_new_tokens: LENGTH,
        ..DecodeConfig::new(method)
    }
}

fn continuation(model: &mut BurnLm) -> String {
    let tokenizer = bundled::tokenizer().unwrap();
    let prompt = tokenizer.encode(PROMPT).unwrap();
    let mut decoder = Decoder::new(greedy(Method::Autoregressive), prompt).unwrap();
    let out = generate_autoregressive(&mut decoder, model).unwrap();
    tokenizer.decode(&out.tokens).unwrap()
}

#[test]
fn checksums_match_the_committed_files_and_the_size_budget() {
    let sums = include_str!("../weights/SHA256SUMS");
    let mut total = 0;
    for role in [ModelRole::Draft, ModelRole::Target] {
        let (meta, weights) = bundled::files(role);
        total += meta.len() + weights.len();
        for (bytes, ext) in [(meta, "json"), (weights, "bpk")] {
            let line = format!("{}  {}.{ext}", sha256_hex(bytes), role.name());
            assert!(sums.lines().any(|l| l == line), "SHA256SUMS lacks {line:?}");
        }
        let bundle = bundled::bundle(role).unwrap();
        assert_eq!(bundle.meta.role, role);
    }
    assert!(total <= 24 << 20, "{total} bytes of weights");
}

#[test]
fn bundled_models_reproduce_the_pinned_greedy_text() {
    let mut target = bundled::load(ModelRole::Target, Backend::Cpu).unwrap();
    let mut draft = bundled::load(ModelRole::Draft, Backend::Cpu).unwrap();
    assert_eq!(continuation(&mut target), PINNED_TARGET);
    assert_eq!(continuation(&mut draft), PINNED_DRAFT);
    let tokenizer = bundled::tokenizer().unwrap();
    let method = Method::Speculative {
        gamma: 4,
        policy: GammaPolicy::Fixed,
    };
    let mut decoder = Decoder::new(greedy(method), tokenizer.encode(PROMPT).unwrap()).unwrap();
    let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
    assert_eq!(tokenizer.decode(&out.tokens).unwrap(), PINNED_TARGET);
}
