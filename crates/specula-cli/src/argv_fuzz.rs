//! Random command lines through the CLI's reading and checking, in-process: the real
//! subcommands and flag names (from clap's own description of the command line), with
//! values drawn from hostile ones (numbers that round or overflow, names with white
//! space, lists with empty entries, files that are not regular files, arguments that are
//! not UTF-8) and random text. Each is read as `main` reads it ([`argv::read`]) and
//! checked as its command checks it before any model loads (`plan` runs whole: it loads
//! none). Nothing may panic, and every refusal must be a typed error with a code: a
//! [`CliError`] of one line whose API shape names its option when it is about one, or a
//! clap error that prints `error: …` with status 2 (help and version aside). The
//! binary itself runs a few such lines in `tests/hostile_fuzz.rs`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;

use clap::CommandFactory;
use clap::error::ErrorKind;
use proptest::prelude::*;
use specula_core::PlanParams;
use specula_engine::ErrorCode;

use crate::args::{Cli, Command};
use crate::argv::{self, Refused};
use crate::error::CliError;

#[path = "../tests/common/hostile_values.rs"]
mod hostile_values;

use hostile_values::{LISTS, NAMES, NUMBERS, PATHS, not_utf8, special_files};

/// One flag of a subcommand: its long name, whether it takes a value and is required,
/// and the pool its values are drawn from first.
struct Flag {
    name: String,
    takes: bool,
    required: bool,
    pool: u16,
}

/// Each subcommand with its flags.
fn commands() -> &'static [(String, Vec<Flag>)] {
    static COMMANDS: OnceLock<Vec<(String, Vec<Flag>)>> = OnceLock::new();
    COMMANDS.get_or_init(|| {
        let mut cli = Cli::command();
        cli.build();
        // clap's own `help` subcommand is drawn as such, in `argv`.
        cli.get_subcommands()
            .filter(|c| c.get_name() != "help")
            .map(|c| {
                let flags = c.get_arguments().filter_map(|a| {
                    let takes = a.get_action().takes_values();
                    let kind = a
                        .get_value_names()
                        .and_then(|v| v.first())
                        .map(|v| v.as_str());
                    a.get_long().map(|long| Flag {
                        name: long.to_owned(),
                        takes,
                        required: a.is_required_set(),
                        pool: pool_of(kind.unwrap_or_default()),
                    })
                });
                (c.get_name().to_owned(), flags.collect())
            })
            .collect()
    })
}

/// The pool a flag's values fit, by the name its help gives the value: names, lists,
/// paths, text, or (every other) numbers.
fn pool_of(value_name: &str) -> u16 {
    match value_name {
        "METHOD" | "RULE" | "NAME" | "BACKEND" | "ROLE" | "WEIGHTS" | "TEACHER" => 1,
        "LIST" => 2,
        "DIR" | "FILE" | "FILE.gguf" => 3,
        "TEXT" | "STR" => 5,
        _ => 0,
    }
}

/// The FIFO (no writer) and the directory, made once for the whole run.
fn special() -> &'static [PathBuf] {
    static FILES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("specula-argv-fuzz-{}", std::process::id()));
        special_files(&dir)
    })
}

/// One drawn argument: what kind, two picks into the pools, and some random text.
type Draw = (u8, u16, u16, String);

/// A value from the pool `pool` picks: numbers, names, lists, paths (as they are and
/// as `@FILE`), random text, or one of the command's own flags.
fn value(pool: u16, pick: u16, text: &str, flags: &[Flag]) -> OsString {
    let pick = usize::from(pick);
    let special = special();
    let value = match pool % 7 {
        0 => NUMBERS[pick % NUMBERS.len()].to_owned(),
        1 => NAMES[pick % NAMES.len()].to_owned(),
        2 => LISTS[pick % LISTS.len()].to_owned(),
        3 => match pick % (PATHS.len() + special.len()) {
            i if i < PATHS.len() => PATHS[i].to_owned(),
            i => special[i - PATHS.len()].display().to_string(),
        },
        4 => format!("@{}", special[pick % special.len()].display()),
        5 => text.to_owned(),
        _ => flags
            .get(pick % flags.len().max(1))
            .map_or_else(String::new, |flag| format!("--{}", flag.name)),
    };
    // `-` reads standard input, which a test must not wait on.
    if value.trim() == "-" {
        OsString::from("-x")
    } else {
        OsString::from(value)
    }
}

/// A value for `flag`: from the pool it fits two times in three, else from any.
fn value_for(flag: &Flag, pick: u16, text: &str, flags: &[Flag]) -> OsString {
    let pool = if pick.is_multiple_of(3) {
        pick >> 8
    } else {
        flag.pool
    };
    value(pool, pick / 3, text, flags)
}

