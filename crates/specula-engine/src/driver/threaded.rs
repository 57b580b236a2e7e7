//! [`generate_parallel`]: the draft and the target model on two threads.

use std::sync::mpsc;

use super::Generation;
use crate::decoder::Decoder;
use crate::error::{Error, ModelError, Result};
use crate::model::LanguageModel;
use crate::request::{ForwardRequest, ForwardResponse, Role, Step};

/// Like [`generate`], with the draft model and the target model each on its own thread,
/// so that under parallel drafting ([`DecodeConfig::parallel_draft`]) the next round's
/// drafts are drawn while the target verifies. For the same seed it gives the same tokens
/// as [`generate`] (only the timing, and the traces' `early_drafts`, differ); without
/// parallel drafting the two threads simply take turns. Not in a browser's wasm (no
/// threads there).
///
/// # Errors
/// As [`generate`].
///
/// [`generate`]: crate::generate
/// [`DecodeConfig::parallel_draft`]: crate::DecodeConfig::parallel_draft
pub fn generate_parallel<D, T>(
    decoder: &mut Decoder,
    draft: &mut D,
    target: &mut T,
) -> Result<Generation>
where
    D: LanguageModel + Send + ?Sized,
    T: LanguageModel + Send + ?Sized,
{
    if draft.vocab_size() != target.vocab_size() {
        return Err(Error::VocabMismatch {
            draft: draft.vocab_size(),
            target: target.vocab_size(),
        });
    }
    decoder.set_vocab_size(target.vocab_size())?;
    let (answers, answered) = mpsc::channel();
    std::thread::scope(|scope| {
        let draft_jobs = worker(scope, Role::Draft, draft, answers.clone());
        let target_jobs = worker(scope, Role::Target, target, answers);
        // Dropping the job senders on return ends the workers (after any call in flight).
        orchestrate(decoder, &draft_jobs, &target_jobs, &answered)
    })
}

type Answer = (Role, std::result::Result<ForwardResponse, ModelError>);

/// A thread answering `model`'s requests in order until its job channel closes.
fn worker<'scope, M>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    role: Role,
    model: &'scope mut M,
    answers: mpsc::Sender<Answer>,
) -> mpsc::Sender<ForwardRequest>
where
    M: LanguageModel + Send + ?Sized,
{
    let (jobs, requests) = mpsc::channel::<ForwardRequest>();
    scope.spawn(move || {
        for request in requests {
            // A panicking model becomes a model error: the other thread stays alive, so
            // the orchestrator would otherwise wait for this answer for ever.
            let answer =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| model.forward(&request)))
                    .unwrap_or_else(|_| Err(ModelError("the model panicked".into())));
            let failed = answer.is_err();
            if answers.send((role, answer)).is_err() || failed {
                break;
            }
        }
    });
    jobs
}

/// Hands out every request whose model is idle, then supplies the next answer to arrive;
/// a request of a model already busy is the one it is running (at most one per role is
/// outstanding).
fn orchestrate(
    decoder: &mut Decoder,
    draft: &mpsc::Sender<ForwardRequest>,
    target: &mpsc::Sender<ForwardRequest>,
    answered: &mpsc::Receiver<Answer>,
) -> Result<Generation> {
    let mut rounds = Vec::new();
    let (mut draft_busy, mut target_busy) = (false, false);
    let send = |jobs: &mpsc::Sender<ForwardRequest>, request, role| {
        jobs.send(request).map_err(|_| Error::Model {
            role,
            source: ModelError("the model's thread stopped".into()),
        })
    };
    let finish = 'run: loop {
        loop {
            match decoder.next_request()? {
                Step::Done(reason) => break 'run reason,
                Step::Parallel {
                    target: t,
                    draft: d,
                } => {
                    if !target_busy {
                        send(target, t, Role::Target)?;
                        target_busy = true;
                    }
                    if !draft_busy {
                        send(draft, d, Role::Draft)?;
                        draft_busy = true;
                    }
                }
                Step::Draft(request) if !draft_busy => {
                    send(draft, request, Role::Draft)?;
                    draft_busy = true;
                }
                Step::Target(request) if !target_busy => {
                    send(target, request, Role::Target)?;
                    target_busy = true;
                }
                Step::Draft(_) | Step::Target(_) => break,
            }
        }
        let (role, answer) = answered.recv().map_err(|_| Error::Model {
            role: Role::Target,
            source: ModelError("the models' threads stopped".into()),
        })?;
        match role {
            Role::Draft => draft_busy = false,
            Role::Target => target_busy = false,
        }
        let response = answer.map_err(|source| Error::Model { role, source })?;
        if let Some(trace) = decoder.supply_to(role, response)? {
            rounds.push(trace);
        }
    };
    Ok(Generation::of(decoder, finish, rounds))
}
