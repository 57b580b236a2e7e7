//! Profiling aid: 2000 forwards of the bundled target over N new positions after a
//! 100-token cached prefix (what one verification of γ = N − 1 costs), e.g. under `perf`:
//! `cargo run --release -p specula-model --example forward_loop -- 5`.
use specula_engine::{ForwardRequest, LanguageModel, Query, Role};
use specula_model::{Backend, ModelRole, bundled};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let mut target = bundled::load(ModelRole::Target, Backend::Cpu)?;
    let prompt: Vec<u32> = (0..100).map(|i| (i * 7 % 65) as u32).collect();
    let t = std::time::Instant::now();
    for r in 0..2000 {
        let mut seq = prompt.clone();
        seq.extend((0..n).map(|i| ((i + r) % 65) as u32));
        let queries = (0..n)
            .map(|i| Query {
                sequence: 0,
                prefix_len: 101 + i,
            })
            .collect();
        target.truncate(100);
        target.forward(&ForwardRequest {
            role: Role::Target,
            committed_len: 100,
            sequences: vec![seq],
            queries,
        })?;
    }
    println!(
        "{n} positions: {:.3} ms per forward",
        t.elapsed().as_secs_f64() / 2.0
    );
    Ok(())
}
