//! [`ModelTokenizer`]: the tokenizer a pair of models shares, the bundled pair's
//! characters or a GGUF file's byte-level BPE, for callers that take either (the CLI, the
//! wasm bindings).

use specula_gguf::BpeTokenizer;
use specula_model::CharTokenizer;

/// The tokenizer both models of a pair share.
#[derive(Debug, Clone)]
pub enum ModelTokenizer {
    /// The bundled pair's characters.
    Chars(CharTokenizer),
    /// A GGUF file's byte-level BPE.
    Bpe(Box<BpeTokenizer>),
}

impl ModelTokenizer {
    /// The number of tokens.
    #[must_use]
    pub fn vocab_size(&self) -> usize {
        match self {
            Self::Chars(t) => t.vocab_size(),
            Self::Bpe(t) => t.vocab_size(),
        }
    }

    /// Every token's text, in id order (a BPE token's bytes, lossily as UTF-8).
    #[must_use]
    pub fn token_texts(&self) -> Vec<String> {
        match self {
            Self::Chars(t) => t.token_texts(),
            Self::Bpe(t) => (0..t.vocab_size() as u32)
                .map(|id| t.token_text(id).unwrap_or_default())
                .collect(),
        }
    }

    /// The text of `tokens`: a character model's ids outside the alphabet, or a BPE
    /// model's, give `None`; bytes cut inside a character become U+FFFD.
    #[must_use]
    pub fn decode(&self, tokens: &[u32]) -> Option<String> {
        match self {
            Self::Chars(t) => t.decode(tokens).ok(),
            Self::Bpe(t) => t.decode(tokens).ok(),
        }
    }

    /// The tokens of `text`.
    ///
    /// # Errors
    /// What the tokenizer says of text it cannot encode, naming the character.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, String> {
        match self {
            Self::Chars(t) => t.encode(text).map_err(|e| e.to_string()),
            Self::Bpe(t) => t.encode(text).map_err(|e| e.to_string()),
        }
    }

    /// The characters of a character model, in token order; `None` for BPE.
    #[must_use]
    pub fn alphabet(&self) -> Option<&[char]> {
        match self {
            Self::Chars(t) => Some(t.alphabet()),
            Self::Bpe(_) => None,
        }
    }

    /// What one token is, in messages: `characters` or `tokens`.
    #[must_use]
    pub fn unit(&self) -> &'static str {
        match self {
            Self::Chars(_) => "characters",
            Self::Bpe(_) => "tokens",
        }
    }

    /// The token generation stops after by default: a GGUF file's end-of-sequence token
    /// (SmolLM2's `<|im_end|>`, which ends a chat turn); the bundled pair has none.
    #[must_use]
    pub fn end_token(&self) -> Option<u32> {
        match self {
            Self::Chars(_) => None,
            Self::Bpe(t) => t.eos(),
        }
    }

    /// `stop_tokens` with the [`end_token`](Self::end_token) added when it is missing:
    /// every surface stops a GGUF model's turn there (docs/real-models.md).
    pub fn add_end_token(&self, stop_tokens: &mut Vec<u32>) {
        if let Some(end) = self.end_token()
            && !stop_tokens.contains(&end)
        {
            stop_tokens.push(end);
        }
    }
}

/// Generated tokens turned into text piece by piece: a BPE token can end inside a
/// character, whose bytes wait for the token that completes it.
#[derive(Debug, Default)]
pub struct TextStream {
    unreported: Vec<u32>,
}

impl TextStream {
    /// The text `tokens` add: what the tokens since the last report decode to, or `""`
    /// while they end inside a character, unless `last` (then the cut bytes come out as
    /// U+FFFD, as a decoding of the whole would give them). `None` for an id the
    /// tokenizer does not know.
    pub fn push(
        &mut self,
        tokenizer: &ModelTokenizer,
        tokens: &[u32],
        last: bool,
    ) -> Option<String> {
        self.unreported.extend_from_slice(tokens);
        let text = tokenizer.decode(&self.unreported)?;
        if !last && text.ends_with(char::REPLACEMENT_CHARACTER) {
            return Some(String::new());
        }
        self.unreported.clear();
        Some(text)
    }
}
