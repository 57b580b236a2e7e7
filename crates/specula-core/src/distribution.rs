//! A validated probability distribution over a vocabulary `0..len`.
//!
//! Parse once, then use freely: every constructor checks its input and returns a typed
//! [`Error`]; afterwards sampling and look-ups cannot fail.

use rand::Rng;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::sampling::SamplingConfig;

/// How far a vector given as probabilities may sum away from 1 before it is refused.
pub const NORMALIZATION_TOLERANCE: f64 = 1e-6;

/// A probability distribution over token ids `0..len()`, stored in `f64`.
///
/// Invariants: at least one entry, every entry finite and `>= 0`, entries sum to 1
/// (up to rounding).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Distribution {
    probs: Vec<f64>,
}

impl Distribution {
    /// Builds a distribution from probabilities that already sum to 1 (within
    /// [`NORMALIZATION_TOLERANCE`]); the small rounding gap is normalised away.
    ///
    /// # Errors
    /// [`Error::Empty`], [`Error::NotANumber`], [`Error::Infinite`], [`Error::Negative`],
    /// [`Error::AllZero`], or [`Error::NotNormalized`] when the sum is off by more than
    /// the tolerance.
    pub fn from_probs(probs: Vec<f64>) -> Result<Self> {
        let sum = checked_sum(&probs)?;
        if (sum - 1.0).abs() > NORMALIZATION_TOLERANCE {
            return Err(Error::NotNormalized {
                sum,
                tolerance: NORMALIZATION_TOLERANCE,
            });
        }
        Ok(Self::scaled(probs, sum))
    }

    /// Builds a distribution from non-negative weights of any positive total.
    ///
    /// # Errors
    /// [`Error::Empty`], [`Error::NotANumber`], [`Error::Infinite`], [`Error::Negative`]
    /// or [`Error::AllZero`].
    pub fn from_weights(weights: Vec<f64>) -> Result<Self> {
        let sum = checked_sum(&weights)?;
        Ok(Self::scaled(weights, sum))
    }

    /// Builds the sampling distribution of a model from its logits: temperature, then
    /// top-k, then top-p (nucleus), then softmax. Temperature 0 is greedy decoding: a
    /// one-hot distribution on the largest logit (the lowest id among ties).
    ///
    /// Logits of `-inf` are allowed (masked tokens); `+inf` and NaN are not.
    ///
    /// # Errors
    /// [`Error::Empty`], [`Error::NotANumber`], [`Error::Infinite`] (for `+inf`),
    /// [`Error::AllZero`] when every logit is `-inf`, and the configuration's own errors
    /// ([`Error::BadTemperature`], [`Error::BadTopK`], [`Error::BadTopP`]).
    pub fn from_logits<T: Copy + Into<f64>>(logits: &[T], config: &SamplingConfig) -> Result<Self> {
        config.validate()?;
        if logits.is_empty() {
            return Err(Error::Empty);
        }
        let mut max = f64::NEG_INFINITY;
        let mut argmax = 0;
        for (index, &raw) in logits.iter().enumerate() {
            let value: f64 = raw.into();
            if value.is_nan() {
                return Err(Error::NotANumber { index });
            }
            if value == f64::INFINITY {
                return Err(Error::Infinite { index, value });
            }
            if value > max {
                max = value;
                argmax = index;
            }
        }
        if max == f64::NEG_INFINITY {
            return Err(Error::AllZero);
        }
        if config.is_greedy() {
            return Self::one_hot(logits.len(), argmax);
        }
        let inv_t = 1.0 / config.temperature;
        let mut weights: Vec<f64> = logits
            .iter()
            .map(|&raw| ((raw.into() - max) * inv_t).exp())
            .collect();
        if let Some(k) = config.top_k {
            keep_top_k(&mut weights, k);
        }
        if let Some(p) = config.top_p {
            keep_top_p(&mut weights, p);
        }
        // The largest weight is exp(0) = 1 and survives both filters, so the sum is >= 1.
        let sum: f64 = weights.iter().sum();
        Ok(Self::scaled(weights, sum))
    }

