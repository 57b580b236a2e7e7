//! # specula-decode
//!
//! The decoding engine alone ([`specula_engine`] and the token-level math of `specula-core`) as a small
//! WebAssembly module for the npm package's `decode()`: exact speculative decoding over
//! any pair of models the caller runs in JavaScript. There are no models and no burn here,
//! so the module loads on the calling thread, in Node and in browsers.
//!
//! [`DecodeSession`] is the step-wise decoder as JavaScript sees it: `nextModel()` says which
//! model must start a request (under parallel drafting both may run one at once), the
//! request comes out either as `logits(tokens, count)` calls ([`calls`]) or as the
//! engine's whole request (for a model's `forward`), and the answers go back in one
//! `Float32Array`, named by model. The package's `web/src/decode.js` drives it, awaiting
//! models that return promises.
//!
//! The native logic ([`Session`]) is plain Rust, tested with `cargo test`; the bindings
//! only convert values.
#![deny(missing_docs)]

pub mod calls;
mod js;
mod report;
mod session;

#[cfg(test)]
mod generated;

pub use js::DecodeSession;
pub use report::{DecodeRound, DecodeSummary};
pub use session::{Next, Pending, Session};
