//! The committed weights: checksums, size, and a pinned greedy continuation of each model
//! (and of greedy speculative decoding over the pair, which must equal the target's).

use specula_engine::{
    DecodeConfig, Decoder, ForwardRequest, GammaPolicy, LanguageModel, Method, Query, Role,
    SamplingConfig, generate, generate_autoregressive,
};
use specula_model::{Backend, BurnLm, ModelConfig, ModelRole, bundled, sha256_hex};

const PROMPT: &str = "ROMEO:\n";
const LENGTH: usize = 48;
/// Greedy continuations of PROMPT, recorded when the weights were committed.
const PINNED_TARGET: &str = "I will not so see the strange the strange.\n\nROME";
const PINNED_DRAFT: &str = "I have so see the state the state the state,\nAnd";

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
    // The budget, 24 MB in decimal megabytes (not MiB).
    assert!(total <= 24_000_000, "{total} bytes of weights");
}

/// `ModelConfig::for_role` is documented as the bundled shapes, and `specula train` and the
/// wasm crate's untrained "full" pairs build from it: the committed weights must agree.
#[test]
fn committed_shapes_are_the_roles_default_shapes() {
    for role in [ModelRole::Draft, ModelRole::Target] {
        let bundle = bundled::bundle(role).unwrap();
        let vocab = bundle.meta.tokenizer.vocab_size();
        assert_eq!(
            bundle.meta.config,
            ModelConfig::for_role(role, vocab),
            "{role:?}"
        );
    }
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

/// The logits of every continuation position of `PROMPT + text` from one host-path
/// request (the decoding path) and from burn's uncached forward (other kernels, other
/// summation order), `positions × vocab` each.
fn logits_both_ways(lm: &mut BurnLm, text: &str) -> (Vec<f32>, Vec<f32>) {
    let tokenizer = bundled::tokenizer().unwrap();
    let start = tokenizer.encode(PROMPT).unwrap().len();
    let tokens = tokenizer.encode(&format!("{PROMPT}{text}")).unwrap();
    let vocab = tokenizer.vocab_size();
    let burn = lm.logits_uncached(&tokens).unwrap()[(start - 1) * vocab..].to_vec();
    let request = ForwardRequest {
        role: Role::Target,
        committed_len: start,
        queries: (start..=tokens.len())
            .map(|prefix_len| Query {
                sequence: 0,
                prefix_len,
            })
            .collect(),
        sequences: vec![tokens],
    };
    let host = lm.forward(&request).unwrap().logits;
    (host, burn)
}

/// The pinned texts do not hang on a near-tie that another CPU's kernels (AVX2 instead
/// of AVX-512, say) could flip: under burn's kernels, too, each pinned character is the
/// argmax, by a margin far above how far the two forward paths' logits differ.
#[test]
fn pinned_texts_lead_by_more_than_kernel_rounding() {
    let tokenizer = bundled::tokenizer().unwrap();
    let vocab = tokenizer.vocab_size();
    for (role, text) in [
        (ModelRole::Target, PINNED_TARGET),
        (ModelRole::Draft, PINNED_DRAFT),
    ] {
        let mut lm = bundled::load(role, Backend::Cpu).unwrap();
        assert!(lm.host_forward());
        let (host, burn) = logits_both_ways(&mut lm, text);
        let next = tokenizer.encode(text).unwrap();
        let mut margin = f32::INFINITY;
        for (row, &token) in burn.chunks(vocab).zip(&next) {
            let chosen = row[token as usize];
            let rival = row
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != token as usize)
                .map(|(_, &x)| x)
                .fold(f32::NEG_INFINITY, f32::max);
            margin = margin.min(chosen - rival);
        }
        let drift = host
            .iter()
            .zip(&burn)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(
            margin > 1e-3 && drift < margin / 20.0,
            "{role:?}: smallest lead {margin}, host vs burn logits differ by {drift}"
        );
    }
}
