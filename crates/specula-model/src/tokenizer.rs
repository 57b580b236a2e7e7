//! A character-level tokenizer: token id = index of the character in a sorted alphabet.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Maps characters to token ids and back. Built from the training corpus, so every
/// character it saw has an id; any other character is an error, never silently mapped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CharTokenizer {
    chars: Vec<char>,
}

impl CharTokenizer {
    /// The alphabet of `text`: its distinct characters, sorted by code point.
    ///
    /// # Errors
    /// [`Error::BadVocabulary`] for empty text.
    pub fn from_corpus(text: &str) -> Result<Self> {
        let mut chars: Vec<char> = text.chars().collect();
        chars.sort_unstable();
        chars.dedup();
        Self::from_alphabet(chars)
    }

    /// A tokenizer whose token `i` is `alphabet[i]`.
    ///
    /// # Errors
    /// [`Error::BadVocabulary`] when the alphabet is empty, repeats a character or has more
    /// than `u32::MAX` entries.
    pub fn from_alphabet(alphabet: Vec<char>) -> Result<Self> {
        if alphabet.is_empty() {
            return Err(Error::BadVocabulary("the alphabet is empty".into()));
        }
        if u32::try_from(alphabet.len()).is_err() {
            return Err(Error::BadVocabulary("more than u32::MAX characters".into()));
        }
        let mut sorted = alphabet.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::BadVocabulary(format!("{:?} appears twice", w[0])));
        }
        Ok(Self { chars: alphabet })
    }

    /// The number of tokens.
    #[must_use]
    pub fn vocab_size(&self) -> usize {
        self.chars.len()
    }

    /// The alphabet, in token order.
    #[must_use]
    pub fn alphabet(&self) -> &[char] {
        &self.chars
    }

    /// The token of one character, if known.
    #[must_use]
    pub fn token(&self, ch: char) -> Option<u32> {
        // Alphabets are tiny (65 for Tiny Shakespeare): a linear scan beats hashing.
        self.chars
            .iter()
            .position(|&c| c == ch)
            .and_then(|i| u32::try_from(i).ok())
    }

    /// Encodes `text`, one token per character.
    ///
    /// # Errors
    /// [`Error::UnknownChar`] naming the first character outside the vocabulary.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        text.chars()
            .enumerate()
            .map(|(position, ch)| {
                self.token(ch).ok_or(Error::UnknownChar {
                    ch,
                    code: ch as u32,
                    position,
                })
            })
            .collect()
    }

    /// Decodes tokens to text.
    ///
    /// # Errors
    /// [`Error::UnknownToken`] for an id outside the vocabulary.
    pub fn decode(&self, tokens: &[u32]) -> Result<String> {
        tokens
            .iter()
            .map(|&t| {
                usize::try_from(t)
                    .ok()
                    .and_then(|i| self.chars.get(i).copied())
                    .ok_or(Error::UnknownToken {
                        token: t,
                        vocab: self.chars.len(),
                    })
            })
            .collect()
    }

    /// The text of every token, in id order (for the engine's stop strings).
    #[must_use]
    pub fn token_texts(&self) -> Vec<String> {
        self.chars.iter().map(char::to_string).collect()
    }
}

impl TryFrom<String> for CharTokenizer {
    type Error = Error;

    fn try_from(alphabet: String) -> Result<Self> {
        Self::from_alphabet(alphabet.chars().collect())
    }
}

impl From<CharTokenizer> for String {
    fn from(t: CharTokenizer) -> Self {
        t.chars.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_names_unknown_characters() {
        let t = CharTokenizer::from_corpus("hello, world").unwrap();
        assert_eq!(t.vocab_size(), 9);
        let ids = t.encode("low").unwrap();
        assert_eq!(t.decode(&ids).unwrap(), "low");
        let err = t.encode("lo!").unwrap_err().to_string();
        assert!(err.contains("'!'") && err.contains("position 2"), "{err}");
        assert!(t.decode(&[9]).is_err());
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<CharTokenizer>(&json).unwrap(), t);
        assert!(serde_json::from_str::<CharTokenizer>("\"aa\"").is_err());
    }
}
