//! End-to-end tests of `specula plan`'s refusals: bad numbers and lists, parameters a
//! method does not take or cannot solve, clap's usage errors; and its help.

mod plan_support;

use plan_support::{DRAFT, TARGET, assert_error, example, specula, text};

#[test]
fn bad_numbers_are_refused() {
    let draft = ["--draft", DRAFT];
    let cases: [(&str, &str); 7] = [
        (
            "0.1,abc,0.3,0.4",
            "--target entry 1 must be a number, got \"abc\"",
        ),
        (
            "nan,0.2,0.3,0.4",
            "--target entry 0 must be a probability >= 0, got nan",
        ),
        (
            "inf,0.2,0.3,0.4",
            "--target entry 0 must be a finite probability >= 0, got inf",
        ),
        (
            "-0.1,0.4,0.3,0.4",
            "--target entry 0 must be a finite probability >= 0, got -0.1",
        ),
        (
            "",
            "--target must be probabilities separated by commas, spaces or newlines, e.g. \
             0.25,0.75, got an empty list",
        ),
        (
            "0.1,,0.5,0.4",
            "--target entry 1 must be a number, got an empty entry",
        ),
        ("0.1,0.2,0.3,0.3", "normalize to rescale them"),
    ];
    for (target, needle) in cases {
        let mut args = vec!["plan", "--method", "speculative", "--target", target];
        args.extend_from_slice(&draft);
        assert_error(&args, needle);
    }
    assert_error(
        &[
            "plan",
            "--method",
            "speculative",
            "--target",
            "0,0,0,0",
            "--draft",
            DRAFT,
            "--normalize",
        ],
        "zero",
    );
    assert_error(
        &[
            "plan",
            "--method",
            "speculative",
            "--target",
            TARGET,
            "--draft",
            "0.5,0.5,0.5,0.5",
        ],
        "--draft must be probabilities that sum to 1 (within 1e-6), or set normalize to rescale them, got a sum of 2",
    );
}

#[test]
fn not_normalized_message_names_the_flag_and_the_fix() {
    assert_error(
        &[
            "plan",
            "--method",
            "spectr",
            "--target",
            "0.2,0.2,0.3,0.4",
            "--draft",
            DRAFT,
        ],
        "--target must be probabilities that sum to 1 (within 1e-6), or set normalize to rescale them, got a sum of 1.1",
    );
}

#[test]
fn length_mismatch_is_refused() {
    assert_error(
        &[
            "plan",
            "--method",
            "speculative",
            "--target",
            TARGET,
            "--draft",
            "0.5,0.5",
        ],
        "--draft must be as many entries as target (4), got 2 entries",
    );
}

#[test]
fn bad_method_parameters_are_refused() {
    assert_error(
        &example("spectr", &["--drafts", "0"]),
        "--drafts must be a whole number from 1 to 1000000, got 0",
    );
    assert_error(
        &example("spectr", &["--selection", "otm", "--drafts", "-2"]),
        "--drafts",
    );
    assert_error(&example("multiround", &["--drafts", "two"]), "--drafts");
    assert_error(
        &example("spectr", &["--drafts", "99999999"]),
        "from 1 to 1000000",
    );
    assert_error(
        &example("mentored", &["--kl", "-1"]),
        "--kl must be a finite number >= 0",
    );
    assert_error(&example("mentored", &["--kl=-0.5"]), "--kl");
    assert_error(&example("mentored", &["--kl", "NaN"]), "--kl");
    assert_error(&example("mentored", &["--kl", "inf"]), "--kl");
    assert_error(
        &example("mentored", &["--kl", "lots"]),
        "invalid value 'lots' for '--kl <D>'",
    );
    assert_error(&example("mentored", &[]), "--kl");
    assert_error(&example("spectr", &["--rho", "1"]), "rho*");
    assert_error(
        &example(
            "spectr",
            &["--selection", "kseq", "--drafts", "3", "--rho", "0.5"],
        ),
        "rho*",
    );
    assert_error(&example("spectr", &["--rho", "nan"]), "--rho");
    assert_error(&example("spectr", &["--rho", "x"]), "--rho");
}