/// The command line `draws` stand for, the program's name first: a subcommand (or
/// `help`, or none, or one that does not exist), its required flags three times in
/// four, then each draw: mostly a flag and its value, sometimes a flag with `=`, and
/// one time in eight a stray value, text, an argument that is not UTF-8, or a flag that
/// does not exist.
fn argv(command: u8, draws: &[Draw]) -> Vec<OsString> {
    let all = commands();
    let mut args = vec![OsString::from("specula")];
    // Each subcommand three times in the 8 + 3 * 5 choices; `help`, one that does not
    // exist and none once each.
    let pick = usize::from(command & 0x3f) % (3 * all.len() + 3);
    let flags: &[Flag] = match pick.checked_sub(3) {
        Some(i) => {
            let (name, flags) = &all[i % all.len()];
            args.push(OsString::from(name));
            flags
        }
        None if pick == 0 => {
            args.push(OsString::from("help"));
            &[]
        }
        None if pick == 1 => {
            args.push(OsString::from("beam"));
            &[]
        }
        None => &[],
    };
    if command >> 6 != 0 {
        for (i, flag) in flags.iter().filter(|f| f.required).enumerate() {
            args.push(OsString::from(format!("--{}", flag.name)));
            // The fitting pool, a good value first in each: ROMEO:, speculative, 0.5,0.5.
            let text = "ROMEO:";
            let pick = draws.get(i).map_or(0, |d| d.1 % 4);
            args.push(value(flag.pool, pick, text, flags));
        }
    }
    for (kind, first, second, text) in draws {
        let flag = flags.get(usize::from(*first) % flags.len().max(1));
        match (kind % 32, flag) {
            (0..=23, Some(flag)) => {
                args.push(OsString::from(format!("--{}", flag.name)));
                if flag.takes {
                    args.push(value_for(flag, *second, text, flags));
                }
            }
            (24..=26, Some(flag)) => {
                let mut joined = OsString::from(format!("--{}=", flag.name));
                joined.push(value_for(flag, *second, text, flags));
                args.push(joined);
            }
            (28, _) => args.push(value(5, 0, text, flags)),
            (29, _) => args.push(OsString::from(format!("--{text}"))),
            (30, _) => args.push(not_utf8(text)),
            _ => args.push(value(second >> 8, *second, text, flags)),
        }
    }
    args
}

/// Checks `command` as its run does before loading a model (or reading more than the
/// files its flags name); `plan` runs whole, save an OTM linear program of more than a
/// few drafts (seconds of solving, refused or not by the same checks).
fn check(command: Command) -> Result<(), CliError> {
    match command {
        Command::Plan(args) => {
            let request = args.into_request()?;
            if matches!(request.input.params, PlanParams::Otm(k) if k > 3) {
                return Ok(());
            }
            let report = crate::plan::run(&request)?;
            assert!(!crate::render::table(&report).is_empty());
            serde_json::to_string(&report).expect("a report serialises");
            Ok(())
        }
        Command::Generate(args) => crate::generate_cmd::check(&args).map(drop),
        Command::Sample(args) => crate::sample_cmd::check(&args).map(drop),
        Command::Bench(args) => crate::bench_args::check(&args).map(drop),
        Command::Train(args) => {
            crate::train_cmd::check(&args)?;
            crate::train_cmd::load_corpus(&args.corpus).map(drop)
        }
    }
}

/// A refusal of the CLI's own: one line with a code, naming its option when the code
/// says it is about one.
fn assert_typed(args: &[OsString], error: &CliError) {
    let api = error.to_api();
    let message = &api.message;
    assert!(
        !message.is_empty() && !message.contains(['\n', '\r']) && message.len() <= 600,
        "{args:?}: {message:?}"
    );
    match api.code {
        ErrorCode::InvalidOption => {
            assert!(
                api.field.as_deref().is_some_and(|f| !f.is_empty()),
                "{args:?}: {api:?}"
            );
        }
        ErrorCode::Usage | ErrorCode::Failure => {}
        other => panic!("{args:?}: code {other:?} for {message:?}"),
    }
}

/// A refusal of clap's: an `error:` with status 2, or help and version (status 0).
fn assert_clap(args: &[OsString], error: &clap::Error) {
    let shown = matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if shown {
        return;
    }
    let rendered = error.to_string();
    assert!(
        error.exit_code() == 2 && rendered.starts_with("error: "),
        "{args:?}: {:?} {rendered:?}",
        error.kind()
    );
}

/// Numbers of the pools that lie past the limit of every number flag they may reach
/// (0 or above, at most 1e6), though they read as a number within it: an accepted
/// line that gives one to such a flag ran with a number the user did not type.
const PAST_A_LIMIT: &[&str] = &["-1e-400", "1000000.00000000001"];

