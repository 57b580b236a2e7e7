//! `DraftEngine`, the class a draft worker drives under parallel drafting: the draft model
//! on this module's CPU and the decoder, the target answered by another worker through a
//! JavaScript function (docs/parallel-draft.md). Its generations are [`Engine`]'s
//! (`start`, `nextRound`, `abort`, `summary`), over a [`RemotePair`].
//!
//! [`Engine`]: crate::Engine

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::Rc;

use burn::tensor::Device;
use js_sys::{Float32Array, Function, Promise, Reflect};
use specula_engine::ForwardRequest;
use specula_engine::options::{DraftLoadOptions, ModelFiles};
use specula_host::{DeviceLm, ModelTokenizer};
use specula_model::{ModelBundle, ModelMeta, ModelRole};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{JsFuture, future_to_promise};

use crate::backend::{BackendChoice, BackendInfo};
use crate::error::{Result, WasmError};
use crate::generation::Generation;
use crate::js_options::{generate_options, raw_with_bytes};
use crate::js_value::to_js;
use crate::models::{GgufPair, check_alphabets, check_role};
use crate::remote::{RemotePair, RemoteTarget};

/// The bundled architecture's draft from its description and weights, checked against
/// the target's description: the model on this module's CPU, the shared tokenizer and
/// the context both read.
///
/// # Errors
/// `bad_weights` for files that do not check.
fn bundled_draft(
    draft_meta: &str,
    draft_weights: &[u8],
    target_meta: &str,
) -> Result<(DeviceLm, ModelTokenizer, usize)> {
    let draft = ModelBundle::from_parts(draft_meta.as_bytes(), draft_weights)
        .map_err(|e| WasmError::Weights(format!("draft model: {e}")))?;
    let target = ModelMeta::from_json(target_meta.as_bytes())
        .map_err(|e| WasmError::Weights(format!("target model: {e}")))?;
    check_role("draft", &draft.meta, ModelRole::Draft)?;
    check_role("target", &target, ModelRole::Target)?;
    check_alphabets(&draft.meta, &target)?;
    let context = draft.meta.config.max_seq.min(target.config.max_seq);
    let model = DeviceLm::build(&draft, &Device::flex())
        .map_err(|e| WasmError::Weights(format!("draft model: {e}")))?;
    Ok((model, ModelTokenizer::Chars(target.tokenizer), context))
}

/// What the target's answers said of where it runs.
#[derive(Debug, Default)]
struct TargetStatus {
    on_gpu: bool,
    fallback: Option<String>,
}

/// The target behind a JavaScript function `target(request)` resolving to `{ logits,
/// backend, fallback }`, and `pause()` resolving after one turn of the event loop.
#[derive(Debug)]
pub struct JsTarget {
    call: Function,
    pause: Function,
    status: Rc<RefCell<TargetStatus>>,
}

fn model_failed(error: &JsValue) -> WasmError {
    let message = Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| error.as_string())
        .unwrap_or_else(|| "no message".into());
    WasmError::Model(format!("the target model failed: {message}"))
}

impl RemoteTarget for JsTarget {
    type Call = Pin<Box<dyn Future<Output = Result<Vec<f32>>>>>;

    fn call(&mut self, request: &ForwardRequest) -> Result<Self::Call> {
        let promise = self
            .call
            .call1(&JsValue::NULL, &crate::forward::to_js(request))
            .map_err(|e| model_failed(&e))?;
        let answer = JsFuture::from(Promise::resolve(&promise));
        let status = Rc::clone(&self.status);
        Ok(Box::pin(async move {
            let answer = answer.await.map_err(|e| model_failed(&e))?;
            let get = |key: &str| Reflect::get(&answer, &key.into()).unwrap_or_default();
            let logits = get("logits")
                .dyn_into::<Float32Array>()
                .map_err(|_| WasmError::Internal("the target's answer has no logits".into()))?;
            let mut status = status.borrow_mut();
            status.on_gpu = get("backend").as_string().as_deref() == Some("webgpu");
            if let Some(reason) = get("fallback").as_string() {
                status.fallback = Some(reason);
            }
            Ok(logits.to_vec())
        }))
    }

    async fn pause(&mut self) {
        if let Ok(promise) = self.pause.call0(&JsValue::NULL) {
            // A pause that fails only means no turn was taken.
            let _ = JsFuture::from(Promise::resolve(&promise)).await;
        }
    }

    fn backend(&self) -> &'static str {
        if self.status.borrow().on_gpu {
            "webgpu"
        } else {
            "cpu"
        }
    }

    fn take_fallback(&mut self) -> Option<String> {
        self.status.borrow_mut().fallback.take()
    }
}

#[derive(Default)]
struct State {
    pair: Option<RemotePair<JsTarget>>,
    generation: Option<Generation>,
    running: bool,
}

/// The draft model and the decoder, with the target in another worker.
#[wasm_bindgen]
#[derive(Default)]
pub struct DraftEngine {
    state: Rc<RefCell<State>>,
    abort: Rc<Cell<bool>>,
}

#[wasm_bindgen]
impl DraftEngine {
    /// An engine with no model; call `load` next.
    #[wasm_bindgen(constructor)]
    #[must_use]
    pub fn new() -> Self {
        crate::run_constructors();
        Self::default()
    }

