//! Every `specula` command the docs show (README.md, web/README.md, docs/*.md, MODELS.md,
//! BENCHMARKS.md: the shell code blocks and inline code spans that
//! `specula_docs_check::commands` finds) names a subcommand, flags and values the CLI has:
//! each is parsed by the CLI itself, with `--help` after its arguments, which clap reaches
//! only when every argument before it is known and every value its parser checks is valid.
//! The cheap ones (`plan`, and `generate`/`sample` with the bundled pair, `--samples` at
//! most [`SAMPLES_CAP`]) run as written and must succeed. Scripts, packages and examples the
//! docs name are checked by the docs check itself.

use std::path::Path;
use std::process::{Command, Output};

use specula_docs_check::commands::{DocCommand, Kind, extract, repository_commands};

/// The most `--samples` a documented `sample` command runs with here: the same flags, far
/// fewer runs (the README's 3,000-run comparisons take seconds each).
const SAMPLES_CAP: u64 = 200;

fn specula(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"))
}

fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("(no output)")
        .to_string()
}

/// `specula ARGS --help`: `Ok` when the CLI printed the help, so every argument is known.
fn parses(args: &[String]) -> Result<(), String> {
    let mut with_help = args.to_vec();
    with_help.push("--help".into());
    let out = specula(&with_help);
    if out.status.success() && !out.stdout.is_empty() {
        Ok(())
    } else {
        Err(first_line(&out.stderr))
    }
}

/// The arguments to run a documented command with, when it is cheap and needs nothing
/// the repository does not hold (a GGUF file, a `$VARIABLE`, trained runs).
fn cheap(command: &DocCommand) -> Option<Vec<String>> {
    let Kind::Specula(args) = &command.kind else {
        return None;
    };
    let sub = args.first()?.as_str();
    let outside = args.iter().any(|a| a.contains('$') || a.ends_with(".gguf"));
    let own_models = args
        .iter()
        .any(|a| matches!(a.as_str(), "--target" | "--draft" | "--models"));
    let runs = match sub {
        "plan" => !outside,
        "generate" | "sample" => !outside && !own_models,
        _ => false,
    };
    if !command.in_block || !runs {
        return None;
    }
    let mut args = args.clone();
    if let Some(at) = args.iter().position(|a| a == "--samples")
        && let Some(n) = args.get(at + 1).and_then(|v| v.parse::<u64>().ok())
    {
        args[at + 1] = n.min(SAMPLES_CAP).to_string();
    }
    Some(args)
}

/// The problems of the documented `commands`, one line each.
fn problems(commands: &[DocCommand]) -> (Vec<String>, usize) {
    let mut problems = Vec::new();
    let mut ran = 0;
    for command in commands {
        let Kind::Specula(args) = &command.kind else {
            continue;
        };
        let at = format!(
            "{}:{}: `specula {}`",
            command.file.display(),
            command.line,
            args.join(" ")
        );
        if let Err(why) = parses(args) {
            problems.push(format!("{at}: the CLI refuses it: {why}"));
            continue;
        }
        if let Some(run) = cheap(command) {
            ran += 1;
            let out = specula(&run);
            if !out.status.success() || out.stdout.is_empty() {
                problems.push(format!(
                    "{at}: run as `specula {}`, it failed ({}): {}",
                    run.join(" "),
                    out.status,
                    first_line(&out.stderr)
                ));
            }
        }
    }
    (problems, ran)
}

#[test]
fn every_documented_command_parses_and_the_cheap_ones_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let commands = repository_commands(&root).expect("git ls-files");
    let specula_in = |file: &str| {
        commands
            .iter()
            .filter(|c| c.file == Path::new(file) && matches!(c.kind, Kind::Specula(_)))
            .count()
    };
    // The extraction finds the README's command-line tour (not nothing, by a change of
    // its format) and the commands of the docs folder.
    assert!(
        specula_in("README.md") >= 10,
        "README.md: {}",
        specula_in("README.md")
    );
    assert!(specula_in("docs/limits.md") >= 3);
    let (problems, ran) = problems(&commands);
    assert!(
        problems.is_empty(),
        "documented commands:\n{}",
        problems.join("\n")
    );
    assert!(ran >= 8, "only {ran} documented commands ran");
}

#[test]
fn a_subcommand_flag_or_value_that_does_not_exist_fails() {
    let text = "```sh\nspecula generate --prompt ROMEO: --no-such-flag 3\n\
                specula no-such-command --json\nspecula generate --method no-such-method\n\
                specula plan --method kseq --target 0.5,0.5 --draft 0.5,0.5 --gamma 4\n\
                specula sample --prompt x --method speculative --samples 2 --compare --stop a\n\
                specula plan --method spectr --drafts 2 --target 0.5,0.5 --draft 0.5,0.5\n```\n";
    let commands = extract(Path::new("x.md"), text);
    assert_eq!(commands.len(), 6);
    let (problems, ran) = problems(&commands);
    let lines: Vec<&str> = problems
        .iter()
        .map(|p| p.split(": ").next().unwrap_or(""))
        .collect();
    // Lines 2-5 parse to an error (an unknown flag, subcommand, method; plan has no
    // --gamma); line 6 parses but its run is refused (--compare with --stop); line 7 is
    // right, and runs.
    assert_eq!(
        lines,
        ["x.md:2", "x.md:3", "x.md:4", "x.md:5", "x.md:6"],
        "{problems:#?}"
    );
    assert_eq!(ran, 2);
}
