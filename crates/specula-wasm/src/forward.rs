//! The bundled models as plain models for npm's `decode()`: `Engine.forward(role,
//! request)` answers one engine request (`{ committedLen, sequences, queries }`, the
//! request `decode()` hands a model's `forward`) with the loaded draft or target, so the
//! bundled pair runs behind the same interface as any caller's models.

use js_sys::{Array, Int32Array, Reflect};
use specula_engine::{ForwardRequest, Query, Role};
use wasm_bindgen::{JsCast, JsValue};

use crate::error::{Result, WasmError};

/// `"draft"` or `"target"`.
pub(crate) fn role(name: &str) -> Result<Role> {
    match name {
        "draft" => Ok(Role::Draft),
        "target" => Ok(Role::Target),
        other => Err(WasmError::option_field(
            "role",
            format!("role must be \"draft\" or \"target\", got {other:?}"),
        )),
    }
}

fn get(value: &JsValue, name: &str) -> JsValue {
    Reflect::get(value, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// A whole number in `0..=u32::MAX` (token ids and lengths).
fn whole(value: &JsValue, field: &str) -> Result<usize> {
    match value.as_f64() {
        Some(x) if x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&x) => Ok(x as usize),
        _ => Err(WasmError::option_field(
            field,
            format!(
                "{field} must be a whole number >= 0, got {}",
                describe(value)
            ),
        )),
    }
}

/// The request for `role` read from a JavaScript object.
pub(crate) fn request(role: Role, value: &JsValue) -> Result<ForwardRequest> {
    if !value.is_object() {
        return Err(WasmError::option_field(
            "request",
            format!(
                "request must be an object {{ committedLen, sequences, queries }}, got {}",
                describe(value)
            ),
        ));
    }
    let committed_len = whole(&get(value, "committedLen"), "committedLen")?;
    let sequences_value = get(value, "sequences");
    if !Array::is_array(&sequences_value) {
        return Err(WasmError::option_field(
            "sequences",
            "sequences must be an array of Int32Arrays or arrays of token ids",
        ));
    }
    let mut sequences = Vec::new();
    for (i, item) in Array::from(&sequences_value).iter().enumerate() {
        let field = format!("sequences[{i}]");
        let tokens = if let Some(typed) = item.dyn_ref::<Int32Array>() {
            typed
                .to_vec()
                .into_iter()
                .map(|t| t as i64)
                .collect::<Vec<i64>>()
        } else if Array::is_array(&item) {
            Array::from(&item)
                .iter()
                .map(|t| whole(&t, &field).map(|t| t as i64))
                .collect::<Result<Vec<i64>>>()?
        } else {
            return Err(WasmError::option_field(
                &field,
                format!("{field} must be an Int32Array or an array of token ids"),
            ));
        };
        let tokens = tokens
            .into_iter()
            .map(|t| {
                u32::try_from(t).map_err(|_| {
                    WasmError::option_field(
                        &field,
                        format!("{field} holds a negative token id {t}"),
                    )
                })
            })
            .collect::<Result<Vec<u32>>>()?;
        sequences.push(tokens);
    }
    let queries_value = get(value, "queries");
    if !Array::is_array(&queries_value) {
        return Err(WasmError::option_field(
            "queries",
            "queries must be an array of { sequence, prefixLen }",
        ));
    }
    let queries = Array::from(&queries_value)
        .iter()
        .enumerate()
        .map(|(i, q)| {
            Ok(Query {
                sequence: whole(&get(&q, "sequence"), &format!("queries[{i}].sequence"))?,
                prefix_len: whole(&get(&q, "prefixLen"), &format!("queries[{i}].prefixLen"))?,
            })
        })
        .collect::<Result<Vec<Query>>>()?;
    Ok(ForwardRequest {
        role,
        committed_len,
        sequences,
        queries,
    })
}

/// `request` as a JavaScript object `{ committedLen, sequences, queries }` (sequences as
/// `Int32Array`s): what [`request`] reads back, on the other side of a worker boundary.
pub(crate) fn to_js(request: &ForwardRequest) -> JsValue {
    let object = js_sys::Object::new();
    let set = |key: &str, value: &JsValue| {
        // Setting a property of a fresh plain object cannot fail.
        let _ = Reflect::set(&object, &JsValue::from_str(key), value);
    };
    set("committedLen", &JsValue::from(request.committed_len as f64));
    let sequences: Array = request
        .sequences
        .iter()
        .map(|s| {
            let ids: Vec<i32> = s.iter().map(|&t| t as i32).collect();
            JsValue::from(Int32Array::from(ids.as_slice()))
        })
        .collect();
    set("sequences", &sequences);
    let queries: Array = request
        .queries
        .iter()
        .map(|q| {
            let query = js_sys::Object::new();
            let _ = Reflect::set(&query, &"sequence".into(), &(q.sequence as f64).into());
            let _ = Reflect::set(&query, &"prefixLen".into(), &(q.prefix_len as f64).into());
            JsValue::from(query)
        })
        .collect();
    set("queries", &queries);
    object.into()
}

/// How a message quotes `value`, as the engine's option reader does.
fn describe(value: &JsValue) -> String {
    specula_engine::options::raw_from_js(value).describe()
}
