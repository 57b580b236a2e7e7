//! The one shape of every error that leaves Specula: `{ code, field?, message }`. The CLI
//! prints it with `--json`, the bindings throw it as a `SpeculaError`, and the npm package
//! and the page read `code` and `field`, never the message. The codes are listed once,
//! here, and generated into the package's TypeScript declarations.

use serde::Serialize;

use crate::options::OptionError;

/// What kind of failure an [`ApiError`] is; programs branch on this, people read the
/// message.
///
/// Marked `#[non_exhaustive]`: a later version may add codes, so match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// An option refused: a wrong type, an unknown name, a value out of range, an option
    /// the method does not use, or an input the math refuses; `field` names it.
    InvalidOption,
    /// A token-level analysis that failed through no fault of its input (the LP solver).
    PlanFailed,
    /// A call that needs loaded models before they were loaded.
    NotLoaded,
    /// A call that needs a running generation before one was started.
    NotStarted,
    /// A call while another call still holds the engine.
    Busy,
    /// A generation stopped through its abort signal (raised by the npm package).
    Aborted,
    /// Model files that do not load or do not match their checksum.
    BadWeights,
    /// A prompt the tokenizer cannot encode; `field` is `prompt`.
    BadPrompt,
    /// WebGPU asked for but not usable.
    BackendUnavailable,
    /// A file that could not be downloaded (raised by the npm package).
    DownloadFailed,
    /// A model answer the decoding engine refused (wrong length, not finite).
    Engine,
    /// A model that failed to run: the bundled pair on every backend, or a `decode()`
    /// model whose `logits` or `forward` threw or rejected (its error is the `cause`).
    ModelFailed,
    /// A `decode()` model that is not one: a `vocabSize` that is not a positive whole
    /// number or differs between draft and target, no `logits` function, or an answer of
    /// the wrong type or length or with a NaN or infinite logit; the message names the
    /// model (`draft` or `target`).
    BadModel,
    /// The worker or the wasm module crashed (raised by the npm package).
    Crashed,
    /// A call on an instance that was terminated (raised by the npm package).
    Terminated,
    /// A failure that is not the caller's doing; the message says what.
    Internal,
    /// A command line clap could not read (the CLI only).
    Usage,
    /// A command that failed for another reason, such as output that cannot be written
    /// (the CLI only).
    Failure,
}

impl ErrorCode {
    /// Every code, in documentation order.
    pub const ALL: [Self; 18] = [
        Self::InvalidOption,
        Self::PlanFailed,
        Self::NotLoaded,
        Self::NotStarted,
        Self::Busy,
        Self::Aborted,
        Self::BadWeights,
        Self::BadPrompt,
        Self::BackendUnavailable,
        Self::DownloadFailed,
        Self::Engine,
        Self::ModelFailed,
        Self::BadModel,
        Self::Crashed,
        Self::Terminated,
        Self::Internal,
        Self::Usage,
        Self::Failure,
    ];

    /// The code as serialised (`"invalid_option"`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidOption => "invalid_option",
            Self::PlanFailed => "plan_failed",
            Self::NotLoaded => "not_loaded",
            Self::NotStarted => "not_started",
            Self::Busy => "busy",
            Self::Aborted => "aborted",
            Self::BadWeights => "bad_weights",
            Self::BadPrompt => "bad_prompt",
            Self::BackendUnavailable => "backend_unavailable",
            Self::DownloadFailed => "download_failed",
            Self::Engine => "engine",
            Self::ModelFailed => "model_failed",
            Self::BadModel => "bad_model",
            Self::Crashed => "crashed",
            Self::Terminated => "terminated",
            Self::Internal => "internal",
            Self::Usage => "usage",
            Self::Failure => "failure",
        }
    }
}

/// An error as every surface shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// The option or input it is about, as JavaScript spells it (`topK`, `tree[1]`,
    /// `prompt`); left out when it is about no one option.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub field: Option<String>,
    /// What was wrong and what to do, in one line.
    pub message: String,
}

impl ApiError {
    /// An error with no field.
    #[must_use]
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            field: None,
            message: message.into(),
        }
    }
}

impl From<&OptionError> for ApiError {
    fn from(e: &OptionError) -> Self {
        Self {
            code: ErrorCode::InvalidOption,
            field: Some(e.field.clone()),
            message: e.to_string(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_as_their_names() {
        let mut names = std::collections::BTreeSet::new();
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, code.as_str());
            assert!(names.insert(code.as_str()), "{code:?} shares its name");
        }
        let e = ApiError::from(&OptionError::invalid("topK", "a whole number", "0"));
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["code"], "invalid_option");
        assert_eq!(json["field"], "topK");
        let json = serde_json::to_value(ApiError::new(ErrorCode::Busy, "busy")).unwrap();
        assert!(json.get("field").is_none());
    }
}
