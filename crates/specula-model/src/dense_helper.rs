//! A second thread for one forward pass: it computes half the output columns of every
//! large dense call while the calling thread computes the other half.
//!
//! Why: one target position is bound by memory bandwidth (two single-threaded processes
//! here each ran at ~half speed), but verifying several positions adds multiply-adds that
//! one core cannot hide behind the weight stream (two 5-position processes each kept
//! ~85 % of their speed). A second core takes half of that arithmetic. The thread lives
//! for one forward pass and spins between calls: waking a sleeping thread (rayon's
//! `join`) cost ~25 µs per call, more than half a dense call. On wasm, or wherever a
//! thread cannot be spawned, every call runs on the calling thread.

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{Scope, ScopedJoinHandle};

use crate::dense::PackedDense;

/// Multiply-adds per call from which a call is split: below it the hand-over costs more
/// than it saves (the draft's layers stay whole).
const SPLIT_WORK: usize = 1 << 18;

/// Half of one dense call, for the helper thread.
struct Job<'m> {
    layer: &'m PackedDense,
    x: Vec<f32>,
    rows: usize,
    panels: Range<usize>,
}

/// What the two threads share.
#[derive(Default)]
struct Shared<'m> {
    job: Mutex<Option<Job<'m>>>,
    result: Mutex<Option<Vec<f32>>>,
    /// Set when a job is posted, cleared once its result is stored.
    busy: AtomicBool,
    stop: AtomicBool,
    /// Jobs the helper has finished.
    served: AtomicUsize,
}

impl Shared<'_> {
    /// The helper's loop: run posted jobs until told to stop.
    fn serve(&self) {
        let mut idle = 0_u32;
        while !self.stop.load(Ordering::Acquire) {
            if !self.busy.load(Ordering::Acquire) {
                wait(&mut idle);
                continue;
            }
            idle = 0;
            let job = self.job.lock().ok().and_then(|mut j| j.take());
            if let Some(Job {
                layer,
                x,
                rows,
                panels,
            }) = job
            {
                let out = layer.columns(&x, rows, panels);
                if let Ok(mut r) = self.result.lock() {
                    *r = Some(out);
                }
                self.served.fetch_add(1, Ordering::Relaxed);
            }
            self.busy.store(false, Ordering::Release);
        }
    }
}

/// One step of waiting for the other thread: a CPU spin hint, and after a while also a
/// yield, so that on a busy or single-core machine the other thread gets to run.
fn wait(idle: &mut u32) {
    *idle = idle.saturating_add(1);
    if *idle > 256 {
        std::thread::yield_now();
    } else {
        std::hint::spin_loop();
    }
}

/// The calling thread's side of a helper, for the dense calls of one forward pass.
pub(crate) struct Helper<'s, 'm> {
    shared: &'s Shared<'m>,
    thread: ScopedJoinHandle<'s, ()>,
}

/// Sets its flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Runs `f` with a helper thread when `threads` ≥ 2 and a thread can be spawned, else
/// with none; the helper stops when `f` returns.
pub(crate) fn with_helper<'m, R>(
    threads: usize,
    f: impl FnOnce(Option<&Helper<'_, 'm>>) -> R,
) -> R {
    if threads < 2 {
        return f(None);
    }
    let shared = Shared::default();
    std::thread::scope(|scope: &Scope<'_, '_>| {
        // Stops the helper however `f` ends: the scope waits for it, so a helper left
        // spinning would hang an unwinding caller.
        let _stop = StopOnDrop(&shared.stop);
        let spawned = std::thread::Builder::new()
            .name("specula-dense".into())
            .spawn_scoped(scope, || shared.serve());
        match spawned {
            Ok(thread) => f(Some(&Helper {
                shared: &shared,
                thread,
            })),
            Err(_) => f(None),
        }
    })
}

/// Whether a call of `rows` rows through `layer` would be split.
pub(crate) fn splits(layer: &PackedDense, rows: usize) -> bool {
    layer.n_panels() >= 2 && rows * layer.work_per_row() >= SPLIT_WORK
}

/// `layer` applied to `rows` rows of `x`, half of its columns on the helper when there
/// is one and the call is large enough; `None` when `x` has the wrong length.
pub(crate) fn apply<'m>(
    layer: &'m PackedDense,
    x: &[f32],
    rows: usize,
    helper: Option<&Helper<'_, 'm>>,
) -> Option<Vec<f32>> {
    let panels = layer.n_panels();
    let Some(helper) = helper.filter(|_| splits(layer, rows)) else {
        return layer.apply(x, rows);
    };
    if x.len() != rows * layer.d_in() {
        return None;
    }
    let mid = panels / 2;
    let shared = helper.shared;
    if let Ok(mut job) = shared.job.lock() {
        *job = Some(Job {
            layer,
            x: x.to_vec(),
            rows,
            panels: mid..panels,
        });
    }
    shared.busy.store(true, Ordering::Release);
    let first = layer.columns(x, rows, 0..mid);
    let mut idle = 0;
    while shared.busy.load(Ordering::Acquire) {
        if helper.thread.is_finished() {
            // The helper died (it cannot panic by design); do its half here.
            break;
        }
        wait(&mut idle);
    }
    let second = shared
        .result
        .lock()
        .ok()
        .and_then(|mut r| r.take())
        .unwrap_or_else(|| layer.columns(x, rows, mid..panels));
    let (wa, wb) = (first.len() / rows, second.len() / rows);
    let mut out = Vec::with_capacity(first.len() + second.len());
    for r in 0..rows {
        out.extend_from_slice(&first[r * wa..(r + 1) * wa]);
        out.extend_from_slice(&second[r * wb..(r + 1) * wb]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_helper_computes_half_of_each_large_call_and_nothing_of_small_ones() {
        let (k, n) = (256, 1030);
        let w: Vec<f32> = (0..k * n)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 97.0)
            .collect();
        let b: Vec<f32> = (0..n).map(|j| j as f32 / 100.0).collect();
        let layer = PackedDense::new(&w, Some(&b), k, n).unwrap();
        let x: Vec<f32> = (0..3 * k)
            .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
            .collect();
        assert!(splits(&layer, 1) && !splits(&layer, 0));
        let small = PackedDense::new(&w[..k * 64], None, k, 64).unwrap();
        assert!(!splits(&small, 3));
        let (outs, served) = with_helper(2, |helper| {
            let helper = helper.expect("a helper thread");
            let outs = [1, 3].map(|rows| apply(&layer, &x[..rows * k], rows, Some(helper)));
            let whole = apply(&small, &x, 3, Some(helper));
            assert_eq!(whole, small.apply(&x, 3));
            assert_eq!(
                apply(&layer, &x[1..], 3, Some(helper)),
                None,
                "wrong length"
            );
            (outs, helper.shared.served.load(Ordering::Relaxed))
        });
        assert_eq!(served, 2, "one job per split call");
        for (rows, out) in [1, 3].into_iter().zip(outs) {
            assert_eq!(out, layer.apply(&x[..rows * k], rows), "{rows} rows");
        }
        assert!(with_helper(1, |helper| helper.is_none()));
    }

    #[test]
    fn a_panicking_caller_does_not_wait_forever_for_its_helper() {
        let unwound = std::panic::catch_unwind(|| {
            with_helper(2, |helper| {
                assert!(helper.is_some());
                panic!("the caller fails");
            })
        });
        assert!(unwound.is_err());
    }
}
