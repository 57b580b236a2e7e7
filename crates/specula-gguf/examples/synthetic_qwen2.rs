//! Writes a small synthetic Qwen2 GGUF file (random weights: q/k/v biases, an untied
//! head, rotary embedding over split halves) to FILE, for the independent reference
//! (scripts/reference/llama_forward.py) to score: the Qwen2 path has no real file here.
//!
//! `cargo run --release -p specula-gguf --example synthetic_qwen2 -- FILE`

use std::process::ExitCode;

use specula_gguf::synthetic::{MatrixType, SyntheticLlama};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: synthetic_qwen2 FILE");
        return ExitCode::from(2);
    };
    let model = SyntheticLlama {
        architecture: "qwen2".to_owned(),
        qkv_bias: true,
        untied_output: true,
        matrix_type: MatrixType::Q8_0,
        seed: 11,
        ..SyntheticLlama::tiny()
    };
    if let Err(e) = std::fs::write(path, model.build()) {
        eprintln!("error: cannot write {path}: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
