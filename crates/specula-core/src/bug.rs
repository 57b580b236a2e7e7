//! Deliberate mistakes ("bugs") in speculative sampling, each implemented once: for a bug
//! lab that shows what each classic mistake does to the output, and for measuring the
//! power of the exactness tests, which must reject every one of them.
//!
//! A bug sits in one of four places:
//! - how a draft token is drawn ([`Bug::ArgmaxDraft`], [`Bug::SharedUniform`]):
//!   [`draw_draft`];
//! - the acceptance tests and the draw after a rejection ([`Bug::SharedUniform`],
//!   [`Bug::ResampleFromTarget`]): each lossless scheme's `sample_with_bug`
//!   ([`Speculative::sample_with_bug`], [`KSeq::sample_with_bug`],
//!   [`MultiRound::sample_with_bug`], [`Race::sample_with_bug`]), or [`buggy_sample`]
//!   by the scheme's name;
//! - which distributions the tests use ([`Bug::UnprocessedTarget`],
//!   [`Bug::FilteredDraft`]): [`Bug::tested_target_sampling`] and
//!   [`Bug::tested_draft_sampling`], applied by whoever turns logits into distributions;
//! - the context the models see ([`Bug::CacheReset`]): the decoding engine's requests.
//!
//! With no bug every function here behaves exactly as the correct scheme, random draws
//! included. [`bug_analysis`] gives the exact output distribution of standard speculative
//! sampling with a token-level bug, so the size of each mistake can be computed.
//!
//! ```
//! use specula_core::{Bug, BugPair, Distribution, Speculative, bug_analysis, total_variation};
//!
//! let target = Distribution::from_probs(vec![0.1, 0.2, 0.3, 0.4])?;
//! let draft = Distribution::from_probs(vec![0.5, 0.3, 0.15, 0.05])?;
//! let pair = BugPair::new(&target, &draft);
//! let wrong = bug_analysis(Bug::ResampleFromTarget, &pair)?;
//! assert!(total_variation(&wrong.output, target.probs()) > 0.1);
//! // Without the mistake the same parts give the target back.
//! let right = Speculative::new(&target, &draft)?.analysis();
//! assert!(total_variation(&right.output, target.probs()) < 1e-12);
//! # Ok::<(), specula_core::Error>(())
//! ```

use std::fmt;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::distribution::Distribution;
use crate::error::{Error, Result};
use crate::kseq::{KSeq, KSeqPlan};
use crate::multiround::MultiRound;
use crate::outcome::{TokenAnalysis, TokenOutcome};
use crate::race::{Race, RacePlan};
use crate::residual::check_same_len;
use crate::sampling::SamplingConfig;
use crate::speculative::{Speculative, accept_prob, combine};
use crate::wiring::Wiring;

/// A deliberate mistake in a speculative sampler, for teaching and for measuring the
/// power of exactness tests. None of them is ever used unless asked for; every one makes
/// the output differ from the target's distribution.
///
/// Serialised (and named on command lines) in kebab case: `resample-from-target`,
/// `argmax-draft`, `shared-uniform`, `unprocessed-target`, `filtered-draft`,
/// `cache-reset`. Greedy decoding (temperature 0) verifies greedily and is unaffected by
/// all of them but `cache-reset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum Bug {
    /// After a rejection the replacement token is drawn from the target itself instead of
    /// the scheme's residual (`norm(max(0, target − draft))` for standard sampling): the
    /// tokens the draft over-proposes get mass twice.
    ResampleFromTarget,
    /// The draft proposes its most likely token instead of a sample, and the test treats
    /// it as a sample (acceptance `min(1, target/draft)` of that token).
    ArgmaxDraft,
    /// One uniform `u` both draws the draft token (inverse CDF over the tokens in index
    /// order) and decides its acceptance (`u < target(x)/draft(x)`); the residual gets a
    /// fresh uniform. Given the token, `u` is no longer uniform on `[0, 1)`, so low ids
    /// are accepted too often and high ids too rarely.
    SharedUniform,
    /// The acceptance tests, the residual and the bonus token use the target's raw
    /// softmax (temperature 1, no top-k or top-p) while the drafts come from the
    /// processed draft. No effect under the default sampling settings.
    UnprocessedTarget,
    /// The drafts are drawn from the filtered draft (top-k, top-p) but tested, and the
    /// residual formed, with the draft's probabilities before filtering (temperature
    /// applied). No effect without top-k or top-p.
    FilteredDraft,
    /// After a rejection the models' K/V caches are reset instead of rolled back to the
    /// committed prefix, and decoding goes on feeding only the tokens not yet cached: from
    /// the resampled token on, the models see the text as if it started there. A
    /// sequence-level bug, carried out by the decoding engine; no effect at one position
    /// (nor on a model that looks back only one token).
    CacheReset,
}

