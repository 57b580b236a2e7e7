//! Options objects from JavaScript, read by the engine's one options definition
//! (`specula_engine::options`); the only thing added here is the bytes of a file, which
//! the engine's reader takes as [`Raw::Bytes`] and JavaScript holds as a `Uint8Array` or
//! an `ArrayBuffer`.

use js_sys::{Array, Object};
use wasm_bindgen::{JsCast, JsValue};

use crate::backend::{BackendChoice, DraftBackend};
use crate::error::Result;
use crate::models::{Bundles, GgufPair, Sources};
use specula_engine::options::{DecodeOptions, ModelFiles, ModuleLoadOptions, Raw, raw_from_js};

/// `generate`/`start` options, read and type-checked by the engine's one options parser.
pub(crate) fn generate_options(value: &JsValue) -> Result<DecodeOptions> {
    Ok(DecodeOptions::from_raw(raw_from_js(value))?)
}

/// A load options object as [`Raw`]: each entry as [`raw_from_js`] reads it, except that
/// a `Uint8Array` or an `ArrayBuffer` is [`Raw::Bytes`] (not an array of numbers, which
/// a weight file would make gigabytes of).
pub(crate) fn raw_with_bytes(value: &JsValue) -> Raw {
    if !value.is_object() || Array::is_array(value) || value.is_function() {
        return raw_from_js(value);
    }
    let entries = Object::entries(value.unchecked_ref::<Object>());
    Raw::Object(
        entries
            .iter()
            .filter_map(|entry| {
                let pair: Array = entry.unchecked_into();
                let item = pair.get(1);
                let raw = if let Some(array) = item.dyn_ref::<js_sys::Uint8Array>() {
                    Raw::Bytes(array.to_vec())
                } else if item.is_instance_of::<js_sys::ArrayBuffer>() {
                    Raw::Bytes(js_sys::Uint8Array::new(&item).to_vec())
                } else {
                    raw_from_js(&item)
                };
                Some((pair.get(0).as_string()?, raw))
            })
            .collect(),
    )
}

/// `load` options (`ModuleLoadOptions`): the backend and either both models' description
/// (JSON text) and weights, or both models' GGUF files (`draftGguf`, `targetGguf`).
pub(crate) fn load_options(value: &JsValue) -> Result<(BackendChoice, DraftBackend, Sources)> {
    let load = ModuleLoadOptions::from_raw(raw_with_bytes(value))?.resolve()?;
    let sources = match load.files {
        ModelFiles::Gguf { draft, target } => GgufPair::from_files(draft, target)?.into(),
        ModelFiles::Bundled {
            draft_meta,
            draft_weights,
            target_meta,
            target_weights,
        } => Bundles::from_parts(
            draft_meta.as_bytes(),
            &draft_weights,
            target_meta.as_bytes(),
            &target_weights,
        )?
        .into(),
    };
    Ok((load.backend, load.draft_backend, sources))
}
