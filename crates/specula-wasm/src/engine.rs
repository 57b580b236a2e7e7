//! `Engine`, the class JavaScript drives: load the models once, then for each generation
//! `start(options)` and await `nextRound()` until it gives `null`. Every asynchronous call
//! takes the models out of the shared state while it runs, so an overlapping call gets a
//! clear "busy" error instead of a borrow panic.

use std::cell::{Cell, Ref, RefCell};
use std::rc::Rc;

use js_sys::Promise;
use specula_engine::ForwardRequest;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen_futures::future_to_promise;

use crate::backend::{self, BackendChoice, BackendInfo, DraftBackend};
use crate::error::{Result, WasmError};
use crate::forward;
use crate::generation::{Generation, RoundReport, Summary};
use crate::js_options::{generate_options, load_options};
use crate::js_value::to_js;
use crate::models::{Bundles, Models, Sources};
use crate::stages::{self, StageReport};

#[derive(Default)]
struct State {
    models: Option<Models>,
    generation: Option<Generation>,
    busy: Option<&'static str>,
    /// A smaller GPU buffer limit than the device's, set by tests
    /// (`simulateGpuBufferLimit`).
    gpu_buffer_cap: Option<u64>,
}

/// The models and the current generation. One generation runs at a time.
#[wasm_bindgen]
#[derive(Default)]
pub struct Engine {
    state: Rc<RefCell<State>>,
    abort: Rc<Cell<bool>>,
    lose_gpu: Rc<Cell<bool>>,
}

#[wasm_bindgen]
impl Engine {
    /// An engine with no models; call `load` next.
    #[wasm_bindgen(constructor)]
    #[must_use]
    pub fn new() -> Self {
        crate::run_constructors();
        Self::default()
    }

    /// Loads both models (`{ backend, draftBackend, draftMeta, draftWeights, targetMeta,
    /// targetWeights }`, metas as JSON text, weights as bytes), checking their SHA-256
    /// checksums; or two Llama-family GGUF files (`{ backend, draftBackend, draftGguf,
    /// targetGguf }` as bytes, docs/real-models.md), refused unless they share a tokenizer
    /// and fit the memory left. Resolves to the backend report `{ backend, draftBackend, requested,
    /// adapter, isFallbackAdapter, reason }`.
    pub fn load(&self, options: JsValue) -> Promise {
        let parsed = load_options(&options);
        let state = Rc::clone(&self.state);
        future_to_promise(async move {
            let (choice, draft, sources) = parsed?;
            let info = load_into(&state, choice, draft, sources).await?;
            Ok(to_js(&info)?)
        })
    }

