//! [`RemotePair`]: the draft model here, the target in another worker (or any
//! [`RemoteTarget`]), so that under parallel drafting the next round's drafts are drawn
//! while the target verifies (docs/parallel-draft.md). The decoder lives with the draft
//! because drafting is the part that needs it between calls: each early draft is sampled
//! from the last draft call's answer before the next call can be asked.
//!
//! A target answer that has arrived is supplied before the decoder is asked for anything
//! else, so no draft is drawn for a round already decided; otherwise drafts are drawn one
//! call after another (each followed by [`RemoteTarget::pause`], which lets the answer in)
//! until the decoder asks for the target again, and then the answer is awaited. Which
//! trees exist depends only on the outcomes, so a seed gives the tokens of [`Models`]
//! running the same schedule one call at a time, whatever the timing.
//!
//! [`Models`]: crate::Models

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use specula_engine::{Decoder, ForwardRequest, ForwardResponse, Role, Step};
use specula_host::DeviceLm;
use specula_host::ModelTokenizer;

use crate::error::{Result, WasmError};
use crate::pair::{Advance, Pair};

/// A target model running elsewhere: a call is started at once and answered later.
#[allow(
    async_fn_in_trait,
    reason = "implemented and awaited only inside this crate, on one thread (wasm)"
)]
pub trait RemoteTarget {
    /// One call in flight; resolves to `queries × vocab` logits.
    type Call: Future<Output = Result<Vec<f32>>> + Unpin;
    /// Starts answering `request`.
    ///
    /// # Errors
    /// [`WasmError::Model`] when the call cannot be started.
    fn call(&mut self, request: &ForwardRequest) -> Result<Self::Call>;
    /// Gives a call in flight the chance to complete (in a worker: one turn of the event
    /// loop, where its answer arrives as a message).
    async fn pause(&mut self);
    /// Where the target runs (`"webgpu"` or `"cpu"`), as far as this side knows.
    fn backend(&self) -> &'static str;
    /// Why the target moved to the CPU, once, after it happened.
    fn take_fallback(&mut self) -> Option<String>;
}

/// The draft model (on this module's CPU) and a remote target.
pub struct RemotePair<T: RemoteTarget> {
    draft: DeviceLm,
    tokenizer: ModelTokenizer,
    context: usize,
    target: T,
    in_flight: Option<T::Call>,
}

impl<T: RemoteTarget> std::fmt::Debug for RemotePair<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemotePair")
            .field("context", &self.context)
            .field("in_flight", &self.in_flight.is_some())
            .finish_non_exhaustive()
    }
}

impl<T: RemoteTarget> RemotePair<T> {
    /// The pair of `draft` and `target`; `context` is the longest sequence both read.
    pub fn new(draft: DeviceLm, tokenizer: ModelTokenizer, context: usize, target: T) -> Self {
        Self {
            draft,
            tokenizer,
            context,
            target,
            in_flight: None,
        }
    }

    /// The remote target.
    pub fn target_mut(&mut self) -> &mut T {
        &mut self.target
    }

    /// Runs the draft model on `request` here and supplies its answer.
    async fn draft_call(
        &mut self,
        decoder: &mut Decoder,
        request: &ForwardRequest,
        abort: &Cell<bool>,
    ) -> Result<Advance> {
        let vocab = specula_engine::LanguageModel::vocab_size(&self.draft);
        let logits = self
            .draft
            .answer_async(request)
            .await
            .map_err(|e| WasmError::Model(format!("the draft model failed: {e}")))?;
        if abort.get() {
            return Ok(Advance::Aborted);
        }
        let trace = decoder.supply_to(Role::Draft, ForwardResponse::new(vocab, logits))?;
        if self.in_flight.is_some() {
            self.target.pause().await;
        }
        Ok(Advance::Supplied(trace))
    }

    fn supply_target(&mut self, decoder: &mut Decoder, logits: Vec<f32>) -> Result<Advance> {
        let response = ForwardResponse::new(self.tokenizer.vocab_size(), logits);
        Ok(Advance::Supplied(
            decoder.supply_to(Role::Target, response)?,
        ))
    }
}

