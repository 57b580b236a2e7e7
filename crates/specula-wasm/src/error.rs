//! The one error type of the bindings. Every failure that reaches JavaScript is a thrown
//! `Error` whose `name` is `"SpeculaError"`, whose `message` says what was wrong and what
//! to do, and whose `code` lets a program tell the cases apart.

use specula_engine::options::OptionError;
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
    /// The token-level analysis refused its input.
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
}

impl WasmError {
    /// A stable machine-readable code, the `code` property of the thrown `Error`.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidOption { .. } => "invalid_option",
            Self::Plan(_) => "invalid_plan",
            Self::NotLoaded => "not_loaded",
            Self::NotStarted => "not_started",
            Self::Busy(_) => "busy",
            Self::Weights(_) => "bad_weights",
            Self::Prompt(_) => "bad_prompt",
            Self::Backend(_) => "backend_unavailable",
            Self::Engine(_) => "engine",
            Self::Model(_) => "model_failed",
        }
    }

    /// An [`WasmError::InvalidOption`] about the options as a whole.
    pub(crate) fn option(message: impl Into<String>) -> Self {
        Self::InvalidOption {
            field: None,
            message: message.into(),
        }
    }

    /// An [`WasmError::InvalidOption`] about the option `field`.
    pub(crate) fn option_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidOption {
            field: Some(field.into()),
            message: message.into(),
        }
    }

    /// The option the error is about, if it is about one.
    #[must_use]
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::InvalidOption { field, .. } => field.as_deref(),
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

impl From<specula_engine::Error> for WasmError {
    fn from(e: specula_engine::Error) -> Self {
        Self::Engine(e.to_string())
    }
}

impl From<WasmError> for JsValue {
    fn from(e: WasmError) -> Self {
        let error = js_sys::Error::new(&e.to_string());
        error.set_name("SpeculaError");
        // Setting a property on a fresh Error object cannot fail; if it ever did the
        // message alone still says what happened.
        let _ = js_sys::Reflect::set(&error, &"code".into(), &e.code().into());
        if let Some(field) = e.field() {
            let _ = js_sys::Reflect::set(&error, &"field".into(), &field.into());
        }
        error.into()
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, WasmError>;
