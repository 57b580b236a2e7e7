//! The CLI's error: one line of text and an exit status.

use std::fmt;
use std::process::ExitCode;

use specula_core::Error as CoreError;

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
    pub fn to_json(&self) -> serde_json::Value {
        let code = match (&self.field, self.code) {
            (Some(_), _) => "invalid_option",
            (None, EXIT_USAGE) => "usage",
            _ => "failure",
        };
        let mut out = serde_json::json!({ "code": code, "message": self.message });
        if let Some(field) = &self.field {
            out["field"] = field.clone().into();
        }
        out
    }

    /// A failure that is not the user's input.
    pub fn failure(message: impl Into<String>) -> Self {
        Self {
            message: one_line(message.into()),
            code: EXIT_FAILURE,
            field: None,
        }
    }

    /// Maps a core error about the distribution given by `flag` (or about both inputs when
    /// `flag` is `None`).
    pub fn from_core(flag: Option<&str>, error: &CoreError) -> Self {
        let prefix = flag.map(|f| format!("{f}: ")).unwrap_or_default();
        match error {
            CoreError::NotNormalized { sum, tolerance } => Self::usage(format!(
                "{prefix}the probabilities sum to {sum}, not 1 (allowed deviation {tolerance:e}); \
                 pass --normalize to rescale them"
            )),
            CoreError::BadRho { rho, rho_star } => Self::usage(format!(
                "--rho must be at least rho* = {rho_star} for k-Seq to stay exact, got {rho}"
            )),
            CoreError::BadKlBudget(d) => {
                Self::usage(format!("--kl must be a finite number >= 0 (nats), got {d}"))
            }
            CoreError::NoDrafts => Self::usage("--drafts must be at least 1, got 0"),
            CoreError::OtmTooLarge { .. } => Self::usage(format!(
                "{error}; use a smaller vocabulary or fewer --drafts"
            )),
            CoreError::LinearProgram(_) => Self::failure(error.to_string()),
            _ => Self::usage(format!("{prefix}{error}")),
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
