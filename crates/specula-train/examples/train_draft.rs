//! Trains a draft for a GGUF target on its on-policy data (`onpolicy_data`) and writes it
//! as an F16 GGUF beside the loss history.
//!
//! `cargo run --release -p specula-train --example train_draft -- TARGET.gguf TRAIN.bin[,MORE.bin]
//! HELD_OUT.bin OUT_DIR [name=value ...]`: the recipe is `DraftTrainConfig::smollm2()`,
//! any setting overridden as `name=value` (a JSON value, e.g. `epochs=2`). Writes
//! `OUT_DIR/draft.gguf` (and `draft-epochN.gguf` after each epoch), `history.json` (every
//! step's loss, each epoch's held-out loss and expected acceptance), `record.json` (what
//! MODELS.md and the tests pin: the file's hash and shape, the data's hashes, the first
//! steps' batches and losses) and `first-steps.spod` (the records of those batches, which
//! the reproduction test trains on).

use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use specula_gguf::model::tokenizer_spec;
use specula_gguf::synthetic::MatrixType;
use specula_gguf::writer::llama_gguf;
use specula_gguf::{GgufFile, GgufModel};
use specula_model::sha256_hex;
use specula_train::draft::{DraftTrainConfig, DraftTrainer, Evaluation};
use specula_train::onpolicy::records::{DataFile, parse};

/// Steps whose batches and losses `record.json` keeps for the reproduction test.
const RECORDED_STEPS: u64 = 3;

#[derive(Serialize)]
struct FirstStep {
    instructions: Vec<u32>,
    loss: f64,
}

#[derive(Serialize)]
struct Record<'a> {
    sha256: String,
    bytes: usize,
    parameters: usize,
    d_model: usize,
    n_layers: usize,
    config: &'a DraftTrainConfig,
    train_sha256: String,
    held_out_sha256: String,
    train_positions: usize,
    held_out_positions: usize,
    first_steps: Vec<FirstStep>,
    held_out: &'a [(u64, Evaluation)],
    seconds: f64,
}

#[derive(Serialize)]
struct History {
    config: DraftTrainConfig,
    train_positions: usize,
    steps: Vec<f64>,
    held_out: Vec<(u64, Evaluation)>,
    seconds: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: train_draft TARGET.gguf TRAIN.bin HELD_OUT.bin OUT_DIR [name=value ...]";
    let [target, train, held, out] = [0, 1, 2, 3].map(|i| args.get(i));
    let (Some(target), Some(train), Some(held), Some(out)) = (target, train, held, out) else {
        return Err(usage.into());
    };
    // Any setting of the recipe may be overridden as `name=value` (JSON values).
    let mut json = serde_json::to_value(DraftTrainConfig::smollm2())?;
    for a in &args[4..] {
        let (name, value) = a.split_once('=').ok_or(usage)?;
        let slot = json
            .get_mut(name)
            .ok_or_else(|| format!("no setting {name:?}"))?;
        *slot = serde_json::from_str(value)?;
    }
    let config: DraftTrainConfig = serde_json::from_value(json)?;
    eprintln!("{config:?}");
    let bytes = std::fs::read(target)?;
    let spec = tokenizer_spec(&GgufFile::parse(bytes.clone())?)?;
    let model = GgufModel::from_bytes(bytes, None)?;
    // Several training files (answers drawn with other seeds) may be given, comma-separated:
    // file k's instruction i becomes k × 100,000 + i, so every record keeps its own name.
    let (mut header, mut train_records, mut train_sha256) = (None, Vec::new(), Vec::new());
    for (k, path) in (0u32..).zip(train.split(',')) {
        let bytes = std::fs::read(path)?;
        let (h, records, _) = parse(&bytes)?;
        header.get_or_insert(h);
        train_sha256.push(sha256_hex(&bytes));
        train_records.extend(records.into_iter().map(|mut r| {
            r.instruction += k * 100_000;
            r
        }));
    }
    let header = header.ok_or(usage)?;
    let held_bytes = std::fs::read(held)?;
    let (_, held_records, _) = parse(&held_bytes)?;
    let out = Path::new(out);
    std::fs::create_dir_all(out)?;
    let clock = Instant::now();
    let device = burn::tensor::Device::flex();
    let mut trainer = DraftTrainer::start(
        config.clone(),
        &model.config,
        &model.weights,
        &train_records,
        &device,
    )?;
    let write = |trainer: &DraftTrainer, name: &str| -> Result<(), Box<dyn std::error::Error>> {
        let file = llama_gguf(
            trainer.draft_config(),
            &trainer.weights(),
            &spec,
            MatrixType::F16,
        )?;
        std::fs::write(out.join(name), file)?;
        Ok(())
    };
    let mut history = History {
        config: config.clone(),
        train_positions: train_records.iter().map(|r| r.answer.len()).sum(),
        steps: Vec::new(),
        held_out: Vec::new(),
        seconds: 0.0,
    };
    let start = trainer.evaluate(&held_records);
    eprintln!(
        "start: held-out {start:?} ({:.0} s)",
        clock.elapsed().as_secs_f64()
    );
    history.held_out.push((0, start));
    let per_epoch = trainer.batches_per_epoch() as u64;
    let _ = std::fs::remove_file(out.join("first-steps.spod"));
    let mut slice = DataFile::open(&out.join("first-steps.spod"), header)?;
    let mut first_steps = Vec::new();
    while trainer.step() < trainer.total_steps() {
        let instructions = trainer.batch_at(trainer.step()).instructions.clone();
        let loss = trainer.train_step()?;
        if trainer.step() <= RECORDED_STEPS {
            for r in train_records
                .iter()
                .filter(|r| instructions.contains(&r.instruction))
            {
                slice.append(r.clone())?;
            }
            first_steps.push(FirstStep { instructions, loss });
        }
        history.steps.push(loss);
        let step = trainer.step();
        if step % 10 == 0 {
            eprintln!(
                "step {step}/{}: loss {loss:.4} ({:.0} s)",
                trainer.total_steps(),
                clock.elapsed().as_secs_f64()
            );
        }
        if step % per_epoch == 0 {
            let eval = trainer.evaluate(&held_records);
            eprintln!(
                "epoch {}: held-out {eval:?} ({:.0} s)",
                step / per_epoch,
                clock.elapsed().as_secs_f64()
            );
            history.held_out.push((step, eval));
            write(&trainer, &format!("draft-epoch{}.gguf", step / per_epoch))?;
            history.seconds = clock.elapsed().as_secs_f64();
            std::fs::write(out.join("history.json"), serde_json::to_string(&history)?)?;
        }
    }
    write(&trainer, "draft.gguf")?;
    history.seconds = clock.elapsed().as_secs_f64();
    std::fs::write(out.join("history.json"), serde_json::to_string(&history)?)?;
    let file = std::fs::read(out.join("draft.gguf"))?;
    let record = Record {
        sha256: sha256_hex(&file),
        bytes: file.len(),
        parameters: config.shape.parameters(model.config.vocab_size),
        d_model: config.shape.d_model,
        n_layers: config.shape.n_layers,
        config: &config,
        train_sha256: train_sha256.join(","),
        held_out_sha256: sha256_hex(&held_bytes),
        train_positions: history.train_positions,
        held_out_positions: held_records.iter().map(|r| r.answer.len()).sum(),
        first_steps,
        held_out: &history.held_out,
        seconds: history.seconds,
    };
    std::fs::write(
        out.join("record.json"),
        serde_json::to_string_pretty(&record)?,
    )?;
    Ok(())
}
