//! The bindings: [`Session`] as a JavaScript class. Values cross as typed arrays (token
//! ids as `Int32Array`, logits as `Float32Array`) and reports as JSON text, which
//! `JSON.parse` reads faster than objects built field by field across the boundary.

use js_sys::Reflect;
use serde::Serialize;
use specula_engine::options::raw_from_js;
use specula_engine::{ApiError, ErrorCode, Role};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::session::{Next, Pending, Session};

/// A running `decode()`: the engine's step-wise decoder, driven from JavaScript.
#[wasm_bindgen]
#[derive(Debug)]
pub struct DecodeSession {
    session: Session,
}

#[wasm_bindgen]
impl DecodeSession {
    /// Checks `options` (the engine's decoding options, prompt and stop list as token
    /// ids) for models of `vocab` tokens.
    ///
    /// # Errors
    /// A thrown `SpeculaError`: `invalid_option` naming the option, `bad_model` for a
    /// vocabulary that is not a whole number from 1 to 2^32.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &JsValue, vocab: f64) -> Result<DecodeSession, JsValue> {
        // JavaScript checks vocabSize first, with the model's name; this is the backstop.
        let vocab = if vocab.is_finite() && vocab.fract() == 0.0 && vocab >= 0.0 {
            vocab as usize
        } else {
            0
        };
        let session = Session::new(raw_from_js(options), vocab).map_err(throwable)?;
        #[cfg(target_arch = "wasm32")]
        let session = session.with_clock(PerformanceClock);
        Ok(Self { session })
    }

    /// The model to start next: 1 for the draft, 2 for the target (its request is then
    /// running until answered), 3 when every request wanted now is already running
    /// (supply an answer first), 0 when decoding is over (an answer still running is no
    /// longer needed). Call again after each start: under parallel drafting both models
    /// may have a request at once.
    ///
    /// # Errors
    /// `internal`, never expected.
    #[wasm_bindgen(js_name = nextModel)]
    pub fn next_model(&mut self) -> Result<u8, JsValue> {
        Ok(match self.session.start_next().map_err(throwable)? {
            Next::Done => 0,
            Next::Start(Role::Draft) => DRAFT,
            Next::Start(Role::Target) => TARGET,
            Next::Wait => 3,
        })
    }

    /// How many `logits(tokens, count)` calls answer `model`'s running request (1 draft,
    /// 2 target, as `nextModel` names them; the accessors below take it too).
    #[wasm_bindgen(js_name = callCount)]
    pub fn call_count(&self, model: u8) -> usize {
        self.running(model).map_or(0, |p| p.calls.calls.len())
    }

    /// The tokens of call `i`.
    #[wasm_bindgen(js_name = callTokens)]
    pub fn call_tokens(&self, model: u8, i: usize) -> Vec<i32> {
        self.running(model)
            .and_then(|p| {
                let call = p.calls.calls.get(i)?;
                let tokens = p.request.sequences.get(call.sequence)?.get(..call.len)?;
                Some(ids(tokens))
            })
            .unwrap_or_default()
    }

    /// The rows (`count`) of call `i`.
    #[wasm_bindgen(js_name = callRows)]
    pub fn call_rows(&self, model: u8, i: usize) -> usize {
        self.running(model)
            .and_then(|p| p.calls.calls.get(i))
            .map_or(0, |c| c.count)
    }

    /// The running request's committed length (tokens every sequence starts with).
    #[wasm_bindgen(js_name = requestCommittedLen)]
    pub fn request_committed_len(&self, model: u8) -> usize {
        self.running(model).map_or(0, |p| p.request.committed_len)
    }

    /// The running request's token sequences.
    #[wasm_bindgen(js_name = sequenceCount)]
    pub fn sequence_count(&self, model: u8) -> usize {
        self.running(model).map_or(0, |p| p.request.sequences.len())
    }

    /// Sequence `i` of the running request.
    pub fn sequence(&self, model: u8, i: usize) -> Vec<i32> {
        self.running(model)
            .and_then(|p| p.request.sequences.get(i))
            .map(|s| ids(s))
            .unwrap_or_default()
    }

    /// The running request's queries, flattened: `[sequence, prefixLen, …]`.
    pub fn queries(&self, model: u8) -> Vec<u32> {
        self.running(model).map_or_else(Vec::new, |p| {
            p.request
                .queries
                .iter()
                .flat_map(|q| [q.sequence, q.prefix_len])
                .map(|x| u32::try_from(x).unwrap_or(u32::MAX))
                .collect()
        })
    }

    /// Answers `model`'s running request with its calls' answers end to end; the round's
    /// report (JSON) when this completed a round.
    ///
    /// # Errors
    /// `bad_model` naming the model for answers the engine refuses; `internal` for a
    /// model that runs no request.
    #[wasm_bindgen(js_name = supplyCalls)]
    pub fn supply_calls(&mut self, model: u8, answers: &[f32]) -> Result<Option<String>, JsValue> {
        let round = role(model)
            .and_then(|role| self.session.supply_calls(role, answers))
            .map_err(throwable)?;
        round.as_ref().map(json).transpose()
    }

    /// Answers `model`'s running request with one row per query, in query order
    /// (`forward`).
    ///
    /// # Errors
    /// As `supplyCalls`.
    #[wasm_bindgen(js_name = supplyQueries)]
    pub fn supply_queries(
        &mut self,
        model: u8,
        logits: Vec<f32>,
    ) -> Result<Option<String>, JsValue> {
        let round = role(model)
            .and_then(|role| self.session.supply_queries(role, logits))
            .map_err(throwable)?;
        round.as_ref().map(json).transpose()
    }

    /// Tokens committed so far, prompt included (what `rollback` is told).
    #[wasm_bindgen(js_name = committedLen)]
    pub fn committed_len(&self) -> usize {
        self.session.committed_len()
    }

    /// The run so far (JSON).
    ///
    /// # Errors
    /// `internal`, never expected.
    pub fn summary(&self, aborted: bool) -> Result<String, JsValue> {
        json(&self.session.summary(aborted))
    }
}

