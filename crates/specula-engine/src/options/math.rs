//! The options of the package's two small closed forms, defined once: `theory()`
//! (speculative decoding's curves over γ, [`TheoryOptions`]) and `retarget()` (a recorded
//! distribution under other sampling settings, [`RetargetOptions`]). Each is read from a
//! [`Raw`] object by `from_raw` (names and types) and checked by `resolve` (ranges and
//! sizes, against [`limits`](super::limits)), as the decoding and plan options are.

use serde::Serialize;
use specula_core::SamplingConfig;

use super::limits::{
    ALPHA_RANGE, COST_RATIO_RANGE, MAX_GAMMA, MAX_RETARGET_PROBS, MAX_THEORY_GAMMAS,
    RECORDED_TEMPERATURE_RANGE,
};
use super::{FromRaw, OptionError, Raw, object_entries, sampling, take_list, whole};

/// The names `theory()` takes, as JavaScript spells them.
pub const THEORY_OPTION_NAMES: [&str; 3] = ["alpha", "gammas", "costRatio"];

/// The names `retarget()` takes, as JavaScript spells them.
pub const RETARGET_OPTION_NAMES: [&str; 5] = ["probs", "from", "temperature", "topK", "topP"];

/// `theory()`'s options as given (types checked, ranges not yet).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TheoryOptions {
    /// The acceptance rate α of one drafted token, in [0, 1] (required).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub alpha: Option<f64>,
    /// The draft lengths γ to evaluate, each 1 to [`MAX_GAMMA`], at most
    /// [`MAX_THEORY_GAMMAS`] of them (required).
    #[cfg_attr(feature = "ts", ts(type = "Array<number>"))]
    pub gammas: Option<Vec<f64>>,
    /// c, the cost of one draft call over one target call (a finite number ≥ 0); without
    /// it no walltime factor.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cost_ratio: Option<f64>,
}

/// `theory()`'s options, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct TheoryInput {
    /// α, in [0, 1].
    pub alpha: f64,
    /// Each γ, 1 to [`MAX_GAMMA`].
    pub gammas: Vec<u32>,
    /// c ≥ 0, when given.
    pub cost_ratio: Option<f64>,
}

impl TheoryOptions {
    /// Reads the options: every name one of [`THEORY_OPTION_NAMES`], every value of its
    /// type (null means "not given").
    ///
    /// # Errors
    /// [`OptionError`] naming the first unknown option or value of a wrong type.
    pub fn from_raw(raw: Raw) -> Result<Self, OptionError> {
        let mut o = Self::default();
        for (key, value) in object_entries(raw, "an object such as { alpha, gammas }")? {
            match key.as_str() {
                "alpha" => o.alpha = f64::take(&key, value)?,
                "gammas" => {
                    o.gammas =
                        take_list(&key, value, "an array of draft lengths such as [1, 2, 4]")?
                }
                "costRatio" => o.cost_ratio = f64::take(&key, value)?,
                _ => return Err(OptionError::unknown(key, &THEORY_OPTION_NAMES)),
            }
        }
        Ok(o)
    }

    /// Checks every option.
    ///
    /// # Errors
    /// [`OptionError`] naming `alpha` (missing or outside [0, 1]), `gammas` (missing or
    /// more than [`MAX_THEORY_GAMMAS`]), `gammas[i]` or `costRatio`.
    pub fn resolve(&self) -> Result<TheoryInput, OptionError> {
        let alpha = self
            .alpha
            .ok_or_else(|| OptionError::missing("alpha", "the acceptance rate in [0, 1]"))?;
        let alpha = ALPHA_RANGE.check("alpha", alpha, "an acceptance rate in [0, 1]")?;
        let gammas = self
            .gammas
            .as_ref()
            .ok_or_else(|| OptionError::missing("gammas", "the draft lengths to evaluate"))?;
        at_most("gammas", gammas.len(), MAX_THEORY_GAMMAS, "draft lengths")?;
        let gammas = gammas
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                let g = whole(
                    &format!("gammas[{i}]"),
                    g,
                    1,
                    MAX_GAMMA as u64,
                    " (draft tokens per round)",
                )?;
                // At most MAX_GAMMA, so it fits.
                Ok(g as u32)
            })
            .collect::<Result<Vec<u32>, OptionError>>()?;
        let cost_ratio = self
            .cost_ratio
            .map(|c| COST_RATIO_RANGE.check("costRatio", c, "a finite number >= 0"))
            .transpose()?;
        Ok(TheoryInput {
            alpha,
            gammas,
            cost_ratio,
        })
    }
}

/// `retarget()`'s options as given (types checked, ranges not yet).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RetargetOptions {
    /// A distribution as recorded (e.g. a step's `targetProbs`), with no top-k or top-p
    /// applied: at most [`MAX_RETARGET_PROBS`] entries (required).
    #[cfg_attr(
        feature = "ts",
        ts(type = "Array<number> | Float64Array | Float32Array")
    )]
    pub probs: Option<Vec<f64>>,
    /// The temperature it was recorded at, a finite number > 0 (required).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub from: Option<f64>,
    /// The new temperature (default 1; 0 is greedy: one-hot on the argmax).
    #[cfg_attr(feature = "ts", ts(optional))]
    pub temperature: Option<f64>,
    /// Keep the k most likely tokens.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub top_k: Option<f64>,
    /// Keep the smallest set of tokens with this much probability.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub top_p: Option<f64>,
}

/// `retarget()`'s options, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct RetargetInput {
    /// The recorded probabilities (their sum is the core's to check).
    pub probs: Vec<f64>,
    /// The recording's temperature, > 0.
    pub from: f64,
    /// The settings to apply.
    pub sampling: SamplingConfig,
}

