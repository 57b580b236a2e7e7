//! The length and work-log checks as `check_repository` runs them, over a scratch git
//! repository: an over-long BENCHMARKS.md and work-log phrasing are reported, documents
//! within their limits and plain prose are not.

use std::path::PathBuf;
use std::process::Command;

use specula_docs_check::length::{BENCHMARKS_MAX_LINES, MODELS_MAX_LINES};

/// A git repository in the temporary folder holding `files`, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, files: &[(&str, String)]) -> Self {
        let root =
            std::env::temp_dir().join(format!("specula-docs-check-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("scratch folder");
        for (path, text) in files {
            std::fs::write(root.join(path), text).expect("write");
        }
        let git = |args: &[&str]| {
            let status = Command::new("git")
                .arg("-C")
                .arg(&root)
                .args(args)
                .status()
                .expect("git");
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        git(&["add", "."]);
        Self(root)
    }

    fn problems(&self) -> Vec<String> {
        specula_docs_check::check_repository(&self.0)
            .expect("git ls-files")
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn lines(n: usize, text: &str) -> String {
    (0..n).map(|_| format!("{text}\n")).collect()
}

#[test]
fn documents_within_their_limits_and_plain_prose_pass() {
    let scratch = Scratch::new(
        "pass",
        &[
            ("BENCHMARKS.md", lines(BENCHMARKS_MAX_LINES, "a figure")),
            ("MODELS.md", lines(MODELS_MAX_LINES, "a model")),
            (
                "README.md",
                "Two runs of the bench, 40 minutes.\n".to_string(),
            ),
        ],
    );
    assert_eq!(scratch.problems(), Vec::<String>::new());
}

#[test]
fn over_long_documents_and_work_log_phrasing_fail() {
    let scratch = Scratch::new(
        "fail",
        &[
            ("BENCHMARKS.md", lines(BENCHMARKS_MAX_LINES + 1, "a figure")),
            ("MODELS.md", lines(MODELS_MAX_LINES + 1, "a model")),
            (
                "README.md",
                "Fine.\nThe same run, minutes later (recorded in 3c6eda2).\n".to_string(),
            ),
        ],
    );
    let problems = scratch.problems();
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(problems[0].starts_with("BENCHMARKS.md:251: 251 lines"));
    assert!(problems[1].starts_with("MODELS.md:301: 301 lines"));
    assert!(problems[2].starts_with("README.md:2: `minutes later`"));
    assert!(problems[3].starts_with("README.md:2: `recorded in 3c6eda2`"));
}

#[test]
fn a_missing_limited_document_fails() {
    let scratch = Scratch::new("missing", &[("MODELS.md", lines(3, "a model"))]);
    let problems = scratch.problems();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].starts_with("BENCHMARKS.md: has a line limit"));
}