    /// Where the models run, or `undefined` before `load`.
    #[wasm_bindgen(js_name = backendInfo)]
    pub fn backend_info(&self) -> std::result::Result<JsValue, JsValue> {
        let state = self
            .state
            .try_borrow()
            .map_err(|_| WasmError::Busy("load"))?;
        match &state.models {
            Some(models) => Ok(to_js(models.info())?),
            None if state.busy.is_some() => {
                Err(WasmError::Busy(state.busy.unwrap_or("a call")).into())
            }
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// The characters the models know, in token order; empty for GGUF models, whose
    /// tokens are byte-level BPE pieces (see `tokenize` and `detokenize`).
    pub fn alphabet(&self) -> std::result::Result<String, JsValue> {
        self.with_models(|models| {
            Ok(models
                .tokenizer()
                .alphabet()
                .map(|a| a.iter().collect())
                .unwrap_or_default())
        })
    }

    /// Every token's text, in id order: the bundled pair's characters, or a GGUF model's
    /// byte-level BPE pieces as text (`" the"`, `"\n"`; U+FFFD for bytes that are not
    /// UTF-8 alone), for showing tokens one by one.
    #[wasm_bindgen(js_name = tokenTexts)]
    pub fn token_texts(&self) -> std::result::Result<Vec<String>, JsValue> {
        self.with_models(|models| Ok(models.tokenizer().token_texts()))
    }

    /// The number of tokens the models know (the alphabet's length for the bundled pair,
    /// the BPE vocabulary for GGUF models).
    #[wasm_bindgen(js_name = vocabSize)]
    pub fn vocab_size(&self) -> std::result::Result<f64, JsValue> {
        self.with_models(|models| Ok(models.vocab() as f64))
    }

    /// Starts a generation (replacing any finished or idle one); throws on invalid options,
    /// before `load`, or while a call is running.
    pub fn start(&self, options: JsValue) -> std::result::Result<(), JsValue> {
        let options = generate_options(&options)?;
        let mut state = self
            .state
            .try_borrow_mut()
            .map_err(|_| WasmError::Busy("a call"))?;
        if let Some(what) = state.busy {
            return Err(WasmError::Busy(what).into());
        }
        let state = &mut *state;
        let models = state.models.as_mut().ok_or(WasmError::NotLoaded)?;
        let generation = Generation::start(models, options.resolve().map_err(WasmError::from)?)?;
        state.generation = Some(generation);
        self.abort.set(false);
        Ok(())
    }

    /// Runs the current generation to the end of its next round. Resolves to the round
    /// (`{ round, text, tokens, counts, backend, fallback, finish, trace }`) or `null` once
    /// the generation is over (finished or aborted).
    #[wasm_bindgen(js_name = nextRound)]
    pub fn next_round(&self) -> Promise {
        let state = Rc::clone(&self.state);
        let abort = Rc::clone(&self.abort);
        let lose_gpu = Rc::clone(&self.lose_gpu);
        future_to_promise(async move {
            let round = next_round_in(&state, &abort, &lose_gpu).await?;
            match round {
                Some(round) => Ok(to_js(&round)?),
                None => Ok(JsValue::NULL),
            }
        })
    }

    /// Stops the current generation before its next model call; the pending `nextRound`
    /// resolves to `null`. The models stay loaded and the next `start` works as usual.
    pub fn abort(&self) {
        self.abort.set(true);
    }

    /// The current generation so far: `{ prompt, text, tokens, finish, aborted, metrics,
    /// summary, backend }`.
    pub fn summary(&self) -> std::result::Result<JsValue, JsValue> {
        Ok(to_js(&summary_of(&*self.idle()?)?)?)
    }

    /// One engine request answered by the loaded `role` model (`"draft"` or `"target"`):
    /// the request npm's `decode()` hands a model's `forward`, `{ committedLen,
    /// sequences, queries }`. Resolves to a `Float32Array` of `queries × vocab` logits, so
    /// the bundled pair runs behind the same interface as a caller's models.
    pub fn forward(&self, role: String, request: JsValue) -> Promise {
        let parsed = forward::role(&role).and_then(|r| forward::request(r, &request));
        let state = Rc::clone(&self.state);
        future_to_promise(async move {
            let request = parsed?;
            let logits = forward_in(&state, &request).await?;
            Ok(js_sys::Float32Array::from(logits.as_slice()).into())
        })
    }

    /// The lab: the exact distribution of generated position `settings.position` (1 or 2,
    /// default 1) under `options` (as for `start`, less `maxTokens` and `stop`), worked
    /// out from both models at the prompt, with the checked `settings.runs` (default 1000)
    /// and their seeds; `settings` are the engine's `SampleSettings` (`{ runs, position }`).
    /// Resolves to `{ position, kind, expected, target, tvFromTarget, runs, firstSeed,
    /// runTokens }`; the runs are then ordinary generations with `maxTokens: runTokens`
    /// and seeds `firstSeed + i`, counted by the caller and tested with `fit`.
    pub fn exact(&self, options: JsValue, settings: JsValue) -> Promise {
        let parsed = crate::lab::request(&options, &settings);
        let state = Rc::clone(&self.state);
        future_to_promise(async move {
            let request = parsed?;
            let exact = hold(&state, "exact", async |models: &mut Models| {
                crate::lab::exact(models, &request).await
            })
            .await?;
            Ok(to_js(&exact)?)
        })
    }

    /// The token ids of `text` (one per character, the models' alphabet in order).
    ///
    /// # Errors
    /// `bad_prompt` (field `prompt`) for a character outside the alphabet.
    pub fn tokenize(&self, text: &str) -> std::result::Result<js_sys::Int32Array, JsValue> {
        self.with_models(|models| {
            let tokens = crate::generation::encode_prompt(models.tokenizer(), text)?;
            let ids: Vec<i32> = tokens.iter().map(|&t| t as i32).collect();
            Ok(js_sys::Int32Array::from(ids.as_slice()))
        })
    }

    /// The text of token ids (the inverse of `tokenize`).
    ///
    /// # Errors
    /// `invalid_option` (field `tokens`) for an id outside the alphabet.
    pub fn detokenize(&self, tokens: Vec<i32>) -> std::result::Result<String, JsValue> {
        self.with_models(|models| {
            let ids = tokens
                .iter()
                .map(|&t| u32::try_from(t))
                .collect::<std::result::Result<Vec<u32>, _>>()
                .map_err(|_| WasmError::option_field("tokens", "tokens must be token ids >= 0"))?;
            models.tokenizer().decode(&ids).ok_or_else(|| {
                WasmError::option_field("tokens", "tokens: an id lies outside the vocabulary")
            })
        })
    }

    /// Turns the stage profile of the loaded `role` model's host forward pass (`"draft"`
    /// or `"target"`) on, from totals of zero, or off (`on`, a boolean): each later
    /// forward pass adds each stage's time (`performance.now()`) to the totals that
    /// `stageTimes` reads. A model rebuilt on the CPU after a WebGPU failure starts with
    /// it off.
    ///
    /// # Errors
    /// `invalid_option` (field `role`) for another role or a model on WebGPU, which has
    /// no host pass; (field `on`) for an `on` that is not a boolean; `not_loaded`; `busy`.
    #[wasm_bindgen(js_name = profileStages)]
    pub fn profile_stages(&self, role: &str, on: JsValue) -> std::result::Result<(), JsValue> {
        let on = stages::on_option(&on)?;
        Ok(self.profile_stages_rs(forward::role(role)?, on)?)
    }

    /// The stage profile's totals for the loaded `role` model: `{ enabled, passes,
    /// positions, totalMs, stagesMs }`; `options` `{ reset }` (default false) sets them
    /// back to zero after reading.
    ///
    /// # Errors
    /// As `profileStages`; `invalid_option` naming the option for options other than
    /// `{ reset: boolean }`.
    #[wasm_bindgen(js_name = stageTimes)]
    pub fn stage_times(
        &self,
        role: &str,
        options: JsValue,
    ) -> std::result::Result<JsValue, JsValue> {
        let reset = stages::reset_option(&options)?;
        Ok(to_js(&self.stage_times_rs(forward::role(role)?, reset)?)?)
    }

    /// Acts as if the browser reported this engine's GPU device lost: the next model call
    /// moves the models to the CPU and the generation goes on there. For tests of the
    /// fallback; other engines on the page keep the GPU.
    #[wasm_bindgen(js_name = simulateDeviceLoss)]
    pub fn simulate_device_loss(&self) {
        self.lose_gpu.set(true);
    }

    /// Acts as if this engine's WebGPU device bound at most `bytes` in one buffer, for
    /// the next loads: GGUF models with a larger matrix then go to the CPU (`auto`, with
    /// the reason) or are refused (`webgpu`). For tests of that check.
    #[wasm_bindgen(js_name = simulateGpuBufferLimit)]
    pub fn simulate_gpu_buffer_limit(&self, bytes: f64) -> std::result::Result<(), JsValue> {
        let mut state = self
            .state
            .try_borrow_mut()
            .map_err(|_| WasmError::Busy("a call"))?;
        state.gpu_buffer_cap = Some(bytes.max(0.0) as u64);
        Ok(())
    }
}

impl Engine {
    /// The state, unless a call is running or a load or model call is in flight.
    fn idle(&self) -> Result<Ref<'_, State>> {
        let state = self
            .state
            .try_borrow()
            .map_err(|_| WasmError::Busy("a call"))?;
        match state.busy {
            Some(what) => Err(WasmError::Busy(what)),
            None => Ok(state),
        }
    }

    fn with_models<T>(
        &self,
        f: impl FnOnce(&Models) -> Result<T>,
    ) -> std::result::Result<T, JsValue> {
        let state = self.idle()?;
        let models = state.models.as_ref().ok_or(WasmError::NotLoaded)?;
        Ok(f(models)?)
    }

    /// [`load`](Self::load) from Rust, with bundles already checked.
    ///
    /// # Errors
    /// As `load`.
    pub async fn load_bundles(
        &self,
        choice: BackendChoice,
        draft: DraftBackend,
        bundles: Bundles,
    ) -> Result<BackendInfo> {
        load_into(&self.state, choice, draft, bundles.into()).await
    }

    /// [`start`](Self::start) from Rust.
    ///
    /// # Errors
    /// As `start`.
    pub fn start_with(&self, options: &specula_engine::options::DecodeOptions) -> Result<()> {
        self.with_idle_state(|state| {
            let models = state.models.as_mut().ok_or(WasmError::NotLoaded)?;
            state.generation = Some(Generation::start(models, options.resolve()?)?);
            Ok(())
        })?;
        self.abort.set(false);
        Ok(())
    }

    /// [`next_round`](Self::next_round) from Rust.
    ///
    /// # Errors
    /// As `nextRound`.
    pub async fn next_round_rs(&self) -> Result<Option<RoundReport>> {
        next_round_in(&self.state, &self.abort, &self.lose_gpu).await
    }

    /// [`profile_stages`](Self::profile_stages) from Rust.
    ///
    /// # Errors
    /// As `profileStages`.
    pub fn profile_stages_rs(&self, role: specula_engine::Role, on: bool) -> Result<()> {
        self.with_models_mut(|models| {
            stages::switch(stages::profile_mut(models.model_mut(role), role)?, on);
            Ok(())
        })
    }

    /// [`stage_times`](Self::stage_times) from Rust.
    ///
    /// # Errors
    /// As `stageTimes`.
    pub fn stage_times_rs(&self, role: specula_engine::Role, reset: bool) -> Result<StageReport> {
        self.with_models_mut(|models| {
            let profile = stages::profile_mut(models.model_mut(role), role)?;
            let report = StageReport::of(profile);
            if reset {
                profile.reset();
            }
            Ok(report)
        })
    }

    /// `f` on the engine's state, unless a call holds it ("busy").
    fn with_idle_state<T>(&self, f: impl FnOnce(&mut State) -> Result<T>) -> Result<T> {
        let mut state = self
            .state
            .try_borrow_mut()
            .map_err(|_| WasmError::Busy("a call"))?;
        if let Some(what) = state.busy {
            return Err(WasmError::Busy(what));
        }
        f(&mut state)
    }

    /// `f` on the loaded models, unless a call holds them.
    pub(crate) fn with_models_mut<T>(&self, f: impl FnOnce(&mut Models) -> Result<T>) -> Result<T> {
        self.with_idle_state(|state| f(state.models.as_mut().ok_or(WasmError::NotLoaded)?))
    }

    /// [`summary`](Self::summary) from Rust.
    ///
    /// # Errors
    /// As `summary`.
    pub fn summary_rs(&self) -> Result<Summary> {
        let state = self
            .state
            .try_borrow()
            .map_err(|_| WasmError::Busy("a call"))?;
        summary_of(&state)
    }
}

/// The current generation's summary.
fn summary_of(state: &State) -> Result<Summary> {
    let models = state.models.as_ref().ok_or(WasmError::NotLoaded)?;
    let generation = state.generation.as_ref().ok_or(WasmError::NotStarted)?;
    Ok(generation.summary(models.info()))
}

async fn load_into(
    state: &Rc<RefCell<State>>,
    choice: BackendChoice,
    draft: DraftBackend,
    sources: Sources,
) -> Result<BackendInfo> {
    let cap;
    {
        let mut s = state
            .try_borrow_mut()
            .map_err(|_| WasmError::Busy("a call"))?;
        if let Some(what) = s.busy {
            return Err(WasmError::Busy(what));
        }
        s.busy = Some("load");
        cap = s.gpu_buffer_cap;
    }
    let built = match backend::select(choice).await {
        Ok((device, info)) => match sources.gpu_misfit(&info, draft, cap) {
            None => Models::build(sources, &device, info, draft),
            // Said before any upload: with "auto" the models go to the CPU with the reason.
            Some(reason) if choice == BackendChoice::Auto => {
                let info = backend::BackendInfo::cpu(choice, Some(reason));
                Models::build(sources, &burn::tensor::Device::flex(), info, draft)
            }
            Some(reason) => Err(WasmError::Backend(format!(
                "backend \"webgpu\" cannot hold these models: {reason}; use backend \"cpu\" \
                 or \"auto\""
            ))),
        },
        Err(e) => Err(e),
    };
    let mut s = state
        .try_borrow_mut()
        .map_err(|_| WasmError::Busy("a call"))?;
    s.busy = None;
    let models = built?;
    let info = models.info().clone();
    s.models = Some(models);
    s.generation = None;
    Ok(info)
}

/// Runs `f` on the loaded models, holding them (busy `what`) meanwhile, so an overlapping
/// call gets a clear "busy" error.
async fn hold<T>(
    state: &Rc<RefCell<State>>,
    what: &'static str,
    f: impl AsyncFnOnce(&mut Models) -> Result<T>,
) -> Result<T> {
    let mut models = {
        let mut s = state
            .try_borrow_mut()
            .map_err(|_| WasmError::Busy("a call"))?;
        if let Some(what) = s.busy {
            return Err(WasmError::Busy(what));
        }
        let models = s.models.take().ok_or(WasmError::NotLoaded)?;
        s.busy = Some(what);
        models
    };
    let result = f(&mut models).await;
    let mut s = state
        .try_borrow_mut()
        .map_err(|_| WasmError::Busy("a call"))?;
    s.busy = None;
    s.models = Some(models);
    result
}

/// Answers `request` with the loaded models.
async fn forward_in(state: &Rc<RefCell<State>>, request: &ForwardRequest) -> Result<Vec<f32>> {
    hold(state, "forward", async |models: &mut Models| {
        Ok(models.forward(request.role, request).await?.logits)
    })
    .await
}

async fn next_round_in(
    state: &Rc<RefCell<State>>,
    abort: &Cell<bool>,
    lose_gpu: &Cell<bool>,
) -> Result<Option<RoundReport>> {
    let (mut models, mut generation) = {
        let mut s = state
            .try_borrow_mut()
            .map_err(|_| WasmError::Busy("a call"))?;
        if let Some(what) = s.busy {
            return Err(WasmError::Busy(what));
        }
        if s.models.is_none() {
            return Err(WasmError::NotLoaded);
        }
        let generation = s.generation.take().ok_or(WasmError::NotStarted)?;
        let models = s.models.take().ok_or(WasmError::NotLoaded)?;
        s.busy = Some("nextRound");
        (models, generation)
    };
    if lose_gpu.replace(false) {
        models.simulate_device_loss();
    }
    let result = generation.next_round(&mut models, abort).await;
    let mut s = state
        .try_borrow_mut()
        .map_err(|_| WasmError::Busy("a call"))?;
    s.busy = None;
    s.models = Some(models);
    s.generation = Some(generation);
    result
}
