//! Rust values to plain JavaScript objects, through serde_json so maps become objects and
//! non-finite numbers become `null`, exactly as in `specula plan --json`. Every type that
//! crosses serialises with its final camelCase keys itself (declared in
//! `web/src/types.d.ts`, generated from the same types), so nothing is re-keyed here.

use serde::Serialize;
use wasm_bindgen::JsValue;

use crate::error::{Result, WasmError};

/// `value` as a plain JavaScript object, keys as serialised.
///
/// # Errors
/// [`WasmError::Internal`] when the value cannot be serialised (never for this crate's
/// types: they hold no maps with non-string keys).
pub fn to_js<T: Serialize>(value: &T) -> Result<JsValue> {
    let json = serde_json::to_value(value)
        .map_err(|e| WasmError::Internal(format!("cannot serialise a result: {e}")))?;
    json.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| WasmError::Internal(format!("cannot convert a result to JavaScript: {e}")))
}