impl Bug {
    /// Every bug, in documentation order.
    pub const ALL: [Self; 6] = [
        Self::ResampleFromTarget,
        Self::ArgmaxDraft,
        Self::SharedUniform,
        Self::UnprocessedTarget,
        Self::FilteredDraft,
        Self::CacheReset,
    ];

    /// The kebab-case name used on command lines and in JSON.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::ResampleFromTarget => "resample-from-target",
            Self::ArgmaxDraft => "argmax-draft",
            Self::SharedUniform => "shared-uniform",
            Self::UnprocessedTarget => "unprocessed-target",
            Self::FilteredDraft => "filtered-draft",
            Self::CacheReset => "cache-reset",
        }
    }

    /// The bug called `name`, if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }

    /// One line saying what the mistake is.
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Self::ResampleFromTarget => {
                "on a rejection, draw from the target instead of the residual"
            }
            Self::ArgmaxDraft => "propose the draft's most likely token, tested as if sampled",
            Self::SharedUniform => {
                "one uniform both draws the draft token and decides its acceptance"
            }
            Self::UnprocessedTarget => {
                "test against the target's raw softmax (no temperature, top-k or top-p)"
            }
            Self::FilteredDraft => {
                "draw drafts after top-k/top-p but test them with the unfiltered draft"
            }
            Self::CacheReset => {
                "after a rejection, reset the K/V caches instead of rolling them back"
            }
        }
    }

    /// Whether the bug changes the acceptance tests or the residual draw, which the
    /// schemes' `sample_with_bug` carry out (the others change only what is passed to
    /// them).
    #[must_use]
    pub fn in_selection(self) -> bool {
        matches!(self, Self::ResampleFromTarget | Self::SharedUniform)
    }

    /// The settings code with this bug applies to the target's logits before testing:
    /// the raw softmax (temperature 1, no top-k or top-p) under
    /// [`Bug::UnprocessedTarget`] unless decoding is greedy, else `sampling` itself.
    #[must_use]
    pub fn tested_target_sampling(self, sampling: &SamplingConfig) -> SamplingConfig {
        match self {
            Self::UnprocessedTarget if !sampling.is_greedy() => SamplingConfig::default(),
            _ => *sampling,
        }
    }

    /// The settings code with this bug applies to the draft's logits for the tests (the
    /// drafts themselves are always drawn under `sampling`): `sampling` without top-k
    /// and top-p under [`Bug::FilteredDraft`], else `sampling` itself.
    #[must_use]
    pub fn tested_draft_sampling(self, sampling: &SamplingConfig) -> SamplingConfig {
        match self {
            Self::FilteredDraft => SamplingConfig {
                top_k: None,
                top_p: None,
                ..*sampling
            },
            _ => *sampling,
        }
    }
}

impl fmt::Display for Bug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One draft token as drawn, with the uniform that drew it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DraftDraw {
    /// The draft token.
    pub token: usize,
    /// The uniform of its inverse-CDF draw; `None` when no uniform was used
    /// ([`Bug::ArgmaxDraft`]).
    pub uniform: Option<f64>,
}

/// Draws one draft token from `draft` as code with `bug` does: by inverse CDF with one
/// uniform from `rng` (exactly [`Distribution::sample`]), returned so that
/// [`Bug::SharedUniform`] can use it again; under [`Bug::ArgmaxDraft`], the draft's most
/// likely token with no uniform drawn.
pub fn draw_draft<R: Rng + ?Sized>(
    bug: Option<Bug>,
    draft: &Distribution,
    rng: &mut R,
) -> DraftDraw {
    if bug == Some(Bug::ArgmaxDraft) {
        return DraftDraw {
            token: draft.argmax(),
            uniform: None,
        };
    }
    let u = rng.random::<f64>();
    DraftDraw {
        token: draft.sample_with_uniform(u),
        uniform: Some(u),
    }
}

/// A token-level scheme [`buggy_sample`] can plant a bug in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BugScheme {
    /// Standard speculative sampling (one draft).
    Speculative,
    /// SpecTr k-Seq at ρ*.
    KSeq,
    /// Multi-round rejection sampling.
    MultiRound,
    /// The ratio race (OTM's selection for i.i.d. drafts).
    Race,
}

