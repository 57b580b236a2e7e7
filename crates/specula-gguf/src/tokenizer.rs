//! The byte-level BPE tokenizer a Llama-family GGUF file carries
//! (`tokenizer.ggml.model = "gpt2"`), built on Hugging Face's `tokenizers` so that text
//! encodes to the same ids as the model's own `tokenizer.json` would give.

use std::fmt;

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{BPE, Merges, Vocab};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, SplitDelimiterBehavior, Tokenizer};

use crate::GgufError;

/// `tokenizer.ggml.token_type` of an unknown token.
const TYPE_UNKNOWN: i32 = 2;
/// `tokenizer.ggml.token_type` of a control token such as `<|im_start|>`.
const TYPE_CONTROL: i32 = 3;
/// `tokenizer.ggml.token_type` of a user-defined token such as `<think>`.
const TYPE_USER_DEFINED: i32 = 4;

/// The Llama-3 split (`tokenizer.ggml.pre = "llama-bpe"`), as in its `tokenizer.json`.
const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// The Qwen2 split: Llama-3's, but every digit on its own.
const QWEN2_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The `tokenizer.ggml.pre` values this crate can build, for error messages.
const SUPPORTED_PRE: &str = "default, gpt2, smollm, llama-bpe, llama3, qwen2";

/// What a GGUF file says about its tokenizer (from the `tokenizer.ggml.*` keys).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TokenizerSpec {
    /// `tokenizer.ggml.model`; only `"gpt2"` (byte-level BPE) is supported.
    pub model: String,
    /// `tokenizer.ggml.pre`, the pre-tokenizer: `"default"`, `"gpt2"`, `"smollm"`,
    /// `"llama-bpe"`, `"llama3"` or `"qwen2"`; absent means `"default"`.
    pub pre: Option<String>,
    /// `tokenizer.ggml.tokens`: the vocabulary, a token's id being its index.
    pub tokens: Vec<String>,
    /// `tokenizer.ggml.token_type`, one per token, or empty: 1 normal, 2 unknown,
    /// 3 control, 4 user-defined, 5 unused, 6 byte.
    pub token_types: Vec<i32>,
    /// `tokenizer.ggml.merges`, each `"a b"`, highest priority first.
    pub merges: Vec<String>,
    /// `tokenizer.ggml.bos_token_id`.
    pub bos: Option<u32>,
    /// `tokenizer.ggml.eos_token_id`.
    pub eos: Option<u32>,
    /// `tokenizer.ggml.add_bos_token` (false when absent).
    pub add_bos: bool,
    /// `tokenizer.chat_template`.
    pub chat_template: Option<String>,
}

/// A byte-level BPE tokenizer built from a [`TokenizerSpec`].
#[derive(Clone)]
pub struct BpeTokenizer {
    inner: Tokenizer,
    pre: String,
    tokens: Vec<String>,
    /// Whether each token's text is literal rather than byte-level symbols: the
    /// ByteLevel decoder decodes a token literally when one of its characters is not a
    /// byte symbol, and [`BpeTokenizer::token_bytes`] must agree with it.
    literal: Vec<bool>,
    merges: Vec<String>,
    /// Bytes the vocabulary has no symbol for (and no unknown token to stand in).
    missing_bytes: Vec<u8>,
    fingerprint: u64,
    bos: Option<u32>,
    eos: Option<u32>,
    add_bos: bool,
    chat_template: Option<String>,
}

impl fmt::Debug for BpeTokenizer {
    // The vocabulary runs to hundreds of thousands of strings: show what identifies it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BpeTokenizer")
            .field("pre", &self.pre)
            .field("vocab_size", &self.tokens.len())
            .field("merges", &self.merges.len())
            .field("fingerprint", &format_args!("{:016x}", self.fingerprint))
            .field("bos", &self.bos)
            .field("eos", &self.eos)
            .field("add_bos", &self.add_bos)
            .field("chat_template", &self.chat_template.is_some())
            .finish()
    }
}

fn err(message: impl Into<String>) -> GgufError {
    GgufError::Tokenizer(message.into())
}

