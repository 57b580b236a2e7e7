//! Messages that once misled, each now saying what was wrong in the terms of the command
//! that was run (a third table beside `hostile.rs` and `hostile_args.rs`): lists read
//! from `@FILE` split as on the command line and refused naming their own flag and file,
//! names and numbers read with surrounding white space ignored everywhere, and logits
//! the lab cannot use reported as the models' failure, as `generate` reports them.

mod common;

use common::{check_rows, edit_weights, model_dir, row, scratch};

/// A list file holding `text`, as `@PATH`.
fn list(name: &str, text: &str) -> String {
    let path = scratch(name).join("list.txt");
    std::fs::write(&path, text).expect("write");
    format!("@{}", path.display())
}

#[test]
fn list_files_split_as_the_command_line_and_name_their_own_flag() {
    let commas = list("commas", ",,,");
    let doubled = list("doubled", "0.5,,0.5\n");
    let trailing = list("trailing", "0.5,\n0.5,\n");
    let spaced = list("spaced", "0.5 0.25\n0.25\n");
    let blank = list("blank", " \n\n");
    let plan = |target: &str, draft: &str, code: i32, fragment: &str| {
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                target,
                "--draft",
                draft,
            ],
            code,
            fragment,
        )
    };
    let path = |at: &str| at.trim_start_matches('@').to_owned();
    check_rows(&[
        // A file of commas once blamed --draft for having entries.
        plan(
            &commas,
            "0.5,0.5",
            2,
            &format!(
                "--target entry 0 must be a number, got an empty entry in {} (a stray comma?)",
                path(&commas)
            ),
        ),
        plan(
            "0.5,0.5",
            &commas,
            2,
            &format!(
                "--draft entry 0 must be a number, got an empty entry in {}",
                path(&commas)
            ),
        ),
        // Doubled and trailing commas: refused from a file as on the command line.
        plan(
            &doubled,
            "0.5,0.5",
            2,
            "--target entry 1 must be a number, got an empty entry in",
        ),
        plan(
            "0.5,,0.5",
            "0.5,0.5",
            2,
            "--target entry 1 must be a number, got an empty entry (a stray comma?)",
        ),
        plan(
            &trailing,
            "0.5,0.5",
            2,
            "--target entry 2 must be a number, got an empty entry in",
        ),
        plan(
            "0.5,0.5,",
            "0.5,0.5",
            2,
            "--target entry 2 must be a number, got an empty entry",
        ),
        // Spaces and newlines separate entries on the command line as in a file.
        plan(&spaced, "0.5 0.25 0.25", 0, "standard speculative sampling"),
        plan(
            &blank,
            "0.5",
            2,
            &format!(
                "--target must be probabilities separated by commas, spaces or newlines, e.g. 0.25,0.75, got an empty list in {}",
                path(&blank)
            ),
        ),
        // `@` alone once said "cannot read :".
        plan(
            "@",
            "0.5,0.5",
            2,
            "--target @ needs the file's name after the @ (@FILE reads the list from FILE)",
        ),
        plan(
            " @",
            "0.5,0.5",
            2,
            "--target @ needs the file's name after the @",
        ),
        plan(
            &format!(" {spaced}"),
            "0.5,0.25,0.25",
            0,
            "standard speculative sampling",
        ),
    ]);
}

#[test]
fn names_and_numbers_ignore_surrounding_white_space_everywhere() {
    let generate = |extra: &[&str]| {
        let mut args = vec!["generate", "--prompt", "ROMEO:", "--max-tokens", "2"];
        args.extend_from_slice(extra);
        row(&args, 0, "tokens")
    };
    check_rows(&[
        generate(&["--method", " lookup "]),
        generate(&["--method", "spectr", "--selection", " race"]),
        generate(&["--bug", "argmax-draft\n", "--temperature", " 0.5"]),
        generate(&["--seed", " 7 ", "--top-k", "4 "]),
        row(
            &[
                "plan",
                "--method",
                " speculative",
                "--bug",
                " argmax-draft",
                "--target",
                "0.5,0.5",
                "--draft",
                "0.5,0.5",
                "--top-p",
                " 0.9",
            ],
            0,
            "argmax-draft",
        ),
        // Text is taken as typed: a prompt keeps its spaces (and is refused where the
        // alphabet lacks a character).
        row(
            &["generate", "--prompt", "\tROMEO", "--max-tokens", "2"],
            2,
            "is not in the vocabulary",
        ),
    ]);
}

#[test]
fn logits_the_lab_cannot_use_are_the_models_failure_as_in_generate() {
    // f16 0x7E7E is NaN: every target weight past the header, with the checksums
    // recorded, so that only the logits give it away.
    let nan = model_dir("nan-logits", |d| {
        edit_weights(d, "target", true, |b| {
            let start = b.len() / 10;
            b[start..].fill(0x7E);
        });
    });
    let args = |extra: &[&str]| {
        let mut all = vec!["--models", nan.as_str(), "--prompt", "ROMEO:"];
        all.extend_from_slice(extra);
        all.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()
    };
    let as_row = |command: &str, extra: &[&str], fragment: &str| {
        let mut all = vec![command.to_owned()];
        all.extend(args(extra));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        row(&all, 1, fragment)
    };
    check_rows(&[
        as_row(
            "generate",
            &["--max-tokens", "4"],
            "the target model returned invalid logits",
        ),
        // Once "--model must be finite logits" with status 2: no such flag exists.
        as_row(
            "sample",
            &["--compare", "--samples", "4"],
            "the models' logits cannot give the exact distribution: the target's logits: \
             entry 0 is NaN (it needs finite logits)",
        ),
    ]);
}
