//! The cached, batched forward paths (the host pass and burn's, through the one request
//! logic of `CachedLm`) against burn's full uncached forward, on tiny random models.

use burn::tensor::Device;
use specula_engine::{ForwardRequest, LanguageModel, Query, Role};
use specula_host::{HostLm, HostPass};
use specula_model::{BurnLm, CachedLm, ForwardPass, Gpt, ModelConfig};

const TOL: f32 = 1e-4;

fn shaped(d_model: usize, d_ff: usize, seed: u64) -> (Gpt, ModelConfig) {
    let config = ModelConfig {
        vocab_size: 11,
        d_model,
        n_layers: 2,
        n_heads: 4,
        d_ff,
        max_seq: 48,
    };
    (
        Gpt::new(&config, seed, 0.0, &Device::flex()).unwrap(),
        config,
    )
}

/// A tiny random model on burn's forward pass: the reference of both paths.
fn tiny_burn(seed: u64) -> BurnLm {
    let (model, config) = shaped(32, 64, seed);
    BurnLm::new(model, config, Device::flex()).unwrap()
}

/// The same model on the host forward pass.
fn tiny_host(seed: u64) -> HostLm {
    let (model, config) = shaped(32, 64, seed);
    HostLm::from_pass(HostPass::new(&model, config).unwrap())
}

/// Dense layers of 128 × 512 (1.6 MB of weights): large enough to be mapped on huge pages
/// and for calls of 4 or more rows to be split between two threads.
fn wide(seed: u64) -> HostLm {
    let (model, config) = shaped(128, 512, seed);
    HostLm::from_pass(HostPass::new(&model, config).unwrap())
}

fn seq(seed: u32, len: usize) -> Vec<u32> {
    (0..len as u32)
        .map(|i| (i * 7 + seed * 3 + i * i) % 11)
        .collect()
}

/// Every query row of `request` must equal the uncached logits of its prefix (from
/// `reference`, the same model on burn's pass).
fn check<P: ForwardPass>(lm: &mut CachedLm<P>, reference: &BurnLm, request: &ForwardRequest) {
    let response = lm.forward(request).unwrap();
    assert_eq!(response.rows(), request.queries.len());
    for (i, q) in request.queries.iter().enumerate() {
        let prefix = &request.sequences[q.sequence][..q.prefix_len];
        let full = reference.logits_uncached(prefix).unwrap();
        let expected = &full[(q.prefix_len - 1) * 11..q.prefix_len * 11];
        let got = response.row(i).unwrap();
        let diff = expected
            .iter()
            .zip(got)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(diff < TOL, "query {i} {q:?}: max |diff| {diff}");
    }
}

fn request(
    committed: usize,
    sequences: Vec<Vec<u32>>,
    queries: Vec<(usize, usize)>,
) -> ForwardRequest {
    ForwardRequest {
        role: Role::Target,
        committed_len: committed,
        sequences,
        queries: queries
            .into_iter()
            .map(|(sequence, prefix_len)| Query {
                sequence,
                prefix_len,
            })
            .collect(),
    }
}

#[test]
fn cached_logits_equal_uncached_ones_token_by_token() {
    cached_logits_equal_uncached_ones_token_by_token_on(tiny_host);
    cached_logits_equal_uncached_ones_token_by_token_on(tiny_burn);
}

fn cached_logits_equal_uncached_ones_token_by_token_on<P: ForwardPass>(
    make: fn(u64) -> CachedLm<P>,
) {
    let reference = tiny_burn(1);
    let mut lm = make(1);
    let tokens = seq(1, 30);
    // A 5-token prompt, then one new token per request, as autoregressive decoding does.
    for len in 5..=30 {
        check(
            &mut lm,
            &reference,
            &request(len, vec![tokens[..len].to_vec()], vec![(0, len)]),
        );
    }
    assert_eq!(lm.cached_tokens(), &tokens[..]);
}

#[test]
fn verification_rows_and_rollback_match_uncached_logits() {
    verification_rows_and_rollback_match_uncached_logits_on(tiny_host);
    verification_rows_and_rollback_match_uncached_logits_on(tiny_burn);
}

fn verification_rows_and_rollback_match_uncached_logits_on<P: ForwardPass>(
    make: fn(u64) -> CachedLm<P>,
) {
    let reference = tiny_burn(2);
    let mut lm = make(2);
    let mut tokens = seq(2, 10);
    // γ = 4 verification: 5 rows over the committed prefix plus 4 drafts.
    tokens.extend([1, 2, 3, 4]);
    check(
        &mut lm,
        &reference,
        &request(
            10,
            vec![tokens.clone()],
            (10..=14).map(|p| (0, p)).collect(),
        ),
    );
    // Two drafts accepted, the third replaced: the cache must drop positions 12 and 13.
    let mut next = tokens[..12].to_vec();
    next.push(9);
    next.extend([5, 6]);
    check(
        &mut lm,
        &reference,
        &request(13, vec![next.clone()], (13..=15).map(|p| (0, p)).collect()),
    );
    // An explicit rollback far back, then forward again.
    lm.truncate(3);
    assert_eq!(lm.cached_tokens().len(), 3);
    check(
        &mut lm,
        &reference,
        &request(15, vec![next.clone()], vec![(0, 4), (0, 15)]),
    );
    // A completely different sequence (nothing shared).
    check(
        &mut lm,
        &reference,
        &request(6, vec![seq(9, 6)], vec![(0, 6)]),
    );
}

