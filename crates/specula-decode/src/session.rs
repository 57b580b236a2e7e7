//! One `decode()` run, natively testable: the engine's [`Decoder`] with options read by
//! the engine's one parser, each request also laid out as `logits(tokens, count)` calls,
//! and every failure an [`ApiError`] whose message names the model at fault.

use specula_engine::options::{DecodeOptions, Raw};
use specula_engine::{
    ApiError, Clock, Decoder, Error, ErrorCode, ForwardRequest, ForwardResponse, Role, Step,
};

use crate::calls::Calls;
use crate::report::{DecodeRound, DecodeSummary};

/// The request the models must answer next.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The model asked.
    pub role: Role,
    /// The engine's request (for a model's `forward`).
    pub request: ForwardRequest,
    /// The same request as `logits(tokens, count)` calls.
    pub calls: Calls,
}

/// A running decode over models of one vocabulary.
#[derive(Debug)]
pub struct Session {
    decoder: Decoder,
    vocab: usize,
    pending: Option<Pending>,
}

/// An [`ApiError`] with no field.
fn api(code: ErrorCode, message: impl Into<String>) -> ApiError {
    ApiError::new(code, message)
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
            pending: None,
        })
    }

    /// Measures the models' and the engine's time with `clock` (none by default).
    #[must_use]
    pub fn with_clock(mut self, clock: impl Clock + Send + 'static) -> Self {
        self.decoder = self.decoder.with_clock(clock);
        self
    }

    /// The request to answer next, or `None` once decoding is over. The same request
    /// until it is answered.
    ///
    /// # Errors
    /// `internal`, never expected: the engine's `next_request` refuses nothing today.
    pub fn next_request(&mut self) -> Result<Option<&Pending>, ApiError> {
        if self.pending.is_none() {
            let (role, request) = match self.decoder.next_request().map_err(internal)? {
                Step::Done(_) => return Ok(None),
                // One model at a time: the draft half of a parallel step first.
                Step::Draft(request) | Step::Parallel { draft: request, .. } => {
                    (Role::Draft, request)
                }
                Step::Target(request) => (Role::Target, request),
            };
            let calls = Calls::of(&request);
            self.pending = Some(Pending {
                role,
                request,
                calls,
            });
        }
        Ok(self.pending.as_ref())
    }

    /// Answers the pending request with its calls' answers laid end to end (call order).
    /// Returns the round's report when this completed a round.
    ///
    /// # Errors
    /// `bad_model` naming the model for answers of the wrong length or with logits the
    /// engine refuses; `internal` with no pending request.
    pub fn supply_calls(&mut self, answers: &[f32]) -> Result<Option<DecodeRound>, ApiError> {
        let pending = self.pending()?;
        let logits = pending
            .calls
            .to_query_order(answers, self.vocab)
            .ok_or_else(|| {
                let want = pending.calls.total_rows().saturating_mul(self.vocab);
                api(
                    ErrorCode::BadModel,
                    format!(
                        "the {} model's answers hold {} logits; the request needs {want}",
                        pending.role,
                        answers.len()
                    ),
                )
            })?;
        self.supply_queries(logits)
    }

    /// Answers the pending request with one row per query, in query order (a model's
    /// `forward`). Returns the round's report when this completed a round.
    ///
    /// # Errors
    /// As [`supply_calls`](Self::supply_calls).
    pub fn supply_queries(&mut self, logits: Vec<f32>) -> Result<Option<DecodeRound>, ApiError> {
        let role = self.pending()?.role;
        let response = ForwardResponse::new(self.vocab, logits);
        let trace = self
            .decoder
            .supply(response)
            .map_err(|e| model_error(role, &e))?;
        self.pending = None;
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

    /// The pending request, if [`next_request`](Self::next_request) has built one.
    #[must_use]
    pub fn peek(&self) -> Option<&Pending> {
        self.pending.as_ref()
    }

    fn pending(&self) -> Result<&Pending, ApiError> {
        self.pending.as_ref().ok_or_else(|| {
            api(
                ErrorCode::Internal,
                "logits were supplied but no request is pending",
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
