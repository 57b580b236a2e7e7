//! [`Pair`]: what a [`Generation`](crate::Generation) needs of its models. Two kinds
//! answer it: [`Models`], both models in this module, run one at a time; and
//! [`RemotePair`](crate::remote::RemotePair), the draft here and the target in another
//! worker, run at the same time (parallel drafting, docs/parallel-draft.md).

use std::cell::Cell;

use specula_engine::{Decoder, RoundTrace, Step};
use specula_host::ModelTokenizer;

use crate::error::Result;
use crate::models::Models;

/// What one [`Pair::advance`] did.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "made once per model call and matched at once; a box would only add an allocation"
)]
pub enum Advance {
    /// The decoder has nothing left to ask.
    Done,
    /// The abort flag was set while a model ran; its answer was dropped unread.
    Aborted,
    /// An answer was supplied; the round's trace when it completed one.
    Supplied(Option<RoundTrace>),
}

/// The draft/target pair behind one generation.
#[allow(
    async_fn_in_trait,
    reason = "implemented and awaited only inside this crate, on one thread (wasm)"
)]
pub trait Pair {
    /// The shared tokenizer.
    fn tokenizer(&self) -> &ModelTokenizer;
    /// The longest sequence both models can read.
    fn context(&self) -> usize;
    /// Forgets the cached positions of the models this pair holds (the window slid).
    fn reset(&mut self);
    /// A new generation starts: anything still running for an earlier one (an aborted
    /// generation's call) must not reach it.
    fn begin(&mut self) {}
    /// Where the target runs now (`"webgpu"` or `"cpu"`).
    fn backend(&self) -> &'static str;
    /// Why the models moved to the CPU, once, after it happened.
    fn take_fallback(&mut self) -> Option<String>;
    /// Runs the model calls of the decoder's next step and supplies an answer.
    ///
    /// # Errors
    /// A model that fails ([`WasmError::Model`](crate::WasmError::Model)); engine errors.
    /// The decoder then still waits for the same request.
    async fn advance(&mut self, decoder: &mut Decoder, abort: &Cell<bool>) -> Result<Advance>;

    /// The vocabulary size.
    fn vocab(&self) -> usize {
        self.tokenizer().vocab_size()
    }
}

impl Pair for Models {
    fn tokenizer(&self) -> &ModelTokenizer {
        Models::tokenizer(self)
    }

    fn context(&self) -> usize {
        Models::context(self)
    }

    fn reset(&mut self) {
        Models::reset(self);
    }

    fn backend(&self) -> &'static str {
        self.info().backend
    }

    fn take_fallback(&mut self) -> Option<String> {
        Models::take_fallback(self)
    }

    async fn advance(&mut self, decoder: &mut Decoder, abort: &Cell<bool>) -> Result<Advance> {
        let response = match decoder.next_request()? {
            // One model at a time: the draft half of a parallel step first (the target
            // request comes again once the next round's drafts are drawn).
            Step::Draft(request) | Step::Parallel { draft: request, .. } => {
                self.forward(request.role, &request).await?
            }
            Step::Target(request) => self.forward(request.role, &request).await?,
            Step::Done(_) => return Ok(Advance::Done),
        };
        // An abort that arrived while the model ran: drop the response unread.
        if abort.get() {
            return Ok(Advance::Aborted);
        }
        Ok(Advance::Supplied(decoder.supply(response)?))
    }
}
