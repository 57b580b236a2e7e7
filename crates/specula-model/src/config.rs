//! Model shapes: one architecture, two sizes.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The shape of a GPT-style decoder-only transformer (pre-norm, learned positions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Vocabulary size (rows of the token embedding, columns of the output head).
    pub vocab_size: usize,
    /// Width of the residual stream.
    pub d_model: usize,
    /// Number of transformer blocks.
    pub n_layers: usize,
    /// Attention heads per block; must divide `d_model`.
    pub n_heads: usize,
    /// Hidden width of each block's MLP.
    pub d_ff: usize,
    /// The longest sequence (prompt plus generated tokens) the model can read: the number
    /// of learned positions and the length of the K/V cache.
    pub max_seq: usize,
}

/// The largest `vocab_size` a configuration may have: the alphabet of a character
/// model, with room for any script (the bundled pair has 65).
pub const MAX_VOCAB_SIZE: usize = 1 << 16;
/// The largest `d_model`.
pub const MAX_D_MODEL: usize = 2048;
/// The most `n_layers`.
pub const MAX_LAYERS: usize = 48;
/// The most `n_heads`.
pub const MAX_HEADS: usize = 64;
/// The largest `d_ff`.
pub const MAX_D_FF: usize = 8192;
/// The largest `max_seq` (learned positions, and the length of the K/V cache).
pub const MAX_SEQ: usize = 4096;
/// The most parameters a model may have: 64 M, 256 MB in f32 (twice the f16 file), so
/// that building a model from a stranger's directory always fits in memory beside its
/// pair and decodes at a few tokens per second or better on a 2-core CPU (measured in
/// docs/limits.md). Every field above is also bounded on its own, so no product
/// overflows.
pub const MAX_PARAMS: usize = 64_000_000;
/// The most K/V cache entries, `n_layers × max_seq × d_model` (each a key and a value in
/// f32: at most 1 GiB for the largest).
pub const MAX_KV_ENTRIES: usize = 1 << 27;

/// Which of the two bundled models a configuration is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelRole {
    /// The small, cheap proposer.
    Draft,
    /// The larger model whose distribution the output follows.
    Target,
}

impl ModelRole {
    /// `"draft"` or `"target"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Target => "target",
        }
    }
}

impl ModelConfig {
    /// The bundled shape for `role` over a vocabulary of `vocab_size` characters.
    ///
    /// The sizes were chosen by measurement on a 2-core CPU (see MODELS.md): the draft is
    /// dominated by per-call overhead; the target (nanoGPT's shakespeare-char shape, 10.8 M
    /// parameters, 43 MB in f32) is large enough that one position is bound by reading its
    /// weights from memory rather than a 32 MiB cache, so verifying a few positions costs
    /// little more than one.
    #[must_use]
    pub fn for_role(role: ModelRole, vocab_size: usize) -> Self {
        match role {
            ModelRole::Draft => Self {
                vocab_size,
                d_model: 96,
                n_layers: 2,
                n_heads: 4,
                d_ff: 384,
                max_seq: 256,
            },
            ModelRole::Target => Self {
                vocab_size,
                d_model: 384,
                n_layers: 6,
                n_heads: 6,
                d_ff: 1536,
                max_seq: 256,
            },
        }
    }

    /// Width of one attention head.
    #[must_use]
    pub fn head_dim(&self) -> usize {
        self.d_model / self.n_heads.max(1)
    }

    /// Checks that every size is positive and within its limit ([`MAX_VOCAB_SIZE`],
    /// [`MAX_D_MODEL`], [`MAX_LAYERS`], [`MAX_HEADS`], [`MAX_D_FF`], [`MAX_SEQ`]), that the
    /// heads divide the width, and that the whole stays under [`MAX_PARAMS`] and
    /// [`MAX_KV_ENTRIES`]; nothing is allocated before this passes.
    ///
    /// # Errors
    /// [`Error::BadConfig`] naming the offending field and its limit.
    pub fn validate(&self) -> Result<()> {
        let fields = [
            ("vocab_size", self.vocab_size, MAX_VOCAB_SIZE),
            ("d_model", self.d_model, MAX_D_MODEL),
            ("n_layers", self.n_layers, MAX_LAYERS),
            ("n_heads", self.n_heads, MAX_HEADS),
            ("d_ff", self.d_ff, MAX_D_FF),
            ("max_seq", self.max_seq, MAX_SEQ),
        ];
        if let Some((name, _, _)) = fields.iter().find(|(_, v, _)| *v == 0) {
            return Err(Error::BadConfig(format!("{name} must be at least 1")));
        }
        if let Some((name, value, max)) = fields.iter().find(|(_, v, max)| v > max) {
            return Err(Error::BadConfig(format!(
                "{name} is {value}, above its limit of {max}"
            )));
        }
        let params = self.num_params();
        if params > MAX_PARAMS {
            return Err(Error::BadConfig(format!(
                "the shape has {params} parameters, above the limit of {MAX_PARAMS}"
            )));
        }
        let kv = self.n_layers * self.max_seq * self.d_model;
        if kv > MAX_KV_ENTRIES {
            return Err(Error::BadConfig(format!(
                "n_layers x max_seq x d_model is {kv} K/V cache entries, above the limit of \
                 {MAX_KV_ENTRIES}"
            )));
        }
        if !self.d_model.is_multiple_of(self.n_heads) {
            return Err(Error::BadConfig(format!(
                "n_heads ({}) must divide d_model ({})",
                self.n_heads, self.d_model
            )));
        }
        Ok(())
    }

    /// The number of trainable parameters.
    #[must_use]
    pub fn num_params(&self) -> usize {
        let d = self.d_model;
        let per_block = 2 * 2 * d // two layer norms
            + d * 3 * d + 3 * d // qkv
            + d * d + d // attention output
            + d * self.d_ff + self.d_ff // mlp in
            + self.d_ff * d + d; // mlp out
        self.vocab_size * d // token embedding
            + self.max_seq * d // positions
            + self.n_layers * per_block
            + 2 * d // final norm
            + d * self.vocab_size + self.vocab_size // head
    }
}
