//! `specula`: the command-line front end of Specula.
//!
//! Subcommands live in their own modules: [`args`] defines the command line, [`plan`]
//! computes a serialisable report, [`render`] prints it as a table.

mod args;
mod argv;
#[cfg(test)]
mod argv_fuzz;
mod bench_args;
mod bench_cmd;
mod bench_costs;
mod bench_inputs;
mod compare;
mod decode;
mod decode_args;
mod error;
mod generate_cmd;
mod models;
mod number;
mod parse;
mod plan;
mod plot;
mod progress;
mod render;
mod report;
mod sample_cmd;
mod train_cmd;

use std::io::{self, Write};
use std::process::ExitCode;

use specula_engine::{ApiError, ErrorCode};

use crate::args::{Command, PlanArgs};
use crate::error::CliError;

fn main() -> ExitCode {
    let cli = match argv::read(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err((argv::Refused::Cli(error), json)) => return report(&error, json),
        Err((argv::Refused::Clap(error), json)) => return clap_error(&error, json),
    };
    // With --json an error is one JSON object `{ code, field?, message }` on stderr, the
    // shape of the npm package's SpeculaError.
    let json = match &cli.command {
        Command::Plan(args) => args.json,
        Command::Generate(args) => args.json || args.json_lines,
        Command::Bench(args) => args.json,
        _ => false,
    };
    let result = match cli.command {
        Command::Plan(args) => run_plan(args),
        Command::Generate(args) => generate_cmd::run(args),
        Command::Sample(args) => sample_cmd::run(args),
        Command::Bench(args) => bench_cmd::run(args),
        Command::Train(args) => train_cmd::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => report(&error, json),
    }
}

/// Prints `error` on stderr (one line, or one JSON object with `json`); its exit status.
fn report(error: &CliError, json: bool) -> ExitCode {
    // If stderr itself is gone there is nowhere left to report to.
    let _ = if json {
        writeln!(io::stderr().lock(), "{}", json_line(&error.to_api()))
    } else {
        writeln!(io::stderr().lock(), "error: {error}")
    };
    error.exit_code()
}

/// A value clap's typed parsers refused (`--gamma abc`, `--method beam`) is one
/// `error:` line, or with `--json` the object `{ code, field, message }`, like every
/// other refused option. With `--json` every other refusal of clap's is that object too:
/// an unknown flag and a missing one are `invalid_option` naming it (as npm names an
/// unknown or missing option), the rest `usage`, each with clap's first line and its tip
/// as the message. Without `--json` clap prints those itself, usage lines included; help
/// and version are printed as asked.
fn clap_error(e: &clap::Error, json: bool) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let value = matches!(
        e.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    );
    let shown = matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if shown || !(value || json) {
        e.exit();
    }
    let rendered = e.to_string();
    let line = rendered.lines().next().unwrap_or("error: invalid value");
    let mut message = line.strip_prefix("error: ").unwrap_or(line).to_owned();
    // "the following required arguments were not provided:" lists them on the next lines.
    if message.ends_with(':') {
        let listed: Vec<&str> = rendered
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .map(str::trim)
            .collect();
        message = format!("{message} {}", listed.join(", "));
    }
    // clap's suggestion ("a similar argument exists: '--gamma'") belongs in the one line.
    if let Some(tip) = rendered
        .lines()
        .find_map(|l| l.trim().strip_prefix("tip: "))
    {
        message = format!("{message} ({tip})");
    }
    // The flag as clap names it ("--top-k <N>"), as the option's JavaScript name ("topK").
    let field = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => Some(option_name(arg)),
        Some(ContextValue::Strings(args)) => args.first().map(|arg| option_name(arg)),
        _ => None,
    };
    let code = match e.kind() {
        ErrorKind::InvalidValue
        | ErrorKind::ValueValidation
        | ErrorKind::UnknownArgument
        | ErrorKind::MissingRequiredArgument => ErrorCode::InvalidOption,
        _ => ErrorCode::Usage,
    };
    let mut stderr = io::stderr().lock();
    let _ = if json {
        let error = ApiError {
            code,
            field: field.filter(|_| code == ErrorCode::InvalidOption),
            message,
        };
        writeln!(stderr, "{}", json_line(&error))
    } else {
        writeln!(stderr, "error: {message}")
    };
    ExitCode::from(error::EXIT_USAGE)
}

/// An error as one line of JSON.
fn json_line(error: &ApiError) -> String {
    // A struct of strings always serialises.
    serde_json::to_string(error).unwrap_or_else(|_| error.message.clone())
}

/// `--top-k <N>` → `topK`.
fn option_name(arg: &str) -> String {
    let flag = arg
        .split_whitespace()
        .next()
        .unwrap_or(arg)
        .trim_start_matches('-');
    let mut name = String::with_capacity(flag.len());
    let mut upper = false;
    for ch in flag.chars() {
        if ch == '-' {
            upper = true;
        } else if upper {
            name.push(ch.to_ascii_uppercase());
            upper = false;
        } else {
            name.push(ch);
        }
    }
    name
}

/// `specula plan`.
fn run_plan(args: PlanArgs) -> Result<(), CliError> {
    let request = args.into_request()?;
    let report = plan::run(&request)?;
    let text = if request.json {
        let mut json = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::failure(format!("cannot serialise the report: {e}")))?;
        json.push('\n');
        json
    } else {
        render::table(&report)
    };
    emit(&text)
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn emit(text: &str) -> Result<(), CliError> {
    write_out(text).map(|_| ())
}

/// Writes to stdout: `false` when its reader has gone away (a closed pipe, `| head`),
/// which is no error but leaves nothing worth computing.
fn write_out(text: &str) -> Result<bool, CliError> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(CliError::failure(format!("cannot write the output: {e}"))),
    }
}

/// Whether stdout is a pipe whose reader has gone away, asked without writing: a command
/// with nothing to print yet (`specula bench` between decodes) would otherwise only
/// learn of it minutes later, at its next write. A pipe's poll reports an error once its
/// read end is closed; files and terminals never do.
#[cfg(unix)]
fn stdout_reader_gone() -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdout = io::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::OUT)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&now)).is_ok()
        && fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP)
}

/// Elsewhere a closed pipe shows at the next write only.
#[cfg(not(unix))]
fn stdout_reader_gone() -> bool {
    false
}
