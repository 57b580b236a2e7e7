//! Where a scheme's test uniforms and residual come from. Every lossless scheme samples
//! through a [`Wiring`]: [`Wiring::CORRECT`] for its own `sample`, a rewired one for the
//! deliberate bugs (`bug.rs`). Kept apart from the bugs so that the schemes depend on it
//! and the bugs on the schemes, never both ways.

use rand::Rng;

use crate::distribution::Distribution;
use crate::residual::{Residual, ResidualDraw, draw_pointwise};

/// The sources of a scheme's randomness: fresh uniforms and its own residual, or a bug's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wiring<'a> {
    /// The uniform each draft was drawn with, reused by its test.
    pub test_uniforms: Option<&'a [Option<f64>]>,
    /// Sample the target instead of the residual after a rejection.
    pub residual_from_target: bool,
}

impl Wiring<'_> {
    /// The correct scheme.
    pub(crate) const CORRECT: Wiring<'static> = Wiring {
        test_uniforms: None,
        residual_from_target: false,
    };

    /// The uniform for the test of draft `i`: its drawing uniform when shared, else a
    /// fresh one from `rng`.
    pub(crate) fn uniform<R: Rng + ?Sized>(&self, i: usize, rng: &mut R) -> f64 {
        self.test_uniforms
            .and_then(|us| us.get(i).copied().flatten())
            .unwrap_or_else(|| rng.random::<f64>())
    }

    /// The draw after a rejection from a point-wise residual (`own`, weighing each token
    /// by `weight(target, draft)`), or from the target when the wiring says so. One
    /// uniform from `rng` either way.
    pub(crate) fn draw_pointwise<R: Rng + ?Sized>(
        &self,
        own: Residual,
        target: &Distribution,
        draft: &Distribution,
        weight: impl Fn(f64, f64) -> f64,
        rng: &mut R,
    ) -> ResidualDraw {
        if self.residual_from_target {
            return draw_target(target, draft, rng);
        }
        draw_pointwise(own, target, draft, weight, rng.random::<f64>())
    }
}

/// The draw from the target that [`Wiring::residual_from_target`] puts in place of a
/// residual, with one uniform from `rng`: the target taken as point-wise weights (the
/// threshold is `u·Σ target`), the same draw in every scheme.
pub(crate) fn draw_target<R: Rng + ?Sized>(
    target: &Distribution,
    draft: &Distribution,
    rng: &mut R,
) -> ResidualDraw {
    draw_pointwise(
        Residual::Target,
        target,
        draft,
        |t, _| t,
        rng.random::<f64>(),
    )
}
