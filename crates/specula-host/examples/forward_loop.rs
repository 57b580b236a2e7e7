//! Profiling aid: 2000 forwards of the bundled target over N new positions after a
//! 100-token cached prefix (what one verification of γ = N − 1 costs), e.g. under `perf`:
//! `cargo run --release -p specula-host --example forward_loop -- 5 [DRAFT_CALLS] [small]`
//! (`small`: the dense weights on ordinary 4 KiB pages instead of huge pages) `[THREADS]`
//! `[LOOPS]` (default 2000).
use specula_engine::{ForwardRequest, LanguageModel, Query, Role};
use specula_host::bundled;
use specula_model::ModelRole;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let (n, drafts) = (arg(1, 5), arg(2, 0));
    let small = std::env::args().nth(3).as_deref() == Some("small");
    let mut target = bundled::load(ModelRole::Target)?;
    let mut draft = bundled::load(ModelRole::Draft)?;
    target.pass_mut().set_huge_pages(!small);
    target.pass_mut().set_threads(arg(4, 1))?;
    draft.pass_mut().set_huge_pages(!small);
    let mut target_seconds = 0.0;
    let prompt: Vec<u32> = (0..100).map(|i| (i * 7 % 65) as u32).collect();
    let t = std::time::Instant::now();
    let loops = arg(5, 2000);
    for r in 0..loops {
        let mut seq = prompt.clone();
        seq.extend((0..n).map(|i| ((i + r) % 65) as u32));
        let queries = (0..n)
            .map(|i| Query {
                sequence: 0,
                prefix_len: 101 + i,
            })
            .collect();
        // Optional draft calls in between, as a speculative round makes them.
        for i in 0..drafts {
            draft.truncate(100 + i);
            let seq: Vec<u32> = prompt.iter().copied().chain(0..=i as u32).collect();
            let q = vec![Query {
                sequence: 0,
                prefix_len: 101 + i,
            }];
            draft.forward(&ForwardRequest {
                role: Role::Draft,
                committed_len: 100,
                sequences: vec![seq],
                queries: q,
            })?;
        }
        target.truncate(100);
        let started = std::time::Instant::now();
        target.forward(&ForwardRequest {
            role: Role::Target,
            committed_len: 100,
            sequences: vec![seq],
            queries,
        })?;
        target_seconds += started.elapsed().as_secs_f64();
    }
    println!(
        "{n} positions, {drafts} draft calls between, huge pages {}: target {:.3} ms per forward ({:.3} ms per loop)",
        target.pass().huge_pages(),
        target_seconds * 1e3 / loops as f64,
        t.elapsed().as_secs_f64() * 1e3 / loops as f64
    );
    Ok(())
}
