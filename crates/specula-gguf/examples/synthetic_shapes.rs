//! Writes random-weight stand-ins of SmolLM2's shapes (135M, 360M, 1.7B; Q8_0, the
//! synthetic vocabulary) to a directory, so the cost of a call of each size can be
//! measured without the real files: a forward pass costs what its shape costs, whatever
//! the weights. MODELS.md ("SmolLM2-135M as a draft for larger members") uses them.
//!
//! `cargo run --release -p specula-gguf --example synthetic_shapes -- OUTDIR [135m,360m,1.7b]`

use std::path::Path;
use std::process::ExitCode;

use specula_gguf::synthetic::SyntheticLlama;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, which) = match args.as_slice() {
        [dir] => (dir, "135m,360m,1.7b"),
        [dir, which] => (dir, which.as_str()),
        _ => {
            eprintln!("usage: synthetic_shapes OUTDIR [135m,360m,1.7b]");
            return ExitCode::from(2);
        }
    };
    let dir = Path::new(dir);
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        return ExitCode::from(1);
    }
    for name in which.split(',') {
        let model = match name {
            "135m" => SyntheticLlama::smollm2_135m(),
            "360m" => SyntheticLlama::smollm2_360m(),
            "1.7b" => SyntheticLlama::smollm2_1_7b(),
            other => {
                eprintln!("error: no stand-in {other:?} (135m, 360m or 1.7b)");
                return ExitCode::from(2);
            }
        };
        let path = dir.join(format!("smollm2-{name}-standin.gguf"));
        if let Err(e) = std::fs::write(&path, model.build()) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
        println!("{}", path.display());
    }
    ExitCode::SUCCESS
}
