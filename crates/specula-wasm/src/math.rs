//! Small closed forms the page draws before or beside a run, computed by the core so that
//! no JavaScript restates them: the theory curves of speculative decoding over γ, and a
//! recorded distribution re-targeted to other sampling settings (the preview of a
//! temperature, top-k or top-p not yet run).

use serde::Serialize;
use specula_core::theory::{expected_tokens_per_round, walltime_factor};
use specula_core::{Distribution, SamplingConfig};
use specula_engine::options::{sampling, show_number, whole};
use wasm_bindgen::JsValue;

use crate::error::{Result, WasmError};
use crate::fields::Fields;

/// The theory curves at each γ.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct TheoryCurves {
    /// γ, as asked.
    pub gammas: Vec<u32>,
    /// `(1 − α^{γ+1}) / (1 − α)`: expected tokens per round.
    pub expected_tokens: Vec<f64>,
    /// `(1 − α^{γ+1}) / ((1 − α)(γc + 1))`: the walltime factor, when a cost ratio c was
    /// given.
    pub walltime_factor: Option<Vec<f64>>,
}

/// The names `theory()` takes (web/src/index.d.ts's `TheoryOptions`, checked against
/// these by tests/hand_types.rs).
pub const THEORY_OPTION_NAMES: [&str; 3] = ["alpha", "gammas", "costRatio"];

/// The names `retarget()` takes (web/src/index.d.ts's `RetargetOptions`, checked against
/// these by tests/hand_types.rs).
pub const RETARGET_OPTION_NAMES: [&str; 5] = ["probs", "from", "temperature", "topK", "topP"];

/// `theory({ alpha, gammas, costRatio? })`.
///
/// # Errors
/// An `invalid_option` naming `alpha`, `gammas[i]` or `costRatio`.
pub(crate) fn theory(options: &JsValue) -> Result<TheoryCurves> {
    let f = Fields::new(options, "theory options", &THEORY_OPTION_NAMES)?;
    let alpha = f.number("alpha")?.ok_or_else(|| {
        WasmError::option_field("alpha", "alpha is required: the acceptance rate in [0, 1]")
    })?;
    if !(0.0..=1.0).contains(&alpha) {
        return Err(WasmError::option_field(
            "alpha",
            format!(
                "alpha must be an acceptance rate in [0, 1], got {}",
                show_number(alpha)
            ),
        ));
    }
    let gammas = f
        .numbers("gammas")?
        .ok_or_else(|| {
            WasmError::option_field(
                "gammas",
                "gammas is required: the draft lengths to evaluate",
            )
        })?
        .into_iter()
        .enumerate()
        .map(|(i, g)| {
            let limit = specula_engine::options::limits::MAX_GAMMA as u64;
            Ok(whole(
                &format!("gammas[{i}]"),
                g,
                1,
                limit,
                " (draft tokens per round)",
            )? as u32)
        })
        .collect::<Result<Vec<u32>>>()?;
    let cost = match f.number("costRatio")? {
        Some(c) if c.is_finite() && c >= 0.0 => Some(c + 0.0),
        Some(c) => {
            return Err(WasmError::option_field(
                "costRatio",
                format!(
                    "costRatio must be a finite number >= 0, got {}",
                    show_number(c)
                ),
            ));
        }
        None => None,
    };
    let core = |e: specula_core::Error| WasmError::Plan(e.to_string());
    let expected_tokens = gammas
        .iter()
        .map(|&g| expected_tokens_per_round(alpha, g).map_err(core))
        .collect::<Result<Vec<f64>>>()?;
    let walltime_factor = cost
        .map(|c| {
            gammas
                .iter()
                .map(|&g| walltime_factor(alpha, g, c).map_err(core))
                .collect::<Result<Vec<f64>>>()
        })
        .transpose()?;
    Ok(TheoryCurves {
        gammas,
        expected_tokens,
        walltime_factor,
    })
}

/// `retarget({ probs, from, temperature?, topK?, topP? })`: a distribution recorded at
/// temperature `from` (no top-k or top-p) as the engine would process it with other
/// settings. Up to a constant its logits are `from · ln p`, so the engine's own
/// processing of those logits gives it, exact up to the rounding of `probs`.
///
/// # Errors
/// An `invalid_option` naming the bad option.
pub(crate) fn retarget(options: &JsValue) -> Result<Vec<f64>> {
    let f = Fields::new(options, "retarget options", &RETARGET_OPTION_NAMES)?;
    let probs = f.numbers("probs")?.ok_or_else(|| {
        WasmError::option_field("probs", "probs is required: the recorded distribution")
    })?;
    let from = f.number("from")?.ok_or_else(|| {
        WasmError::option_field(
            "from",
            "from is required: the temperature probs were recorded at",
        )
    })?;
    if !(from.is_finite() && from > 0.0) {
        return Err(WasmError::option_field(
            "from",
            format!(
                "from must be the recording's temperature, a finite number > 0, got {}",
                show_number(from)
            ),
        ));
    }
    let settings: SamplingConfig = sampling(
        f.number("temperature")?,
        f.number("topK")?,
        f.number("topP")?,
    )?;
    let recorded = Distribution::from_probs(probs)
        .map_err(|e| WasmError::option_field("probs", format!("probs: {e}")))?;
    let logits: Vec<f64> = recorded
        .probs()
        .iter()
        .map(|&p| {
            if p > 0.0 {
                from * p.ln()
            } else {
                f64::NEG_INFINITY
            }
        })
        .collect();
    Distribution::from_logits(&logits, &settings)
        .map(Distribution::into_probs)
        .map_err(|e| WasmError::Plan(e.to_string()))
}
