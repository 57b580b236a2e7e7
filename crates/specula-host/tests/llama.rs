//! The host pass of Llama-family models (`HostLlamaLm`) against burn's uncached forward of
//! the same file (`LlamaLm`, the definition): synthetic files of every shape the pass
//! handles (grouped-query and multi-head attention, both rotary layouts, biases, tied and
//! untied heads) through the request logic decoding uses, on one thread and two, and
//! SmolLM2-135M itself where it has been fetched.

use burn::tensor::Device;
use specula_engine::{ForwardRequest, LanguageModel, Query, Role};
use specula_gguf::GgufModel;
use specula_gguf::synthetic::SyntheticLlama;
use specula_host::{HostLlamaLm, HostLlamaPass};
use specula_model::LlamaLm;

/// Random weights give logits of a few units; the passes sum in other orders.
const TOL: f32 = 1e-4;

fn model(spec: &SyntheticLlama) -> GgufModel {
    GgufModel::from_bytes(spec.build(), None).expect("the synthetic file loads")
}

/// The shapes the host pass must reproduce.
fn shapes() -> Vec<(&'static str, SyntheticLlama)> {
    let tiny = SyntheticLlama::tiny();
    vec![
        (
            "llama, 4 query heads over 2 key/value heads, tied head",
            tiny.clone(),
        ),
        (
            "qwen2: biases, rotation over halves, untied head",
            SyntheticLlama {
                architecture: "qwen2".into(),
                qkv_bias: true,
                untied_output: true,
                seed: 7,
                ..tiny.clone()
            },
        ),
        (
            "multi-head attention, 3 layers",
            SyntheticLlama {
                n_kv_heads: 4,
                n_layers: 3,
                seed: 9,
                ..tiny
            },
        ),
    ]
}

