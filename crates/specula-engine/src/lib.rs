//! # specula-engine
//!
//! Sequence-level speculative decoding over any pair of language models, as a step-wise
//! state machine: the [`Decoder`] says what it needs ([`Step::Draft`] or
//! [`Step::Target`], each a [`ForwardRequest`]), the caller runs the model and
//! [`supply`](Decoder::supply)s the logits. The same decoder is driven synchronously
//! natively ([`generate`] over two [`LanguageModel`]s) and asynchronously in a browser.
//!
//! Notation: the **target** is the large model whose distribution the output follows;
//! the **draft** is the small model that proposes tokens.
//!
//! | method | config | per round |
//! |---|---|---|
//! | autoregressive | [`Method::Autoregressive`] | one target call, one token |
//! | speculative | [`Method::Speculative`] | γ draft calls, one target call over γ + 1 positions |
//! | SpecTr | [`Method::SpecTr`]: i.i.d. drafts ([`DraftShape::Iid`]) or a prefix tree ([`DraftShape::Tree`]); [`Selection::KSeq`] or [`Selection::Race`] (the optimal selection's acceptance) | L draft calls (all K sequences each), one target call over every node |
//! | multi-round | [`Method::MultiRound`] | as SpecTr, multi-round rejection instead of a selection rule |
//! | mentored | [`Method::Mentored`] | as speculative, lossy test with KL ≤ D per position |
//! | typical | [`Method::Typical`] | as speculative, lossy test `target(x) > min(ε, δ·exp(−H(target)))` (Medusa) |
//! | lookup | [`Method::Lookup`] | no draft model: up to γ tokens copied from the context (prompt lookup, [`lookup`]), one target call |
//!
//! Temperature 0 makes every method greedy (greedy verification). Models return logits;
//! the engine turns them into distributions with the same [`SamplingConfig`] for both
//! models, and draws each draft token from exactly the distribution later used to test it.
//!
//! Each round yields a [`RoundTrace`] (serde-serialisable), and the decoder keeps
//! [`Metrics`] with vLLM's definitions. Time is read through an injectable [`Clock`].
//!
//! For teaching, and for measuring the power of exactness tests, [`DecodeConfig::bug`]
//! plants one of `specula_core`'s deliberate mistakes ([`Bug`]) in the decoder: in the
//! draft draws, the distributions tested, the selection, or the context the models see.
//!
//! ```
//! use specula_engine::synthetic::MarkovModel;
//! use specula_engine::{DecodeConfig, Decoder, DraftShape, Method, Selection, generate};
//!
//! let mut target = MarkovModel::random(6, 2, 7, 2.0)?;
//! let mut draft = target.perturbed(8, 1.0)?;
//! let config = DecodeConfig::builder(Method::SpecTr {
//!     drafts: DraftShape::Iid { k: 3, length: 4 },
//!     selection: Selection::KSeq,
//! })
//! .max_new_tokens(20)
//! .build()?;
//! let mut decoder = Decoder::new(config, vec![1, 2])?;
//! let out = generate(&mut decoder, &mut draft, &mut target)?;
//! assert_eq!(out.tokens.len(), 20);
//! let m = &out.metrics;
//! assert_eq!(m.emitted_tokens, m.accepted_tokens + m.resampled_tokens + m.bonus_tokens);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`SamplingConfig`]: specula_core::SamplingConfig
//! [`Bug`]: specula_core::Bug
#![deny(missing_docs)]

// The README's Rust snippets, compiled and run as doc tests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeSnippets;

mod api_error;
mod clock;
mod config;
mod decoder;
mod draft_tree;
mod driver;
mod error;
mod gamma;
#[cfg(feature = "lab")]
pub mod lab;
pub mod lookup;
mod metrics;
mod model;
pub mod options;
mod request;
mod round;
mod select;
mod stages;
mod stopping;
pub mod synthetic;
mod trace;
mod window;

pub use api_error::{ApiError, ErrorCode};
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use clock::StdClock;
pub use clock::{Clock, ManualClock, NoClock};
pub use config::{
    DEFAULT_MAX_NEW_TOKENS, DecodeConfig, DecodeConfigBuilder, DraftShape, GammaPolicy, Method,
    Selection,
};
pub use decoder::{Decoder, ParallelBug};
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use driver::generate_parallel;
pub use driver::{Generation, generate, generate_autoregressive};
pub use error::{Error, ModelError, Result};
pub use metrics::{Metrics, MetricsSummary};
pub use model::LanguageModel;
pub use request::{ForwardRequest, ForwardResponse, Query, Role, Step};
pub use specula_core::SamplingConfig;
pub use stages::{ForwardStage, StageTimes};
pub use stopping::{Detokenizer, FinishReason};
pub use trace::{
    BonusStep, DepthStep, DraftNode, RoundTrace, StepPlan, Timing, TokenCounts, TokenSource,
};
pub use window::{slide_context, stretch_config, window_start};
