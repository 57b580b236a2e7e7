//! Model shapes: one architecture, two sizes.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The shape of a GPT-style decoder-only transformer (pre-norm, learned positions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

    /// Checks that every size is positive and the heads divide the width.
    ///
    /// # Errors
    /// [`Error::BadConfig`] naming the offending field.
    pub fn validate(&self) -> Result<()> {
        let fields = [
            ("vocab_size", self.vocab_size),
            ("d_model", self.d_model),
            ("n_layers", self.n_layers),
            ("n_heads", self.n_heads),
            ("d_ff", self.d_ff),
            ("max_seq", self.max_seq),
        ];
        if let Some((name, _)) = fields.iter().find(|(_, v)| *v == 0) {
            return Err(Error::BadConfig(format!("{name} must be at least 1")));
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
