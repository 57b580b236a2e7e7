//! Options from JavaScript values (feature `js`): the bindings of `generate()` and
//! `plan()` (specula-wasm) and of `decode()` (specula-decode) read their options objects
//! into [`Raw`] here, the same way.

use js_sys::{Array, Object};
use wasm_bindgen::{JsCast, JsValue};

use super::raw::Raw;

/// A JavaScript value as the options parser reads it: `undefined` is null, values with no
/// JSON counterpart keep what a message needs to quote them (a BigInt its digits, a
/// function or a symbol its kind), and typed arrays of any number type are arrays of numbers (so a
/// prompt may be an `Int32Array`, a distribution a `Float64Array`).
#[must_use]
pub fn raw_from_js(value: &JsValue) -> Raw {
    if value.is_undefined() || value.is_null() {
        return Raw::Null;
    }
    if let Some(b) = value.as_bool() {
        return Raw::Bool(b);
    }
    if let Some(n) = value.as_f64() {
        return Raw::Number(n);
    }
    if let Some(s) = value.as_string() {
        return Raw::String(s);
    }
    if value.is_bigint() {
        let digits = value.unchecked_ref::<js_sys::BigInt>().to_string(10);
        return digits.map_or(Raw::Other("a BigInt"), |d| Raw::BigInt(d.into()));
    }
    if value.is_function() {
        return Raw::Other("a function");
    }
    if value.is_symbol() {
        return Raw::Other("a symbol");
    }
    if let Some(numbers) = typed_array(value) {
        return Raw::Array(numbers.into_iter().map(Raw::Number).collect());
    }
    if Array::is_array(value) {
        let array: &Array = value.unchecked_ref();
        return Raw::Array(array.iter().map(|item| raw_from_js(&item)).collect());
    }
    let object: &Object = value.unchecked_ref();
    Raw::Object(
        Object::entries(object)
            .iter()
            .filter_map(|entry| {
                let pair: Array = entry.unchecked_into();
                Some((pair.get(0).as_string()?, raw_from_js(&pair.get(1))))
            })
            .collect(),
    )
}

/// The numbers of a typed array of a number type (not of BigInts).
fn typed_array(value: &JsValue) -> Option<Vec<f64>> {
    let numeric = value.is_instance_of::<js_sys::Float64Array>()
        || value.is_instance_of::<js_sys::Float32Array>()
        || value.is_instance_of::<js_sys::Int32Array>()
        || value.is_instance_of::<js_sys::Uint32Array>()
        || value.is_instance_of::<js_sys::Int16Array>()
        || value.is_instance_of::<js_sys::Uint16Array>()
        || value.is_instance_of::<js_sys::Int8Array>()
        || value.is_instance_of::<js_sys::Uint8Array>()
        || value.is_instance_of::<js_sys::Uint8ClampedArray>();
    // Float64Array's constructor converts every number type exactly.
    numeric.then(|| js_sys::Float64Array::new(value).to_vec())
}
