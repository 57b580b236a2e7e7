//! The step-wise decoding state machine ("sans-IO"): it says which model it needs and
//! for what; the caller runs the model however it likes (synchronously, in a batch,
//! asynchronously on a GPU) and supplies the logits.
//!
//! One round is: `Draft` requests, one per draft depth (none for autoregressive
//! decoding), then one `Target` request carrying every position to verify; supplying the
//! target's logits runs the selection and returns the round's [`RoundTrace`].
//!
//! Under parallel drafting (`parallel`) the next round's drafts are drawn while the
//! target verifies this round.

use std::fmt;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

mod parallel;
mod response;
mod verify;

use parallel::Early;
pub use parallel::ParallelBug;

use crate::clock::{Clock, NoClock};
use crate::config::{DecodeConfig, GammaPolicy, Method, Rule};
use crate::draft_tree::DraftTree;
use crate::error::{Error, Result};
use crate::gamma::GammaController;
use crate::lookup;
use crate::metrics::Metrics;
use crate::request::{ForwardRequest, ForwardResponse, Role, Step};
use crate::stopping::{Detokenizer, FinishReason, Stopper};
use crate::trace::{RoundTrace, Timing};

/// Where the decoder stands.
enum Phase {
    /// Between rounds.
    Idle,
    /// Inside a round.
    Round(Box<RoundState>),
    /// Finished.
    Done(FinishReason),
}

/// Which request a round needs next.
#[derive(Clone, Copy)]
enum Stage {
    /// The draft tokens at this depth (1-based).
    Draft(usize),
    /// The verification of the whole draft set.
    Target,
}

/// An outstanding request.
struct Pending {
    issued_at: Duration,
    /// For draft requests, the draft-tree path of each query.
    paths: Vec<usize>,
}

struct RoundState {
    tree: DraftTree,
    stage: Stage,
    draft_calls: usize,
    timing: Timing,
    pending: Option<Pending>,
    /// Under parallel drafting, this tree's own draft generator (the decoder's `rng`
    /// then only verifies).
    rng: Option<ChaCha8Rng>,
    /// Under parallel drafting, the next round's drafts, drawn while the target verifies.
    early: Option<Box<Early>>,
    /// How many of this round's draft depths were drawn before the last round's target
    /// response was supplied.
    early_drafts: usize,
}

impl RoundState {
    fn new(tree: DraftTree, stage: Stage, rng: Option<ChaCha8Rng>) -> Box<Self> {
        Box::new(Self {
            tree,
            stage,
            draft_calls: 0,
            timing: Timing::default(),
            pending: None,
            rng,
            early: None,
            early_drafts: 0,
        })
    }
}

/// The decoding state machine. Create it with [`Decoder::new`], then alternate
/// [`next_request`](Self::next_request) and [`supply`](Self::supply) until
/// [`Step::Done`]; or hand it to [`generate`](crate::generate).
///
/// ```
/// use specula_engine::synthetic::MarkovModel;
/// use specula_engine::{DecodeConfig, Decoder, LanguageModel, Method, Step};
///
/// let mut target = MarkovModel::random(5, 1, 1, 2.0)?;
/// let mut draft = target.perturbed(2, 1.0)?;
/// let config = DecodeConfig::builder(Method::Speculative { gamma: 3, policy: Default::default() })
///     .max_new_tokens(10)
///     .build()?;
/// let mut decoder = Decoder::new(config, vec![0])?;
/// loop {
///     let response = match decoder.next_request()? {
///         // Parallel steps come only with `parallel_draft`; run one model at a time.
///         Step::Draft(request) | Step::Parallel { draft: request, .. } => {
///             draft.forward(&request)?
///         }
///         Step::Target(request) => target.forward(&request)?,
///         Step::Done(_) => break,
///     };
///     if let Some(trace) = decoder.supply(response)? {
///         assert_eq!(trace.emitted.len(), trace.counts.total());
///     }
/// }
/// assert_eq!(decoder.generated().len(), 10);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Decoder {
    config: DecodeConfig,
    rule: Rule,
    gamma: Option<GammaController>,
    tokens: Vec<u32>,
    prompt_len: usize,
    rng: ChaCha8Rng,
    clock: Box<dyn Clock + Send>,
    stopper: Stopper,
    metrics: Metrics,
    vocab: Option<usize>,
    phase: Phase,
    rounds: usize,
    /// Where the context the models see starts: 0, except after a rejection under the
    /// cache-reset bug, which drops everything before the resampled token.
    context_start: usize,
    /// Under parallel drafting, a draft request still running whose answer is dropped:
    /// the early drafts it extends were discarded by a rejection.
    stale: Option<ForwardRequest>,
    /// Draft trees created so far under parallel drafting (each draws from its own stream).
    trees: u64,
    /// A deliberate mistake in the parallel schedule, for the power of exactness tests.
    parallel_bug: Option<ParallelBug>,
    /// The next round, carried over from the early drafts of the round just verified.
    carried: Option<Box<RoundState>>,
}

