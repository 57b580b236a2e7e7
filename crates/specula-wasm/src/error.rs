//! The one error type of the bindings. Every failure that reaches JavaScript is a thrown
//! `Error` whose `name` is `"SpeculaError"`, whose `message` says what was wrong and what
//! to do, and whose `code` lets a program tell the cases apart.

use specula_engine::options::{OptionError, PlanFailure};
use specula_engine::{ApiError, ErrorCode};
use thiserror::Error;
use wasm_bindgen::JsValue;

/// Why a call from JavaScript failed.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Error)]
pub enum WasmError {
    /// An option with a wrong type, an unknown name or a value out of range; `field`
    /// names it (the `field` property of the thrown `Error`).
    #[error("{message}")]
    InvalidOption {
        /// The option, as the JavaScript API spells it (`topK`, `tree[1]`).
        field: Option<String>,
        /// What was wrong.
        message: String,
    },
    /// The token-level analysis failed through no fault of its input (the LP solver).
    #[error("{0}")]
    Plan(String),
    /// A call that needs loaded models before `load`.
    #[error("the models are not loaded: call load() first and wait for it to finish")]
    NotLoaded,
    /// A call that needs a generation before `start`.
    #[error("no generation is running: call start(options) first")]
    NotStarted,
    /// A call while another asynchronous call still holds the engine.
    #[error("the engine is busy with another call ({0}); wait for it to finish")]
    Busy(&'static str),
    /// Weights that do not load or do not match their checksum.
    #[error("{0}")]
    Weights(String),
    /// A prompt the tokenizer cannot encode.
    #[error("{0}")]
    Prompt(String),
    /// WebGPU was requested but cannot be used.
    #[error("{0}")]
    Backend(String),
    /// The decoding engine refused a setting or a response.
    #[error("{0}")]
    Engine(String),
    /// A model failed to run on every available backend.
    #[error("{0}")]
    Model(String),
    /// A failure that is not the caller's doing (a result that cannot be converted); the
    /// message says what.
    #[error("{0}")]
    Internal(String),
}

impl WasmError {
    /// A stable machine-readable code, the `code` property of the thrown `Error`.
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::InvalidOption { .. } => ErrorCode::InvalidOption,
            Self::Plan(_) => ErrorCode::PlanFailed,
            Self::NotLoaded => ErrorCode::NotLoaded,
            Self::NotStarted => ErrorCode::NotStarted,
            Self::Busy(_) => ErrorCode::Busy,
            Self::Weights(_) => ErrorCode::BadWeights,
            Self::Prompt(_) => ErrorCode::BadPrompt,
            Self::Backend(_) => ErrorCode::BackendUnavailable,
            Self::Engine(_) => ErrorCode::Engine,
            Self::Model(_) => ErrorCode::ModelFailed,
            Self::Internal(_) => ErrorCode::Internal,
        }
    }

    /// The error in the shape every surface shows: `{ code, field?, message }`.
    #[must_use]
    pub fn to_api(&self) -> ApiError {
        ApiError {
            code: self.code(),
            field: self.field().map(str::to_owned),
            message: self.to_string(),
        }
    }

    /// An [`WasmError::InvalidOption`] about the option `field`.
    pub(crate) fn option_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidOption {
            field: Some(field.into()),
            message: message.into(),
        }
    }

    /// The option or input the error is about, if it is about one (a prompt the
    /// tokenizer refuses is about `prompt`).
    #[must_use]
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::InvalidOption { field, .. } => field.as_deref(),
            Self::Prompt(_) => Some("prompt"),
            _ => None,
        }
    }
}

impl From<OptionError> for WasmError {
    fn from(e: OptionError) -> Self {
        Self::InvalidOption {
            message: e.to_string(),
            field: Some(e.field),
        }
    }
}

impl From<PlanFailure> for WasmError {
    fn from(e: PlanFailure) -> Self {
        match e {
            PlanFailure::Input(e) => e.into(),
            PlanFailure::Analysis(message) => Self::Plan(message),
        }
    }
}

impl From<specula_engine::Error> for WasmError {
    fn from(e: specula_engine::Error) -> Self {
        Self::Engine(e.to_string())
    }
}

impl From<WasmError> for JsValue {
    fn from(e: WasmError) -> Self {
        let ApiError {
            code,
            field,
            message,
        } = e.to_api();
        let error = js_sys::Error::new(&message);
        error.set_name("SpeculaError");
        // Setting a property on a fresh Error object cannot fail; if it ever did the
        // message alone still says what happened.
        let _ = js_sys::Reflect::set(&error, &"code".into(), &code.as_str().into());
        if let Some(field) = field {
            let _ = js_sys::Reflect::set(&error, &"field".into(), &field.into());
        }
        error.into()
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, WasmError>;
