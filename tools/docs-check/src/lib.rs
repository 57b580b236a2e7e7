//! # specula-docs-check
//!
//! The repository's documentation checks, run by `cargo test` (see `tests/repository.rs`)
//! and by hand with `cargo run -p specula-docs-check` for a readable report:
//!
//! - [`links`]: every relative link and image in a Markdown file points at a file or
//!   folder of the repository, and every `#anchor` at a heading of its target file;
//! - [`outside`]: no tracked text file refers to anything outside the repository (a
//!   sibling folder, a work log, the number of an issue on a tracker readers cannot see);
//! - [`length`]: the long-form documents stay within their own line limits
//!   ([`length::LINE_LIMITS`]), and every other source and document file within
//!   [`length::FILE_MAX_LINES`];
//! - [`worklog`]: no Markdown file reads as a work log ("minutes later", "recorded in
//!   a commit", a dated section);
//! - [`commands`]: the commands the docs show run what exists: each script is a tracked
//!   file, each `cargo -p` a package of the workspace (the `specula` commands' flags are
//!   checked against the CLI by its test `doc_commands.rs`, which reads them from here);
//! - [`numbers`] and [`page_controls`]: every default and limit the docs, the page and the
//!   sources' comments quote (`gamma` (1–64, default 4)) is the value of its constant,
//!   read from its one definition in Rust by [`rust_consts`] (the CLI's help texts go
//!   through the same check in its test `help_numbers.rs`).
#![deny(missing_docs)]

pub mod commands;
pub mod length;
pub mod links;
pub mod numbers;
pub mod outside;
pub mod page_controls;
pub mod rust_consts;
pub mod shell;
pub mod worklog;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One thing wrong with the repository's documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file, relative to the repository root.
    pub file: PathBuf,
    /// The 1-based line, where known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// The files git tracks under `root`, relative to it.
///
/// # Errors
/// When `git ls-files` cannot run or fails (not a git checkout).
pub fn tracked_files(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z"])
        .output()?;
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "git ls-files failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| PathBuf::from(String::from_utf8_lossy(name).into_owned()))
        .collect())
}

/// Every problem in the repository at `root`: limited documents that are missing, then per
/// file the line limit, broken links and work-log phrasing of its Markdown, and references
/// outside the repository in any tracked text file, then the docs' commands that name a
/// script, package or example that does not exist.
///
/// # Errors
/// When the tracked files cannot be listed.
pub fn check_repository(root: &Path) -> std::io::Result<Vec<Problem>> {
    let files = tracked_files(root)?;
    let tree = links::Tree::new(&files);
    let mut problems = length::check_present(&files);
    let mut commands = Vec::new();
    let constants = rust_consts::Constants::read(root, &files);
    for file in &files {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue; // binary files (images, weights) are not text to check
        };
        problems.extend(length::check_length(file, &text));
        if file.extension().is_some_and(|ext| ext == "md") {
            problems.extend(links::check_markdown(root, &tree, file, &text));
            problems.extend(worklog::check_markdown(file, &text));
        }
        if numbers::is_prose_source(file) {
            problems.extend(numbers::check_prose(file, &text, &constants));
        }
        if file == Path::new(page_controls::PAGE) {
            problems.extend(page_controls::check_controls(file, &text, &constants));
        }
        if commands::is_command_source(file) {
            commands.extend(commands::extract(file, &text));
        }
        problems.extend(outside::check_text(file, &text));
    }
    problems.extend(commands::check_commands(root, &files, &commands));
    Ok(problems)
}
