//! [`StageProfile`]: opt-in timing of each stage of the host forward pass
//! ([`ForwardStage`]), to see where a pass of a few new positions spends its time.
//!
//! Off by default, when a pass pays one branch per stage. On, each pass reads the
//! profile's clock between its stages and adds what it measured to the totals once, at
//! its end. The clock is injected ([`Clock`]): `std::time::Instant` does not exist on
//! `wasm32-unknown-unknown`, where the bindings give `performance.now()`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use specula_engine::{Clock, ForwardStage, StageTimes};

/// A clock a forward pass can read from any thread.
pub type SharedClock = Arc<dyn Clock + Send + Sync>;

/// The stage profile of one host pass; reach it through
/// [`HostPass::stage_profile_mut`](crate::HostPass::stage_profile_mut),
/// [`HostLlamaPass::stage_profile_mut`](crate::HostLlamaPass::stage_profile_mut) or
/// [`DeviceLm::stage_profile_mut`](crate::DeviceLm::stage_profile_mut).
#[derive(Default)]
pub struct StageProfile {
    clock: Option<SharedClock>,
    totals: Mutex<StageTimes>,
}

impl std::fmt::Debug for StageProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageProfile")
            .field("enabled", &self.is_enabled())
            .field("totals", &self.times())
            .finish()
    }
}

impl StageProfile {
    /// Times every later forward pass with `clock`, from totals of zero.
    pub fn enable(&mut self, clock: SharedClock) {
        self.clock = Some(clock);
        self.reset();
    }

    /// Stops timing; the totals stay readable until [`reset`](Self::reset) or the next
    /// [`enable`](Self::enable).
    pub fn disable(&mut self) {
        self.clock = None;
    }

    /// Whether passes are being timed.
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        self.clock.is_some()
    }

    /// The totals so far.
    #[must_use]
    pub fn times(&self) -> StageTimes {
        *self.totals.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the totals back to zero (timing goes on if it was on).
    pub fn reset(&mut self) {
        *self
            .totals
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner) = StageTimes::default();
    }

    /// A timer for one forward pass of `positions` new positions: a no-op when off.
    pub(crate) fn timer(&self, positions: usize) -> StageTimer<'_> {
        StageTimer {
            on: self.clock.as_deref().map(|clock| {
                let now = clock.now();
                Running {
                    totals: &self.totals,
                    clock,
                    start: now,
                    last: now,
                    times: StageTimes {
                        passes: 1,
                        positions: positions as u64,
                        ..StageTimes::default()
                    },
                }
            }),
        }
    }
}

/// The timing of one forward pass (see [`StageProfile::timer`]).
pub(crate) struct StageTimer<'p> {
    on: Option<Running<'p>>,
}

struct Running<'p> {
    totals: &'p Mutex<StageTimes>,
    clock: &'p (dyn Clock + Send + Sync),
    start: Duration,
    last: Duration,
    times: StageTimes,
}

impl StageTimer<'_> {
    /// Ends `stage`: the time since the last lap (or the pass's start) is its.
    #[inline]
    pub(crate) fn lap(&mut self, stage: ForwardStage) {
        if let Some(r) = &mut self.on {
            let now = r.clock.now();
            let spent = now.saturating_sub(r.last);
            r.times.stages[stage.index()] += spent;
            r.last = now;
        }
    }

    /// Ends the pass, adding its times to the profile's totals.
    pub(crate) fn finish(self) {
        if let Some(mut r) = self.on {
            r.times.total = r.clock.now().saturating_sub(r.start);
            r.totals
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add(&r.times);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use specula_engine::ManualClock;

    #[test]
    fn a_timer_adds_each_lap_to_its_stage() {
        let clock = ManualClock::new();
        let mut profile = StageProfile::default();
        let mut off = profile.timer(3);
        off.lap(ForwardStage::Qkv);
        off.finish();
        assert_eq!(profile.times(), StageTimes::default());
        profile.enable(Arc::new(clock.clone()));
        for _ in 0..2 {
            let mut timer = profile.timer(5);
            clock.advance(Duration::from_millis(2));
            timer.lap(ForwardStage::Embed);
            clock.advance(Duration::from_millis(3));
            timer.lap(ForwardStage::Attention);
            clock.advance(Duration::from_millis(1));
            timer.finish();
        }
        let t = profile.times();
        assert_eq!((t.passes, t.positions), (2, 10));
        assert_eq!(t.stage(ForwardStage::Embed), Duration::from_millis(4));
        assert_eq!(t.stage(ForwardStage::Attention), Duration::from_millis(6));
        assert_eq!(t.total, Duration::from_millis(12));
        profile.disable();
        assert!(!profile.is_enabled());
        assert_eq!(profile.times(), t);
        profile.reset();
        assert_eq!(profile.times(), StageTimes::default());
    }
}
