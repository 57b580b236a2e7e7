//! The bindings: [`Session`] as a JavaScript class. Values cross as typed arrays (token
//! ids as `Int32Array`, logits as `Float32Array`) and reports as JSON text, which
//! `JSON.parse` reads faster than objects built field by field across the boundary.

use js_sys::Reflect;
use serde::Serialize;
use specula_engine::options::raw_from_js;
use specula_engine::{ApiError, ErrorCode, Role};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::session::{Pending, Session};

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

    /// The model to run next: 1 for the draft, 2 for the target, 0 when decoding is over.
    ///
    /// # Errors
    /// `internal`, never expected.
    #[wasm_bindgen(js_name = nextModel)]
    pub fn next_model(&mut self) -> Result<u8, JsValue> {
        Ok(match self.session.next_request().map_err(throwable)? {
            None => 0,
            Some(Pending {
                role: Role::Draft, ..
            }) => 1,
            Some(_) => 2,
        })
    }

    /// How many `logits(tokens, count)` calls answer the pending request.
    #[wasm_bindgen(js_name = callCount)]
    pub fn call_count(&self) -> usize {
        self.pending().map_or(0, |p| p.calls.calls.len())
    }

    /// The tokens of call `i`.
    #[wasm_bindgen(js_name = callTokens)]
    pub fn call_tokens(&self, i: usize) -> Vec<i32> {
        self.pending()
            .and_then(|p| {
                let call = p.calls.calls.get(i)?;
                let tokens = p.request.sequences.get(call.sequence)?.get(..call.len)?;
                Some(ids(tokens))
            })
            .unwrap_or_default()
    }

    /// The rows (`count`) of call `i`.
    #[wasm_bindgen(js_name = callRows)]
    pub fn call_rows(&self, i: usize) -> usize {
        self.pending()
            .and_then(|p| p.calls.calls.get(i))
            .map_or(0, |c| c.count)
    }

    /// The pending request's committed length (tokens every sequence starts with).
    #[wasm_bindgen(js_name = requestCommittedLen)]
    pub fn request_committed_len(&self) -> usize {
        self.pending().map_or(0, |p| p.request.committed_len)
    }

    /// The pending request's token sequences.
    #[wasm_bindgen(js_name = sequenceCount)]
    pub fn sequence_count(&self) -> usize {
        self.pending().map_or(0, |p| p.request.sequences.len())
    }

    /// Sequence `i` of the pending request.
    pub fn sequence(&self, i: usize) -> Vec<i32> {
        self.pending()
            .and_then(|p| p.request.sequences.get(i))
            .map(|s| ids(s))
            .unwrap_or_default()
    }

    /// The pending request's queries, flattened: `[sequence, prefixLen, …]`.
    pub fn queries(&self) -> Vec<u32> {
        self.pending().map_or_else(Vec::new, |p| {
            p.request
                .queries
                .iter()
                .flat_map(|q| [q.sequence, q.prefix_len])
                .map(|x| u32::try_from(x).unwrap_or(u32::MAX))
                .collect()
        })
    }

    /// Answers the pending request with its calls' answers end to end; the round's report
    /// (JSON) when this completed a round.
    ///
    /// # Errors
    /// `bad_model` naming the model for answers the engine refuses.
    #[wasm_bindgen(js_name = supplyCalls)]
    pub fn supply_calls(&mut self, answers: &[f32]) -> Result<Option<String>, JsValue> {
        let round = self.session.supply_calls(answers).map_err(throwable)?;
        round.as_ref().map(json).transpose()
    }

    /// Answers the pending request with one row per query, in query order (`forward`).
    ///
    /// # Errors
    /// As `supplyCalls`.
    #[wasm_bindgen(js_name = supplyQueries)]
    pub fn supply_queries(&mut self, logits: Vec<f32>) -> Result<Option<String>, JsValue> {
        let round = self.session.supply_queries(logits).map_err(throwable)?;
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
    fn pending(&self) -> Option<&Pending> {
        // `nextModel()` has built it; reading it does not advance the decoder.
        self.session.peek()
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
