//! Synthetic language models with exactly known conditionals, for tests, benchmarks and
//! teaching: the truth (the target's joint distribution over continuations) is computable
//! by enumeration.
//!
//! A [`MarkovModel`] of order n gives next-token logits that depend only on the last n
//! tokens (order 0: the same logits everywhere, so the acceptance rate is the same at
//! every position).

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use specula_core::{Distribution, SamplingConfig};

use crate::clock::ManualClock;
use crate::error::ModelError;
use crate::model::LanguageModel;
use crate::request::{ForwardRequest, ForwardResponse};

/// The largest table a [`MarkovModel`] accepts, in logits.
pub const MAX_TABLE_LEN: usize = 1 << 26;

/// An n-gram model: a table of next-token logits for every context of the last `order`
/// tokens. Contexts shorter than `order` are padded on the left with token 0.
#[derive(Debug, Clone)]
pub struct MarkovModel {
    vocab: usize,
    order: usize,
    table: Vec<f32>,
    calls: usize,
    positions: usize,
    cost: Option<(ManualClock, Duration)>,
}

impl MarkovModel {
    /// A model from its table: `vocab^order` rows of `vocab` logits, the row of context
    /// `(c₁, …, c_n)` (oldest first) at index `Σ cᵢ·vocab^{n−i}`.
    ///
    /// # Errors
    /// A [`ModelError`] when `vocab` is 0, the table has the wrong length or is larger
    /// than [`MAX_TABLE_LEN`].
    pub fn new(vocab: usize, order: usize, table: Vec<f32>) -> Result<Self, ModelError> {
        if vocab == 0 {
            return Err(ModelError(
                "a Markov model needs a vocabulary of at least 1".into(),
            ));
        }
        let expected = table_len(vocab, order)?;
        if table.len() != expected {
            return Err(ModelError(format!(
                "a Markov model of order {order} over {vocab} tokens needs {expected} logits, got {}",
                table.len()
            )));
        }
        Ok(Self {
            vocab,
            order,
            table,
            calls: 0,
            positions: 0,
            cost: None,
        })
    }

    /// An order-0 model: the same logits after every context.
    ///
    /// # Errors
    /// A [`ModelError`] when `logits` is empty.
    pub fn constant(logits: Vec<f32>) -> Result<Self, ModelError> {
        Self::new(logits.len(), 0, logits)
    }

    /// A model whose conditionals (at temperature 1) are `probs` (one row per context,
    /// as in [`new`](Self::new)); stored as the logs of the probabilities (`-inf` for 0).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn from_probs(vocab: usize, order: usize, probs: &[f64]) -> Result<Self, ModelError> {
        Self::new(
            vocab,
            order,
            probs.iter().map(|&prob| prob.ln() as f32).collect(),
        )
    }

    /// A model with logits drawn uniformly from `[-spread, spread]` with a seeded RNG.
    ///
    /// # Errors
    /// As [`new`](Self::new), and when `spread` is not finite.
    pub fn random(vocab: usize, order: usize, seed: u64, spread: f32) -> Result<Self, ModelError> {
        if !spread.is_finite() {
            return Err(ModelError(format!(
                "the logit spread must be finite, got {spread}"
            )));
        }
        let len = table_len(vocab, order)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let table = (0..len)
            .map(|_| (rng.random::<f32>() * 2.0 - 1.0) * spread)
            .collect();
        Self::new(vocab, order, table)
    }

    /// A copy with every logit moved by a uniform amount in `[-noise, noise]`: a draft
    /// model that roughly agrees with this one.
    ///
    /// # Errors
    /// A [`ModelError`] when `noise` is not finite.
    pub fn perturbed(&self, seed: u64, noise: f32) -> Result<Self, ModelError> {
        if !noise.is_finite() {
            return Err(ModelError(format!("the noise must be finite, got {noise}")));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let table = self
            .table
            .iter()
            .map(|&l| l + (rng.random::<f32>() * 2.0 - 1.0) * noise)
            .collect();
        Self::new(self.vocab, self.order, table)
    }

    /// Makes every forward call advance `clock` by `per_call` (a simulated model cost).
    #[must_use]
    pub fn with_cost(mut self, clock: ManualClock, per_call: Duration) -> Self {
        self.cost = Some((clock, per_call));
        self
    }

    /// The vocabulary size.
    #[must_use]
    pub fn vocab(&self) -> usize {
        self.vocab
    }

    /// The number of previous tokens a conditional depends on.
    #[must_use]
    pub fn order(&self) -> usize {
        self.order
    }

    /// The next-token logits after `context`, or `None` when a token in the relevant
    /// part of `context` is outside the vocabulary.
    #[must_use]
    pub fn logits(&self, context: &[u32]) -> Option<&[f32]> {
        let mut row = 0_usize;
        for i in 0..self.order {
            // The i-th of the last `order` tokens, oldest first; padding is token 0.
            let back = self.order - i;
            let token = match context.len().checked_sub(back) {
                Some(j) => *context.get(j)? as usize,
                None => 0,
            };
            if token >= self.vocab {
                return None;
            }
            row = row * self.vocab + token;
        }
        let start = row * self.vocab;
        self.table.get(start..start + self.vocab)
    }

    /// The next-token distribution after `context` under `sampling`, exactly as the
    /// engine computes it from this model's logits.
    ///
    /// # Errors
    /// A [`ModelError`] for an out-of-range token or invalid logits.
    pub fn distribution(
        &self,
        context: &[u32],
        sampling: &SamplingConfig,
    ) -> Result<Distribution, ModelError> {
        let logits = self.logits(context).ok_or_else(|| {
            ModelError(format!(
                "context {context:?} has a token outside the vocabulary"
            ))
        })?;
        Distribution::from_logits(logits, sampling).map_err(|e| ModelError(e.to_string()))
    }

    /// Forward calls answered so far.
    #[must_use]
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// Query positions answered so far.
    #[must_use]
    pub fn positions(&self) -> usize {
        self.positions
    }
}