/// The number flags with no upper limit, which take `1000000.00000000001` as typed.
const UNBOUNDED: &[(&str, &str)] = &[("plan", "rho"), ("plan", "kl")];

/// An accepted line: no number flag's last value is one of [`PAST_A_LIMIT`] (unless
/// the flag has no upper limit and the value is only past one).
fn assert_within_limits(args: &[OsString]) {
    let Some(name) = args.get(1).and_then(|a| a.to_str()) else {
        return;
    };
    let Some((_, flags)) = commands().iter().find(|(n, _)| n == name) else {
        return;
    };
    let mut last: Vec<(&str, String)> = Vec::new();
    let mut words = args.iter().skip(2).filter_map(|a| a.to_str()).peekable();
    while let Some(word) = words.next() {
        let Some(long) = word.strip_prefix("--") else {
            continue;
        };
        let (flag, value) = match long.split_once('=') {
            Some((flag, value)) => (flag, Some(value.to_owned())),
            None => (long, None),
        };
        let Some(flag) = flags.iter().find(|f| f.name == flag && f.takes) else {
            continue;
        };
        let value = value.or_else(|| words.next().map(str::to_owned));
        if let Some(value) = value {
            last.retain(|(f, _)| *f != flag.name);
            if flag.pool == 0 {
                last.push((flag.name.as_str(), value));
            }
        }
    }
    for (flag, value) in last {
        let unbounded = UNBOUNDED.contains(&(name, flag)) && !value.trim().starts_with('-');
        assert!(
            !PAST_A_LIMIT.contains(&value.trim()) || unbounded,
            "{args:?}: --{flag} {value:?} was accepted"
        );
    }
}

fn draws() -> impl Strategy<Value = (u8, Vec<Draw>)> {
    let draw = (any::<u8>(), any::<u16>(), any::<u16>(), "\\PC{0,10}");
    (any::<u8>(), prop::collection::vec(draw, 0..7))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 20_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_command_lines_are_refused_with_a_code_or_checked(
        (command, draws) in draws()
    ) {
        let args = argv(command, &draws);
        match argv::read(args.clone()) {
            Err((Refused::Cli(error), _)) => assert_typed(&args, &error),
            Err((Refused::Clap(error), _)) => assert_clap(&args, &error),
            Ok(cli) => match check(cli.command) {
                Err(error) => assert_typed(&args, &error),
                Ok(()) => assert_within_limits(&args),
            },
        }
    }
}

#[test]
fn the_draws_reach_every_subcommand_and_flag() {
    // The pools are built from clap: a flag renamed or added is drawn without an edit.
    let all = commands();
    let names: Vec<&str> = all.iter().map(|(name, _)| name.as_str()).collect();
    for name in ["plan", "generate", "sample", "bench", "train"] {
        assert!(names.contains(&name), "{names:?}");
    }
    let generate = &all
        .iter()
        .find(|(n, _)| n == "generate")
        .expect("generate")
        .1;
    let flag = |name: &str| generate.iter().find(|f| f.name == name).expect(name);
    assert!(flag("seed").takes && flag("seed").pool == 0);
    assert!(flag("prompt").required && flag("prompt").pool == 5);
    assert!(!flag("json").takes);
    // Without the required flags (the top bits 0), a flag and its value.
    let line = argv(4, &[(0, 0, 1, String::new())]);
    assert_eq!(line[1], OsString::from(&all[1].0));
    assert_eq!(line[2], OsString::from(format!("--{}", all[1].1[0].name)));
}

#[test]
fn the_draws_reach_every_subcommands_checks() {
    // Lines refused before their command's checks say nothing of them: out of 3,000
    // (the property's number), each subcommand's checks must accept some and refuse some.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut reached = std::collections::BTreeMap::<(String, bool), usize>::new();
    for _ in 0..3000 {
        let (command, draws) = draws().new_tree(&mut runner).expect("a draw").current();
        let args = argv(command, &draws);
        if let Ok(cli) = argv::read(args.clone()) {
            let name = args[1].to_string_lossy().into_owned();
            *reached
                .entry((name, check(cli.command).is_ok()))
                .or_default() += 1;
        }
    }
    let count = |name: &str, ok: bool| reached.get(&(name.to_owned(), ok)).copied();
    for name in ["plan", "generate", "sample", "bench", "train"] {
        assert!(count(name, false) >= Some(20), "{name}: {reached:?}");
        // No corpus is at hand, so no train line passes its checks.
        if name != "train" {
            assert!(count(name, true) >= Some(20), "{name}: {reached:?}");
        }
    }
}
