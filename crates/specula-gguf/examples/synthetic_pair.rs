//! Writes the synthetic GGUF pair of the wasm tests (crates/specula-wasm/tests/common/gguf.rs)
//! to a directory, as `target.gguf` and `draft.gguf`, so the npm package's app test can
//! serve the very files whose greedy text tests/fixtures/gguf.json records.
//!
//! `cargo run --release -p specula-gguf --example synthetic_pair -- OUTDIR`

use std::path::Path;
use std::process::ExitCode;

use specula_gguf::synthetic::SyntheticLlama;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir] = args.as_slice() else {
        eprintln!("usage: synthetic_pair OUTDIR");
        return ExitCode::from(2);
    };
    let (draft, target) = SyntheticLlama::reference_pair();
    let dir = Path::new(dir);
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        return ExitCode::from(1);
    }
    for (name, model) in [("target.gguf", &target), ("draft.gguf", &draft)] {
        let path = dir.join(name);
        if let Err(e) = std::fs::write(&path, model.build()) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
        println!("{}", path.display());
    }
    ExitCode::SUCCESS
}
