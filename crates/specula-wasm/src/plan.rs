//! `plan()`: the token-level closed-form analysis, no models needed. The options are the
//! engine's one [`PlanOptions`] (checked as `specula plan` checks its flags) and the
//! report is the one `specula plan --json` prints ([`specula_core::report`]).

use specula_core::PlanReport;
use specula_engine::options::{PlanOptions, run_plan};
use wasm_bindgen::JsValue;

use crate::error::Result;
use specula_engine::options::raw_from_js;

/// Reads, checks and runs one plan.
///
/// # Errors
/// [`WasmError::InvalidOption`](crate::error::WasmError::InvalidOption) naming the option
/// at fault (including what the math refused: a sum that is not 1, ρ below ρ*, an LP too
/// large), or [`WasmError::Plan`](crate::error::WasmError::Plan) when the solver fails.
pub fn run(value: &JsValue) -> Result<PlanReport> {
    let input = PlanOptions::from_raw(raw_from_js(value))?.resolve()?;
    Ok(run_plan(&input)?)
}
