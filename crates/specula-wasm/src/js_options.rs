//! Filling the option structs from JavaScript objects.

use wasm_bindgen::JsValue;

use crate::backend::{BackendChoice, DraftBackend};
use crate::error::{Result, WasmError};
use crate::fields::Fields;
use crate::models::Bundles;
use specula_engine::options::DecodeOptions;
use specula_engine::options::raw_from_js;

/// `generate`/`start` options, read and type-checked by the engine's one options parser.
pub(crate) fn generate_options(value: &JsValue) -> Result<DecodeOptions> {
    Ok(DecodeOptions::from_raw(raw_from_js(value))?)
}

/// The option names `load` accepts.
const LOAD_KEYS: [&str; 6] = [
    "backend",
    "draftBackend",
    "draftMeta",
    "draftWeights",
    "targetMeta",
    "targetWeights",
];

/// A load option that must be given: its bytes, or the error naming it.
pub(crate) fn required(name: &str, value: Option<Vec<u8>>) -> Result<Vec<u8>> {
    value.ok_or_else(|| WasmError::option(format!("{name} is required in load options")))
}

/// `load` options: the backend and both models' description (JSON text) and weights.
pub(crate) fn load_options(value: &JsValue) -> Result<(BackendChoice, DraftBackend, Bundles)> {
    let f = Fields::new(value, "load options", &LOAD_KEYS)?;
    let backend = BackendChoice::parse(f.string("backend")?.as_deref())?;
    let draft_backend = DraftBackend::parse(f.string("draftBackend")?.as_deref())?;
    let draft_meta = required("draftMeta", f.string("draftMeta")?.map(String::into_bytes))?;
    let target_meta = required(
        "targetMeta",
        f.string("targetMeta")?.map(String::into_bytes),
    )?;
    let draft_weights = required("draftWeights", f.bytes("draftWeights")?)?;
    let target_weights = required("targetWeights", f.bytes("targetWeights")?)?;
    let bundles = Bundles::from_parts(&draft_meta, &draft_weights, &target_meta, &target_weights)?;
    Ok((backend, draft_backend, bundles))
}