impl LanguageModel for MarkovModel {
    fn vocab_size(&self) -> usize {
        self.vocab
    }

    fn forward(&mut self, request: &ForwardRequest) -> Result<ForwardResponse, ModelError> {
        let mut logits = Vec::with_capacity(request.queries.len() * self.vocab);
        for (i, prefix) in request.prefixes().enumerate() {
            let prefix = prefix
                .ok_or_else(|| ModelError(format!("query {i} points outside its sequence")))?;
            let row = self.logits(prefix).ok_or_else(|| {
                ModelError(format!("query {i} has a token outside the vocabulary"))
            })?;
            logits.extend_from_slice(row);
        }
        self.calls += 1;
        self.positions += request.queries.len();
        if let Some((clock, per_call)) = &self.cost {
            clock.advance(*per_call);
        }
        Ok(ForwardResponse::new(self.vocab, logits))
    }
}

/// The exact joint distribution of the next `length` tokens after `prompt` when sampling
/// `model` autoregressively under `sampling`. Entry `Σ yᵢ·V^{length−1−i}` is the
/// probability of `(y₀, …, y_{length−1})` (see [`sequence_index`]).
///
/// # Errors
/// A [`ModelError`] for invalid logits, an out-of-range prompt token, or more than
/// [`MAX_TABLE_LEN`] outcomes.
pub fn exact_joint(
    model: &MarkovModel,
    prompt: &[u32],
    length: usize,
    sampling: &SamplingConfig,
) -> Result<Vec<f64>, ModelError> {
    if length == 0 {
        return Ok(vec![1.0]);
    }
    let cells = table_len(model.vocab, length - 1)?;
    let mut joint = vec![0.0; cells];
    let mut context = prompt.to_vec();
    enumerate(model, &mut context, length, 1.0, 0, sampling, &mut joint)?;
    Ok(joint)
}

fn enumerate(
    model: &MarkovModel,
    context: &mut Vec<u32>,
    left: usize,
    mass: f64,
    index: usize,
    sampling: &SamplingConfig,
    joint: &mut [f64],
) -> Result<(), ModelError> {
    if left == 0 {
        if let Some(cell) = joint.get_mut(index) {
            *cell += mass;
        }
        return Ok(());
    }
    let dist = model.distribution(context, sampling)?;
    for (token, &prob) in dist.probs().iter().enumerate() {
        if prob == 0.0 {
            continue;
        }
        let id = u32::try_from(token).map_err(|e| ModelError(e.to_string()))?;
        context.push(id);
        enumerate(
            model,
            context,
            left - 1,
            mass * prob,
            index * model.vocab + token,
            sampling,
            joint,
        )?;
        context.pop();
    }
    Ok(())
}

/// The index of a token sequence in [`exact_joint`]'s table (base-`vocab` digits, first
/// token most significant).
#[must_use]
pub fn sequence_index(tokens: &[u32], vocab: usize) -> usize {
    tokens.iter().fold(0, |acc, &t| {
        acc.saturating_mul(vocab).saturating_add(t as usize)
    })
}

/// `vocab^(order + 1)`, refusing anything over [`MAX_TABLE_LEN`].
fn table_len(vocab: usize, order: usize) -> Result<usize, ModelError> {
    let exp = u32::try_from(order + 1).unwrap_or(u32::MAX);
    vocab
        .checked_pow(exp)
        .filter(|&n| n <= MAX_TABLE_LEN)
        .ok_or_else(|| {
            ModelError(format!(
                "{vocab}^{} entries is more than {MAX_TABLE_LEN}",
                order + 1
            ))
        })
}
