//! The two options whose kind depends on the surface: the prompt and the stop list. The
//! bundled models' surfaces (the CLI, npm `generate()`, the page) take text and stop
//! strings, since they own a tokenizer; npm `decode()` drives models of the caller's and
//! takes token ids for both. One option each, read by one parser, so a refusal names the
//! same field with the same words everywhere.

use serde::Serialize;

use super::error::OptionError;
use super::limits::{MAX_STOP_CHARS, MAX_STOP_STRINGS};
use super::number::whole;
use super::raw::{FromRaw, Raw, take_list};

/// The prompt as given: text, or token ids (each checked against the vocabulary when
/// resolved, so kept as numbers until then).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Prompt {
    /// Text to continue (the surfaces with a tokenizer).
    Text(String),
    /// Token ids to continue (`decode()`).
    Tokens(Vec<f64>),
}

impl From<String> for Prompt {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for Prompt {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

/// The stop list as given: strings, or token ids.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Stop {
    /// Stop once the generated text contains any of these.
    Strings(Vec<String>),
    /// Stop right after emitting any of these tokens.
    Tokens(Vec<f64>),
}

impl From<Vec<String>> for Stop {
    fn from(strings: Vec<String>) -> Self {
        Self::Strings(strings)
    }
}

/// What a surface's prompt and stop list are made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// Text and stop strings (the surfaces with a tokenizer).
    Text,
    /// Token ids (`decode()`).
    Tokens,
}

/// The `prompt` option: a string on the text surfaces, an array of numbers for
/// `decode()` (a typed array arrives as an array).
pub(crate) fn take_prompt(raw: Raw, input: Input) -> Result<Option<Prompt>, OptionError> {
    match input {
        Input::Text => Ok(String::take("prompt", raw)?.map(Prompt::Text)),
        Input::Tokens => Ok(take_list("prompt", raw, "an array of token ids")?.map(Prompt::Tokens)),
    }
}

/// The `stop` option: an array of strings on the text surfaces, of numbers for `decode()`.
pub(crate) fn take_stop(raw: Raw, input: Input) -> Result<Option<Stop>, OptionError> {
    match input {
        Input::Text => Ok(take_list("stop", raw, "an array of strings")?.map(Stop::Strings)),
        Input::Tokens => {
            Ok(take_list("stop", raw, "an array of stop token ids")?.map(Stop::Tokens))
        }
    }
}

/// The text prompt of the surfaces with a tokenizer: a non-empty string.
pub(crate) fn text_prompt(prompt: Option<&Prompt>) -> Result<String, OptionError> {
    match prompt {
        None => Err(OptionError::missing(
            "prompt",
            "give the text to continue (a non-empty string)",
        )),
        Some(Prompt::Text(text)) if text.is_empty() => Err(OptionError::invalid(
            "prompt",
            "at least one character to continue",
            "an empty string",
        )),
        Some(Prompt::Text(text)) => Ok(text.clone()),
        Some(Prompt::Tokens(_)) => Err(OptionError::invalid(
            "prompt",
            "text to continue (a string); token ids are for decode()",
            "an array",
        )),
    }
}

/// The token prompt of `decode()`: a non-empty array of token ids below `vocab`.
pub(crate) fn token_prompt(prompt: Option<&Prompt>, vocab: usize) -> Result<Vec<u32>, OptionError> {
    match prompt {
        None => Err(OptionError::missing(
            "prompt",
            "give the token ids to continue (a non-empty array)",
        )),
        Some(Prompt::Text(text)) => Err(OptionError::invalid(
            "prompt",
            "an array of token ids (decode() runs models of yours and has no tokenizer)",
            Raw::String(text.clone()).describe(),
        )),
        Some(Prompt::Tokens(ids)) if ids.is_empty() => Err(OptionError::invalid(
            "prompt",
            "at least one token id to continue",
            "an empty array",
        )),
        Some(Prompt::Tokens(ids)) => token_ids("prompt", ids, vocab),
    }
}

/// Token ids as numbers, each a whole number below `vocab` (the field names the item).
fn token_ids(field: &str, ids: &[f64], vocab: usize) -> Result<Vec<u32>, OptionError> {
    // Token ids are u32 at the model interface.
    let max = u64::try_from(vocab.saturating_sub(1))
        .unwrap_or(u64::MAX)
        .min(u64::from(u32::MAX));
    let what = format!(" (a token id of the models' vocabulary of {vocab})");
    ids.iter()
        .enumerate()
        .map(|(i, &id)| {
            // At most u32::MAX, so the cast is exact.
            whole(&format!("{field}[{i}]"), id, 0, max, &what).map(|id| id as u32)
        })
        .collect()
}

/// At most [`MAX_STOP_STRINGS`] entries.
fn check_count(count: usize, what: &str) -> Result<(), OptionError> {
    if count > MAX_STOP_STRINGS {
        return Err(OptionError::invalid(
            "stop",
            format!("at most {MAX_STOP_STRINGS} stop {what}"),
            format!("{count} {what}"),
        ));
    }
    Ok(())
}

/// The stop strings of the surfaces with a tokenizer: at most [`MAX_STOP_STRINGS`], each
/// of 1 to [`MAX_STOP_CHARS`] characters.
pub(crate) fn stop_strings(stop: Option<&Stop>) -> Result<Vec<String>, OptionError> {
    let strings = match stop {
        None => return Ok(Vec::new()),
        Some(Stop::Tokens(ids)) if ids.is_empty() => return Ok(Vec::new()),
        Some(Stop::Tokens(_)) => {
            return Err(OptionError::invalid(
                "stop",
                "an array of strings; stop token ids are for decode()",
                "an array of numbers",
            ));
        }
        Some(Stop::Strings(strings)) => strings,
    };
    check_count(strings.len(), "strings")?;
    for (i, s) in strings.iter().enumerate() {
        let chars = s.chars().count();
        if chars == 0 || chars > MAX_STOP_CHARS {
            return Err(OptionError::invalid(
                format!("stop[{i}]"),
                format!("a string of 1 to {MAX_STOP_CHARS} characters"),
                if chars == 0 {
                    "an empty string".into()
                } else {
                    format!("{chars} characters")
                },
            ));
        }
    }
    Ok(strings.clone())
}

/// The stop tokens of `decode()`: at most [`MAX_STOP_STRINGS`] token ids below `vocab`.
pub(crate) fn stop_tokens(stop: Option<&Stop>, vocab: usize) -> Result<Vec<u32>, OptionError> {
    match stop {
        None => Ok(Vec::new()),
        Some(Stop::Strings(strings)) if strings.is_empty() => Ok(Vec::new()),
        Some(Stop::Strings(_)) => Err(OptionError::invalid(
            "stop",
            "an array of stop token ids (decode() has no tokenizer to find strings with)",
            "an array of strings",
        )),
        Some(Stop::Tokens(ids)) => {
            check_count(ids.len(), "tokens")?;
            token_ids("stop", ids, vocab)
        }
    }
}
