//! The committed weights' pinned greedy continuation of each model (and of greedy
//! speculative decoding over the pair, which must equal the target's), on the host
//! forward pass and on burn's.

use specula_engine::{
    DecodeConfig, Decoder, ForwardRequest, GammaPolicy, LanguageModel, Method, Query, Role,
    SamplingConfig, generate, generate_autoregressive,
};
use specula_host::bundled as host_bundled;
use specula_model::{Backend, BurnLm, ModelRole, bundled};

const PROMPT: &str = "ROMEO:\n";
const LENGTH: usize = 48;
/// Greedy continuations of PROMPT, recorded when the weights were committed.
const PINNED_TARGET: &str = "I will not so see the strange the strange.\n\nROME";
const PINNED_DRAFT: &str = "I have so see the state the state the state,\nAnd";

fn greedy(method: Method) -> DecodeConfig {
    DecodeConfig::builder(method)
        .sampling(SamplingConfig::greedy())
        .max_new_tokens(LENGTH)
        .build()
        .unwrap()
}

fn continuation(model: &mut impl LanguageModel) -> String {
    let tokenizer = bundled::tokenizer().unwrap();
    let prompt = tokenizer.encode(PROMPT).unwrap();
    let mut decoder = Decoder::new(greedy(Method::Autoregressive), prompt).unwrap();
    let out = generate_autoregressive(&mut decoder, model).unwrap();
    tokenizer.decode(&out.tokens).unwrap()
}

#[test]
fn bundled_models_reproduce_the_pinned_greedy_text() {
    let target = host_bundled::load(ModelRole::Target).unwrap();
    let draft = host_bundled::load(ModelRole::Draft).unwrap();
    pinned_greedy_texts(target, draft);
    let target = bundled::load(ModelRole::Target, Backend::Cpu).unwrap();
    let draft = bundled::load(ModelRole::Draft, Backend::Cpu).unwrap();
    pinned_greedy_texts(target, draft);
}

fn pinned_greedy_texts(mut target: impl LanguageModel, mut draft: impl LanguageModel) {
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

/// The logits of every continuation position of `PROMPT + text` from one request to the
/// host pass (the decoding path) and from burn's uncached forward of the same weights
/// (other kernels, other summation order), `positions × vocab` each.
fn logits_both_ways(role: ModelRole, text: &str) -> (Vec<f32>, Vec<f32>) {
    let mut lm = host_bundled::load(role).unwrap();
    let reference: BurnLm = bundled::load(role, Backend::Cpu).unwrap();
    let tokenizer = bundled::tokenizer().unwrap();
    let start = tokenizer.encode(PROMPT).unwrap().len();
    let tokens = tokenizer.encode(&format!("{PROMPT}{text}")).unwrap();
    let vocab = tokenizer.vocab_size();
    let burn = reference.logits_uncached(&tokens).unwrap()[(start - 1) * vocab..].to_vec();
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
        let (host, burn) = logits_both_ways(role, text);
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