/// What [`buggy_sample`] selected, with the scheme's parameters where it has any.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuggySample {
    /// The outcome, recorded as for the correct scheme (the residual field says
    /// [`Residual::Target`](crate::Residual::Target) when the target was sampled instead
    /// of the residual).
    pub outcome: TokenOutcome,
    /// The k-Seq plan, for [`BugScheme::KSeq`].
    pub kseq: Option<KSeqPlan>,
    /// The race's plan, for [`BugScheme::Race`].
    pub race: Option<RacePlan>,
}

/// Runs `scheme` on the draft tokens `drafts` (each drawn with [`draw_draft`] from
/// `draft`) with `bug` planted in its tests and residual draw: the scheme's constructor,
/// then its `sample_with_bug` ([`Speculative::sample_with_bug`] and the others), which
/// says what each bug rewires.
///
/// # Errors
/// The scheme's constructor's errors ([`Error::LengthMismatch`], [`Error::NoDrafts`]),
/// and [`Error::DraftCountMismatch`] when standard speculative sampling is given other
/// than one draft.
pub fn buggy_sample<R: Rng + ?Sized>(
    bug: Bug,
    scheme: BugScheme,
    target: &Distribution,
    draft: &Distribution,
    drafts: &[DraftDraw],
    rng: &mut R,
) -> Result<BuggySample> {
    let plain = |outcome| BuggySample {
        outcome,
        kseq: None,
        race: None,
    };
    Ok(match scheme {
        BugScheme::Speculative => {
            let &[only] = drafts else {
                return Err(Error::DraftCountMismatch {
                    expected: 1,
                    got: drafts.len(),
                });
            };
            plain(Speculative::new(target, draft)?.sample_with_bug(bug, only, rng))
        }
        BugScheme::KSeq => {
            let kseq = KSeq::new(target, draft, drafts.len(), None)?;
            BuggySample {
                kseq: Some(*kseq.plan()),
                ..plain(kseq.sample_with_bug(bug, drafts, rng))
            }
        }
        BugScheme::MultiRound => {
            plain(MultiRound::new(target, draft, drafts.len())?.sample_with_bug(bug, drafts, rng))
        }
        BugScheme::Race => {
            let race = Race::new(target, draft, drafts.len())?;
            let outcome = race.sample_with_bug(bug, drafts, rng);
            BuggySample {
                race: Some(race.into_plan()),
                ..plain(outcome)
            }
        }
    })
}

/// The wiring of a scheme with `bug`, whose drafts were drawn with `uniforms`: under
/// [`Bug::SharedUniform`] each draft's test uses the uniform that drew it (a draft drawn
/// without one gets a fresh uniform); under [`Bug::ResampleFromTarget`] a rejection
/// samples the target. Every other bug is correct here: its mistake lies in the draws,
/// the distributions or the context passed in.
fn wiring(bug: Bug, uniforms: &[Option<f64>]) -> Wiring<'_> {
    Wiring {
        test_uniforms: (bug == Bug::SharedUniform).then_some(uniforms),
        residual_from_target: bug == Bug::ResampleFromTarget,
    }
}

/// The uniforms that drew `drafts`, for [`wiring`].
fn uniforms(drafts: &[DraftDraw]) -> Vec<Option<f64>> {
    drafts.iter().map(|d| d.uniform).collect()
}

/// The token ids of `drafts`.
fn tokens(drafts: &[DraftDraw]) -> Vec<usize> {
    drafts.iter().map(|d| d.token).collect()
}

impl Speculative<'_> {
    /// [`Speculative::sample`] with `bug` planted in its test and residual draw, for the
    /// draft token `drawn` (drawn with [`draw_draft`]): under [`Bug::SharedUniform`] the
    /// test uses the uniform that drew it, under [`Bug::ResampleFromTarget`] a rejection
    /// samples the target (recorded as [`Residual::Target`](crate::Residual::Target)).
    /// For every other bug this is the correct scheme, random draws included.
    pub fn sample_with_bug<R: Rng + ?Sized>(
        &self,
        bug: Bug,
        drawn: DraftDraw,
        rng: &mut R,
    ) -> TokenOutcome {
        let uniforms = [drawn.uniform];
        self.sample_wired(drawn.token, wiring(bug, &uniforms), rng)
    }
}

impl KSeq<'_> {
    /// [`KSeq::sample`] with `bug` planted as [`Speculative::sample_with_bug`] says, in
    /// every draft's test.
    pub fn sample_with_bug<R: Rng + ?Sized>(
        &self,
        bug: Bug,
        drafts: &[DraftDraw],
        rng: &mut R,
    ) -> TokenOutcome {
        let uniforms = uniforms(drafts);
        self.sample_wired(&tokens(drafts), wiring(bug, &uniforms), rng)
    }
}

