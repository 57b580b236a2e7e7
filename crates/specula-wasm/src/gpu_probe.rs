//! Asks the browser for a WebGPU adapter before burn touches wgpu (which panics when
//! there is none), through plain `navigator.gpu` calls so it works in a page and in a
//! worker alike.

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::backend::Adapter;

fn get(target: &JsValue, name: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

fn text(target: &JsValue, name: &str) -> String {
    get(target, name).as_string().unwrap_or_default()
}

/// The adapter `navigator.gpu.requestAdapter()` gives, or why there is none.
pub(crate) async fn probe() -> Result<Adapter, String> {
    let navigator = get(&js_sys::global(), "navigator");
    let gpu = get(&navigator, "gpu");
    if gpu.is_undefined() || gpu.is_null() {
        return Err("navigator.gpu is missing (this browser or context has no WebGPU)".into());
    }
    let request = get(&gpu, "requestAdapter")
        .dyn_into::<Function>()
        .map_err(|_| "navigator.gpu.requestAdapter is not a function".to_string())?;
    let promise = request
        .call0(&gpu)
        .map_err(|e| format!("navigator.gpu.requestAdapter() threw: {e:?}"))?
        .dyn_into::<Promise>()
        .map_err(|_| "navigator.gpu.requestAdapter() did not return a promise".to_string())?;
    let adapter = JsFuture::from(promise)
        .await
        .map_err(|e| format!("navigator.gpu.requestAdapter() failed: {e:?}"))?;
    if adapter.is_null() || adapter.is_undefined() {
        return Err("navigator.gpu.requestAdapter() returned no adapter".into());
    }
    let info = get(&adapter, "info");
    let description = text(&info, "description");
    let vendor_arch = [text(&info, "vendor"), text(&info, "architecture")]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let name = if !description.is_empty() {
        description
    } else if !vendor_arch.is_empty() {
        vendor_arch
    } else {
        "unnamed WebGPU adapter".to_string()
    };
    // Newer browsers put the flag on the info object, older ones on the adapter.
    let is_fallback = get(&info, "isFallbackAdapter")
        .as_bool()
        .or_else(|| get(&adapter, "isFallbackAdapter").as_bool());
    Ok(Adapter {
        name,
        is_fallback,
        max_buffer: None,
    })
}
