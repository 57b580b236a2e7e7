//! The stage profile of a loaded model's host forward pass, for JavaScript
//! (`Engine.profileStages`, `Engine.stageTimes`; the package's `s.models.target`): where
//! a forward pass of a few new positions spends its time inside wasm, read with
//! `performance.now()`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use specula_engine::{ForwardStage, Role};
use specula_host::{DeviceLm, SharedClock, StageProfile};
use wasm_bindgen::JsValue;

use crate::error::{Result, WasmError};

/// What a model's stage profile has added up since it was turned on or reset.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct StageReport {
    /// Whether the profile is timing forward passes now.
    pub enabled: bool,
    /// Forward passes timed.
    pub passes: u64,
    /// New positions those passes ran, over every sequence.
    pub positions: u64,
    /// The passes' whole time, in milliseconds.
    pub total_ms: f64,
    /// Each stage's milliseconds, every stage named (`embed`, `norms`, `qkv`,
    /// `attention`, `attnOut`, `mlpIn`, `mlpOut`, `head`); they add up to at most
    /// `totalMs`, the rest being the clock reads and joining the helper thread.
    #[ts(type = "Record<ForwardStage, number>")]
    pub stages_ms: BTreeMap<ForwardStage, f64>,
}

impl StageReport {
    /// The totals of `profile`.
    #[must_use]
    pub fn of(profile: &StageProfile) -> Self {
        let times = profile.times();
        Self {
            enabled: profile.is_enabled(),
            passes: times.passes,
            positions: times.positions,
            total_ms: times.total.as_secs_f64() * 1e3,
            stages_ms: times.stage_ms().collect(),
        }
    }
}

/// The stage profile of `model`, the `role` model.
///
/// # Errors
/// [`WasmError::InvalidOption`] (field `role`) when the model runs on burn's pass
/// (WebGPU), which has no stage profile.
pub(crate) fn profile_mut(model: &mut DeviceLm, role: Role) -> Result<&mut StageProfile> {
    model.stage_profile_mut().ok_or_else(|| {
        WasmError::option_field(
            "role",
            format!(
                "the {role} model runs on WebGPU, which has no stage profile: the profile \
                 times the host forward pass on the CPU (load with backend \"cpu\")"
            ),
        )
    })
}

/// Turns `profile` on (from totals of zero, timed with the page's clock) or off.
pub(crate) fn switch(profile: &mut StageProfile, on: bool) {
    if on {
        profile.enable(clock());
    } else {
        profile.disable();
    }
}

/// `performance.now()` in wasm; the standard clock natively (the crate's native tests).
fn clock() -> SharedClock {
    #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
    {
        Arc::new(crate::clock::PerformanceClock)
    }
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    {
        Arc::new(specula_engine::StdClock::new())
    }
}

/// `profileStages`' `on`: a boolean.
///
/// # Errors
/// [`WasmError::InvalidOption`] (field `on`) for anything else.
pub(crate) fn on_option(on: &JsValue) -> Result<bool> {
    on.as_bool().ok_or_else(|| {
        WasmError::option_field(
            "on",
            format!(
                "on must be true or false, got {}",
                specula_engine::options::raw_from_js(on).describe()
            ),
        )
    })
}

/// `stageTimes`' options: nothing, or `{ reset }` with `reset` a boolean (default false).
///
/// # Errors
/// [`WasmError::InvalidOption`] naming the option for another shape, an unknown name or
/// a `reset` that is not a boolean.
pub(crate) fn reset_option(options: &JsValue) -> Result<bool> {
    if options.is_undefined() || options.is_null() {
        return Ok(false);
    }
    if !options.is_object() || js_sys::Array::is_array(options) {
        return Err(WasmError::option_field(
            "options",
            format!(
                "stageTimes' options must be an object {{ reset }}, got {}",
                specula_engine::options::raw_from_js(options).describe()
            ),
        ));
    }
    let object: &js_sys::Object = wasm_bindgen::JsCast::unchecked_ref(options);
    for key in js_sys::Object::keys(object).iter() {
        let key = key.as_string().unwrap_or_default();
        if key != "reset" {
            return Err(WasmError::option_field(
                key.clone(),
                format!("unknown option {key:?} of stageTimes: the only one is \"reset\""),
            ));
        }
    }
    let reset = js_sys::Reflect::get(options, &"reset".into()).unwrap_or(JsValue::UNDEFINED);
    if reset.is_undefined() {
        return Ok(false);
    }
    reset.as_bool().ok_or_else(|| {
        WasmError::option_field(
            "reset",
            format!(
                "reset must be true or false, got {}",
                specula_engine::options::raw_from_js(&reset).describe()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use specula_gguf::GgufModel;
    use specula_gguf::synthetic::SyntheticLlama;

    #[test]
    fn burn_passes_refuse_with_a_typed_error_and_host_passes_report() {
        let model = GgufModel::from_bytes(SyntheticLlama::tiny().build(), None).expect("loads");
        let burn = specula_model::LlamaLm::load(&model, &burn::tensor::Device::flex())
            .expect("burn's pass");
        let mut lm = DeviceLm::Llama(burn);
        let err = profile_mut(&mut lm, Role::Target).expect_err("no host pass");
        assert_eq!(err.code().as_str(), "invalid_option");
        assert_eq!(err.field(), Some("role"));
        assert!(err.to_string().contains("WebGPU"), "{err}");

        let mut host = DeviceLm::from_gguf(&model, &burn::tensor::Device::flex()).expect("host");
        let profile = profile_mut(&mut host, Role::Draft).expect("a host pass");
        switch(profile, true);
        let report = StageReport::of(profile);
        assert!(report.enabled && report.passes == 0 && report.total_ms == 0.0);
        let names: Vec<&str> = report.stages_ms.keys().map(|s| s.name()).collect();
        assert_eq!(names, ForwardStage::ALL.map(ForwardStage::name));
        switch(profile, false);
        assert!(!StageReport::of(profile).enabled);
    }
}
