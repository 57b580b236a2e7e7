//! One `decode()` run, natively testable: the engine's [`Decoder`] with options read by
//! the engine's one parser, each request also laid out as `logits(tokens, count)` calls,
//! and every failure an [`ApiError`] whose message names the model at fault.

use specula_engine::options::{DecodeOptions, Raw};
use specula_engine::{
    ApiError, Clock, Decoder, Error, ErrorCode, ForwardRequest, ForwardResponse, Role, Step,
};

use crate::calls::Calls;
use crate::report::{DecodeRound, DecodeSummary};

/// A request handed to a model, running until its answer is supplied.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The model asked.
    pub role: Role,
    /// The engine's request (for a model's `forward`).
    pub request: ForwardRequest,
    /// The same request as `logits(tokens, count)` calls.
    pub calls: Calls,
}

/// What [`Session::start_next`] says to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run the request of this model ([`Session::running`]); its model was idle.
    Start(Role),
    /// Every request the decoder wants now is already running: supply an answer first.
    Wait,
    /// Decoding is over; an answer still running is no longer needed.
    Done,
}

/// A running decode over models of one vocabulary.
///
/// Under parallel drafting a draft and a target request may run at once (at most one per
/// model), answered in either order with the same tokens for a seed
/// (docs/parallel-draft.md); otherwise one request runs at a time.
#[derive(Debug)]
pub struct Session {
    decoder: Decoder,
    vocab: usize,
    /// The requests handed out and not answered yet, by [`slot`]: the model is busy.
    running: [Option<Pending>; 2],
}

/// An [`ApiError`] with no field.
fn api(code: ErrorCode, message: impl Into<String>) -> ApiError {
    ApiError::new(code, message)
}

/// Index of `role` in [`Session::running`].
fn slot(role: Role) -> usize {
    match role {
        Role::Draft => 0,
        Role::Target => 1,
    }
}

impl Session {
    /// Reads and checks `options` (the engine's `DecodeOptions`, prompt and stop list as
    /// token ids) for models of `vocab` tokens.
    ///
    /// # Errors
    /// `bad_model` for a vocabulary of 0 or past `u32` token ids; `invalid_option`
    /// naming the first bad option (a prompt token out of range is `prompt[i]`).
    pub fn new(options: Raw, vocab: usize) -> Result<Self, ApiError> {
        if vocab == 0 || u32::try_from(vocab - 1).is_err() {
            return Err(api(
                ErrorCode::BadModel,
                format!("vocabSize must be a whole number from 1 to 2^32, got {vocab}"),
            ));
        }
        let resolved = DecodeOptions::from_raw_tokens(options)
            .and_then(|o| o.resolve_tokens(vocab))
            .map_err(|e| ApiError::from(&e))?;
        let mut decoder = Decoder::new(resolved.config, resolved.prompt).map_err(internal)?;
        decoder.set_vocab_size(vocab).map_err(internal)?;
        Ok(Self {
            decoder,
            vocab,
            running: [None, None],
        })
    }

    /// Measures the models' and the engine's time with `clock` (none by default).
    #[must_use]
    pub fn with_clock(mut self, clock: impl Clock + Send + 'static) -> Self {
        self.decoder = self.decoder.with_clock(clock);
        self
    }

    /// The next request to start, as `generate_parallel` hands them out
    /// (crates/specula-engine/src/driver/threaded.rs): a request of an idle model becomes
    /// [`running`](Self::running) and is returned; a request of a busy model is the one
    /// it runs ([`Next::Wait`]). Call again after each start: under parallel drafting
    /// the second model may have a request too.
    ///
    /// # Errors
    /// `internal`, never expected: the engine's `next_request` refuses nothing today.
    pub fn start_next(&mut self) -> Result<Next, ApiError> {
        let (role, request) = match self.decoder.next_request().map_err(internal)? {
            Step::Done(_) => return Ok(Next::Done),
            // The target first, as the longer call; the next call hands out the draft
            // half (the decoder asks for it again while it runs).
            Step::Parallel { target, draft } => {
                if self.running(Role::Target).is_none() {
                    (Role::Target, target)
                } else {
                    (Role::Draft, draft)
                }
            }
            Step::Draft(request) => (Role::Draft, request),
            Step::Target(request) => (Role::Target, request),
        };
        let running = &mut self.running[slot(role)];
        if running.is_some() {
            return Ok(Next::Wait);
        }
        let calls = Calls::of(&request);
        *running = Some(Pending {
            role,
            request,
            calls,
        });
        Ok(Next::Start(role))
    }

