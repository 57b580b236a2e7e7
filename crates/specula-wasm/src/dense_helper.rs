//! The target's second Web Worker (load option `threads`): std for wasm32 has no threads
//! on stable Rust, so a second instance of the same module in another worker holds its
//! own copy of the target and computes half the output columns of each large dense call
//! (`specula_host::DenseRemote`; docs/host-forward-pass.md, "Two workers").
//!
//! This instance's side is [`JsDenseRemote`]: it calls `speculaDenseHelper.post` and
//! `.collect`, which the package's worker defines over a `SharedArrayBuffer` the two
//! workers share. The other side is [`DenseServer`]. Each column is computed by one
//! side with the same kernels, so the logits are those of one worker, bit for bit.

use std::sync::Arc;

use burn::tensor::Device;
use specula_gguf::GgufModel;
use specula_host::{DenseCall, DenseRemote, DeviceLm};
use specula_model::{ModelBundle, ModelRole};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::engine::Engine;
use crate::error::{Result, WasmError};
use crate::js_value::to_js;
use crate::models::{available_memory, check_role};

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
#[wasm_bindgen]
extern "C" {
    /// Hands a dense call to the second worker: `false` when it cannot take it.
    #[wasm_bindgen(catch, js_namespace = speculaDenseHelper, js_name = post)]
    fn helper_post(
        layer: u32,
        gelu: bool,
        rows: u32,
        d_out: u32,
        x: &[f32],
    ) -> std::result::Result<bool, JsValue>;

    /// The second worker's part of the posted call; `undefined` when it failed.
    #[wasm_bindgen(catch, js_namespace = speculaDenseHelper, js_name = collect)]
    fn helper_collect() -> std::result::Result<Option<Vec<f32>>, JsValue>;
}

/// The calling worker's end: the package's `speculaDenseHelper`. A throw from it (the
/// object missing, the other worker gone) counts as a refusal, so the call runs here.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsDenseRemote;

impl DenseRemote for JsDenseRemote {
    fn post(&self, call: DenseCall<'_>) -> bool {
        #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
        {
            helper_post(call.layer, call.gelu, call.rows, call.d_out, call.x).unwrap_or(false)
        }
        #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
        {
            let _ = call;
            false
        }
    }

    fn collect(&self) -> Option<Vec<f32>> {
        #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
        {
            helper_collect().ok().flatten()
        }
        #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
        {
            None
        }
    }
}

/// The second worker's side: its copy of the target, answering dense calls.
#[wasm_bindgen]
pub struct DenseServer {
    model: DeviceLm,
}

#[wasm_bindgen]
impl DenseServer {
    /// The bundled architecture's target from its description (JSON bytes) and weights,
    /// their checksums checked as `Engine.load` checks them.
    ///
    /// # Errors
    /// `bad_weights` naming what is wrong.
    #[wasm_bindgen(js_name = fromBundle)]
    pub fn from_bundle(meta: &[u8], weights: &[u8]) -> std::result::Result<DenseServer, JsValue> {
        crate::run_constructors();
        let bundle = ModelBundle::from_parts(meta, weights)
            .map_err(|e| WasmError::Weights(format!("target model: {e}")))?;
        check_role("target", &bundle.meta, ModelRole::Target)?;
        let model = DeviceLm::build(&bundle, &Device::flex())
            .map_err(|e| WasmError::Weights(format!("target model: {e}")))?;
        Ok(Self { model })
    }

    /// A Llama-family target from its GGUF file's bytes.
    ///
    /// # Errors
    /// `bad_weights` naming what is wrong with the file.
    #[wasm_bindgen(js_name = fromGguf)]
    pub fn from_gguf(bytes: Vec<u8>) -> std::result::Result<DenseServer, JsValue> {
        crate::run_constructors();
        let file = GgufModel::from_bytes(bytes, available_memory())
            .map_err(|e| WasmError::Weights(format!("target model: {e}")))?;
        let model = DeviceLm::from_gguf(&file, &Device::flex())
            .map_err(|e| WasmError::Weights(format!("target model: {e}")))?;
        Ok(Self { model })
    }

    /// This copy's part of a dense call (`specula_host::DenseCall`'s fields);
    /// `undefined` when the call does not fit the model.
    #[must_use]
    pub fn serve(
        &self,
        layer: u32,
        gelu: bool,
        rows: u32,
        d_out: u32,
        x: &[f32],
    ) -> Option<Vec<f32>> {
        self.model.serve_dense(DenseCall {
            layer,
            gelu,
            rows,
            d_out,
            x,
        })
    }
}

#[wasm_bindgen]
impl Engine {
    /// Web Workers for the loaded target's dense layers: 2 hands half of each large
    /// dense call to the second worker through `speculaDenseHelper` (which the caller
    /// defines first), 1 stops. `reason` is why one worker runs where more were asked
    /// (`BackendInfo.threadsReason`). Resolves to the updated `BackendInfo`.
    ///
    /// # Errors
    /// `invalid_option` (field `threads`) for other counts, or 2 with the target on
    /// WebGPU; `not_loaded`; `busy`.
    #[wasm_bindgen(js_name = setThreads)]
    pub fn set_threads(
        &self,
        threads: u32,
        reason: Option<String>,
    ) -> std::result::Result<JsValue, JsValue> {
        Ok(to_js(&self.set_threads_rs(threads, reason)?)?)
    }
}

impl Engine {
    /// [`set_threads`](Self::set_threads) from Rust.
    ///
    /// # Errors
    /// As `setThreads`.
    pub fn set_threads_rs(
        &self,
        threads: u32,
        reason: Option<String>,
    ) -> Result<crate::BackendInfo> {
        let remote: Option<Arc<dyn DenseRemote>> = match threads {
            1 => None,
            2 => Some(Arc::new(JsDenseRemote)),
            _ => {
                return Err(WasmError::option_field(
                    "threads",
                    format!("threads must be 1 or 2, got {threads}"),
                ));
            }
        };
        self.with_models_mut(|models| models.set_dense_remote(remote, reason))
    }
}

/// What the main worker handed its second worker (`Specula.threadCalls()`), counted in
/// JavaScript where the calls cross (web/src/dense-helper.js); declared here so that its
/// TypeScript type is generated with the others.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ThreadCalls {
    /// Dense calls handed to the second worker since the models were loaded.
    pub posted: u32,
    /// Those it answered; the others (it failed, or stopped answering) ran whole in the
    /// main worker.
    pub answered: u32,
    /// Calls too large for the exchange (a long prompt's pass through the head), run
    /// whole in the main worker.
    pub too_large: u32,
}
