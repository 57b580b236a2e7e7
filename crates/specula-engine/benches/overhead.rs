//! Engine overhead per emitted token with synthetic models at V = 32 000, where model
//! time is excluded: only the decoder's own time (building requests, logits to
//! distributions, drawing drafts, selection, traces and metrics), measured by its clock,
//! is reported. Each iteration generates `TOKENS` tokens, so criterion's time per
//! iteration divided by `TOKENS` is the selection cost per emitted token (the reported
//! throughput is tokens per second of engine time). Run with
//! `cargo bench -p specula-engine --bench overhead`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use specula_core::{Distribution, SamplingConfig};
use specula_engine::synthetic::MarkovModel;
use specula_engine::{
    DecodeConfig, Decoder, DraftShape, GammaPolicy, Method, Selection, StdClock, generate,
    generate_autoregressive,
};

const VOCAB: usize = 32_000;
const TOKENS: usize = 64;

fn methods() -> Vec<(&'static str, Method)> {
    let iid = DraftShape::Iid { k: 4, length: 4 };
    vec![
        ("autoregressive", Method::Autoregressive),
        (
            "speculative_g4",
            Method::Speculative {
                gamma: 4,
                policy: GammaPolicy::Fixed,
            },
        ),
        (
            "spectr_iid_k4_l4",
            Method::SpecTr {
                drafts: iid.clone(),
                selection: Selection::KSeq,
            },
        ),
        (
            "spectr_tree_2x2x1x1",
            Method::SpecTr {
                drafts: DraftShape::Tree {
                    k: 4,
                    branching: vec![2, 2, 1, 1],
                },
                selection: Selection::KSeq,
            },
        ),
        ("multiround_k4_l4", Method::MultiRound { drafts: iid }),
        (
            "mentored_g4_d0.1",
            Method::Mentored {
                gamma: 4,
                kl_budget: 0.1,
                policy: GammaPolicy::Fixed,
            },
        ),
    ]
}

/// Runs one generation of `TOKENS` tokens, timing the engine with a real clock.
fn run_once(
    method: &Method,
    seed: u64,
    target: &MarkovModel,
    draft: &MarkovModel,
) -> specula_engine::Generation {
    let (mut target, mut draft) = (target.clone(), draft.clone());
    let config = DecodeConfig::builder(method.clone())
        .max_new_tokens(TOKENS)
        .seed(seed)
        .build()
        .unwrap();
    let mut decoder = Decoder::new(config, vec![0])
        .unwrap()
        .with_clock(StdClock::new());
    if method.needs_draft() {
        generate(&mut decoder, &mut draft, &mut target).unwrap()
    } else {
        generate_autoregressive(&mut decoder, &mut target).unwrap()
    }
}

fn overhead(c: &mut Criterion) {
    let target = MarkovModel::random(VOCAB, 0, 1, 4.0).unwrap();
    let draft = target.perturbed(2, 1.0).unwrap();
    // Context for the figures: how many rows each method turns into distributions per
    // token depends on its block efficiency.
    for (name, method) in methods() {
        let m = run_once(&method, 0, &target, &draft).metrics;
        eprintln!(
            "{name}: block efficiency {:.2}, acceptance rate {:.2}, draft calls {}, target calls {}",
            m.block_efficiency().unwrap_or(0.0),
            m.acceptance_rate().unwrap_or(0.0),
            m.draft_calls,
            m.target_calls,
        );
    }
    // The floor: one softmax (logits to distribution) over the vocabulary.
    let logits = target.logits(&[]).unwrap().to_vec();
    c.bench_function("softmax_floor_one_row", |b| {
        b.iter(|| {
            Distribution::from_logits(black_box(&logits), &SamplingConfig::default()).unwrap()
        });
    });
    let mut group = c.benchmark_group("engine_selection_per_64_tokens");
    group.throughput(Throughput::Elements(TOKENS as u64));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));
    for (name, method) in methods() {
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for seed in 0..iters {
                    let out = run_once(&method, seed, &target, &draft);
                    black_box(&out.tokens);
                    total += Duration::from_nanos(out.metrics.timing.selection_nanos);
                }
                total
            });
        });
    }
    group.finish();
}

criterion_group!(benches, overhead);
criterion_main!(benches);
