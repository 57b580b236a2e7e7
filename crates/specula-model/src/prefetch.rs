//! Software prefetches: for the dense kernel's weight stream, and for attention's next
//! head. This module holds the workspace's only `unsafe` code (two blocks), because the
//! intrinsic is an `unsafe` call outside `#[target_feature]` code and no crate offers it
//! safely.
//!
//! Why: with several rows a block does so much arithmetic per weight that the out-of-order
//! core no longer runs far enough ahead to keep memory busy, and the arithmetic and the
//! weight stream take turns instead of overlapping (BENCHMARKS.md, "Software prefetch").
//! Attention reads each head's keys and values once per layer, after the weight stream
//! has pushed them out of the caches.

/// How far ahead of the kernel the weights are requested. Measured on the target's dense
/// layers: 4 KiB helped a little, 16 KiB most, 32 and 64 KiB no more than none.
#[cfg(target_arch = "x86_64")]
const AHEAD_BYTES: usize = 16 * 1024;

/// Asks the CPU to start loading into cache the memory `AHEAD_BYTES` past `at`, as many
/// bytes as `T` has. Nothing is read into the program and the results cannot change; on
/// targets other than x86-64 it does nothing.
#[inline(always)]
pub(crate) fn ahead<T>(at: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // `wrapping_add` forms the address without any claim that it is in bounds.
        let first = std::ptr::from_ref(at)
            .cast::<i8>()
            .wrapping_add(AHEAD_BYTES);
        for line in (0..size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch is a hint. It does not dereference its address in the
            // program's sense and never faults, whatever the address, and SSE, which the
            // intrinsic needs, is part of every x86-64 CPU.
            #[allow(unsafe_code)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(line));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// Asks the CPU to start loading `data` into its L2 cache (hint T1), line by line, so that
/// code that reads it soon finds it there. Nothing is read into the program; on targets
/// other than x86-64 it does nothing.
#[inline(always)]
pub(crate) fn into_l2(data: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T1, _mm_prefetch};
        for line in data.chunks(16) {
            // SAFETY: as in `ahead`; the address is moreover inside `data`.
            #[allow(unsafe_code)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T1>(line.as_ptr().cast::<i8>());
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}
