//! Software prefetches: for the dense kernel's weight stream, and for attention's next
//! head. This module holds the workspace's only `unsafe` block, because the
//! intrinsic is an `unsafe` call outside `#[target_feature]` code and no crate offers it
//! safely.
//!
//! Why: with several rows a block does so much arithmetic per weight that the out-of-order
//! core no longer runs far enough ahead to keep memory busy, and the arithmetic and the
//! weight stream take turns instead of overlapping (MODELS.md, "Software prefetch").
//! Attention reads each head's keys and values once per layer, after the weight stream
//! has pushed them out of the caches.

/// How far ahead of the kernel the weights are requested. Measured on the 320-wide target's
/// dense layers: 4 KiB helped a little, 16 KiB most, 32 and 64 KiB no more than none; on
/// the 384-wide one 8 and 32 KiB were no better for blocks of 2–4 rows (MODELS.md, "Software
/// prefetch").
const AHEAD_BYTES: usize = 16 * 1024;

/// Asks the CPU to start loading into cache the memory `AHEAD_BYTES` past `at`, as many
/// bytes as `T` has. Nothing is read into the program and the results cannot change; on
/// targets other than x86-64 it does nothing.
#[inline(always)]
pub(crate) fn ahead<T>(at: &T) {
    // `wrapping_add` forms the address without any claim that it is in bounds.
    let first = std::ptr::from_ref(at)
        .cast::<i8>()
        .wrapping_add(AHEAD_BYTES);
    lines::<{ T0 }>(first, size_of::<T>());
}

/// Asks the CPU to start loading `data` into its L2 cache, so that code that reads it soon
/// finds it there. Nothing is read into the program; on targets other than x86-64 it does
/// nothing.
#[inline(always)]
pub(crate) fn into_l2(data: &[f32]) {
    lines::<{ T1 }>(data.as_ptr().cast(), size_of_val(data));
}

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{_MM_HINT_T0 as T0, _MM_HINT_T1 as T1};
#[cfg(not(target_arch = "x86_64"))]
const T0: i32 = 0;
#[cfg(not(target_arch = "x86_64"))]
const T1: i32 = 0;

/// A prefetch with hint `HINT` of every 64-byte line of the `bytes` bytes from `first`.
#[inline(always)]
fn lines<const HINT: i32>(first: *const i8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    for line in (0..bytes).step_by(64) {
        // SAFETY: a prefetch is a hint. It does not dereference its address in the
        // program's sense and never faults, whatever the address, and SSE, which the
        // intrinsic needs, is part of every x86-64 CPU.
        #[allow(unsafe_code)]
        unsafe {
            core::arch::x86_64::_mm_prefetch::<HINT>(first.wrapping_add(line));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (first, bytes);
}
