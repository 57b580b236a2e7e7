//! The decoder's clock in a browser or worker: `performance.now()`, since
//! `std::time::Instant` does not exist on `wasm32-unknown-unknown`.

use std::time::Duration;

use specula_engine::Clock;
use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Milliseconds since the page (or worker) started, as a [`Clock`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct PerformanceClock;

impl Clock for PerformanceClock {
    fn now(&self) -> Duration {
        Duration::from_secs_f64(performance_now().max(0.0) / 1000.0)
    }
}
