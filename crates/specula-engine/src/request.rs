//! What the engine asks a model for, and what the model answers.
//!
//! One [`ForwardRequest`] lists token sequences (each from the very first prompt token)
//! and the positions whose next-token logits are needed. Every sequence starts with the
//! same `committed_len` tokens (the prompt and every token emitted so far), which never
//! change again: a model with a KV cache keeps its cache for those and may drop (roll
//! back) anything it cached beyond them.
//!
//! A target request carries every position a round verifies — γ + 1 positions for one
//! draft, every node of the draft set for SpecTr — so a real model answers it in one
//! batched forward pass.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::stopping::FinishReason;

/// Which of the two models a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The small model that proposes tokens.
    Draft,
    /// The large model whose distribution the output follows.
    Target,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Draft => "draft",
            Self::Target => "target",
        })
    }
}

/// One needed row of logits: the next-token logits after the first `prefix_len` tokens
/// of `sequences[sequence]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    /// Index into [`ForwardRequest::sequences`].
    pub sequence: usize,
    /// How many tokens of that sequence to condition on (at least `committed_len`).
    pub prefix_len: usize,
}

/// A batch of next-token queries for one model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForwardRequest {
    /// The model this request is for.
    pub role: Role,
    /// Every sequence starts with these many committed tokens, which are final. A KV
    /// cache may keep them and roll back anything beyond.
    pub committed_len: usize,
    /// Token sequences, each from the first prompt token. Draft sequences branching
    /// from the committed prefix share it; a model may also share any longer common prefix.
    pub sequences: Vec<Vec<u32>>,
    /// The rows of logits wanted, in the order the response must list them.
    pub queries: Vec<Query>,
}

impl ForwardRequest {
    /// A request for the next-token logits at the end of each of `sequences`, which
    /// share their first `committed_len` tokens: one query per sequence, in order (the
    /// lab's closed forms ask for these).
    #[must_use]
    pub fn last_positions(role: Role, committed_len: usize, sequences: Vec<Vec<u32>>) -> Self {
        let queries = sequences
            .iter()
            .enumerate()
            .map(|(sequence, s)| Query {
                sequence,
                prefix_len: s.len(),
            })
            .collect();
        Self {
            role,
            committed_len,
            sequences,
            queries,
        }
    }

    /// The tokens a query conditions on, or `None` if the query points outside its
    /// sequence (never for requests made by the engine).
    #[must_use]
    pub fn prefix(&self, query: &Query) -> Option<&[u32]> {
        self.sequences.get(query.sequence)?.get(..query.prefix_len)
    }

    /// The tokens each query conditions on, in query order.
    pub fn prefixes(&self) -> impl Iterator<Item = Option<&[u32]>> + '_ {
        self.queries.iter().map(|query| self.prefix(query))
    }

    /// The number of query positions (rows of logits the response must hold).
    #[must_use]
    pub fn positions(&self) -> usize {
        self.queries.len()
    }
}

/// A model's answer: one row of `vocab` logits per query, rows concatenated in query
/// order (the layout of a `[queries, vocab]` tensor read back from a device).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForwardResponse {
    /// The vocabulary size (entries per row).
    pub vocab: usize,
    /// `queries × vocab` logits, row-major.
    pub logits: Vec<f32>,
}

impl ForwardResponse {
    /// A response from a flat row-major buffer.
    #[must_use]
    pub fn new(vocab: usize, logits: Vec<f32>) -> Self {
        Self { vocab, logits }
    }

    /// A response from separate rows. The vocabulary is taken from the first row; rows
    /// of other lengths are caught when the decoder checks the total length.
    #[must_use]
    pub fn from_rows(rows: &[Vec<f32>]) -> Self {
        let vocab = rows.first().map_or(0, Vec::len);
        Self {
            vocab,
            logits: rows.concat(),
        }
    }

    /// Row `i`, if present.
    #[must_use]
    pub fn row(&self, i: usize) -> Option<&[f32]> {
        let start = i.checked_mul(self.vocab)?;
        let end = start.checked_add(self.vocab)?;
        self.logits.get(start..end)
    }

    /// The number of complete rows.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.logits.len().checked_div(self.vocab).unwrap_or(0)
    }
}

/// What the decoder needs next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Run the draft model on this request and [`supply`](crate::Decoder::supply) its logits.
    Draft(ForwardRequest),
    /// Run the target model on this request and [`supply`](crate::Decoder::supply) its logits.
    /// Under parallel drafting the target request issued by [`Step::Parallel`] comes
    /// again this way once the next round's drafts are drawn: a caller that already runs
    /// it only waits for its answer.
    Target(ForwardRequest),
    /// Parallel drafting ([`DecodeConfig::parallel_draft`](crate::DecodeConfig)): both
    /// requests at once, which the caller may run concurrently. `target` verifies this
    /// round; `draft` drafts the first token of the next round assuming every draft of
    /// this one is accepted. Answer each with
    /// [`supply_to`](crate::Decoder::supply_to), in either order; after the draft's
    /// answer the decoder asks for the next such draft ([`Step::Draft`]) while the target
    /// still runs. A caller that runs one model at a time may treat this step as
    /// `Step::Draft(draft)` and [`supply`](crate::Decoder::supply) its answer: the target
    /// request comes again as [`Step::Target`] once the drafts are drawn.
    Parallel {
        /// Verification of this round's drafts.
        target: ForwardRequest,
        /// The next round's first draft, drafted from this round's drafts.
        draft: ForwardRequest,
    },
    /// Generation has finished.
    Done(FinishReason),
}
