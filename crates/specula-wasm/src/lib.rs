//! # specula-wasm
//!
//! WebAssembly bindings of Specula for the npm package `specula`: the decoding engine
//! ([`specula_engine`]) and the draft/target models ([`specula_model`]) on WebGPU through
//! burn when the browser has an adapter, otherwise on burn's CPU backend inside wasm.
//!
//! - [`Engine`] loads the models (checking their SHA-256) and runs one generation at a
//!   time, one round per awaited `nextRound()`: the engine's step-wise decoder is driven
//!   with awaited model calls, so WebGPU read-back never blocks the page or worker.
//! - [`plan()`] is the token-level closed-form analysis, the report of `specula plan --json`
//!   with camelCase keys.
//! - Every object crossing the boundary is a plain object with camelCase keys; every
//!   failure is a thrown `Error` named `SpeculaError` with a `code` ([`WasmError`]).
//! - A lost GPU device (or a GPU model failure) moves both models to the CPU; the decoder
//!   keeps its tokens, so no text is lost.
#![deny(missing_docs)]

mod backend;
mod camel;
mod choice;
#[cfg(target_arch = "wasm32")]
mod clock;
mod engine;
mod error;
mod fields;
mod generation;
#[cfg(target_arch = "wasm32")]
mod gpu_probe;
mod js_options;
mod models;
pub mod plan;
pub mod untrained;

use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

pub use backend::{BackendChoice, BackendInfo, DraftBackend};
pub use camel::{camel_case, camel_json};
pub use engine::Engine;
pub use error::{Result, WasmError};
pub use generation::{Generation, RoundReport, Summary};
pub use models::{Bundles, Models};

/// Runs at instantiation: installs the panic hook, so a panic (a bug) shows its message in
/// the console, and runs the module's constructors once (see `build.rs`).
#[wasm_bindgen(start)]
pub fn install_panic_hook() {
    console_error_panic_hook::set_once();
    run_constructors();
}

/// Calls the exported `__wasm_call_ctors` once, through the instance's exports (no
/// `unsafe` needed). Idempotent, and called by every entry point that reaches burn too:
/// wasm-bindgen's test runner does not run start functions.
pub(crate) fn run_constructors() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static DONE: AtomicBool = AtomicBool::new(false);
    if cfg!(not(target_arch = "wasm32")) || DONE.swap(true, Ordering::SeqCst) {
        return;
    }
    use wasm_bindgen::JsCast;
    let ctors = js_sys::Reflect::get(&wasm_bindgen::exports(), &"__wasm_call_ctors".into());
    if let Some(ctors) = ctors
        .ok()
        .as_ref()
        .and_then(|f| f.dyn_ref::<js_sys::Function>())
    {
        // A constructor that throws is a bug in a dependency; the error reaches the console.
        if let Err(e) = ctors.call0(&JsValue::UNDEFINED) {
            web_console_error(&e);
        }
    }
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn web_console_error(value: &JsValue);
}

/// The package version.
#[wasm_bindgen]
#[must_use]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The closed-form analysis of one token-level scheme:
/// `plan({ method, target, draft, drafts?, kl?, rho?, normalize?, bug?, temperature?, topK?,
/// topP? })`.
///
/// # Errors
/// A `SpeculaError` naming the bad option or what the math refused.
#[wasm_bindgen]
pub fn plan(options: JsValue) -> std::result::Result<JsValue, JsValue> {
    let options = js_options::plan_options(&options)?;
    let report = plan::run(&options)?;
    Ok(camel::to_js(&report)?)
}

/// Checks generation options without running anything; returns the normalised settings
/// (`{ prompt, config }`, the engine's configuration).
///
/// # Errors
/// A `SpeculaError` naming the first bad option.
#[wasm_bindgen(js_name = validateGenerateOptions)]
pub fn validate_generate_options(options: JsValue) -> std::result::Result<JsValue, JsValue> {
    let checked = js_options::generate_options(&options)?
        .resolve()
        .map_err(WasmError::from)?;
    let json = serde_json::json!({ "prompt": checked.prompt, "config": checked.config });
    Ok(camel::to_js(&json)?)
}

/// Every default and limit of the `generate()` options (`specula_engine::options::limits`),
/// for controls that must offer exactly what the engine accepts.
///
/// # Errors
/// Never in practice (a `SpeculaError` if the value could not be converted).
#[wasm_bindgen]
pub fn limits() -> std::result::Result<JsValue, JsValue> {
    Ok(camel::to_js(&specula_engine::options::limits::LIMITS)?)
}

/// Seeded untrained model files `{ draftMeta, draftWeights, targetMeta, targetWeights }`
/// for `load`: `untrainedBundles({ seed = 0, size = "test" | "full" })`. For tests and
/// demos before trained weights are at hand.
///
/// # Errors
/// A `SpeculaError` for bad options.
#[wasm_bindgen(js_name = untrainedBundles)]
pub fn untrained_bundles(options: JsValue) -> std::result::Result<JsValue, JsValue> {
    let (seed, size) = if options.is_undefined() || options.is_null() {
        (0, untrained::Size::Test)
    } else {
        let f = fields::Fields::new(&options, "untrainedBundles options", &["seed", "size"])?;
        let seed = match f.number("seed")? {
            Some(s) => specula_engine::options::whole("seed", s, 0, u64::from(u32::MAX), "")
                .map_err(WasmError::from)?,
            None => 0,
        };
        (seed, untrained::Size::parse(f.string("size")?.as_deref())?)
    };
    run_constructors();
    let bundles = untrained::untrained_bundles(seed, size)?;
    let out = js_sys::Object::new();
    let meta = |b: &specula_model::ModelBundle| {
        serde_json::to_string(&b.meta).map_err(|e| {
            WasmError::Weights(format!("internal: cannot serialise a description: {e}"))
        })
    };
    let entries: [(&str, JsValue); 4] = [
        ("draftMeta", meta(&bundles.draft)?.into()),
        (
            "draftWeights",
            js_sys::Uint8Array::from(bundles.draft.weights.as_slice()).into(),
        ),
        ("targetMeta", meta(&bundles.target)?.into()),
        (
            "targetWeights",
            js_sys::Uint8Array::from(bundles.target.weights.as_slice()).into(),
        ),
    ];
    for (key, value) in entries {
        js_sys::Reflect::set(&out, &key.into(), &value)?;
    }
    Ok(out.into())
}
