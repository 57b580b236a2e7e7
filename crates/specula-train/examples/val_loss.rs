//! Validation cross-entropy of the bundled (f16) models over the whole validation split
//! (the last 10 % of Tiny Shakespeare), in non-overlapping windows of `max_seq`
//! characters, every position scored. Needs the corpus (`scripts/fetch-corpus.sh`).
//! `cargo run --release -p specula-train --example val_loss [-- data/tinyshakespeare.txt]`

use specula_model::{Backend, ModelRole, bundled};
use specula_train::data::{Corpus, Split};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "data/tinyshakespeare.txt".into());
    let corpus = Corpus::from_text(&std::fs::read_to_string(&path)?)?;
    let val = corpus.part(Split::Val);
    for role in [ModelRole::Draft, ModelRole::Target] {
        let model = bundled::load(role, Backend::Cpu)?;
        let vocab = model.config().vocab_size;
        let window = model.config().max_seq;
        let (mut total, mut count) = (0.0_f64, 0_usize);
        // Each window predicts its characters 2..=window+1 from the ones before.
        for start in (0..val.len().saturating_sub(window + 1)).step_by(window) {
            let input = &val[start..start + window];
            let logits = model.logits_uncached(input)?;
            for (row, &next) in logits.chunks(vocab).zip(&val[start + 1..=start + window]) {
                let max = row.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
                let log_sum = row
                    .iter()
                    .map(|&x| f64::from(x - max).exp())
                    .sum::<f64>()
                    .ln();
                total += log_sum - f64::from(row[next as usize] - max);
                count += 1;
            }
        }
        println!(
            "{}: validation {:.4} nats/char over {count} characters",
            role.name(),
            total / count as f64
        );
    }
    Ok(())
}