impl BpeTokenizer {
    /// Builds the tokenizer a GGUF file describes.
    ///
    /// # Errors
    ///
    /// [`GgufError::Tokenizer`] when the model is not `"gpt2"`, the pre-tokenizer is
    /// not one of those listed on [`TokenizerSpec::pre`], the vocabulary is empty, has
    /// more than `u32::MAX` tokens, repeats a token or lacks one of the 256 byte symbols
    /// (unless it has an unknown token to stand in), `token_types` is neither empty nor
    /// one per token, a merge is not two tokens of the vocabulary whose concatenation is
    /// in it too, or `bos`/`eos` is outside the vocabulary.
    pub fn new(spec: TokenizerSpec) -> Result<Self, GgufError> {
        if spec.model != "gpt2" {
            return Err(err(format!(
                "model {:?} (tokenizer.ggml.model) is not supported; supported: gpt2",
                spec.model
            )));
        }
        let pre = spec.pre.as_deref().unwrap_or("default").to_owned();
        let pre_tokenizer = pre_tokenizer(&pre)?;
        let n = spec.tokens.len();
        if n == 0 {
            return Err(err("the vocabulary (tokenizer.ggml.tokens) is empty"));
        }
        if u32::try_from(n).is_err() {
            return Err(err(format!(
                "the vocabulary has {n} tokens, more than ids can number ({})",
                u32::MAX
            )));
        }
        if !spec.token_types.is_empty() && spec.token_types.len() != n {
            return Err(err(format!(
                "tokenizer.ggml.token_type has {} entries for {n} tokens",
                spec.token_types.len()
            )));
        }
        for (name, id) in [("bos", spec.bos), ("eos", spec.eos)] {
            if let Some(id) = id.filter(|&id| id as usize >= n) {
                return Err(err(format!(
                    "{name} token id {id} is outside the vocabulary of {n} tokens"
                )));
            }
        }

        let mut vocab = Vocab::with_capacity(n);
        for (id, token) in (0u32..).zip(&spec.tokens) {
            if let Some(first) = vocab.insert(token.clone(), id) {
                return Err(err(format!(
                    "token {token:?} appears twice in the vocabulary (ids {first} and {id})"
                )));
            }
        }
        let token_type = |id: usize| spec.token_types.get(id).copied().unwrap_or(1);
        let unk = (0..n)
            .find(|&id| token_type(id) == TYPE_UNKNOWN)
            .map(|id| spec.tokens[id].clone());
        // Without an unknown token the BPE model silently drops any byte it has no symbol
        // for (SmolLM2 has none for 0x00-0x08 and a few more): `encode` refuses text with
        // such a byte instead of losing it.
        let missing_bytes: Vec<u8> = if unk.is_none() {
            (0..=255u8)
                .filter(|&b| !vocab.contains_key(&byte_symbol(b).to_string()))
                .collect()
        } else {
            Vec::new()
        };
        let merge_pairs = parse_merges(&spec.merges, &vocab)?;

        let mut builder = BPE::builder()
            .vocab_and_merges(vocab, merge_pairs)
            .byte_fallback(false)
            // Llama 3's tokenizer.json (and llama.cpp for "llama-bpe") takes a piece that
            // is itself in the vocabulary whole, whatever the merges would make of it.
            .ignore_merges(matches!(pre.as_str(), "llama-bpe" | "llama3"));
        if let Some(unk) = unk {
            builder = builder.unk_token(unk);
        }
        let model = builder
            .build()
            .map_err(|e| err(format!("the BPE model cannot be built: {e}")))?;

        let mut inner = Tokenizer::new(model);
        inner
            .with_pre_tokenizer(Some(pre_tokenizer))
            .with_decoder(Some(ByteLevelDecoder::default()));
        let specials: Vec<AddedToken> = (0..n)
            .filter(|&id| matches!(token_type(id), TYPE_CONTROL | TYPE_USER_DEFINED))
            .map(|id| AddedToken::from(spec.tokens[id].clone(), true))
            .collect();
        inner.add_special_tokens(&specials);

        let literal = spec
            .tokens
            .iter()
            .map(|t| t.chars().any(|c| symbol_byte(c).is_none()))
            .collect();
        let fingerprint = fingerprint_of(&spec.tokens, &spec.merges);
        Ok(Self {
            inner,
            pre,
            tokens: spec.tokens,
            literal,
            merges: spec.merges,
            missing_bytes,
            fingerprint,
            bos: spec.bos,
            eos: spec.eos,
            add_bos: spec.add_bos,
            chat_template: spec.chat_template,
        })
    }

