//! Hostile numbers at the limits of real-valued flags, a table beside `hostile.rs` and
//! `hostile_args.rs`: decimals typed past a bound that read as the bound itself
//! (`--temperature 1000000.00000000001` reads as 1e6, `-1e-400` as -0) are refused,
//! quoting the text, on every command that takes the flag, and so is an entry of `plan
//! --target`/`--draft` typed below 0; the bounds typed exactly, or otherwise written,
//! still run. Every run is killed after [`common::RUN_LIMIT`].

mod common;

use common::{check_rows, generate, list_file, row};

/// `plan` over two tokens with `extra` flags.
fn plan(method: &str, extra: &[&str], code: i32, fragment: &str) -> common::Row {
    let mut args = vec![
        "plan", "--method", method, "--target", "0.5,0.5", "--draft", "0.5,0.5",
    ];
    args.extend_from_slice(extra);
    row(&args, code, fragment)
}

#[test]
fn decimals_past_a_limit_are_refused_as_typed() {
    check_rows(&[
        // generate (and sample, through the same options): each real-valued flag.
        generate(
            &["--temperature", "1000000.00000000001"],
            2,
            "--temperature must be a number from 0 (greedy) to 1e6, got 1000000.00000000001",
        ),
        generate(
            &["--temperature", "-1e-400"],
            2,
            "--temperature must be a number from 0 (greedy) to 1e6, got -1e-400",
        ),
        generate(
            &["--top-p", "1.00000000000000001"],
            2,
            "--top-p must be a number in (0, 1] (leave it out for no top-p), got \
             1.00000000000000001",
        ),
        generate(
            &["--method", "mentored", "--kl", "1000000.00000000001"],
            2,
            "--kl must be a KL budget D from 0 (lossless) to 1e6 nats, got 1000000.00000000001",
        ),
        generate(
            &["--method", "mentored", "--kl", "-0.1e-400"],
            2,
            "got -0.1e-400",
        ),
        generate(
            &["--method", "typical", "--epsilon", "1.00000000000000001"],
            2,
            "--epsilon must be a probability from 0 to 1 (the ceiling of typical acceptance's \
             threshold), got 1.00000000000000001",
        ),
        generate(
            &["--method", "typical", "--delta", "1000000.00000000001"],
            2,
            "--delta must be a number from 0 to 1e6 (the scale of exp(-H)), got \
             1000000.00000000001",
        ),
        row(
            &[
                "sample",
                "--prompt",
                "A",
                "--samples",
                "1",
                "--temperature",
                "1000000.00000000001",
            ],
            2,
            "--temperature must be a number from 0 (greedy) to 1e6, got 1000000.00000000001",
        ),
        // plan: the same ranges (temperature and top-p with a bug), and its KL budget's
        // lower bound.
        plan(
            "typical",
            &["--epsilon", "1.00000000000000001"],
            2,
            "--epsilon must be a probability from 0 to 1, got 1.00000000000000001",
        ),
        plan(
            "typical",
            &["--delta", "1e6000000000000000000000"],
            2,
            "got 1e6000000000000000000000",
        ),
        plan(
            "mentored",
            &["--kl", "-1e-400"],
            2,
            "--kl must be a finite number >= 0 (nats), got -1e-400",
        ),
        plan(
            "speculative",
            &[
                "--bug",
                "shared-uniform",
                "--temperature",
                "1000000.00000000001",
            ],
            2,
            "got 1000000.00000000001",
        ),
        plan(
            "speculative",
            &["--bug", "shared-uniform", "--top-p", "1.00000000000000001"],
            2,
            "got 1.00000000000000001",
        ),
        // plan's probability lists: each entry held to >= 0 as typed, on the command
        // line and in a file alike.
        row(
            &[
                "plan",
                "--method",
                "spectr",
                "--target",
                "-1e-400,0.5,0.5",
                "--draft",
                "0.3,0.3,0.4",
            ],
            2,
            "--target entry 0 must be a probability >= 0, got -1e-400",
        ),
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                "0.5,0.5,0",
                "--draft",
                "0.3 0.7 -0.1e-400",
                "--normalize",
            ],
            2,
            "--draft entry 2 must be a probability >= 0, got -0.1e-400",
        ),
        row(
            &[
                "plan",
                "--method",
                "speculative",
                "--target",
                &list_file("negative-entries", 3, "-1e-999", "\n"),
                "--draft",
                "0.3,0.3,0.4",
            ],
            2,
            "--target entry 0 must be a probability >= 0, got -1e-999",
        ),
        common::Row {
            stdin: Some("0.5\n0.5\n-1e-400\n".to_owned()),
            ..row(
                &[
                    "plan",
                    "--method",
                    "spectr",
                    "--target",
                    "0.3,0.3,0.4",
                    "--draft",
                    "-",
                ],
                2,
                "--draft entry 2 must be a probability >= 0, got -1e-400",
            )
        },
        // bench's own flags, refused before any model loads.
        row(
            &["bench", "--temperature", "1000000.00000000001"],
            2,
            "--temperature must be a number in [0, 1000000], got \"1000000.00000000001\"",
        ),
        row(
            &["bench", "--kls", "0.5,1000000.00000000001"],
            2,
            "--kls must be a number in [0, 1000000], got \"1000000.00000000001\"",
        ),
        // train's: the dropout's 0.9 typed past it.
        row(
            &[
                "train",
                "--role",
                "draft",
                "--dropout",
                "0.90000000000000001",
            ],
            2,
            "--dropout must be a number in [0, 0.9], got \"0.90000000000000001\"",
        ),
    ]);
    // The bounds themselves, however written, are in range.
    check_rows(&[
        generate(&["--temperature", "1000000.000", "--seed", "1"], 0, ""),
        generate(&["--temperature", "1e6", "--top-p", "1.0"], 0, ""),
        generate(&["--temperature", "-0.0e-400"], 0, ""),
        generate(
            &[
                "--method",
                "typical",
                "--epsilon",
                "10e-1",
                "--delta",
                "0.001e9",
            ],
            0,
            "",
        ),
        plan(
            "mentored",
            &["--kl", "-0"],
            0,
            "KL budget D                    0.000000",
        ),
        // A list entry of exactly 0 however written, or a positive one that reads as 0.
        row(
            &[
                "plan",
                "--method",
                "spectr",
                "--target",
                "-0,-0.0e-400,1",
                "--draft",
                "1e-400,0.5,0.5",
            ],
            0,
            "kseq",
        ),
        // A rho just above rho* = 1 may read as 1: in range either way.
        plan("spectr", &["--rho", "1.00000000000000001"], 0, "rho"),
    ]);
}

