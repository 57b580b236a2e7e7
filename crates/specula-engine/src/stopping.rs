//! Stop conditions: maximum new tokens, stop tokens and stop strings. Checked after every
//! emitted token, so nothing past a stop is ever emitted.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Turns generated token ids into text, for stop strings.
pub type Detokenizer = Box<dyn Fn(&[u32]) -> String + Send>;

/// Why generation finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum FinishReason {
    /// `max_new_tokens` tokens were generated.
    MaxNewTokens,
    /// A stop token was emitted (it is the last generated token).
    StopToken {
        /// The token.
        token: u32,
    },
    /// The generated text came to contain a stop string (the last generated token
    /// completed it).
    StopString {
        /// Its index in the config's `stop_strings`.
        index: usize,
    },
}

/// Where the generated text comes from.
enum TextSource {
    None,
    Table(Vec<String>),
    Function(Detokenizer),
}

impl fmt::Debug for TextSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Table(t) => write!(f, "Table({} entries)", t.len()),
            Self::Function(_) => f.write_str("Function(..)"),
        }
    }
}

/// Tracks the generated text and decides when to stop.
#[derive(Debug)]
pub(crate) struct Stopper {
    max_new_tokens: usize,
    stop_tokens: Vec<u32>,
    stop_strings: Vec<String>,
    longest: usize,
    source: TextSource,
    text: String,
}

impl Stopper {
    /// # Errors
    /// [`Error::StopStringsNeedDetokenizer`] when there are stop strings and neither a
    /// table nor a function.
    pub(crate) fn new(
        max_new_tokens: usize,
        stop_tokens: Vec<u32>,
        stop_strings: Vec<String>,
        table: Option<Vec<String>>,
        function: Option<Detokenizer>,
    ) -> Result<Self> {
        let source = match (function, table) {
            (Some(f), _) => TextSource::Function(f),
            (None, Some(t)) => TextSource::Table(t),
            (None, None) => TextSource::None,
        };
        if !stop_strings.is_empty() && matches!(source, TextSource::None) {
            return Err(Error::StopStringsNeedDetokenizer);
        }
        let longest = stop_strings.iter().map(String::len).max().unwrap_or(0);
        Ok(Self {
            max_new_tokens,
            stop_tokens,
            stop_strings,
            longest,
            source,
            text: String::new(),
        })
    }

    /// Checks a token→text table against the vocabulary once it is known.
    ///
    /// # Errors
    /// [`Error::TokenTextLength`].
    pub(crate) fn check_vocab(&self, vocab: usize) -> Result<()> {
        match &self.source {
            TextSource::Table(t) if t.len() != vocab => Err(Error::TokenTextLength {
                entries: t.len(),
                vocab,
            }),
            _ => Ok(()),
        }
    }

    /// Whether generation is already complete before any token.
    pub(crate) fn done_before_start(&self) -> Option<FinishReason> {
        (self.max_new_tokens == 0).then_some(FinishReason::MaxNewTokens)
    }

    /// How many more tokens may be generated after `generated`.
    pub(crate) fn remaining(&self, generated: usize) -> usize {
        self.max_new_tokens.saturating_sub(generated)
    }

    /// Called after each emitted token; `generated` ends with it.
    pub(crate) fn after_token(&mut self, generated: &[u32]) -> Option<FinishReason> {
        let token = *generated.last()?;
        if self.stop_tokens.contains(&token) {
            return Some(FinishReason::StopToken { token });
        }
        if let Some(index) = self.stop_string_hit(generated, token) {
            return Some(FinishReason::StopString { index });
        }
        (generated.len() >= self.max_new_tokens).then_some(FinishReason::MaxNewTokens)
    }

    fn stop_string_hit(&mut self, generated: &[u32], token: u32) -> Option<usize> {
        if self.stop_strings.is_empty() {
            return None;
        }
        let before = self.text.len();
        match &self.source {
            TextSource::None => return None,
            TextSource::Table(table) => {
                if let Some(piece) = usize::try_from(token).ok().and_then(|t| table.get(t)) {
                    self.text.push_str(piece);
                }
            }
            TextSource::Function(f) => self.text = f(generated),
        }
        // A new occurrence must end in the new text, so it starts at most `longest`
        // bytes before it (a detokenizer may also rewrite the tail; the window covers it).
        let mut start = before.min(self.text.len()).saturating_sub(self.longest);
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        let window = self.text.get(start..)?;
        self.stop_strings
            .iter()
            .position(|s| window.contains(s.as_str()))
    }
}
