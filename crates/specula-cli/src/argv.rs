//! The raw command line, checked before clap reads it: every argument must be UTF-8
//! text, and a value flag must not swallow one of the command's own flags.

use std::ffi::{OsStr, OsString};

use clap::{CommandFactory, Parser};

use crate::args::Cli;
use crate::error::CliError;

/// Why a command line was refused before its command ran: one of the CLI's own errors,
/// or clap's (a value its typed parser refused, an unknown flag, `--help`).
#[derive(Debug)]
pub enum Refused {
    /// Printed as one `error:` line (or JSON object).
    Cli(CliError),
    /// Printed by clap, or as one line for a refused value.
    Clap(clap::Error),
}

/// Reads the command line, the program's name first: UTF-8 text
/// ([`utf8_args`]), no value flag swallowing a flag ([`check_flag_values`]), then clap.
///
/// # Errors
/// Why it was refused, with whether it asks for errors as JSON.
pub fn read(raw: Vec<OsString>) -> Result<Cli, (Refused, bool)> {
    let args = utf8_args(raw.iter().cloned()).map_err(|e| (Refused::Cli(e), wants_json(&raw)))?;
    let json = wants_json(&args);
    check_flag_values(&args).map_err(|e| (Refused::Cli(e), json))?;
    Cli::try_parse_from(&args).map_err(|e| (Refused::Clap(e), json))
}

/// The arguments as text, the program's name first.
///
/// Read as `OsString`s: `std::env::args()` panics on an argument that is not UTF-8, and
/// a mistyped byte in a prompt or a path is the user's input, not a crash.
///
/// # Errors
/// A usage error naming the first argument that is not UTF-8 (shown with its bad bytes
/// replaced) and the argument before it.
pub fn utf8_args(raw: impl IntoIterator<Item = OsString>) -> Result<Vec<String>, CliError> {
    let mut args: Vec<String> = Vec::new();
    for (index, arg) in raw.into_iter().enumerate() {
        match arg.into_string() {
            Ok(text) => args.push(text),
            // The program's own name is not the user's input.
            Err(arg) if index == 0 => args.push(arg.to_string_lossy().into_owned()),
            Err(arg) => {
                let after = args
                    .last()
                    .filter(|_| index > 1)
                    .map_or_else(String::new, |prev| format!(", after {prev}"));
                return Err(CliError::usage(format!(
                    "argument {index} ({:?}{after}) is not UTF-8 text",
                    arg.to_string_lossy()
                )));
            }
        }
    }
    Ok(args)
}

/// Whether the command line asks for JSON output (and so for errors as JSON objects).
#[must_use]
pub fn wants_json<S: AsRef<OsStr>>(args: &[S]) -> bool {
    args.iter()
        .skip(1)
        .any(|a| a.as_ref() == "--json" || a.as_ref() == "--json-lines")
}

/// Refuses a value flag followed by one of its command's own flags (`--prompt --json`).
///
/// Value flags take text starting with `-` (negative numbers, prompts such as `- x`), so
/// clap would read `--json` there as the prompt and drop the flag the user meant; a
/// value that is exactly a flag of the command is far more likely a forgotten value. The
/// text itself is still reachable as `--prompt=--json`.
///
/// # Errors
/// A usage error naming both flags.
pub fn check_flag_values(args: &[String]) -> Result<(), CliError> {
    let mut cli = Cli::command();
    cli.build();
    let Some((at, command)) = args.iter().enumerate().skip(1).find_map(|(i, a)| {
        cli.get_subcommands()
            .find(|c| c.get_name() == a)
            .map(|c| (i, c))
    }) else {
        return Ok(());
    };
    let is_flag = |text: &str| {
        let name = text.strip_prefix("--").unwrap_or_default();
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        !name.is_empty() && command.get_arguments().any(|a| a.get_long() == Some(name))
    };
    let takes_value = |text: &str| {
        text.strip_prefix("--").is_some_and(|name| {
            command
                .get_arguments()
                .any(|a| a.get_long() == Some(name) && a.get_action().takes_values())
        })
    };
    let mut rest = args[at + 1..].iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            break;
        }
        if takes_value(arg) {
            match rest.next() {
                Some(value) if is_flag(value) => {
                    return Err(CliError::usage(format!(
                        "{arg} needs a value; got the flag {value} (for that text, write \
                         {arg}={value})"
                    )));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_flag_taken_as_a_value_is_refused() {
        let refused = |args: &[&str]| check_flag_values(&strings(args)).is_err();
        assert!(refused(&["specula", "generate", "--prompt", "--json"]));
        assert!(refused(&["specula", "generate", "--prompt", "--gamma=3"]));
        assert!(refused(&["specula", "plan", "--target", "--draft", "1"]));
        assert!(!refused(&["specula", "generate", "--prompt=--json"]));
        assert!(!refused(&[
            "specula",
            "generate",
            "--prompt",
            "--not-a-flag"
        ]));
        assert!(!refused(&[
            "specula", "generate", "--prompt", "-", "--json"
        ]));
        assert!(!refused(&["specula", "plan", "--kl", "-1"]));
        // A flag without a value, then one with: nothing is swallowed.
        assert!(!refused(&[
            "specula", "generate", "--json", "--prompt", "x"
        ]));
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_arguments_are_named() {
        use std::os::unix::ffi::OsStringExt;
        let raw = [
            OsString::from("specula"),
            OsString::from("generate"),
            OsString::from("--prompt"),
            OsString::from_vec(vec![b'a', 0xff]),
        ];
        let error = utf8_args(raw).expect_err("refused").to_string();
        assert!(error.contains("argument 3"), "{error}");
        assert!(error.contains("after --prompt"), "{error}");
    }
}