    /// The uniform distribution over `n` tokens.
    ///
    /// # Errors
    /// [`Error::Empty`] when `n == 0`.
    pub fn uniform(n: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::Empty);
        }
        Ok(Self {
            probs: vec![1.0 / n as f64; n],
        })
    }

    /// All mass on `token`, over a vocabulary of `n`.
    ///
    /// # Errors
    /// [`Error::Empty`] when `n == 0`, [`Error::TokenOutOfRange`] when `token >= n`.
    pub fn one_hot(n: usize, token: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::Empty);
        }
        if token >= n {
            return Err(Error::TokenOutOfRange { token, vocab: n });
        }
        let mut probs = vec![0.0; n];
        probs[token] = 1.0;
        Ok(Self { probs })
    }

    fn scaled(mut probs: Vec<f64>, sum: f64) -> Self {
        if sum != 1.0 {
            let inv = 1.0 / sum;
            probs.iter_mut().for_each(|p| *p *= inv);
        }
        Self { probs }
    }

    /// The probabilities, indexed by token id.
    #[must_use]
    pub fn probs(&self) -> &[f64] {
        &self.probs
    }

    /// Consumes the distribution, returning its probabilities.
    #[must_use]
    pub fn into_probs(self) -> Vec<f64> {
        self.probs
    }

    /// The vocabulary size.
    #[must_use]
    pub fn len(&self) -> usize {
        self.probs.len()
    }

    /// Always `false`: a distribution has at least one entry. Present for API symmetry.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.probs.is_empty()
    }

    /// The probability of `token`, or 0 for ids outside the vocabulary.
    #[must_use]
    pub fn prob(&self, token: usize) -> f64 {
        self.probs.get(token).copied().unwrap_or(0.0)
    }

    /// The most likely token (the lowest id among ties).
    #[must_use]
    pub fn argmax(&self) -> usize {
        argmax(&self.probs)
    }

    /// Checks that `token` is a valid id for this vocabulary.
    ///
    /// # Errors
    /// [`Error::TokenOutOfRange`].
    pub fn check_token(&self, token: usize) -> Result<()> {
        if token < self.probs.len() {
            Ok(())
        } else {
            Err(Error::TokenOutOfRange {
                token,
                vocab: self.probs.len(),
            })
        }
    }

    /// Draws a token. Uses one `f64` uniform from `rng`.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        self.sample_with_uniform(rng.random::<f64>())
    }

    /// The token at which the cumulative distribution first exceeds `u` (inverse-CDF
    /// sampling), for a uniform `u` in `[0, 1)`.
    #[must_use]
    pub fn sample_with_uniform(&self, u: f64) -> usize {
        sample_weights(&self.probs, u, 1.0)
    }
}

/// Inverse-CDF draw from unnormalised non-negative `weights` whose total is `total`,
/// using the uniform `u` in `[0, 1)`.
pub(crate) fn sample_weights(weights: &[f64], u: f64, total: f64) -> usize {
    sample_iter(weights.iter().copied(), u * total)
}

/// The first index at which the running sum of `weights` exceeds `threshold`. Rounding
/// can leave the running sum just short of it; the last index with positive weight is
/// returned then, never a zero-weight one.
pub(crate) fn sample_iter(weights: impl Iterator<Item = f64>, threshold: f64) -> usize {
    let mut acc = 0.0;
    let mut last_positive = 0;
    for (i, w) in weights.enumerate() {
        if w > 0.0 {
            acc += w;
            last_positive = i;
            if acc > threshold {
                return i;
            }
        }
    }
    last_positive
}

/// Index of the largest entry, lowest index among ties.
pub(crate) fn argmax(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
}

/// Validates entries as probabilities/weights and returns their sum.
fn checked_sum(values: &[f64]) -> Result<f64> {
    if values.is_empty() {
        return Err(Error::Empty);
    }
    let mut sum = 0.0;
    for (index, &value) in values.iter().enumerate() {
        if value.is_nan() {
            return Err(Error::NotANumber { index });
        }
        if value.is_infinite() {
            return Err(Error::Infinite { index, value });
        }
        if value < 0.0 {
            return Err(Error::Negative { index, value });
        }
        sum += value;
    }
    if sum <= 0.0 {
        return Err(Error::AllZero);
    }
    if !sum.is_finite() {
        // Finite entries can still overflow when summed.
        return Err(Error::Infinite {
            index: values.len() - 1,
            value: sum,
        });
    }
    Ok(sum)
}

/// Zeroes every weight outside the `k` largest (ties broken towards lower ids).
fn keep_top_k(weights: &mut [f64], k: usize) {
    if k >= weights.len() {
        return;
    }
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.select_nth_unstable_by(k - 1, |&a, &b| {
        weights[b].total_cmp(&weights[a]).then(a.cmp(&b))
    });
    for &i in &order[k..] {
        weights[i] = 0.0;
    }
}

/// Keeps the smallest set of most likely tokens whose mass reaches `p` of the total
/// (at least one token), zeroing the rest.
fn keep_top_p(weights: &mut [f64], p: f64) {
    if p >= 1.0 {
        return;
    }
    let total: f64 = weights.iter().sum();
    let mut order: Vec<usize> = (0..weights.len()).filter(|&i| weights[i] > 0.0).collect();
    order.sort_unstable_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
    let mut acc = 0.0;
    let mut keep = order.len();
    for (n, &i) in order.iter().enumerate() {
        acc += weights[i];
        if acc >= p * total {
            keep = n + 1;
            break;
        }
    }
    for &i in &order[keep..] {
        weights[i] = 0.0;
    }
}