#[test]
fn whole_number_flags_read_integers_as_integers() {
    // Every whole-number flag of every command: a decimal that reads as a whole number
    // is not one.
    check_rows(&[
        generate(
            &["--gamma", "4.0000000000000001"],
            2,
            "got 4.0000000000000001",
        ),
        generate(
            &["--method", "spectr", "--drafts", "2.0000000000000001"],
            2,
            "got 2.0000000000000001",
        ),
        generate(
            &["--method", "lookup", "--ngram", "3.0000000000000001"],
            2,
            "got 3.0000000000000001",
        ),
        generate(
            &["--top-k", "8.0000000000000001"],
            2,
            "got 8.0000000000000001",
        ),
        row(
            &[
                "sample",
                "--prompt",
                "A",
                "--samples",
                "1",
                "--gamma",
                "4.0000000000000001",
            ],
            2,
            "--gamma must be a whole number from 1 to 64 (draft tokens per round), got \
             4.0000000000000001",
        ),
        row(
            &["sample", "--prompt", "A", "--samples", "4.0000000000000001"],
            2,
            "--samples",
        ),
        row(
            &["bench", "--gammas", "4.0000000000000001"],
            2,
            "--gammas: entry 0 (\"4.0000000000000001\")",
        ),
        row(&["bench", "--tokens", "4.0000000000000001"], 2, "--tokens"),
        plan(
            "spectr",
            &["--selection", "otm", "--drafts", "2.0000000000000001"],
            2,
            "got 2.0000000000000001",
        ),
    ]);
}
