//! The CLI's error: one line of text, the code every surface gives it, and an exit status.

use std::fmt;
use std::process::ExitCode;

use specula_engine::{ApiError, ErrorCode};

/// Exit status for invalid input (the same as clap's usage errors).
pub const EXIT_USAGE: u8 = 2;
/// Exit status when the analysis fails or output cannot be written.
pub const EXIT_FAILURE: u8 = 1;

/// Why a command failed; printed as `error: <message>` on one line, or with `--json` as
/// the `{ code, field, message }` every surface uses, with the code the npm package gives
/// the same mistake (`bad_prompt`, `bad_weights`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    message: String,
    code: ErrorCode,
    /// The option or input the error is about, as the JavaScript API names it.
    field: Option<String>,
    /// The exit status: [`EXIT_USAGE`] for the user's input, [`EXIT_FAILURE`] otherwise.
    status: u8,
}

impl CliError {
    /// A command line that cannot be read as the user meant it (the CLI's own `usage`).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::coded(ErrorCode::Usage, None, message)
    }

    /// A refused option, its message naming the flag `flag`.
    #[must_use]
    pub fn option(error: &specula_engine::options::OptionError, flag: &str) -> Self {
        Self::coded(
            ErrorCode::InvalidOption,
            Some(&error.field),
            error.message_for(flag),
        )
    }

    /// A prompt the tokenizer cannot encode (field `prompt`, as npm's `bad_prompt`).
    pub fn bad_prompt(message: impl Into<String>) -> Self {
        Self::coded(ErrorCode::BadPrompt, Some("prompt"), message)
    }

    /// Model files that cannot be read, do not load or do not belong together.
    pub fn bad_weights(message: impl Into<String>) -> Self {
        Self::coded(ErrorCode::BadWeights, None, message)
    }

    /// The decoding engine refused the settings or the prompt (the user's input).
    pub fn engine_refused(message: impl Into<String>) -> Self {
        Self {
            status: EXIT_USAGE,
            ..Self::coded(ErrorCode::Engine, None, message)
        }
    }

    /// The decoding engine refused a model's answer (not the user's input).
    pub fn engine(message: impl Into<String>) -> Self {
        Self::coded(ErrorCode::Engine, None, message)
    }

    /// A model that failed to run.
    pub fn model_failed(message: impl Into<String>) -> Self {
        Self::coded(ErrorCode::ModelFailed, None, message)
    }

    /// A backend asked for that cannot be used.
    pub fn backend(message: impl Into<String>) -> Self {
        Self::coded(ErrorCode::BackendUnavailable, Some("backend"), message)
    }

    /// A failure that is not the user's input (output that cannot be written).
    pub fn failure(message: impl Into<String>) -> Self {
        Self::coded(ErrorCode::Failure, None, message)
    }

    /// An error with the code `code`, about `field` if it names one; its exit status is
    /// [`EXIT_USAGE`] for the codes of the user's input (the command line, an option, a
    /// prompt, model files, a backend), else [`EXIT_FAILURE`].
    pub fn coded(code: ErrorCode, field: Option<&str>, message: impl Into<String>) -> Self {
        let status = match code {
            ErrorCode::Usage
            | ErrorCode::InvalidOption
            | ErrorCode::BadPrompt
            | ErrorCode::BadWeights
            | ErrorCode::BadModel
            | ErrorCode::BackendUnavailable => EXIT_USAGE,
            _ => EXIT_FAILURE,
        };
        Self {
            message: one_line(message.into()),
            code,
            field: field.map(str::to_owned),
            status,
        }
    }

    /// The error as every surface shows it: `{ code, field?, message }` (`--json`).
    #[must_use]
    pub fn to_api(&self) -> ApiError {
        ApiError {
            code: self.code,
            field: self.field.clone(),
            message: self.message.clone(),
        }
    }

    /// The process exit status.
    #[must_use]
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.status)
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
