//! Writes (or resumes) the on-policy data of a GGUF target: its answers to the
//! instructions of `specula_train::onpolicy::prompts`, sampled at a temperature, with its
//! top-k log-probabilities at every answer position (format: `onpolicy::records`).
//!
//! `cargo run --release -p specula-train --example onpolicy_data -- MODEL.gguf OUT.bin
//! [train|held-out] [batch 8] [threads 1] [limit] [seed 0]`; the sampling settings are
//! fixed here (temperature 0.7, top 32, at most 256 new tokens) and checked on resume; a
//! second seed gives a second answer to every instruction.

use std::time::Instant;

use specula_gguf::GgufModel;
use specula_host::HostLlamaPass;
use specula_train::onpolicy::answer;
use specula_train::onpolicy::prompts::{Split, instructions};
use specula_train::onpolicy::records::{DataFile, DataHeader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: onpolicy_data MODEL.gguf OUT.bin [train|held-out] [batch] [threads] [limit] [seed]";
    let (Some(model), Some(out)) = (args.first(), args.get(1)) else {
        return Err(usage.into());
    };
    let split = match args.get(2).map_or("train", String::as_str) {
        "train" => Split::Train,
        "held-out" => Split::HeldOut,
        other => return Err(format!("{usage}: split {other:?}").into()),
    };
    let number = |i: usize, default: usize| -> Result<usize, Box<dyn std::error::Error>> {
        args.get(i).map_or(Ok(default), |s| Ok(s.parse()?))
    };
    let (batch, threads) = (number(3, 8)?, number(4, 1)?);
    let mut list = instructions(split);
    list.truncate(number(5, list.len())?);
    let file = GgufModel::from_bytes(std::fs::read(model)?, None)?;
    let mut pass = HostLlamaPass::new(&file)?;
    pass.set_threads(threads)?;
    let header = DataHeader {
        top_k: 32,
        temperature: 0.7,
        seed: number(6, 0)? as u64,
        max_new: 256,
    };
    let mut data = DataFile::open(std::path::Path::new(out), header)?;
    let before: usize = data.records.iter().map(|r| r.answer.len()).sum();
    eprintln!(
        "{} of {} instructions already answered ({before} tokens)",
        data.records.len(),
        list.len()
    );
    let clock = Instant::now();
    let mut tokens = 0;
    answer(&pass, &file.tokenizer, &list, &mut data, batch, |r| {
        tokens += r.answer.len();
        let secs = clock.elapsed().as_secs_f64();
        let text = file.tokenizer.decode(&r.answer).unwrap_or_default();
        let start: String = text.chars().take(60).collect();
        eprintln!(
            "instruction {:>3}: {:>3} tokens; {tokens} in {secs:.0} s ({:.1} tokens/s): {start:?}",
            r.instruction,
            r.answer.len(),
            tokens as f64 / secs
        );
    })?;
    Ok(())
}
