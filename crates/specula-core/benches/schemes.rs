//! Per-token cost of each token-level scheme next to a "floor" that reads both vectors
//! once, all in one run so the ratios are comparable. Run with
//! `cargo bench -p specula-core --bench schemes`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution as _, Normal};
use specula_core::{
    Distribution, KSeq, Mentored, MultiRound, OtmPlan, SamplingConfig, Speculative, overlap,
    overlap_at,
};

const VOCABS: [usize; 3] = [64, 32_000, 50_257];

/// An LM-like pair: Gaussian target logits, the draft's logits the target's plus noise
/// (acceptance around 0.6–0.8), both through the same softmax.
fn lm_like_pair(n: usize, rng: &mut ChaCha8Rng) -> (Distribution, Distribution) {
    let logit = Normal::new(0.0, 2.5).unwrap();
    let noise = Normal::new(0.0, 1.0).unwrap();
    let target_logits: Vec<f64> = (0..n).map(|_| logit.sample(rng)).collect();
    let draft_logits: Vec<f64> = target_logits
        .iter()
        .map(|l| l + noise.sample(rng))
        .collect();
    let config = SamplingConfig::default();
    (
        Distribution::from_logits(&target_logits, &config).unwrap(),
        Distribution::from_logits(&draft_logits, &config).unwrap(),
    )
}

fn schemes(c: &mut Criterion) {
    let mut group = c.benchmark_group("token");
    for n in VOCABS {
        let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
        let (target, draft) = lm_like_pair(n, &mut rng);
        // Pre-drawn draft tokens, so only the scheme itself is timed.
        let drafts: Vec<usize> = (0..4096).map(|_| draft.sample(&mut rng)).collect();
        let mut i = 0;
        let mut next = |k: usize| {
            i = (i + k) % (drafts.len() - 8);
            &drafts[i..i + k]
        };

        // Two floors: the plain one-pass Σ min(target, draft) (what the standard
        // acceptance computation costs), and a 4-lane version of the same sum that the
        // compiler vectorises (closer to memory speed).
        group.bench_with_input(BenchmarkId::new("floor (read both once)", n), &n, |b, _| {
            b.iter(|| overlap(black_box(target.probs()), black_box(draft.probs())));
        });
        group.bench_with_input(BenchmarkId::new("floor, 4 lanes", n), &n, |b, _| {
            b.iter(|| overlap_at(black_box(target.probs()), black_box(draft.probs()), 1.0));
        });
        // Each scheme is timed as the engine runs it at one depth: built for the pair, then
        // sampled once.
        group.bench_with_input(BenchmarkId::new("standard", n), &n, |b, _| {
            b.iter(|| {
                let scheme = Speculative::new(&target, &draft).unwrap();
                scheme.sample(next(1)[0], &mut rng).token
            });
        });
        group.bench_with_input(BenchmarkId::new("kseq k=4", n), &n, |b, _| {
            b.iter(|| {
                let scheme = KSeq::new(&target, &draft, 4, None).unwrap();
                scheme.sample(next(4), &mut rng).token
            });
        });
        group.bench_with_input(BenchmarkId::new("kseq plan k=4", n), &n, |b, _| {
            b.iter(|| KSeq::new(&target, &draft, 4, None).unwrap().plan().rho);
        });
        group.bench_with_input(BenchmarkId::new("multiround k=4", n), &n, |b, _| {
            b.iter(|| {
                let scheme = MultiRound::new(&target, &draft, 4).unwrap();
                scheme.sample(next(4), &mut rng).token
            });
        });
        for kl in [0.05, 0.5] {
            let id = BenchmarkId::new(format!("mentored D={kl}"), n);
            group.bench_with_input(id, &n, |b, _| {
                b.iter(|| {
                    let scheme = Mentored::new(&target, &draft, kl).unwrap();
                    scheme.sample(next(1)[0], &mut rng).token
                });
            });
        }
        let _ = rng.random::<u8>();
    }
    group.finish();
}

/// OTM refuses a problem too large to solve (here 100^6 variables) before building
/// anything: the refusal costs the size check and Lemma 3's bound over the prefixes.
fn otm_refusal(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let (target, draft) = lm_like_pair(100, &mut rng);
    c.bench_function("otm refusal V=100 k=5", |b| {
        b.iter(|| OtmPlan::new(black_box(&target), black_box(&draft), 5).is_err());
    });
}

criterion_group!(benches, schemes, otm_refusal);
criterion_main!(benches);
