//! Rust values to plain JavaScript objects, through serde_json so maps become objects
//! and non-finite numbers become `null`, exactly as in `specula plan --json`. The types
//! that cross to JavaScript serialise with camelCase keys themselves (and are declared in
//! `web/src/types.d.ts`); only the plan report, whose keys the CLI's `plan --json` prints
//! in snake_case, is re-keyed here.

use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::JsValue;

use crate::error::{Result, WasmError};

/// `snake_case` → `camelCase`.
#[must_use]
pub fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for ch in key.chars() {
        if ch == '_' {
            upper = true;
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// `value` as JSON with every object key in camelCase (string values are left alone).
///
/// # Errors
/// [`WasmError::Engine`] when the value cannot be serialised (never for this crate's types).
pub fn camel_json<T: Serialize>(value: &T) -> Result<Value> {
    let json = serde_json::to_value(value)
        .map_err(|e| WasmError::Engine(format!("internal: cannot serialise: {e}")))?;
    Ok(rename(json))
}

fn rename(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (camel_case(&k), rename(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(rename).collect()),
        other => other,
    }
}

/// `value` as a plain JavaScript object, keys as serialised.
///
/// # Errors
/// [`WasmError::Engine`] when the value cannot be serialised (never for this crate's types).
pub fn to_js<T: Serialize>(value: &T) -> Result<JsValue> {
    let json = serde_json::to_value(value)
        .map_err(|e| WasmError::Engine(format!("internal: cannot serialise: {e}")))?;
    json_to_js(&json)
}

/// `value` as a plain JavaScript object with every key re-keyed to camelCase.
///
/// # Errors
/// As [`camel_json`].
pub fn camel_to_js<T: Serialize>(value: &T) -> Result<JsValue> {
    json_to_js(&camel_json(value)?)
}

fn json_to_js(json: &Value) -> Result<JsValue> {
    json.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| WasmError::Engine(format!("internal: cannot convert to JavaScript: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_camel_case_values_do_not() {
        assert_eq!(camel_case("kl_target_output"), "klTargetOutput");
        assert_eq!(camel_case("vocab"), "vocab");
        let v = camel_json(
            &serde_json::json!({"rho_star": 1.5, "kind": "max_new_tokens", "a_b": [{"c_d": 1}]}),
        )
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"rhoStar": 1.5, "kind": "max_new_tokens", "aB": [{"cD": 1}]})
        );
    }
}
