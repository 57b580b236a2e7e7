//! Sampling settings applied identically to the target's and the draft's logits.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Temperature, top-k and top-p, applied in that order to logits by
/// [`Distribution::from_logits`](crate::Distribution::from_logits).
///
/// Speculative decoding stays exact only when both models go through the same settings
/// and the draft token is sampled from exactly the draft distribution later used to test it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SamplingConfig {
    /// Softmax temperature, `>= 0`; 0 means greedy (one-hot on the argmax).
    pub temperature: f64,
    /// Keep only the `k` most likely tokens; `None` keeps all.
    pub top_k: Option<usize>,
    /// Keep the smallest set of most likely tokens with mass `>= p`, `p` in (0, 1];
    /// `None` keeps all.
    pub top_p: Option<f64>,
}

impl Default for SamplingConfig {
    fn default() -> Self {
        Self {
            temperature: 1.0,
            top_k: None,
            top_p: None,
        }
    }
}

impl SamplingConfig {
    /// Greedy decoding: temperature 0.
    #[must_use]
    pub fn greedy() -> Self {
        Self {
            temperature: 0.0,
            ..Self::default()
        }
    }

    /// Whether this configuration is greedy: temperature 0, or a temperature so small
    /// (subnormal, below about 5.6e-309) that `1 / temperature` overflows, where scaling
    /// the logits would give `0 · ∞` and greedy is the limit it tends to.
    #[must_use]
    pub fn is_greedy(&self) -> bool {
        self.temperature == 0.0 || (1.0 / self.temperature).is_infinite()
    }

    /// Checks every field.
    ///
    /// # Errors
    /// [`Error::BadTemperature`], [`Error::BadTopK`] or [`Error::BadTopP`].
    pub fn validate(&self) -> Result<()> {
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return Err(Error::BadTemperature(self.temperature));
        }
        if self.top_k == Some(0) {
            return Err(Error::BadTopK);
        }
        if let Some(p) = self.top_p
            && !(p > 0.0 && p <= 1.0)
        {
            return Err(Error::BadTopP(p));
        }
        Ok(())
    }
}