#[test]
fn batched_verification_equals_one_by_one() {
    batched_verification_equals_one_by_one_on(tiny_host);
    batched_verification_equals_one_by_one_on(tiny_burn);
}

fn batched_verification_equals_one_by_one_on<P: ForwardPass>(make: fn(u64) -> CachedLm<P>) {
    let reference = tiny_burn(3);
    let committed = seq(3, 12);
    let drafts = [[1, 2, 3], [1, 5, 7], [4, 4, 4], [0, 9, 2]];
    let sequences: Vec<Vec<u32>> = drafts
        .iter()
        .map(|d| committed.iter().chain(d).copied().collect())
        .collect();
    // Every node of the draft set, as a SpecTr target request lists them.
    let mut queries = vec![(0, 12)];
    for s in 0..4 {
        queries.extend((13..=15).map(|p| (s, p)));
    }
    let mut batched = make(3);
    let all = request(12, sequences.clone(), queries.clone());
    let together = batched.forward(&all).unwrap();
    check(&mut batched, &reference, &all);
    for (i, &(s, p)) in queries.iter().enumerate() {
        let mut alone = make(3);
        let one = alone
            .forward(&request(12, vec![sequences[s].clone()], vec![(0, p)]))
            .unwrap();
        let diff = one
            .row(0)
            .unwrap()
            .iter()
            .zip(together.row(i).unwrap())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(diff < TOL, "query {i}: {diff}");
    }
}

#[test]
fn draft_calls_reuse_their_branches_and_ragged_rows_are_padded() {
    draft_calls_reuse_their_branches_and_ragged_rows_are_padded_on(tiny_host);
    draft_calls_reuse_their_branches_and_ragged_rows_are_padded_on(tiny_burn);
}

fn draft_calls_reuse_their_branches_and_ragged_rows_are_padded_on<P: ForwardPass>(
    make: fn(u64) -> CachedLm<P>,
) {
    let reference = tiny_burn(4);
    let mut lm = make(4);
    let committed = seq(4, 9);
    let with = |suffix: &[u32]| -> Vec<u32> { committed.iter().chain(suffix).copied().collect() };
    // SpecTr draft calls: depth 1 (one sequence), then three branches grown one token at a time.
    check(
        &mut lm,
        &reference,
        &request(9, vec![committed.clone()], vec![(0, 9)]),
    );
    let depth2 = vec![with(&[1]), with(&[2]), with(&[3])];
    check(
        &mut lm,
        &reference,
        &request(9, depth2, vec![(0, 10), (1, 10), (2, 10)]),
    );
    let depth3 = vec![with(&[1, 5]), with(&[2, 6]), with(&[3, 7])];
    check(
        &mut lm,
        &reference,
        &request(9, depth3, vec![(0, 11), (1, 11), (2, 11)]),
    );
    let positions = lm.stats().positions;
    let depth4 = vec![with(&[1, 5, 0]), with(&[2, 6, 1]), with(&[3, 7, 2])];
    check(
        &mut lm,
        &reference,
        &request(9, depth4, vec![(0, 12), (1, 12), (2, 12)]),
    );
    assert_eq!(
        lm.stats().positions - positions,
        3,
        "one new position per branch"
    );
    // A tree level: two children of the same parent, and rows of different lengths.
    let tree = vec![with(&[1, 5, 0, 4]), with(&[1, 5, 0, 8]), with(&[2, 6])];
    check(
        &mut lm,
        &reference,
        &request(9, tree, vec![(0, 13), (1, 13), (2, 11), (0, 10)]),
    );
}

#[test]
fn bad_requests_are_errors_not_panics() {
    bad_requests_are_errors_not_panics_on(tiny_host);
    bad_requests_are_errors_not_panics_on(tiny_burn);
}

fn bad_requests_are_errors_not_panics_on<P: ForwardPass>(make: fn(u64) -> CachedLm<P>) {
    let mut lm = make(5);
    assert!(
        lm.forward(&request(2, vec![vec![1, 2]], vec![(0, 3)]))
            .is_err()
    );
    assert!(
        lm.forward(&request(2, vec![vec![1, 2]], vec![(1, 1)]))
            .is_err()
    );
    assert!(
        lm.forward(&request(2, vec![vec![1, 20]], vec![(0, 2)]))
            .is_err()
    );
    assert!(
        lm.forward(&request(1, vec![seq(1, 49)], vec![(0, 49)]))
            .is_err()
    );
    assert!(
        lm.forward(&request(0, vec![vec![1]], vec![(0, 0)]))
            .is_err()
    );
    assert_eq!(
        lm.forward(&request(1, vec![vec![1]], vec![]))
            .unwrap()
            .rows(),
        0
    );
}

