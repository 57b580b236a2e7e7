//! The defaults and limits `specula <command> --help` quotes ("default 4, at most 64") are
//! the constants' that define them: each help text goes through the docs check's prose
//! check of numbers (`specula_docs_check::numbers`), against the constants read from the
//! crates' sources (which its own test compares with the compiled ones).

use std::path::Path;
use std::process::Command;

use specula_docs_check::numbers::check_prose;
use specula_docs_check::rust_consts::Constants;

const COMMANDS: [&str; 5] = ["plan", "generate", "sample", "bench", "train"];

fn help(command: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args([command, "--help"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"));
    assert!(out.status.success(), "specula {command} --help failed");
    String::from_utf8(out.stdout).expect("UTF-8 help")
}

fn constants() -> Constants {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let files = specula_docs_check::tracked_files(&root).expect("git ls-files");
    Constants::read(&root, &files)
}

/// The problems of one help text, one line each.
fn problems(command: &str, text: &str, constants: &Constants) -> Vec<String> {
    let name = format!("specula {command} --help");
    check_prose(Path::new(&name), text, constants)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn every_help_text_quotes_the_defaults_and_limits_of_the_constants() {
    let constants = constants();
    let mut all = Vec::new();
    for command in COMMANDS {
        all.extend(problems(command, &help(command), &constants));
    }
    assert!(all.is_empty(), "help texts:\n{}", all.join("\n"));
}

#[test]
fn a_help_text_with_another_number_fails() {
    // The quotes as the help texts write them, each changed to a number the constants do
    // not have: the check must see each one.
    let constants = constants();
    for (command, quote, changed) in [
        (
            "generate",
            "(default 4, at most 64)",
            "(default 5, at most 64)",
        ),
        (
            "generate",
            "(default 4, at most 64)",
            "(default 4, at most 65)",
        ),
        ("generate", "default 0.09", "default 0.1"),
        (
            "generate",
            "default 64, at most 65536",
            "default 64, at most 65535",
        ),
        ("plan", "default 0.3", "default 0.4"),
    ] {
        let text = help(command);
        assert!(
            text.contains(quote),
            "`specula {command} --help` no longer says {quote:?}: update this test"
        );
        assert!(problems(command, &text, &constants).is_empty());
        let wrong = text.replacen(quote, changed, 1);
        assert_eq!(
            problems(command, &wrong, &constants).len(),
            1,
            "{command}: {changed}"
        );
    }
}
