//! A whole GGUF model: shape, tokenizer and weights, loaded in the order that refuses a
//! bad file before any large allocation.

use crate::error::{GgufError, Result};
use crate::file::GgufFile;
use crate::llama::{LlamaConfig, LlamaWeights};
use crate::tokenizer::{BpeTokenizer, TokenizerSpec};

/// A Llama-family model read from one GGUF file.
#[derive(Debug, Clone)]
pub struct GgufModel {
    /// Its shape.
    pub config: LlamaConfig,
    /// Its weights in f32.
    pub weights: LlamaWeights,
    /// The tokenizer the file carries.
    pub tokenizer: BpeTokenizer,
}

impl GgufModel {
    /// Parses `bytes`, builds the tokenizer, checks that loading fits in `available`
    /// bytes (when given; [`LlamaConfig::load_peak_bytes`]), then dequantizes the
    /// weights.
    ///
    /// # Errors
    /// Any [`GgufError`]: a broken container, an unsupported architecture or tensor
    /// type, a tokenizer that cannot be built, or [`GgufError::TooLarge`] with the bytes
    /// the model needs.
    pub fn from_bytes(bytes: Vec<u8>, available: Option<u64>) -> Result<Self> {
        let file = GgufFile::parse(bytes)?;
        let (config, tokenizer) = checked(&file, available)?;
        let weights = LlamaWeights::from_file(&file, &config)?;
        Ok(Self {
            config,
            weights,
            tokenizer,
        })
    }
}

/// The tokenizer of a model file, after every check [`GgufModel::from_bytes`] makes
/// short of dequantizing the weights (to compare a pair's tokenizers before loading
/// either).
///
/// # Errors
/// As [`GgufModel::from_bytes`], but for tensor contents, which are not read.
pub fn tokenizer_of(bytes: &[u8], available: Option<u64>) -> Result<BpeTokenizer> {
    Ok(shape_of(bytes, available)?.1)
}

/// The shape and the tokenizer of a model file, after every check
/// [`GgufModel::from_bytes`] makes short of dequantizing the weights: what a caller needs
/// to decide where the model fits before building it.
///
/// # Errors
/// As [`GgufModel::from_bytes`], but for tensor contents, which are not read.
pub fn shape_of(bytes: &[u8], available: Option<u64>) -> Result<(LlamaConfig, BpeTokenizer)> {
    let file = GgufFile::parse(bytes.to_vec())?;
    checked(&file, available)
}

/// The shape and the tokenizer of `file`, checked to agree and to fit `available`.
fn checked(file: &GgufFile, available: Option<u64>) -> Result<(LlamaConfig, BpeTokenizer)> {
    let config = LlamaConfig::from_file(file)?;
    let tokenizer = BpeTokenizer::new(tokenizer_spec(file)?)?;
    if tokenizer.vocab_size() != config.vocab_size {
        return Err(GgufError::Tokenizer(format!(
            "{} tokens, but token_embd.weight has {} rows",
            tokenizer.vocab_size(),
            config.vocab_size
        )));
    }
    let needed = config.load_peak_bytes();
    if let Some(available) = available
        && needed > available
    {
        return Err(GgufError::TooLarge { needed, available });
    }
    Ok((config, tokenizer))
}

/// What the file's `tokenizer.ggml.*` keys say.
///
/// # Errors
/// [`GgufError::Metadata`] naming a missing or mistyped key.
pub fn tokenizer_spec(file: &GgufFile) -> Result<TokenizerSpec> {
    let optional_id = |key: &str| -> Result<Option<u32>> {
        match file.value(key) {
            None => Ok(None),
            Some(_) => u32::try_from(file.unsigned(key)?)
                .map(Some)
                .map_err(|_| GgufError::metadata(key, "is not a token id")),
        }
    };
    let token_types = match file.value("tokenizer.ggml.token_type") {
        None => Vec::new(),
        Some(_) => file
            .integers("tokenizer.ggml.token_type")?
            .into_iter()
            .map(|t| {
                i32::try_from(t).map_err(|_| {
                    GgufError::metadata("tokenizer.ggml.token_type", "holds a value out of range")
                })
            })
            .collect::<Result<_>>()?,
    };
    Ok(TokenizerSpec {
        model: file.string("tokenizer.ggml.model")?.to_owned(),
        pre: match file.value("tokenizer.ggml.pre") {
            None => None,
            Some(_) => Some(file.string("tokenizer.ggml.pre")?.to_owned()),
        },
        tokens: file.strings("tokenizer.ggml.tokens")?,
        token_types,
        merges: match file.value("tokenizer.ggml.merges") {
            None => Vec::new(),
            Some(_) => file.strings("tokenizer.ggml.merges")?,
        },
        bos: optional_id("tokenizer.ggml.bos_token_id")?,
        eos: optional_id("tokenizer.ggml.eos_token_id")?,
        add_bos: file.flag("tokenizer.ggml.add_bos_token", false)?,
        chat_template: match file.value("tokenizer.chat_template") {
            None => None,
            Some(_) => Some(file.string("tokenizer.chat_template")?.to_owned()),
        },
    })
}