#[test]
fn otm_too_large_is_refused() {
    assert_error(
        &example("spectr", &["--selection", "otm", "--drafts", "60"]),
        "--drafts must be small enough for the OTM linear program",
    );
    assert_error(
        &example("spectr", &["--selection", "otm", "--drafts", "1000"]),
        "more than 2^128",
    );
    let wide = vec!["0.001"; 1000].join(",");
    assert_error(
        &[
            "plan",
            "--method",
            "spectr",
            "--selection",
            "otm",
            "--target",
            &wide,
            "--draft",
            &wide,
            "--drafts",
            "5",
        ],
        "got 5, which over 1000 tokens needs 1000000000000000000",
    );
}

#[test]
fn flags_that_do_not_apply_are_refused() {
    for (method, flags) in [
        ("speculative", &["--rho", "2"][..]),
        ("speculative", &["--drafts", "2"]),
        ("speculative", &["--kl", "0.1"]),
        ("speculative", &["--selection", "race"]),
        ("multiround", &["--rho", "2"]),
        ("multiround", &["--selection", "kseq"]),
        ("spectr", &["--kl", "0.1"]),
        ("spectr", &["--epsilon", "0.1"]),
        ("mentored", &["--drafts", "2"]),
        ("mentored", &["--rho", "2"]),
        ("typical", &["--bug", "argmax-draft"]),
    ] {
        let mut args = example(method, flags);
        if method == "mentored" {
            args.extend_from_slice(&["--kl", "0.1"]);
        }
        assert_error(&args, "does not apply");
    }
    // rho is k-Seq's: SpecTr's other rules refuse it by name.
    for rule in ["race", "otm"] {
        assert_error(
            &example("spectr", &["--selection", rule, "--rho", "2"]),
            &format!("--rho must be left out with selection \"{rule}\""),
        );
    }
}

#[test]
fn former_names_are_refused_with_the_new_spelling() {
    for (method, hint) in [
        (
            "kseq",
            "method \"spectr\", whose default selection is \"kseq\"",
        ),
        ("race", "method \"spectr\" with selection \"race\""),
        ("otm", "method \"spectr\" with selection \"otm\""),
        ("greedy", "method \"speculative\" with temperature 0"),
        ("lookup", "standard speculative sampling"),
        ("autoregressive", "drafts nothing"),
    ] {
        assert_error(
            &example(method, &[]),
            "--method must be one of speculative, spectr, multiround, mentored, typical (",
        );
        assert_error(&example(method, &[]), hint);
    }
    assert_error(
        &example("spectr", &["--selection", "best"]),
        "--selection must be \"kseq\" (k-Seq, the default), \"race\"",
    );
}

#[test]
fn temperature_zero_is_greedy_verification_of_method_speculative() {
    for method in ["spectr", "multiround", "typical"] {
        assert_error(
            &example(method, &["--temperature", "0"]),
            "--temperature must be above 0 for method",
        );
    }
    for (flags, flag) in [
        (&["--bug", "argmax-draft"][..], "--bug"),
        (&["--top-k", "2"], "--top-k"),
        (&["--top-p", "0.5"], "--top-p"),
    ] {
        let mut args = example("speculative", &["--temperature", "0"]);
        args.extend_from_slice(flags);
        assert_error(&args, &format!("{flag} must be left out at temperature 0"));
    }
}

#[test]
fn clap_usage_errors_do_not_panic() {
    for args in [
        &[
            "plan", "--method", "bogus", "--target", TARGET, "--draft", DRAFT,
        ][..],
        &["plan", "--target", TARGET, "--draft", DRAFT],
        &["plan", "--method", "speculative", "--draft", DRAFT],
        &["frobnicate"],
        &[],
    ] {
        let out = specula(args);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        let errors = stderr.lines().filter(|l| l.starts_with("error:")).count();
        assert!(errors == 1 || args.is_empty(), "{args:?}: {stderr}");
    }
}

#[test]
fn help_documents_the_rules() {
    let out = specula(&["plan", "--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for needle in [
        "--normalize",
        "--drafts",
        "--kl",
        "--rho",
        "mentored",
        "--selection",
        "otm",
        "--temperature 0 is greedy",
        "null",
        "rho*",
    ] {
        assert!(help.contains(needle), "help lacks {needle:?}:\n{help}");
    }
}
