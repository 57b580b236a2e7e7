//! Reading a plain JavaScript options object field by field, so every wrong type or
//! unknown name is reported with the field's name and what was given (a serde error
//! would only say "invalid type: string, expected f64").

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use specula_engine::options::show_number;

use crate::error::{Result, WasmError};

/// The fields of one options object.
pub(crate) struct Fields {
    object: JsValue,
    what: &'static str,
}

impl Fields {
    /// Checks that `value` is a plain object whose keys are all in `known`.
    pub(crate) fn new(value: &JsValue, what: &'static str, known: &[&str]) -> Result<Self> {
        if !value.is_object() || Array::is_array(value) || value.is_function() {
            return Err(WasmError::option_field(
                "options",
                format!(
                    "{what} must be an object such as {{ {} }}, got {}",
                    known.first().copied().unwrap_or("…"),
                    describe(value)
                ),
            ));
        }
        let object: &Object = value.unchecked_ref();
        for key in Object::keys(object).iter() {
            let Some(key) = key.as_string() else { continue };
            if !known.contains(&key.as_str()) {
                return Err(WasmError::option_field(
                    key.clone(),
                    format!(
                        "unknown option {key:?} in {what}; the options are: {}",
                        known.join(", ")
                    ),
                ));
            }
        }
        Ok(Self {
            object: value.clone(),
            what,
        })
    }

    /// The raw value; `undefined` and `null` mean "not given".
    fn get(&self, name: &str) -> Option<JsValue> {
        let value = Reflect::get(&self.object, &JsValue::from_str(name)).ok()?;
        (!value.is_undefined() && !value.is_null()).then_some(value)
    }

    /// Whether `name` is given (neither absent, `undefined` nor `null`).
    pub(crate) fn is_set(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    fn wrong(&self, name: &str, expected: &str, value: &JsValue) -> WasmError {
        WasmError::option_field(
            name,
            format!(
                "{name} in {} must be {expected}, got {}",
                self.what,
                describe(value)
            ),
        )
    }

    /// A number (NaN included: the range checks name it).
    pub(crate) fn number(&self, name: &str) -> Result<Option<f64>> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.wrong(name, "a number", &v)),
        }
    }

    /// A string.
    pub(crate) fn string(&self, name: &str) -> Result<Option<String>> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_string()
                .map(Some)
                .ok_or_else(|| self.wrong(name, "a string", &v)),
        }
    }

    /// An array (or typed array) of numbers.
    pub(crate) fn numbers(&self, name: &str) -> Result<Option<Vec<f64>>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        if let Some(typed) = v.dyn_ref::<js_sys::Float64Array>() {
            return Ok(Some(typed.to_vec()));
        }
        if let Some(typed) = v.dyn_ref::<js_sys::Float32Array>() {
            return Ok(Some(typed.to_vec().into_iter().map(f64::from).collect()));
        }
        if !Array::is_array(&v) {
            return Err(self.wrong(name, "an array of numbers", &v));
        }
        let array: &Array = v.unchecked_ref();
        array
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_f64().ok_or_else(|| {
                    WasmError::option_field(
                        format!("{name}[{i}]"),
                        format!(
                            "{name}[{i}] in {} must be a number, got {}",
                            self.what,
                            describe(&item)
                        ),
                    )
                })
            })
            .collect::<Result<Vec<f64>>>()
            .map(Some)
    }

    /// Bytes, from a `Uint8Array` or an `ArrayBuffer`.
    pub(crate) fn bytes(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        if let Some(array) = v.dyn_ref::<js_sys::Uint8Array>() {
            return Ok(Some(array.to_vec()));
        }
        if v.is_instance_of::<js_sys::ArrayBuffer>() {
            return Ok(Some(js_sys::Uint8Array::new(&v).to_vec()));
        }
        Err(self.wrong(name, "a Uint8Array or an ArrayBuffer", &v))
    }
}

/// A short description of a value for error messages: its type and, for scalars, itself.
pub(crate) fn describe(value: &JsValue) -> String {
    if value.is_undefined() {
        return "undefined".into();
    }
    if value.is_null() {
        return "null".into();
    }
    if let Some(s) = value.as_string() {
        let shown: String = s.chars().take(40).collect();
        return format!("the string {shown:?}");
    }
    if let Some(b) = value.as_bool() {
        return format!("the boolean {b}");
    }
    if let Some(n) = value.as_f64() {
        return format!("the number {}", show_number(n));
    }
    if value.is_bigint() {
        // Its digits, as the options parser quotes one.
        return specula_engine::options::raw_from_js(value).describe();
    }
    if Array::is_array(value) {
        return "an array".into();
    }
    if value.is_function() {
        return "a function".into();
    }
    if value.is_symbol() {
        return "a symbol".into();
    }
    "an object".into()
}
