//! This repository passes its own docs check.

use std::path::Path;

#[test]
fn the_repository_has_no_documentation_problems() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let problems = specula_docs_check::check_repository(&root).expect("git ls-files");
    let report: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert!(report.is_empty(), "docs check:\n{}", report.join("\n"));
}
