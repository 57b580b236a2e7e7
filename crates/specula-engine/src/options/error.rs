//! The one error of option checking: which option, what it must be, what was given.
//! Every surface shows it (the CLI as `error: …` with the flag's name, the bindings as a
//! `SpeculaError` with `code: "invalid_option"` and `field`).

use std::fmt;

use serde::Serialize;

/// What kind of mistake an [`OptionError`] reports; it picks the sentence its message
/// uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Problem {
    /// A value of the wrong type or out of range.
    Invalid,
    /// A name that is not an option.
    Unknown,
    /// A required option left out.
    Missing,
    /// An option the chosen method does not use (refused on every surface, so that no
    /// setting is silently ignored).
    Unused,
}

/// An option that was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct OptionError {
    /// The option's name as the JavaScript API spells it (`topK`, `maxTokens`, `tree`);
    /// the CLI shows the matching flag (`--top-k`).
    pub field: String,
    /// What the option must be (or, for [`Problem::Unknown`], the options there are).
    pub expected: String,
    /// What was given, as JavaScript would print it.
    pub got: String,
    /// The kind of mistake.
    pub problem: Problem,
}

impl OptionError {
    /// A value of the wrong type or out of range.
    #[must_use]
    pub fn invalid(
        field: impl Into<String>,
        expected: impl Into<String>,
        got: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            expected: expected.into(),
            got: got.into(),
            problem: Problem::Invalid,
        }
    }

    /// A name that is not an option; `known` lists the options.
    #[must_use]
    pub fn unknown(field: impl Into<String>, known: &[&str]) -> Self {
        Self {
            field: field.into(),
            expected: known.join(", "),
            got: String::new(),
            problem: Problem::Unknown,
        }
    }

    /// A required option left out; `expected` says what to give.
    #[must_use]
    pub fn missing(field: impl Into<String>, expected: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            expected: expected.into(),
            got: "nothing".into(),
            problem: Problem::Missing,
        }
    }

    /// An option `method` does not use; `users` names the methods that do.
    #[must_use]
    pub fn unused(field: impl Into<String>, method: &str, users: &str) -> Self {
        Self {
            field: field.into(),
            expected: users.into(),
            got: method.into(),
            problem: Problem::Unused,
        }
    }

    /// The message, with the option called `name` (the CLI passes `--top-k` for `topK`).
    #[must_use]
    pub fn message_for(&self, name: &str) -> String {
        let Self { expected, got, .. } = self;
        match self.problem {
            Problem::Invalid => format!("{name} must be {expected}, got {got}"),
            Problem::Unknown => format!("unknown option {name:?}; the options are: {expected}"),
            Problem::Missing => format!("{name} is required: {expected}"),
            Problem::Unused => format!(
                "{name} does not apply to method {got:?} and is refused rather than ignored; \
                 it is for {expected}"
            ),
        }
    }
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message_for(&self.field))
    }
}

impl std::error::Error for OptionError {}
