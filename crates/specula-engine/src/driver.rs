//! Thin drivers that run a [`Decoder`] to the end over two [`LanguageModel`]s: one
//! model call at a time ([`generate`]), or with the draft and target models on two
//! threads ([`generate_parallel`], for parallel drafting).

use serde::Serialize;

use crate::decoder::Decoder;
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::model::LanguageModel;
use crate::request::{Role, Step};
use crate::stopping::FinishReason;
use crate::trace::RoundTrace;

// Threads are not there in a browser's wasm.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod threaded;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use threaded::generate_parallel;

/// The result of a complete generation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Generation {
    /// The generated tokens (without the prompt).
    pub tokens: Vec<u32>,
    /// Why generation stopped.
    pub finish: FinishReason,
    /// Every round, in order.
    pub rounds: Vec<RoundTrace>,
    /// Totals.
    pub metrics: Metrics,
}

impl Generation {
    /// What `decoder` generated, once it finished for `finish` after `rounds`.
    fn of(decoder: &Decoder, finish: FinishReason, rounds: Vec<RoundTrace>) -> Self {
        Self {
            tokens: decoder.generated().to_vec(),
            finish,
            rounds,
            metrics: decoder.metrics().clone(),
        }
    }
}

/// Runs `decoder` until it is done, answering draft requests with `draft` and target
/// requests with `target`.
///
/// # Errors
/// [`Error::VocabMismatch`] when the models' vocabulary sizes differ, the errors of
/// [`Decoder::set_vocab_size`], [`Error::Model`] when a model fails, and every error of
/// [`Decoder::supply`].
pub fn generate<D, T>(decoder: &mut Decoder, draft: &mut D, target: &mut T) -> Result<Generation>
where
    D: LanguageModel + ?Sized,
    T: LanguageModel + ?Sized,
{
    if draft.vocab_size() != target.vocab_size() {
        return Err(Error::VocabMismatch {
            draft: draft.vocab_size(),
            target: target.vocab_size(),
        });
    }
    decoder.set_vocab_size(target.vocab_size())?;
    run(decoder, Some(draft), target)
}

/// Runs a decoder that needs no draft model (autoregressive decoding) with `target`.
///
/// # Errors
/// [`Error::MissingDraftModel`] when the decoder's method drafts, the errors of
/// [`Decoder::set_vocab_size`], [`Error::Model`] when the model fails, and every error of
/// [`Decoder::supply`].
pub fn generate_autoregressive<T>(decoder: &mut Decoder, target: &mut T) -> Result<Generation>
where
    T: LanguageModel + ?Sized,
{
    if decoder.config().method().needs_draft() {
        return Err(Error::MissingDraftModel);
    }
    decoder.set_vocab_size(target.vocab_size())?;
    run::<T, T>(decoder, None, target)
}

fn run<D, T>(decoder: &mut Decoder, mut draft: Option<&mut D>, target: &mut T) -> Result<Generation>
where
    D: LanguageModel + ?Sized,
    T: LanguageModel + ?Sized,
{
    let mut rounds = Vec::new();
    let finish = loop {
        let response = match decoder.next_request()? {
            // One call at a time: the draft half of a parallel step first; the target
            // request comes again once the next round's drafts are drawn.
            Step::Draft(request) | Step::Parallel { draft: request, .. } => {
                let model = draft.as_deref_mut().ok_or(Error::MissingDraftModel)?;
                model.forward(&request).map_err(|source| Error::Model {
                    role: Role::Draft,
                    source,
                })?
            }
            Step::Target(request) => target.forward(&request).map_err(|source| Error::Model {
                role: Role::Target,
                source,
            })?,
            Step::Done(reason) => break reason,
        };
        if let Some(trace) = decoder.supply(response)? {
            rounds.push(trace);
        }
    };
    Ok(Generation::of(decoder, finish, rounds))
}