    /// The number of tokens; ids run from 0 to one less.
    #[must_use]
    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// The ids of `text`, without a BOS token (see [`BpeTokenizer::add_bos`]). The text
    /// of a control or user-defined token, such as `<|im_start|>`, encodes to that token.
    ///
    /// # Errors
    ///
    /// [`GgufError::Tokenizer`] naming the first character with a byte the vocabulary
    /// cannot spell, or if the underlying tokenizer fails.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, GgufError> {
        if !self.missing_bytes.is_empty()
            && let Some((position, ch)) = text.chars().enumerate().find(|(_, c)| {
                let mut buf = [0; 4];
                c.encode_utf8(&mut buf)
                    .bytes()
                    .any(|b| self.missing_bytes.contains(&b))
            })
        {
            return Err(err(format!(
                "character {ch:?} (U+{:04X}) at position {position} cannot be encoded: the \
                 vocabulary has no symbol for one of its bytes",
                ch as u32
            )));
        }
        let encoding = self
            .inner
            .encode_fast(text, false)
            .map_err(|e| err(format!("cannot encode the text: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// The text of `ids`. Control and user-defined tokens decode to their text; bytes
    /// that do not form valid UTF-8 (a character cut between ids) become U+FFFD.
    ///
    /// # Errors
    ///
    /// [`GgufError::Tokenizer`] naming the first id outside the vocabulary.
    pub fn decode(&self, ids: &[u32]) -> Result<String, GgufError> {
        // The underlying decoder skips unknown ids silently; a model emitting one is a bug
        // to report, not text to lose.
        if let Some(&id) = ids.iter().find(|&&id| id as usize >= self.tokens.len()) {
            return Err(err(format!(
                "token id {id} is outside the vocabulary of {} tokens",
                self.tokens.len()
            )));
        }
        self.inner
            .decode(ids, false)
            .map_err(|e| err(format!("cannot decode the ids: {e}")))
    }

    /// The text of one token for display, such as `" the"` or `"\n"`: its bytes, with
    /// U+FFFD for any that are not valid UTF-8 alone. `None` outside the vocabulary.
    #[must_use]
    pub fn token_text(&self, id: u32) -> Option<String> {
        self.token_bytes(id)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The raw bytes of one token: byte-level symbols turned back into bytes, and a
    /// token with characters that are not byte symbols (such as a control token with a
    /// space) taken as its literal UTF-8, as [`BpeTokenizer::decode`] does. Concatenated
    /// over ids they are the bytes `decode` turns into text. `None` outside the vocabulary.
    #[must_use]
    pub fn token_bytes(&self, id: u32) -> Option<Vec<u8>> {
        let token = self.tokens.get(id as usize)?;
        if self.literal[id as usize] {
            return Some(token.as_bytes().to_vec());
        }
        Some(token.chars().filter_map(symbol_byte).collect())
    }

    /// The BOS token, if the file names one.
    #[must_use]
    pub fn bos(&self) -> Option<u32> {
        self.bos
    }

    /// The EOS token, if the file names one.
    #[must_use]
    pub fn eos(&self) -> Option<u32> {
        self.eos
    }

    /// Whether a prompt should start with the BOS token (`tokenizer.ggml.add_bos_token`).
    #[must_use]
    pub fn add_bos(&self) -> bool {
        self.add_bos
    }

    /// The file's chat template (`tokenizer.chat_template`), a Jinja template.
    #[must_use]
    pub fn chat_template(&self) -> Option<&str> {
        self.chat_template.as_deref()
    }

    /// Whether `other` has the same tokens and merges, so that ids mean the same to
    /// both (a draft model and its target must share a tokenizer).
    #[must_use]
    pub fn same_vocabulary(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
            && self.tokens == other.tokens
            && self.merges == other.merges
    }

    /// A digest of the tokens and merges: 64-bit FNV-1a over the token count, each
    /// token's byte length (u64, little-endian) and bytes, then the same for the merges.
    /// Stable across platforms and versions; equal vocabularies have equal digests.
    #[must_use]
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// The pre-tokenizer that `tokenizer.ggml.pre` names, as the model's `tokenizer.json`
/// defines it.
fn pre_tokenizer(pre: &str) -> Result<PreTokenizerWrapper, GgufError> {
    let byte_level = |use_regex: bool| ByteLevel::new(false, true, use_regex);
    let split = |pattern: &str| {
        Split::new(
            SplitPattern::Regex(pattern.to_owned()),
            SplitDelimiterBehavior::Isolated,
            false,
        )
        .map_err(|e| {
            err(format!(
                "the {pre:?} pre-tokenizer's pattern does not compile: {e}"
            ))
        })
    };
    Ok(match pre {
        "default" | "gpt2" => byte_level(true).into(),
        "smollm" => Sequence::new(vec![Digits::new(true).into(), byte_level(true).into()]).into(),
        "llama-bpe" | "llama3" => Sequence::new(vec![
            split(LLAMA3_PATTERN)?.into(),
            byte_level(false).into(),
        ])
        .into(),
        "qwen2" => {
            Sequence::new(vec![split(QWEN2_PATTERN)?.into(), byte_level(false).into()]).into()
        }
        other => {
            return Err(err(format!(
                "pre-tokenizer {other:?} (tokenizer.ggml.pre) is not supported; supported: \
                 {SUPPORTED_PRE}"
            )));
        }
    })
}

/// The merges as pairs, each checked against the vocabulary.
fn parse_merges(merges: &[String], vocab: &Vocab) -> Result<Merges, GgufError> {
    merges
        .iter()
        .enumerate()
        .map(|(i, merge)| {
            // As llama.cpp: the separator is the first space after the first character,
            // so a left part that is itself a space still parses.
            let split = merge
                .char_indices()
                .skip(1)
                .find(|&(_, c)| c == ' ')
                .map(|(at, _)| (&merge[..at], &merge[at + 1..]));
            let Some((a, b)) = split.filter(|(_, b)| !b.is_empty()) else {
                return Err(err(format!(
                    "merge {i} ({merge:?}) is not two tokens \"a b\""
                )));
            };
            let joined = format!("{a}{b}");
            for part in [a, b, joined.as_str()] {
                if !vocab.contains_key(part) {
                    return Err(err(format!(
                        "merge {i} ({merge:?}) names {part:?}, which is not in the vocabulary"
                    )));
                }
            }
            Ok((a.to_owned(), b.to_owned()))
        })
        .collect()
}

/// The character GPT-2's byte-level BPE writes byte `b` as: printable Latin-1 bytes as
/// themselves, the 68 others as U+0100 onwards in byte order (`Ġ` for the space).
fn byte_symbol(b: u8) -> char {
    let shifted = match b {
        0x00..=0x20 => u32::from(b),
        0x7f..=0xa0 => 33 + u32::from(b - 0x7f),
        0xad => 67,
        _ => return char::from(b),
    };
    char::from_u32(0x100 + shifted).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The byte that `c` stands for, if it is one of the 256 byte-level symbols.
fn symbol_byte(c: char) -> Option<u8> {
    let code = u32::from(c);
    match code {
        0x21..=0x7e | 0xa1..=0xac | 0xae..=0xff => u8::try_from(code).ok(),
        0x100..=0x120 => u8::try_from(code - 0x100).ok(),
        0x121..=0x142 => u8::try_from(code - 0x121 + 0x7f).ok(),
        0x143 => Some(0xad),
        _ => None,
    }
}

/// 64-bit FNV-1a of the tokens and merges (see [`BpeTokenizer::fingerprint`]).
fn fingerprint_of(tokens: &[String], merges: &[String]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    let mut feed = |bytes: &[u8]| {
        for &byte in bytes {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(PRIME);
        }
    };
    for list in [tokens, merges] {
        feed(&(list.len() as u64).to_le_bytes());
        for s in list {
            feed(&(s.len() as u64).to_le_bytes());
            feed(s.as_bytes());
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_symbols_are_gpt2s_alphabet_and_invert() {
        let ours: std::collections::HashSet<char> = (0..=255u8).map(byte_symbol).collect();
        let theirs: std::collections::HashSet<char> = ByteLevel::alphabet().into_iter().collect();
        assert_eq!(ours, theirs);
        for b in 0..=255u8 {
            assert_eq!(symbol_byte(byte_symbol(b)), Some(b), "byte {b:#04x}");
        }
        assert_eq!(byte_symbol(b' '), 'Ġ');
        assert_eq!(byte_symbol(b'\n'), 'Ċ');
        assert_eq!(symbol_byte('Ā'), Some(0));
        assert_eq!(symbol_byte(' '), None);
        assert_eq!(symbol_byte('\u{144}'), None);
    }

    #[test]
    fn fingerprint_separates_token_boundaries() {
        let a = fingerprint_of(&["ab".into(), "c".into()], &[]);
        let b = fingerprint_of(&["a".into(), "bc".into()], &[]);
        let c = fingerprint_of(&["ab".into()], &["c".into()]);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, fingerprint_of(&["ab".into(), "c".into()], &[]));
    }
}