/// `future`'s output if it is ready now, without waiting.
fn ready_now<F: Future + Unpin>(future: &mut F) -> Option<F::Output> {
    match Pin::new(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

impl<T: RemoteTarget> Pair for RemotePair<T> {
    fn tokenizer(&self) -> &ModelTokenizer {
        &self.tokenizer
    }

    fn context(&self) -> usize {
        self.context
    }

    fn reset(&mut self) {
        // The remote target keys its cache by tokens: a slid context shares no prefix
        // with the old one there, so it recomputes without being told.
        self.draft.reset();
        self.in_flight = None;
    }

    fn begin(&mut self) {
        // An aborted generation's target call may still be running; its answer is for
        // another decoder.
        self.in_flight = None;
    }

    fn backend(&self) -> &'static str {
        self.target.backend()
    }

    fn take_fallback(&mut self) -> Option<String> {
        self.target.take_fallback()
    }

    async fn advance(&mut self, decoder: &mut Decoder, abort: &Cell<bool>) -> Result<Advance> {
        if let Some(call) = self.in_flight.as_mut()
            && let Some(answer) = ready_now(call)
        {
            self.in_flight = None;
            return self.supply_target(decoder, answer?);
        }
        match decoder.next_request()? {
            Step::Done(_) => Ok(Advance::Done),
            Step::Parallel { target, draft } => {
                if self.in_flight.is_none() {
                    self.in_flight = Some(self.target.call(&target)?);
                }
                self.draft_call(decoder, &draft, abort).await
            }
            Step::Draft(request) => self.draft_call(decoder, &request, abort).await,
            Step::Target(request) => {
                let call = match self.in_flight.take() {
                    Some(call) => call,
                    None => self.target.call(&request)?,
                };
                let logits = call.await?;
                if abort.get() {
                    return Ok(Advance::Aborted);
                }
                self.supply_target(decoder, logits)
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use std::rc::Rc;

    use burn::tensor::Device;
    use specula_engine::options::DecodeOptions;

    use super::*;
    use crate::backend::{BackendChoice, BackendInfo, DraftBackend};
    use crate::generation::Generation;
    use crate::generation::tests::block_on;
    use crate::models::Models;
    use crate::untrained::{Size, untrained_bundles};

    /// An answer that is ready after `polls` polls: a target that takes that long.
    struct Delayed {
        polls: usize,
        answer: Option<Result<Vec<f32>>>,
    }

    impl Future for Delayed {
        type Output = Result<Vec<f32>>;
        fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
            if self.polls == 0 {
                let answer = self.answer.take().expect("polled after completion");
                return Poll::Ready(answer);
            }
            self.polls -= 1;
            Poll::Pending
        }
    }

    /// The target on this thread, each answer held back for `delay` polls; `pauses`
    /// counts the turns the pair gave it.
    struct LocalTarget {
        lm: DeviceLm,
        delay: usize,
        calls: usize,
        pauses: usize,
        /// Set at every pause, when given: an abort that arrives while drafts are drawn.
        abort_at_pause: Option<Rc<Cell<bool>>>,
    }

    impl RemoteTarget for LocalTarget {
        type Call = Delayed;
        fn call(&mut self, request: &ForwardRequest) -> Result<Delayed> {
            self.calls += 1;
            let answer = block_on(self.lm.answer_async(request))
                .map_err(|e| WasmError::Model(e.to_string()));
            Ok(Delayed {
                polls: self.delay,
                answer: Some(answer),
            })
        }
        async fn pause(&mut self) {
            self.pauses += 1;
            if let Some(abort) = &self.abort_at_pause {
                abort.set(true);
            }
        }
        fn backend(&self) -> &'static str {
            "cpu"
        }
        fn take_fallback(&mut self) -> Option<String> {
            None
        }
    }

    fn options(seed: u64, temperature: f64, max_tokens: usize) -> DecodeOptions {
        DecodeOptions {
            prompt: Some("ROMEO:".into()),
            method: Some("speculative".into()),
            gamma: Some(3.0),
            parallel_draft: Some(true),
            temperature: Some(temperature),
            seed: Some(seed as f64),
            max_tokens: Some(max_tokens as f64),
            ..DecodeOptions::default()
        }
    }

    /// The text and the rounds' early-draft counts of a whole generation over `pair`.
    fn run(pair: &mut impl Pair, options: &DecodeOptions) -> (String, usize) {
        let mut generation =
            Generation::start(pair, options.resolve().expect("options")).expect("starts");
        let abort = Cell::new(false);
        let mut early = 0;
        while let Some(round) = block_on(generation.next_round(pair, &abort)).expect("round") {
            early += round.trace.early_drafts;
        }
        (generation.text().to_owned(), early)
    }

    fn remote_pair(delay: usize) -> RemotePair<LocalTarget> {
        let bundles = untrained_bundles(7, Size::Test).expect("bundles");
        let draft = DeviceLm::build(&bundles.draft, &Device::flex()).expect("draft");
        let target = LocalTarget {
            lm: DeviceLm::build(&bundles.target, &Device::flex()).expect("target"),
            delay,
            calls: 0,
            pauses: 0,
            abort_at_pause: None,
        };
        let context = draft.max_seq().min(target.lm.max_seq());
        let tokenizer = ModelTokenizer::Chars(bundles.target.meta.tokenizer.clone());
        RemotePair::new(draft, tokenizer, context, target)
    }

    fn models() -> Models {
        let bundles = untrained_bundles(7, Size::Test).expect("bundles");
        let info = BackendInfo::cpu(BackendChoice::Cpu, None);
        Models::build(bundles, &Device::flex(), info, DraftBackend::Same).expect("models")
    }

    #[test]
    fn a_seed_gives_the_same_tokens_whatever_the_targets_timing() {
        // 300 characters slide the test models' 128-position window twice.
        for seed in [1, 2, 3] {
            let options = options(seed, 1.0, 300);
            let (reference, _) = run(&mut models(), &options);
            assert_eq!(reference.chars().count(), 300);
            let mut early = Vec::new();
            for delay in [0, 1, 2, 50] {
                let mut pair = remote_pair(delay);
                let (text, drawn_early) = run(&mut pair, &options);
                assert_eq!(text, reference, "seed {seed}, answers after {delay} polls");
                assert!(pair.target_mut().calls > 0);
                early.push(drawn_early);
            }
            // Early drafts are counted in the fully accepted rounds that use them: one
            // each when the answer is there at once (the parallel step's own draft), up
            // to γ when the target is slow.
            assert!(early[0] > 0, "seed {seed}: {early:?}");
            assert!(early[3] > early[0], "seed {seed}: {early:?}");
        }
    }

    #[test]
    fn a_call_left_running_by_an_abort_does_not_reach_the_next_generation() {
        // Aborted while drafting early (the flag set at the first pause): γ = 4 leaves a
        // five-row target call running; the next generation drafts γ = 3.
        let mut pair = remote_pair(50);
        let abort = Rc::new(Cell::new(false));
        pair.target_mut().abort_at_pause = Some(Rc::clone(&abort));
        let options_a = DecodeOptions {
            gamma: Some(4.0),
            ..options(1, 1.0, 60)
        }
        .resolve()
        .expect("options");
        let mut first = Generation::start(&mut pair, options_a).expect("starts");
        while block_on(first.next_round(&mut pair, &abort))
            .expect("round")
            .is_some()
        {}
        assert!(
            abort.get() && pair.in_flight.is_some(),
            "the abort left a target call running"
        );
        pair.target_mut().abort_at_pause = None;
        let next = options(2, 1.0, 60);
        let (text, _) = run(&mut pair, &next);
        assert_eq!(text, run(&mut remote_pair(50), &next).0);
    }

    #[test]
    fn greedy_parallel_drafting_over_a_remote_target_is_greedy_decoding() {
        let greedy = DecodeOptions {
            method: Some("autoregressive".into()),
            gamma: None,
            parallel_draft: None,
            ..options(0, 0.0, 200)
        };
        let (reference, _) = run(&mut models(), &greedy);
        let mut pair = remote_pair(3);
        let (text, _) = run(&mut pair, &options(0, 0.0, 200));
        assert_eq!(text, reference);
        assert!(
            pair.target_mut().pauses > 0,
            "the target got turns while drafts were drawn"
        );
    }
}
