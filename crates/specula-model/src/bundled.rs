//! The trained draft/target pair, embedded in the crate (`include_bytes!`, so it works in
//! wasm too): f16 burnpack weights and their JSON descriptions from `weights/`, checked
//! against the SHA-256 recorded in each description when loaded. How they were trained,
//! and their figures, are in MODELS.md.

use crate::backend::Backend;
use crate::burn_lm::BurnLm;
use crate::config::ModelRole;
use crate::error::Result;
use crate::tokenizer::CharTokenizer;
use crate::weights::ModelBundle;

const DRAFT_META: &[u8] = include_bytes!("../weights/draft.json");
const DRAFT_WEIGHTS: &[u8] = include_bytes!("../weights/draft.bpk");
const TARGET_META: &[u8] = include_bytes!("../weights/target.json");
const TARGET_WEIGHTS: &[u8] = include_bytes!("../weights/target.bpk");

/// The raw embedded files of `role`: the JSON description and the burnpack weights.
#[must_use]
pub fn files(role: ModelRole) -> (&'static [u8], &'static [u8]) {
    match role {
        ModelRole::Draft => (DRAFT_META, DRAFT_WEIGHTS),
        ModelRole::Target => (TARGET_META, TARGET_WEIGHTS),
    }
}

/// The embedded bundle of `role`, checksum verified.
///
/// # Errors
/// The errors of [`ModelBundle::from_parts`] (only if the embedded files are corrupt).
pub fn bundle(role: ModelRole) -> Result<ModelBundle> {
    let (meta, weights) = files(role);
    ModelBundle::from_parts(meta, weights)
}

/// The embedded model of `role` on burn's forward pass, ready for decoding on `backend`.
///
/// # Errors
/// [`bundle`]'s errors, the backend's, and those of [`ModelBundle::build`].
pub fn load(role: ModelRole, backend: Backend) -> Result<BurnLm> {
    bundle(role)?.build(&backend.device()?)
}

/// The character tokenizer both embedded models share.
///
/// # Errors
/// [`bundle`]'s errors.
pub fn tokenizer() -> Result<CharTokenizer> {
    Ok(bundle(ModelRole::Target)?.meta.tokenizer)
}
