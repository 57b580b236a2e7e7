//! Small closed forms the page draws before or beside a run, computed by the core so that
//! no JavaScript restates them: the theory curves of speculative decoding over γ, and a
//! recorded distribution re-targeted to other sampling settings (the preview of a
//! temperature, top-k or top-p not yet run).

use serde::Serialize;
use specula_core::Distribution;
use specula_core::theory::{expected_tokens_per_round, walltime_factor};
use specula_engine::options::{
    RetargetInput, RetargetOptions, TheoryInput, TheoryOptions, raw_from_js,
};
use wasm_bindgen::JsValue;

use crate::error::{Result, WasmError};

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

/// `theory({ alpha, gammas, costRatio? })`, its options read and checked by the engine's
/// [`TheoryOptions`].
///
/// # Errors
/// An `invalid_option` naming `alpha`, `gammas`, `gammas[i]` or `costRatio`.
pub(crate) fn theory(options: &JsValue) -> Result<TheoryCurves> {
    let TheoryInput {
        alpha,
        gammas,
        cost_ratio,
    } = TheoryOptions::from_raw(raw_from_js(options))?.resolve()?;
    let core = |e: specula_core::Error| WasmError::Plan(e.to_string());
    let expected_tokens = gammas
        .iter()
        .map(|&g| expected_tokens_per_round(alpha, g).map_err(core))
        .collect::<Result<Vec<f64>>>()?;
    let walltime_factor = cost_ratio
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
/// settings, its options read and checked by the engine's [`RetargetOptions`]. Up to a
/// constant its logits are `from · ln p`, so the engine's own processing of those logits
/// gives it, exact up to the rounding of `probs`.
///
/// # Errors
/// An `invalid_option` naming the bad option.
pub(crate) fn retarget(options: &JsValue) -> Result<Vec<f64>> {
    let RetargetInput {
        probs,
        from,
        sampling,
    } = RetargetOptions::from_raw(raw_from_js(options))?.resolve()?;
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
    Distribution::from_logits(&logits, &sampling)
        .map(Distribution::into_probs)
        .map_err(|e| WasmError::Plan(e.to_string()))
}