impl MultiRound<'_> {
    /// [`MultiRound::sample`] with `bug` planted as [`Speculative::sample_with_bug`] says,
    /// in every draft's test.
    pub fn sample_with_bug<R: Rng + ?Sized>(
        &self,
        bug: Bug,
        drafts: &[DraftDraw],
        rng: &mut R,
    ) -> TokenOutcome {
        let uniforms = uniforms(drafts);
        self.sample_wired(&tokens(drafts), wiring(bug, &uniforms), rng)
    }
}

impl Race<'_> {
    /// [`Race::sample`] with `bug` planted as [`Speculative::sample_with_bug`] says: the
    /// one test uses the chosen draft's uniform (the race's own uniforms are always
    /// fresh).
    pub fn sample_with_bug<R: Rng + ?Sized>(
        &self,
        bug: Bug,
        drafts: &[DraftDraw],
        rng: &mut R,
    ) -> TokenOutcome {
        let uniforms = uniforms(drafts);
        self.sample_wired(&tokens(drafts), wiring(bug, &uniforms), rng)
    }
}

/// One position as a sampler with a bug sees it: the distributions it should use, and
/// those its acceptance test and residual actually use (the same unless the bug is
/// [`Bug::UnprocessedTarget`] or [`Bug::FilteredDraft`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BugPair<'a> {
    /// The target: what the output should follow.
    pub target: &'a Distribution,
    /// The draft the draft token is drawn from.
    pub draft: &'a Distribution,
    /// The target as the test uses it.
    pub tested_target: &'a Distribution,
    /// The draft as the test uses it.
    pub tested_draft: &'a Distribution,
}

impl<'a> BugPair<'a> {
    /// A pair whose tests use the right distributions.
    #[must_use]
    pub fn new(target: &'a Distribution, draft: &'a Distribution) -> Self {
        Self {
            target,
            draft,
            tested_target: target,
            tested_draft: draft,
        }
    }
}

/// The exact output distribution and acceptance probability of standard speculative
/// sampling with `bug`, the draft token drawn from `pair.draft` by [`draw_draft`], tested
/// against `pair.tested_target` and `pair.tested_draft`:
/// - [`Bug::ArgmaxDraft`]: the draft's argmax `m` is accepted with probability
///   `min(1, t(m)/d(m))`;
/// - [`Bug::SharedUniform`]: `x` is drawn when `u ∈ [F(x−1), F(x))` (`F` the draft's
///   CDF in index order) and accepted when `u < t(x)/d(x)`, so with probability
///   `max(0, min(F(x), t(x)/d(x)) − F(x−1))`;
/// - otherwise `x` is accepted with probability `d(x)·min(1, t(x)/d(x))` (with the
///   tested `t`, `d`);
///
/// and the rest of the mass goes to the target under [`Bug::ResampleFromTarget`], to
/// `norm(max(0, t − d))` otherwise. [`Bug::CacheReset`] has no effect at one position:
/// its analysis is the correct one.
///
/// # Errors
/// [`Error::LengthMismatch`] when the four distributions differ in length.
pub fn bug_analysis(bug: Bug, pair: &BugPair<'_>) -> Result<TokenAnalysis> {
    for other in [pair.draft, pair.tested_target, pair.tested_draft] {
        check_same_len(pair.target, other)?;
    }
    let (t, d) = (pair.tested_target.probs(), pair.tested_draft.probs());
    let drawn = pair.draft.probs();
    let best = pair.draft.argmax();
    let mut below = 0.0;
    let accepted = (0..t.len())
        .map(|x| {
            let (lo, hi) = (below, below + drawn[x]);
            below = hi;
            match bug {
                Bug::ArgmaxDraft if x == best => accept_prob(t[x], d[x], 1.0),
                Bug::ArgmaxDraft => 0.0,
                Bug::SharedUniform if drawn[x] > 0.0 && d[x] > 0.0 => {
                    (hi.min(t[x] / d[x]) - lo).max(0.0)
                }
                Bug::SharedUniform => 0.0,
                _ => drawn[x] * accept_prob(t[x], d[x], 1.0),
            }
        })
        .collect();
    let residual = match bug {
        Bug::ResampleFromTarget => pair.target.clone(),
        _ => Speculative::new(pair.tested_target, pair.tested_draft)?.residual_distribution(),
    };
    Ok(combine(accepted, &residual))
}
