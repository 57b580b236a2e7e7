//! The CLI's error: one line of text and an exit status.

use std::fmt;
use std::process::ExitCode;

use specula_engine::{ApiError, ErrorCode};

/// Exit status for invalid input (the same as clap's usage errors).
pub const EXIT_USAGE: u8 = 2;
/// Exit status when the analysis fails or output cannot be written.
pub const EXIT_FAILURE: u8 = 1;

/// Why a command failed; printed as `error: <message>` on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    message: String,
    code: u8,
    /// The option an `invalid_option` error is about, as the JavaScript API names it.
    field: Option<String>,
}

impl CliError {
    /// Invalid input from the user.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            message: one_line(message.into()),
            code: EXIT_USAGE,
            field: None,
        }
    }

    /// A refused option, its message naming the flag `flag`.
    #[must_use]
    pub fn option(error: &specula_engine::options::OptionError, flag: &str) -> Self {
        Self {
            message: one_line(error.message_for(flag)),
            code: EXIT_USAGE,
            field: Some(error.field.clone()),
        }
    }

    /// The error as every surface shows it: `{ code, field?, message }` (`--json`).
    #[must_use]
    pub fn to_api(&self) -> ApiError {
        let code = match (&self.field, self.code) {
            (Some(_), _) => ErrorCode::InvalidOption,
            (None, EXIT_USAGE) => ErrorCode::Usage,
            _ => ErrorCode::Failure,
        };
        ApiError {
            code,
            field: self.field.clone(),
            message: self.message.clone(),
        }
    }

    /// A failure that is not the user's input.
    pub fn failure(message: impl Into<String>) -> Self {
        Self {
            message: one_line(message.into()),
            code: EXIT_FAILURE,
            field: None,
        }
    }

    /// The process exit status.
    #[must_use]
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.code)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// Keeps an error on one line (a newline in a message would break `error:` parsing).
fn one_line(message: String) -> String {
    if message.contains(['\n', '\r']) {
        message.replace(['\n', '\r'], " ")
    } else {
        message
    }
}