/// The host forward against burn's own, for one row, a
/// verification of 8 positions, and 5 × 8 = 40 rows (several row blocks per weight panel).
#[test]
fn the_host_forward_agrees_with_burns() {
    let mut host = tiny_host(5);
    let mut plain = tiny_burn(5);
    let one = request(10, vec![seq(1, 11)], vec![(0, 11)]);
    let eight = request(10, vec![seq(1, 18)], (11..=18).map(|p| (0, p)).collect());
    let forty = request(
        10,
        (0..5).map(|s| seq(1 + s, 18)).collect(),
        (0..5)
            .flat_map(|s| (11..=18).map(move |p| (s, p)))
            .collect(),
    );
    for r in [one, eight, forty] {
        let a = host.forward(&r).unwrap();
        let b = plain.forward(&r).unwrap();
        assert_eq!(a.rows(), b.rows());
        for i in 0..a.rows() {
            let diff = a
                .row(i)
                .unwrap()
                .iter()
                .zip(b.row(i).unwrap())
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f32::max);
            assert!(diff < TOL, "row {i} of {}: max |diff| {diff}", a.rows());
        }
    }
}

#[test]
fn the_accepted_draft_of_a_verification_is_not_recomputed() {
    the_accepted_draft_of_a_verification_is_not_recomputed_on(tiny_host);
    the_accepted_draft_of_a_verification_is_not_recomputed_on(tiny_burn);
}

fn the_accepted_draft_of_a_verification_is_not_recomputed_on<P: ForwardPass>(
    make: fn(u64) -> CachedLm<P>,
) {
    let reference = tiny_burn(6);
    let mut lm = make(6);
    let committed = seq(6, 10);
    let with = |prefix: &[u32], suffix: &[u32]| -> Vec<u32> {
        prefix.iter().chain(suffix).copied().collect()
    };
    // A SpecTr verification: three drafts of three tokens after the committed prefix.
    let drafts = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
    let sequences: Vec<Vec<u32>> = drafts.iter().map(|d| with(&committed, d)).collect();
    let mut queries = vec![(0, 10)];
    for s in 0..3 {
        queries.extend((11..=13).map(|p| (s, p)));
    }
    check(&mut lm, &reference, &request(10, sequences, queries));
    // Two tokens of the second draft accepted, then a replacement token: the next
    // verification's shared prefix takes the accepted tokens from the previous batch and
    // computes only the replacement, plus its own two rows of two drafts.
    let next = with(&committed, &[4, 5, 10]);
    let positions = lm.stats().positions;
    let rows = vec![with(&next, &[1, 2]), with(&next, &[3, 4])];
    check(
        &mut lm,
        &reference,
        &request(13, rows, vec![(0, 13), (0, 14), (0, 15), (1, 14), (1, 15)]),
    );
    assert_eq!(lm.stats().positions - positions, 1 + 2 * 2);
}

#[test]
fn huge_pages_hold_the_same_weights() {
    let mut lm = wide(6);
    assert_eq!(
        lm.pass().huge_pages(),
        cfg!(target_os = "linux"),
        "on by default where the system has them"
    );
    let r = request(10, vec![seq(2, 14)], (11..=14).map(|p| (0, p)).collect());
    let on = lm.forward(&r).unwrap();
    lm.pass_mut().set_huge_pages(false);
    assert!(!lm.pass().huge_pages());
    let off = lm.forward(&r).unwrap();
    for i in 0..on.rows() {
        assert_eq!(on.row(i).unwrap(), off.row(i).unwrap(), "row {i}");
    }
}

#[test]
fn a_helper_thread_gives_the_same_logits() {
    let mut lm = wide(7);
    assert_eq!(lm.pass().threads(), 1, "one thread by default");
    let r = request(10, vec![seq(3, 18)], (11..=18).map(|p| (0, p)).collect());
    let one = lm.forward(&r).unwrap();
    lm.pass_mut().set_threads(2).unwrap();
    assert_eq!(lm.pass().threads(), 2);
    let two = lm.forward(&r).unwrap();
    for i in 0..one.rows() {
        assert_eq!(one.row(i).unwrap(), two.row(i).unwrap(), "row {i}");
    }
    for bad in [0, 3] {
        let err = lm.pass_mut().set_threads(bad).unwrap_err().to_string();
        assert!(err.contains("1 or 2 threads"), "{err}");
        assert_eq!(lm.pass().threads(), 2, "a refused setting changes nothing");
    }
}