impl DecodeSession {
    fn running(&self, model: u8) -> Option<&Pending> {
        // `nextModel()` has built it; reading it does not advance the decoder.
        self.session.running(role(model).ok()?)
    }
}

/// `nextModel()`'s names of the models.
const DRAFT: u8 = 1;
const TARGET: u8 = 2;

/// The role `nextModel()` calls `model`.
fn role(model: u8) -> Result<Role, ApiError> {
    match model {
        DRAFT => Ok(Role::Draft),
        TARGET => Ok(Role::Target),
        _ => Err(ApiError::new(
            ErrorCode::Internal,
            format!("no model {model}: 1 is the draft, 2 the target"),
        )),
    }
}

/// Token ids as JavaScript's `Int32Array` holds them (vocabularies stay below 2^31 there).
fn ids(tokens: &[u32]) -> Vec<i32> {
    tokens
        .iter()
        .map(|&t| i32::try_from(t).unwrap_or(i32::MAX))
        .collect()
}

fn json<T: Serialize>(value: &T) -> Result<String, JsValue> {
    serde_json::to_string(value).map_err(|e| {
        throwable(ApiError::new(
            ErrorCode::Internal,
            format!("cannot serialise a report: {e}"),
        ))
    })
}

/// An [`ApiError`] as a thrown JavaScript `Error` named `SpeculaError`, with `code` and
/// `field`; the package re-throws it as its own `SpeculaError` class.
fn throwable(e: ApiError) -> JsValue {
    let error = js_sys::Error::new(&e.message);
    error.set_name("SpeculaError");
    // Setting a property on a fresh Error cannot fail; if it did, the message still says
    // what happened.
    let _ = Reflect::set(&error, &"code".into(), &e.code.as_str().into());
    if let Some(field) = e.field {
        let _ = Reflect::set(&error, &"field".into(), &field.into());
    }
    error.into()
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// `performance.now()` as the decoder's clock (Node and browsers both have it), so the
/// traces' timings and the metrics' cost ratio measure the models' calls.
#[cfg(target_arch = "wasm32")]
struct PerformanceClock;

#[cfg(target_arch = "wasm32")]
impl specula_engine::Clock for PerformanceClock {
    fn now(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(performance_now().max(0.0) / 1000.0)
    }
}