impl fmt::Debug for Decoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("method", &self.config.method().name())
            .field("tokens", &self.tokens)
            .field("prompt_len", &self.prompt_len)
            .field("rounds", &self.rounds)
            .field("finish", &self.finish_reason())
            .finish_non_exhaustive()
    }
}

impl Decoder {
    /// A decoder for `prompt` (token ids, at least one). Stop strings need
    /// [`DecodeConfig::token_text`], or use [`with_detokenizer`](Self::with_detokenizer).
    /// `config` was checked when it was built, so only the prompt and the stop
    /// conditions are checked here.
    ///
    /// # Errors
    /// [`Error::EmptyPrompt`], [`Error::StopStringsNeedDetokenizer`].
    pub fn new(config: DecodeConfig, prompt: impl Into<Vec<u32>>) -> Result<Self> {
        Self::build(config, prompt.into(), None)
    }

    /// Like [`new`](Self::new), with a function turning generated token ids into text
    /// for stop strings (it takes precedence over [`DecodeConfig::token_text`]).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_detokenizer(
        config: DecodeConfig,
        prompt: impl Into<Vec<u32>>,
        detokenizer: impl Fn(&[u32]) -> String + Send + 'static,
    ) -> Result<Self> {
        Self::build(config, prompt.into(), Some(Box::new(detokenizer)))
    }

    fn build(
        config: DecodeConfig,
        prompt: Vec<u32>,
        detokenizer: Option<Detokenizer>,
    ) -> Result<Self> {
        if prompt.is_empty() {
            return Err(Error::EmptyPrompt);
        }
        let stopper = Stopper::new(
            config.max_new_tokens(),
            config.stop_tokens().to_vec(),
            config.stop_strings().to_vec(),
            config.token_text().map(<[String]>::to_vec),
            detokenizer,
        )?;
        let gamma = match config.method() {
            Method::Speculative { gamma, policy }
            | Method::Mentored { gamma, policy, .. }
            | Method::Typical { gamma, policy, .. } => Some(GammaController::new(*gamma, *policy)),
            Method::Lookup { gamma, .. } => Some(GammaController::new(*gamma, GammaPolicy::Fixed)),
            _ => None,
        };
        let phase = match stopper.done_before_start() {
            Some(reason) => Phase::Done(reason),
            None => Phase::Idle,
        };
        Ok(Self {
            rule: Rule::of(config.method()),
            rng: ChaCha8Rng::seed_from_u64(config.seed()),
            prompt_len: prompt.len(),
            tokens: prompt,
            config,
            gamma,
            clock: Box::new(NoClock),
            stopper,
            metrics: Metrics::default(),
            vocab: None,
            phase,
            rounds: 0,
            context_start: 0,
            stale: None,
            trees: 0,
            parallel_bug: None,
            carried: None,
        })
    }

    /// Uses `clock` to measure draft, target and selection time (the default clock
    /// measures nothing).
    #[must_use]
    pub fn with_clock(mut self, clock: impl Clock + Send + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// What the decoder needs next. Calling it again before [`supply`](Self::supply)
    /// returns the same request.
    ///
    /// # Errors
    /// None at present; the `Result` leaves room for checks on future request kinds.
    pub fn next_request(&mut self) -> Result<Step> {
        let start = self.clock.now();
        if let Some(stale) = &self.stale
            && !self.is_done()
        {
            return Ok(Step::Draft(stale.clone()));
        }
        let mut state = match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Done(reason) => {
                self.phase = Phase::Done(reason.clone());
                return Ok(Step::Done(reason));
            }
            Phase::Round(state) => state,
            Phase::Idle => match self.start_round() {
                Some(state) => state,
                None => {
                    self.phase = Phase::Done(FinishReason::MaxNewTokens);
                    return Ok(Step::Done(FinishReason::MaxNewTokens));
                }
            },
        };
        if matches!(state.stage, Stage::Target) && self.config.parallel_draft() {
            let step = self.parallel_target_step(&mut state);
            let now = self.clock.now();
            state.timing.selection_nanos += nanos(now.saturating_sub(start));
            self.phase = Phase::Round(state);
            return Ok(step);
        }
        let context = self.context();
        let (step, paths) = match state.stage {
            Stage::Draft(depth) => {
                let (request, paths) = state.tree.draft_request(depth, context);
                (Step::Draft(request), paths)
            }
            Stage::Target => (Step::Target(state.tree.target_request(context)), Vec::new()),
        };
        let now = self.clock.now();
        let issued_at = state
            .pending
            .as_ref()
            .map_or(now, |pending| pending.issued_at);
        state.pending = Some(Pending { issued_at, paths });
        state.timing.selection_nanos += nanos(now.saturating_sub(start));
        self.phase = Phase::Round(state);
        Ok(step)
    }

    /// Supplies the logits answering the last request (under parallel drafting, the
    /// draft request while one is outstanding, else the target request; use
    /// [`supply_to`](Self::supply_to) to say which). Returns the round's trace when this
    /// completed a round (a target response), `None` after a draft response.
    ///
    /// On an error the decoder stays waiting for the same request (with its random
    /// generator unchanged), so a corrected response can be supplied and the run goes on
    /// exactly as if it had come first.
    ///
    /// Every row of a draft response is turned into a distribution (each is sampled
    /// from). Target rows are converted lazily, only along the accepted path (at most
    /// L + 1 of them), so an invalid row elsewhere in the draft set goes unnoticed: it is
    /// never used.
    ///
    /// # Errors
    /// [`Error::NoPendingRequest`]; for the response: [`Error::ZeroVocab`],
    /// [`Error::VocabTooLarge`], [`Error::WrongResponseLength`], [`Error::VocabMismatch`],
    /// [`Error::InvalidLogits`], and on the first response [`Error::TokenOutOfRange`] for
    /// a prompt token and [`Error::TokenTextLength`].
    pub fn supply(&mut self, response: ForwardResponse) -> Result<Option<RoundTrace>> {
        let role = self.expected_role();
        self.supply_to(role, response)
    }

    /// Supplies the logits answering the outstanding request of `role`: under parallel
    /// drafting a draft and a target request may both be outstanding, answered in either
    /// order. The answer to a draft request made stale by a rejection is dropped.
    ///
    /// # Errors
    /// As [`supply`](Self::supply); [`Error::NoPendingRequest`] when no request of
    /// `role` is outstanding.
    pub fn supply_to(
        &mut self,
        role: Role,
        response: ForwardResponse,
    ) -> Result<Option<RoundTrace>> {
        let arrive = self.clock.now();
        if role == Role::Draft && !self.is_done() && self.stale.take().is_some() {
            return Ok(None);
        }
        let mut state = match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Round(state) if Self::outstanding(&state, role) => state,
            other => {
                self.phase = other;
                return Err(Error::NoPendingRequest);
            }
        };
        // A failure can come after some uniforms were drawn, or after the vocabulary was
        // learned from a response refused later (a non-finite logit): restoring both keeps a
        // retried response on the same path as a first good one.
        let rng = self.rng.clone();
        let tree_rng = state.rng.clone();
        let early_rng = state.early.as_ref().map(|early| early.rng.clone());
        let vocab = self.vocab;
        let result = match (state.stage, role) {
            (Stage::Draft(depth), _) => self.apply_draft(&mut state, depth, &response, arrive),
            (Stage::Target, Role::Draft) => self.apply_early_draft(&mut state, &response, arrive),
            (Stage::Target, Role::Target) => self.apply_target(&mut state, &response, arrive),
        };
        match result {
            Err(e) => {
                self.rng = rng;
                self.vocab = vocab;
                state.rng = tree_rng;
                if let (Some(early), Some(r)) = (state.early.as_mut(), early_rng) {
                    early.rng = r;
                }
                self.phase = Phase::Round(state);
                Err(e)
            }
            Ok(None) => {
                self.phase = Phase::Round(state);
                Ok(None)
            }
            Ok(Some(trace)) => {
                let carried = self.carried.take();
                self.phase = match (&trace.finish, carried) {
                    (Some(reason), _) => Phase::Done(reason.clone()),
                    (None, Some(next)) => Phase::Round(next),
                    (None, None) => Phase::Idle,
                };
                Ok(Some(trace))
            }
        }
    }

    fn start_round(&mut self) -> Option<Box<RoundState>> {
        let remaining = self.stopper.remaining(self.generated().len());
        if remaining == 0 {
            return None;
        }
        let gamma = self.gamma.as_ref().map_or(1, GammaController::gamma);
        let mut branching = match self.config.method() {
            Method::Autoregressive => Vec::new(),
            Method::Speculative { .. } | Method::Mentored { .. } | Method::Typical { .. } => {
                vec![1; gamma]
            }
            Method::SpecTr { drafts, .. } | Method::MultiRound { drafts } => drafts.branching(),
            Method::Lookup { ngram, .. } => {
                // Never propose positions that could not be emitted. The proposal's
                // point masses are built when the target's response gives the vocabulary.
                let proposal = lookup::propose(self.context(), *ngram, gamma.min(remaining - 1));
                return Some(RoundState::new(
                    DraftTree::chain(&proposal),
                    Stage::Target,
                    None,
                ));
            }
        };
        // Never draft positions that could not be emitted.
        branching.truncate(remaining - 1);
        let stage = if branching.is_empty() {
            Stage::Target
        } else {
            Stage::Draft(1)
        };
        let rng = self.config.parallel_draft().then(|| self.tree_rng());
        Some(RoundState::new(DraftTree::new(branching), stage, rng))
    }

    fn apply_draft(
        &mut self,
        state: &mut RoundState,
        depth: usize,
        response: &ForwardResponse,
        arrive: Duration,
    ) -> Result<Option<RoundTrace>> {
        let Some(pending) = state.pending.as_ref() else {
            return Err(Error::NoPendingRequest);
        };
        self.check_response(Role::Draft, response, pending.paths.len())?;
        let conditionals = (0..pending.paths.len())
            .map(|row| self.draft_conditional(response, row))
            .collect::<Result<Vec<_>>>()?;
        let issued_at = pending.issued_at;
        let paths = std::mem::take(&mut state.pending)
            .map(|pending| pending.paths)
            .unwrap_or_default();
        let bug = self.config.bug();
        let rng = match state.rng.as_mut() {
            Some(rng) => rng,
            None => &mut self.rng,
        };
        state.tree.grow(depth, &paths, conditionals, bug, rng)?;
        state.draft_calls += 1;
        state.stage = if depth < state.tree.depth() {
            Stage::Draft(depth + 1)
        } else {
            Stage::Target
        };
        state.timing.draft_nanos += nanos(arrive.saturating_sub(issued_at));
        state.timing.selection_nanos += nanos(self.clock.now().saturating_sub(arrive));
        Ok(None)
    }

    /// The tokens the models condition on: every token, or under the cache-reset bug
    /// those from the last reset on.
    fn context(&self) -> &[u32] {
        self.tokens.get(self.context_start..).unwrap_or_default()
    }

    /// The prompt followed by every generated token.
    #[must_use]
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// The prompt.
    #[must_use]
    pub fn prompt(&self) -> &[u32] {
        self.tokens.get(..self.prompt_len).unwrap_or_default()
    }

    /// The generated tokens so far.
    #[must_use]
    pub fn generated(&self) -> &[u32] {
        self.tokens.get(self.prompt_len..).unwrap_or_default()
    }

    /// Totals over the rounds so far.
    #[must_use]
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Why generation finished, once it has.
    #[must_use]
    pub fn finish_reason(&self) -> Option<&FinishReason> {
        match &self.phase {
            Phase::Done(reason) => Some(reason),
            _ => None,
        }
    }

    /// Whether generation has finished.
    #[must_use]
    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done(_))
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &DecodeConfig {
        &self.config
    }

    /// The draft length of the next round (the most tokens proposed, for prompt lookup),
    /// for the single-sequence drafting methods.
    #[must_use]
    pub fn gamma(&self) -> Option<usize> {
        self.gamma.as_ref().map(GammaController::gamma)
    }

    /// Rounds completed.
    #[must_use]
    pub fn rounds(&self) -> usize {
        self.rounds
    }
}

pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
