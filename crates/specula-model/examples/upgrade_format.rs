//! Upgrades model directories from description format 1 (no digest of the description
//! itself) to the current format, after checking the weights against the digest the old
//! description records (`specula_model::upgrade_dir`).
//!
//! `cargo run -p specula-model --example upgrade_format -- DIR [DIR ...]`

use std::path::Path;
use std::process::ExitCode;

use specula_model::{ModelRole, Upgrade, upgrade_dir};

fn main() -> ExitCode {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    if dirs.is_empty() {
        eprintln!("usage: upgrade_format DIR [DIR ...]");
        return ExitCode::from(2);
    }
    let mut status = ExitCode::SUCCESS;
    for dir in &dirs {
        for role in [ModelRole::Draft, ModelRole::Target] {
            let file = Path::new(dir).join(format!("{}.json", role.name()));
            match upgrade_dir(Path::new(dir), role) {
                Ok(Upgrade::Absent) => {}
                Ok(Upgrade::Current) => println!("{}: already current", file.display()),
                Ok(Upgrade::Upgraded) => println!("{}: upgraded", file.display()),
                Err(e) => {
                    eprintln!("error: {e}");
                    status = ExitCode::from(1);
                }
            }
        }
    }
    status
}
