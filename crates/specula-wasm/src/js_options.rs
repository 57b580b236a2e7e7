//! Filling the option structs from JavaScript objects.

use wasm_bindgen::JsValue;

use crate::backend::{BackendChoice, DraftBackend};
use crate::error::{Result, WasmError};
use crate::fields::Fields;
use crate::models::{Bundles, GgufPair, Sources};
use specula_engine::options::DecodeOptions;
use specula_engine::options::raw_from_js;

/// `generate`/`start` options, read and type-checked by the engine's one options parser.
pub(crate) fn generate_options(value: &JsValue) -> Result<DecodeOptions> {
    Ok(DecodeOptions::from_raw(raw_from_js(value))?)
}

/// The option names `load` accepts.
const LOAD_KEYS: [&str; 8] = [
    "backend",
    "draftBackend",
    "draftMeta",
    "draftWeights",
    "targetMeta",
    "targetWeights",
    "draftGguf",
    "targetGguf",
];

/// A load option that must be given: its bytes, or the error naming it.
pub(crate) fn required(name: &str, value: Option<Vec<u8>>) -> Result<Vec<u8>> {
    value.ok_or_else(|| WasmError::option(format!("{name} is required in load options")))
}

/// `load` options: the backend and either both models' description (JSON text) and
/// weights, or both models' GGUF files (`draftGguf`, `targetGguf`).
pub(crate) fn load_options(value: &JsValue) -> Result<(BackendChoice, DraftBackend, Sources)> {
    let f = Fields::new(value, "load options", &LOAD_KEYS)?;
    let backend = BackendChoice::parse(f.string("backend")?.as_deref())?;
    let draft_backend = DraftBackend::parse(f.string("draftBackend")?.as_deref())?;
    let (draft_gguf, target_gguf) = (f.bytes("draftGguf")?, f.bytes("targetGguf")?);
    if draft_gguf.is_some() || target_gguf.is_some() {
        if let Some(name) = ["draftMeta", "draftWeights", "targetMeta", "targetWeights"]
            .into_iter()
            .find(|k| f.is_set(k))
        {
            return Err(WasmError::option(format!(
                "{name} cannot be given with GGUF files (draftGguf, targetGguf)"
            )));
        }
        let pair = GgufPair::from_files(
            required("draftGguf", draft_gguf)?,
            required("targetGguf", target_gguf)?,
        )?;
        return Ok((backend, draft_backend, pair.into()));
    }
    let draft_meta = required("draftMeta", f.string("draftMeta")?.map(String::into_bytes))?;
    let target_meta = required(
        "targetMeta",
        f.string("targetMeta")?.map(String::into_bytes),
    )?;
    let draft_weights = required("draftWeights", f.bytes("draftWeights")?)?;
    let target_weights = required("targetWeights", f.bytes("targetWeights")?)?;
    let bundles = Bundles::from_parts(&draft_meta, &draft_weights, &target_meta, &target_weights)?;
    Ok((backend, draft_backend, bundles.into()))
}
