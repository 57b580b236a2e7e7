//! Injectable time sources. `std::time::Instant` does not exist on
//! `wasm32-unknown-unknown`, so the decoder reads time only through [`Clock`]; a page
//! implements it with `performance.now()`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A monotonic time source: the time elapsed since some fixed origin.
pub trait Clock {
    /// The current time since the clock's origin. Must never go backwards.
    fn now(&self) -> Duration;
}

/// A clock that never moves: every measured duration is zero. The default.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoClock;

impl Clock for NoClock {
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

/// A clock that moves only when told to; clones share the same time. Useful for
/// simulated model costs in tests and teaching (a synthetic model advances it per call).
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock at time zero.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forward by `by` (saturating at `u64::MAX` nanoseconds).
    pub fn advance(&self, by: Duration) {
        let add = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        // A lost race only matters to concurrent advancers; fetch_update keeps it exact.
        let _ = self
            .nanos
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_add(add))
            });
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }
}

/// Wall-clock time from [`std::time::Instant`]; not available on
/// `wasm32-unknown-unknown`.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
#[derive(Debug, Clone, Copy)]
pub struct StdClock {
    origin: std::time::Instant,
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl StdClock {
    /// A clock whose origin is now.
    #[must_use]
    pub fn new() -> Self {
        Self {
            origin: std::time::Instant::now(),
        }
    }
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl Default for StdClock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl Clock for StdClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}
