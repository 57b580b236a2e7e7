//! The trained pair embedded in `specula-model` ([`specula_model::bundled`]), on the host
//! forward pass.

use specula_model::{ModelRole, Result, bundled};

use crate::pass::{HostLm, HostPass};

/// The embedded model of `role` on the host forward pass, ready for decoding.
///
/// # Errors
/// The errors of [`bundled::bundle`] and [`HostPass::from_bundle`].
pub fn load(role: ModelRole) -> Result<HostLm> {
    Ok(HostLm::from_pass(HostPass::from_bundle(&bundled::bundle(
        role,
    )?)?))
}
