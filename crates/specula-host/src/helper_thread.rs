//! A second thread for one forward pass: the calling thread hands it half of each large
//! step (the columns of a dense call, the heads of attention) and does the other half.
//!
//! Why: one target position is bound by memory bandwidth (two single-threaded processes
//! here each ran at ~half speed), but verifying several positions adds multiply-adds that
//! one core cannot hide behind the weight stream (two 5-position processes each kept
//! ~85 % of their speed). A second core takes half of that arithmetic. The thread lives
//! for one forward pass and spins between steps: waking a sleeping thread (rayon's
//! `join`) cost ~25 µs per call, more than half a dense call. On wasm, or wherever a
//! thread cannot be spawned, every step runs on the calling thread.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{Scope, ScopedJoinHandle};

/// The helper's half of a step. `Fn`, not `FnOnce`, so that the calling thread can still
/// run it should the helper be gone.
pub(crate) type Task<'m> = Arc<dyn Fn() -> Vec<f32> + Send + Sync + 'm>;

/// What the two threads share.
#[derive(Default)]
struct Shared<'m> {
    task: Mutex<Option<Task<'m>>>,
    result: Mutex<Option<Vec<f32>>>,
    /// Set when a task is posted, cleared once its result is stored.
    busy: AtomicBool,
    stop: AtomicBool,
    /// Tasks the helper has finished.
    served: AtomicUsize,
}

impl Shared<'_> {
    /// The helper's loop: run posted tasks until told to stop.
    fn serve(&self) {
        let mut idle = 0_u32;
        while !self.stop.load(Ordering::Acquire) {
            if !self.busy.load(Ordering::Acquire) {
                wait(&mut idle);
                continue;
            }
            idle = 0;
            let task = self.task.lock().ok().and_then(|mut t| t.take());
            if let Some(task) = task {
                let out = task();
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

/// The calling thread's side of a helper, for the steps of one forward pass.
pub(crate) struct Helper<'s, 'm> {
    shared: &'s Shared<'m>,
    thread: ScopedJoinHandle<'s, ()>,
}

impl<'m> Helper<'_, 'm> {
    /// Runs `theirs` on the helper while `ours` runs here; both results.
    pub(crate) fn join<A>(&self, theirs: Task<'m>, ours: impl FnOnce() -> A) -> (A, Vec<f32>) {
        let shared = self.shared;
        if let Ok(mut task) = shared.task.lock() {
            *task = Some(Arc::clone(&theirs));
        }
        shared.busy.store(true, Ordering::Release);
        let mine = ours();
        let mut idle = 0;
        while shared.busy.load(Ordering::Acquire) {
            if self.thread.is_finished() {
                // The helper is gone (its tasks cannot panic by design): run it here.
                break;
            }
            wait(&mut idle);
        }
        let theirs = shared
            .result
            .lock()
            .ok()
            .and_then(|mut r| r.take())
            .unwrap_or_else(|| theirs());
        (mine, theirs)
    }

    /// Tasks the helper has finished so far.
    #[cfg(test)]
    pub(crate) fn served(&self) -> usize {
        self.shared.served.load(Ordering::Relaxed)
    }
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
            .name("specula-helper".into())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_runs_one_task_on_the_helper_and_the_other_here() {
        let data: Vec<f32> = (0..100).map(|i| i as f32).collect();
        let (results, served) = with_helper(2, |helper| {
            let helper = helper.expect("a helper thread");
            let results: Vec<_> = (0..3)
                .map(|k| {
                    let theirs: Task<'_> = Arc::new({
                        let data = &data;
                        move || data.iter().map(|v| v * k as f32).collect()
                    });
                    helper.join(theirs, || k)
                })
                .collect();
            (results, helper.served())
        });
        assert_eq!(served, 3, "one task per join");
        for (k, (mine, theirs)) in results.into_iter().enumerate() {
            assert_eq!(mine, k);
            assert_eq!(theirs[7], 7.0 * k as f32);
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