impl RetargetOptions {
    /// Reads the options: every name one of [`RETARGET_OPTION_NAMES`], every value of its
    /// type (null means "not given").
    ///
    /// # Errors
    /// [`OptionError`] naming the first unknown option or value of a wrong type.
    pub fn from_raw(raw: Raw) -> Result<Self, OptionError> {
        let mut o = Self::default();
        for (key, value) in object_entries(raw, "an object such as { probs, from }")? {
            match key.as_str() {
                "probs" => o.probs = take_list(&key, value, "an array of probabilities")?,
                "from" => o.from = f64::take(&key, value)?,
                "temperature" => o.temperature = f64::take(&key, value)?,
                "topK" => o.top_k = f64::take(&key, value)?,
                "topP" => o.top_p = f64::take(&key, value)?,
                _ => return Err(OptionError::unknown(key, &RETARGET_OPTION_NAMES)),
            }
        }
        Ok(o)
    }

    /// Checks every option.
    ///
    /// # Errors
    /// [`OptionError`] naming `probs` (missing or more than [`MAX_RETARGET_PROBS`]
    /// entries), `from`, or the sampling setting out of range.
    pub fn resolve(&self) -> Result<RetargetInput, OptionError> {
        let probs = self
            .probs
            .as_ref()
            .ok_or_else(|| OptionError::missing("probs", "the recorded distribution"))?;
        at_most("probs", probs.len(), MAX_RETARGET_PROBS, "probabilities")?;
        let from = self.from.ok_or_else(|| {
            OptionError::missing("from", "the temperature probs were recorded at")
        })?;
        let from = RECORDED_TEMPERATURE_RANGE.check(
            "from",
            from,
            "the recording's temperature, a finite number > 0",
        )?;
        Ok(RetargetInput {
            probs: probs.clone(),
            from,
            sampling: sampling(self.temperature, self.top_k, self.top_p)?,
        })
    }
}

/// Refuses a list `field` of `len` entries over `limit` ("at most 1024 draft lengths, got
/// 1025 of them").
fn at_most(field: &str, len: usize, limit: usize, noun: &str) -> Result<(), OptionError> {
    if len > limit {
        return Err(OptionError::invalid(
            field,
            format!("at most {limit} {noun}"),
            format!("{len} of them"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Raw {
        serde_json::from_str(json).expect("JSON")
    }

    fn theory(json: &str) -> Result<TheoryInput, OptionError> {
        TheoryOptions::from_raw(raw(json))?.resolve()
    }

    fn retarget(json: &str) -> Result<RetargetInput, OptionError> {
        RetargetOptions::from_raw(raw(json))?.resolve()
    }

    #[test]
    fn theory_options_are_read_and_checked_here() {
        let ok = theory(r#"{ "alpha": 0.8, "gammas": [1, 4], "costRatio": 0.1 }"#).unwrap();
        assert_eq!(
            (ok.alpha, ok.gammas, ok.cost_ratio),
            (0.8, vec![1, 4], Some(0.1))
        );
        let long = format!(
            r#"{{ "alpha": 0.5, "gammas": [{}] }}"#,
            vec!["1"; MAX_THEORY_GAMMAS + 1].join(",")
        );
        for (json, field) in [
            (r#"{ "gammas": [1] }"#, "alpha"),
            (r#"{ "alpha": 1.5, "gammas": [1] }"#, "alpha"),
            (r#"{ "alpha": "0.5", "gammas": [1] }"#, "alpha"),
            (r#"{ "alpha": 0.5 }"#, "gammas"),
            (r#"{ "alpha": 0.5, "gammas": [1, 0] }"#, "gammas[1]"),
            (r#"{ "alpha": 0.5, "gammas": [65] }"#, "gammas[0]"),
            (
                r#"{ "alpha": 0.5, "gammas": [1], "costRatio": -1 }"#,
                "costRatio",
            ),
            (r#"{ "alpha": 0.5, "gammas": [1], "cost": 1 }"#, "cost"),
            (long.as_str(), "gammas"),
            ("[1]", "options"),
        ] {
            assert_eq!(theory(json).unwrap_err().field, field, "{json}");
        }
        let e = theory(r#"{ "alpha": 2, "gammas": [1] }"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "alpha must be an acceptance rate in [0, 1], got 2"
        );
    }

    #[test]
    fn retarget_options_are_read_and_checked_here() {
        let ok = retarget(r#"{ "probs": [0.5, 0.5], "from": 1, "topK": 1 }"#).unwrap();
        assert_eq!(
            (ok.probs.len(), ok.from, ok.sampling.top_k),
            (2, 1.0, Some(1))
        );
        let long = format!(
            r#"{{ "probs": [{}], "from": 1 }}"#,
            vec!["0"; MAX_RETARGET_PROBS + 1].join(",")
        );
        for (json, field) in [
            (r#"{ "from": 1 }"#, "probs"),
            (r#"{ "probs": [0.5, "x"], "from": 1 }"#, "probs[1]"),
            (r#"{ "probs": [1] }"#, "from"),
            (r#"{ "probs": [1], "from": 0 }"#, "from"),
            (r#"{ "probs": [1], "from": 1, "topP": 0 }"#, "topP"),
            (r#"{ "probs": [1], "from": 1, "top_k": 2 }"#, "top_k"),
            (long.as_str(), "probs"),
        ] {
            assert_eq!(retarget(json).unwrap_err().field, field, "{json}");
        }
    }
}
