//! `cargo run -p specula-docs-check [ROOT]`: prints every documentation problem of the
//! repository (default: the one this crate is in) and exits 1 when there is any.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."),
        PathBuf::from,
    );
    match specula_docs_check::check_repository(&root) {
        Ok(problems) if problems.is_empty() => {
            println!("docs check: no problems");
            ExitCode::SUCCESS
        }
        Ok(problems) => {
            for problem in &problems {
                println!("{problem}");
            }
            println!("docs check: {} problem(s)", problems.len());
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("docs check: {err}");
            ExitCode::from(2)
        }
    }
}