fn request(
    committed: usize,
    sequences: Vec<Vec<u32>>,
    queries: &[(usize, usize)],
) -> ForwardRequest {
    ForwardRequest {
        role: Role::Target,
        committed_len: committed,
        sequences,
        queries: queries
            .iter()
            .map(|&(sequence, prefix_len)| Query {
                sequence,
                prefix_len,
            })
            .collect(),
    }
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Every query row of `request` equals burn's uncached logits of its prefix.
fn check(lm: &mut HostLlamaLm, reference: &LlamaLm, request: &ForwardRequest, tol: f32) {
    let vocab = reference.vocab_size();
    let response = lm.forward(request).expect("the host pass answers");
    for (i, q) in request.queries.iter().enumerate() {
        let prefix = &request.sequences[q.sequence][..q.prefix_len];
        let full = reference.logits_uncached(prefix).expect("burn's forward");
        let want = &full[(q.prefix_len - 1) * vocab..q.prefix_len * vocab];
        let diff = max_diff(response.row(i).expect("a row"), want);
        assert!(diff < tol, "query {i} {q:?}: max |diff| {diff}");
    }
}

fn tokens(seed: u32, len: usize, vocab: usize) -> Vec<u32> {
    (0..len as u32)
        .map(|i| (i * 7 + seed * 13 + i * i * 3) % vocab as u32)
        .collect()
}

/// Decoding's calls: a prompt, single steps, a verification of γ + 1 rows with a
/// rollback, draft branches grown a token at a time, and a tree level of ragged rows.
fn decoding_calls(lm: &mut HostLlamaLm, reference: &LlamaLm, tol: f32) {
    let vocab = reference.vocab_size();
    let seq = tokens(1, 20, vocab);
    for len in 6..=9 {
        check(
            lm,
            reference,
            &request(len, vec![seq[..len].to_vec()], &[(0, len)]),
            tol,
        );
    }
    let verify: Vec<(usize, usize)> = (9..=14).map(|p| (0, p)).collect();
    check(
        lm,
        reference,
        &request(9, vec![seq[..14].to_vec()], &verify),
        tol,
    );
    let mut next = seq[..11].to_vec();
    next.extend([3, 5, 8]);
    let verify: Vec<(usize, usize)> = (12..=14).map(|p| (0, p)).collect();
    check(
        lm,
        reference,
        &request(12, vec![next.clone()], &verify),
        tol,
    );
    let committed = next[..12].to_vec();
    let with = |s: &[u32]| -> Vec<u32> { committed.iter().chain(s).copied().collect() };
    let branches = vec![with(&[1]), with(&[2]), with(&[4])];
    check(
        lm,
        reference,
        &request(12, branches, &[(0, 13), (1, 13), (2, 13)]),
        tol,
    );
    let deeper = vec![with(&[1, 6]), with(&[2, 9]), with(&[4, 0])];
    check(
        lm,
        reference,
        &request(12, deeper, &[(0, 14), (1, 14), (2, 14)]),
        tol,
    );
    let tree = vec![with(&[1, 6, 2]), with(&[1, 6, 7]), with(&[2, 9])];
    check(
        lm,
        reference,
        &request(12, tree, &[(0, 15), (1, 15), (2, 14), (0, 13)]),
        tol,
    );
    lm.truncate(4);
    check(
        lm,
        reference,
        &request(10, vec![seq[..10].to_vec()], &[(0, 5), (0, 10)]),
        tol,
    );
}

#[test]
fn the_host_pass_gives_burns_logits_for_every_shape_and_call() {
    for (what, spec) in shapes() {
        let file = model(&spec);
        let reference = LlamaLm::load(&file, &Device::flex()).expect("burn's pass");
        let mut lm = HostLlamaLm::from_pass(HostLlamaPass::new(&file).expect("the host pass"));
        eprintln!("{what}");
        decoding_calls(&mut lm, &reference, TOL);
    }
}

#[test]
fn two_threads_give_the_same_logits_as_one() {
    // Wide enough that the dense calls of several rows are split between the threads.
    let spec = SyntheticLlama {
        d_model: 128,
        d_ff: 512,
        seed: 3,
        ..SyntheticLlama::tiny()
    };
    let file = model(&spec);
    let reference = LlamaLm::load(&file, &Device::flex()).expect("burn's pass");
    let mut pass = HostLlamaPass::new(&file).expect("the host pass");
    pass.set_threads(2).expect("two threads");
    assert_eq!(pass.threads(), 2);
    let mut lm = HostLlamaLm::from_pass(pass);
    decoding_calls(&mut lm, &reference, TOL);
    for bad in [0, 3] {
        let mut pass = HostLlamaPass::new(&file).expect("the host pass");
        let err = pass.set_threads(bad).expect_err("refused").to_string();
        assert!(err.contains(&bad.to_string()), "{err}");
    }
}

#[test]
fn bad_tokens_are_errors_not_panics() {
    let file = model(&SyntheticLlama::tiny());
    let vocab = file.config.vocab_size as u32;
    let mut lm = HostLlamaLm::from_pass(HostLlamaPass::new(&file).expect("the host pass"));
    assert!(
        lm.forward(&request(2, vec![vec![1, vocab]], &[(0, 2)]))
            .is_err()
    );
    assert!(lm.forward(&request(2, vec![vec![1, 2]], &[(0, 2)])).is_ok());
}

#[test]
fn smollm2_on_the_host_pass_gives_burns_logits() {
    let Ok(path) = std::env::var("SPECULA_SMOLLM2_GGUF") else {
        assert!(
            std::env::var_os("SPECULA_REQUIRE_REAL_MODELS").is_none(),
            "SPECULA_REQUIRE_REAL_MODELS is set but SPECULA_SMOLLM2_GGUF is not \
             (eval \"$(bash scripts/smollm2-reference.sh)\")"
        );
        eprintln!("skipped: no SmolLM2 file (eval \"$(bash scripts/smollm2-reference.sh)\")");
        return;
    };
    let file =
        GgufModel::from_bytes(std::fs::read(path).expect("the file"), None).expect("SmolLM2 loads");
    let reference = LlamaLm::load(&file, &Device::flex()).expect("burn's pass");
    let mut lm = HostLlamaLm::from_pass(HostLlamaPass::new(&file).expect("the host pass"));
    // "The capital of France is" and a verification of 4 drafts after it.
    let prompt: Vec<u32> = file
        .tokenizer
        .encode("The capital of France is")
        .expect("BPE");
    let n = prompt.len();
    check(
        &mut lm,
        &reference,
        &request(n, vec![prompt.clone()], &[(0, n)]),
        5e-4,
    );
    let mut drafted = prompt.clone();
    drafted.extend(file.tokenizer.encode(" Paris, and the").expect("BPE"));
    let verify: Vec<(usize, usize)> = (n..=drafted.len()).map(|p| (0, p)).collect();
    check(
        &mut lm,
        &reference,
        &request(n, vec![drafted], &verify),
        5e-4,
    );
}