    /// The request `role`'s model is running, if any.
    #[must_use]
    pub fn running(&self, role: Role) -> Option<&Pending> {
        self.running[slot(role)].as_ref()
    }

    /// Answers `role`'s running request with its calls' answers laid end to end (call
    /// order). Returns the round's report when this completed a round.
    ///
    /// # Errors
    /// `bad_model` naming the model for answers of the wrong length or with logits the
    /// engine refuses; `internal` when `role` runs no request.
    pub fn supply_calls(
        &mut self,
        role: Role,
        answers: &[f32],
    ) -> Result<Option<DecodeRound>, ApiError> {
        let pending = self.running_request(role)?;
        let logits = pending
            .calls
            .to_query_order(answers, self.vocab)
            .ok_or_else(|| {
                let want = pending.calls.total_rows().saturating_mul(self.vocab);
                api(
                    ErrorCode::BadModel,
                    format!(
                        "the {role} model's answers hold {} logits; the request needs {want}",
                        answers.len()
                    ),
                )
            })?;
        self.supply_queries(role, logits)
    }

    /// Answers `role`'s running request with one row per query, in query order (a
    /// model's `forward`). Returns the round's report when this completed a round. A
    /// refused answer leaves the request running, so a corrected one can follow.
    ///
    /// # Errors
    /// As [`supply_calls`](Self::supply_calls).
    pub fn supply_queries(
        &mut self,
        role: Role,
        logits: Vec<f32>,
    ) -> Result<Option<DecodeRound>, ApiError> {
        self.running_request(role)?;
        let response = ForwardResponse::new(self.vocab, logits);
        let trace = self
            .decoder
            .supply_to(role, response)
            .map_err(|e| model_error(role, &e))?;
        self.running[slot(role)] = None;
        Ok(trace.map(|trace| {
            let metrics = self.decoder.metrics().clone();
            DecodeRound {
                round: trace.round,
                tokens: trace.emitted.clone(),
                counts: trace.counts,
                finish: trace.finish.clone(),
                summary: metrics.summary(),
                metrics,
                trace,
            }
        }))
    }

    fn running_request(&self, role: Role) -> Result<&Pending, ApiError> {
        self.running(role).ok_or_else(|| {
            api(
                ErrorCode::Internal,
                format!("logits were supplied but the {role} model runs no request"),
            )
        })
    }

    /// Tokens committed so far, prompt included: what a model's K/V cache may keep.
    #[must_use]
    pub fn committed_len(&self) -> usize {
        self.decoder.tokens().len()
    }

    /// The run so far.
    #[must_use]
    pub fn summary(&self, aborted: bool) -> DecodeSummary {
        let metrics = self.decoder.metrics().clone();
        DecodeSummary {
            prompt: self.decoder.prompt().to_vec(),
            tokens: self.decoder.generated().to_vec(),
            finish: self.decoder.finish_reason().cloned(),
            aborted,
            summary: metrics.summary(),
            metrics,
        }
    }
}

/// An engine error that no caller input can cause.
fn internal(e: Error) -> ApiError {
    api(ErrorCode::Internal, e.to_string())
}

/// An engine refusal of an answer, as the fault of the model that gave it (the engine's
/// own messages name the role; the others get it here).
fn model_error(role: Role, e: &Error) -> ApiError {
    match e {
        Error::WrongResponseLength { .. }
        | Error::InvalidLogits { .. }
        | Error::VocabMismatch { .. }
        | Error::ZeroVocab { .. }
        | Error::VocabTooLarge { .. } => api(ErrorCode::BadModel, e.to_string()),
        Error::TokenOutOfRange { .. } => api(
            ErrorCode::BadModel,
            format!("the {role} model's answer: {e}"),
        ),
        other => internal(other.clone()),
    }
}

#[cfg(test)]
mod tests;
