//! How much storing weights as f16 moves the logits and the loss: compares a run's f32
//! checkpoint with its f16 export on the last 256 characters of the corpus.
//! `cargo run --release -p specula-train --example f16_error -- runs/target target`

use std::path::PathBuf;

use burn::tensor::Device;
use specula_model::{BurnLm, ModelBundle, ModelRole, load_model};
use specula_train::data::Corpus;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or("usage: f16_error RUN_DIR draft|target")?);
    let role = match args.next().as_deref() {
        Some("draft") => ModelRole::Draft,
        _ => ModelRole::Target,
    };
    let device = Device::flex();
    let f16 = ModelBundle::load_dir(&dir.join("export"), role)?;
    let config = f16.meta.config;
    let f32_model = load_model(
        &config,
        &std::fs::read(dir.join("checkpoint/model.bpk"))?,
        &device,
    )?;
    let f32_lm = BurnLm::new(f32_model, config, device.clone())?;
    let f16_lm = f16.build(&device)?;
    let text = std::fs::read_to_string("data/tinyshakespeare.txt")?;
    let corpus = Corpus::from_text(&text)?;
    let window = &corpus.val[corpus.val.len() - config.max_seq..];
    let a = f32_lm.logits_uncached(window)?;
    let b = f16_lm.logits_uncached(window)?;
    let max_diff = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0_f32, f32::max);
    let nll = |logits: &[f32]| -> f64 {
        let v = config.vocab_size;
        let mut total = 0.0;
        for (i, row) in logits.chunks(v).enumerate().take(window.len() - 1) {
            let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
            let lse = m + row.iter().map(|&x| (x as f64 - m).exp()).sum::<f64>().ln();
            total += lse - row[window[i + 1] as usize] as f64;
        }
        total / (window.len() - 1) as f64
    };
    let argmax_agree = a
        .chunks(config.vocab_size)
        .zip(b.chunks(config.vocab_size))
        .filter(|(x, y)| argmax(x) == argmax(y))
        .count();
    println!(
        "{} f32 vs f16: max |logit diff| {max_diff:.2e}, loss {:.5} vs {:.5} nats/char, argmax agrees at {argmax_agree}/{} positions",
        role.name(),
        nll(&a),
        nll(&b),
        window.len()
    );
    Ok(())
}

fn argmax(row: &[f32]) -> usize {
    row.iter()
        .enumerate()
        .max_by(|x, y| x.1.total_cmp(y.1))
        .map_or(0, |(i, _)| i)
}