    /// Builds the draft model on the CPU (`{ draftMeta, draftWeights, targetMeta, target,
    /// pause, targetBackend }`: the draft's description and weights, checked against
    /// their SHA-256; the target's description, for its alphabet and context; `target(request)`
    /// resolving to `{ logits, backend, fallback }`; `pause()` resolving after one turn
    /// of the event loop; where the target runs now, `"webgpu"` or `"cpu"`). For a GGUF
    /// pair, `draftGguf` and `targetGguf` (bytes) replace the first three: the target's
    /// file gives the shared tokenizer and its context, its weights are not read.
    ///
    /// # Errors
    /// `invalid_option` naming a missing or mistyped field; `bad_weights` when the files
    /// do not check or the two models' alphabets (tokenizers) differ; `busy` while a
    /// generation runs.
    pub fn load(&self, options: JsValue) -> std::result::Result<(), JsValue> {
        let load = DraftLoadOptions::from_raw(raw_with_bytes(&options))
            .and_then(DraftLoadOptions::resolve)
            .map_err(WasmError::from)?;
        // Checked to be functions just now.
        let function = |name: &str| {
            Reflect::get(&options, &name.into())
                .ok()
                .and_then(|v| v.dyn_into::<Function>().ok())
                .ok_or_else(|| WasmError::option_field(name, format!("{name} must be a function")))
        };
        let (call, pause) = (function("target")?, function("pause")?);
        let on_gpu = load.target_on_gpu;
        let (model, tokenizer, context) = match load.files {
            ModelFiles::Gguf { draft, target } => {
                // The target's file is read for its tokenizer and context only.
                let pair = GgufPair::from_files(draft, target)?;
                let model = pair.build(specula_engine::Role::Draft, &Device::flex())?;
                let context = model.max_seq().min(pair.target_context());
                (model, pair.tokenizer().clone(), context)
            }
            ModelFiles::Bundled {
                draft_meta,
                draft_weights,
                target_meta,
                ..
            } => bundled_draft(&draft_meta, &draft_weights, &target_meta)?,
        };
        let status = Rc::new(RefCell::new(TargetStatus {
            on_gpu,
            fallback: None,
        }));
        let remote = JsTarget {
            call,
            pause,
            status,
        };
        let mut state = self.idle()?;
        state.pair = Some(RemotePair::new(model, tokenizer, context, remote));
        state.generation = None;
        Ok(())
    }

    /// Starts a generation, as `Engine.start`.
    ///
    /// # Errors
    /// As `Engine.start`.
    pub fn start(&self, options: JsValue) -> std::result::Result<(), JsValue> {
        let options = generate_options(&options)?;
        let mut state = self.idle()?;
        let state = &mut *state;
        let pair = state.pair.as_mut().ok_or(WasmError::NotLoaded)?;
        let generation = Generation::start(pair, options.resolve().map_err(WasmError::from)?)?;
        state.generation = Some(generation);
        self.abort.set(false);
        Ok(())
    }

    /// Runs the generation to the end of its next round, as `Engine.nextRound`.
    #[wasm_bindgen(js_name = nextRound)]
    pub fn next_round(&self) -> Promise {
        let state = Rc::clone(&self.state);
        let abort = Rc::clone(&self.abort);
        future_to_promise(async move {
            let (mut pair, mut generation) = {
                let mut s = state
                    .try_borrow_mut()
                    .map_err(|_| WasmError::Busy("nextRound"))?;
                if s.running {
                    return Err(WasmError::Busy("nextRound").into());
                }
                let pair = s.pair.take().ok_or(WasmError::NotLoaded)?;
                let Some(generation) = s.generation.take() else {
                    s.pair = Some(pair);
                    return Err(WasmError::NotStarted.into());
                };
                s.running = true;
                (pair, generation)
            };
            let result = generation.next_round(&mut pair, &abort).await;
            let mut s = state.borrow_mut();
            s.running = false;
            s.pair = Some(pair);
            s.generation = Some(generation);
            match result? {
                Some(round) => Ok(to_js(&round)?),
                None => Ok(JsValue::NULL),
            }
        })
    }

    /// Stops the generation before its next model call, as `Engine.abort`.
    pub fn abort(&self) {
        self.abort.set(true);
    }

    /// The generation so far, as `Engine.summary`; its `backend` says only where this
    /// side knows the target runs (the caller has the rest).
    ///
    /// # Errors
    /// `busy` while a round runs; `not_loaded`, `not_started`.
    pub fn summary(&self) -> std::result::Result<JsValue, JsValue> {
        let state = self.idle()?;
        let pair = state.pair.as_ref().ok_or(WasmError::NotLoaded)?;
        let generation = state.generation.as_ref().ok_or(WasmError::NotStarted)?;
        let mut info = BackendInfo::cpu(BackendChoice::Cpu, None);
        info.backend = crate::pair::Pair::backend(pair);
        Ok(to_js(&generation.summary(&info))?)
    }
}

impl DraftEngine {
    fn idle(&self) -> Result<std::cell::RefMut<'_, State>> {
        let state = self
            .state
            .try_borrow_mut()
            .map_err(|_| WasmError::Busy("a call"))?;
        if state.running {
            return Err(WasmError::Busy("nextRound"));
        }
        Ok(state)
    }
}
