//! Host buffers for what every forward pass streams through: the packed dense weights
//! (one block per model) and the shared-prefix keys and values.
//!
//! Why: one target position reads ~30 MB of weights. On 4 KiB pages that is ~7,500 TLB
//! misses per forward, and the hardware prefetchers stop at every page boundary (the
//! prefix's keys and values, read in runs of a few KiB, paid a stream start per page).
//! In anonymous mappings advised for transparent huge pages (Linux; most systems set THP
//! to `madvise`) one target position ran 1.2–1.5× faster here (MODELS.md). Elsewhere,
//! for small buffers, or when the mapping fails, a buffer is an ordinary `Vec`.

/// A zero-initialised f32 buffer, in huge pages where the system allows.
#[derive(Debug)]
pub(crate) struct HostMemory {
    storage: Storage,
    /// The floats asked for (a mapping is rounded up to whole huge pages).
    len: usize,
}

#[derive(Debug)]
enum Storage {
    Heap(Vec<f32>),
    #[cfg(target_os = "linux")]
    Mapped(memmap2::MmapMut),
}

/// Floats between the starts of two gathered parts: a 64-byte cache line.
const PART_ALIGN: usize = 16;

/// Bytes below which a buffer stays on the heap: a huge page would mostly hold nothing.
const MIN_MAPPED_BYTES: usize = 1 << 20;

impl HostMemory {
    /// `len` zeros, in huge pages when `huge_pages`, the buffer is large enough and the
    /// system allows.
    pub(crate) fn zeroed(len: usize, huge_pages: bool) -> Self {
        let mapped = if huge_pages && len * size_of::<f32>() >= MIN_MAPPED_BYTES {
            mapped_zeros(len)
        } else {
            None
        };
        Self {
            storage: mapped.unwrap_or_else(|| Storage::Heap(vec![0.0; len])),
            len,
        }
    }

    /// `values` as they are, on the heap.
    pub(crate) fn from_vec(values: Vec<f32>) -> Self {
        Self {
            len: values.len(),
            storage: Storage::Heap(values),
        }
    }

    /// All `parts` in one buffer (see [`zeroed`](Self::zeroed)), each starting on a cache
    /// line; returns the buffer and each part's offset in it.
    pub(crate) fn gather(parts: &[&[f32]], huge_pages: bool) -> (Self, Vec<usize>) {
        let mut offsets = Vec::with_capacity(parts.len());
        let mut len = 0;
        for part in parts {
            offsets.push(len);
            len += part.len().next_multiple_of(PART_ALIGN);
        }
        let mut memory = Self::zeroed(len, huge_pages);
        let all = memory.as_mut_slice();
        for (part, &at) in parts.iter().zip(&offsets) {
            all[at..at + part.len()].copy_from_slice(part);
        }
        (memory, offsets)
    }

    /// The values.
    // Without Linux the storage has one kind, so these matches are infallible there.
    #[cfg_attr(
        not(target_os = "linux"),
        allow(clippy::infallible_destructuring_match)
    )]
    pub(crate) fn as_slice(&self) -> &[f32] {
        let all: &[f32] = match &self.storage {
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => bytemuck::cast_slice(&m[..]),
        };
        &all[..self.len]
    }

    /// The values, to write.
    #[cfg_attr(
        not(target_os = "linux"),
        allow(clippy::infallible_destructuring_match)
    )]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [f32] {
        let all: &mut [f32] = match &mut self.storage {
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => bytemuck::cast_slice_mut(&mut m[..]),
        };
        &mut all[..self.len]
    }

    /// Whether the values live in a mapping advised for huge pages.
    pub(crate) fn is_mapped(&self) -> bool {
        match &self.storage {
            Storage::Heap(_) => false,
            #[cfg(target_os = "linux")]
            Storage::Mapped(_) => true,
        }
    }
}

/// `len` zeros in an anonymous mapping advised for transparent huge pages, its length
/// rounded up to whole 2 MiB pages (so the kernel also aligns it to them); `None` when
/// the system refuses.
#[cfg(target_os = "linux")]
fn mapped_zeros(len: usize) -> Option<Storage> {
    const HUGE_PAGE: usize = 2 << 20;
    let bytes = (len * size_of::<f32>()).next_multiple_of(HUGE_PAGE);
    let map = memmap2::MmapMut::map_anon(bytes).ok()?;
    // Only advice: without THP the mapping still works, on small pages.
    let _ = map.advise(memmap2::Advice::HugePage);
    // Anonymous mappings are zeroed and page-aligned, so the f32 casts cannot fail.
    Some(Storage::Mapped(map))
}

#[cfg(not(target_os = "linux"))]
fn mapped_zeros(_len: usize) -> Option<Storage> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_parts_on_cache_lines_in_order() {
        let a: Vec<f32> = (0..5).map(|i| i as f32).collect();
        // Large enough to be mapped.
        let b: Vec<f32> = (0..MIN_MAPPED_BYTES / 4).map(|i| i as f32).collect();
        for huge in [false, true] {
            let (memory, offsets) = HostMemory::gather(&[&a, &b, &[]], huge);
            assert_eq!(offsets, [0, 16, 16 + b.len()]);
            let all = memory.as_slice();
            assert_eq!(all.len(), 16 + b.len());
            assert_eq!(&all[0..5], &a[..]);
            assert!(all[5..16].iter().all(|&v| v == 0.0));
            assert_eq!(&all[16..], &b[..]);
            assert_eq!(memory.is_mapped(), huge && cfg!(target_os = "linux"));
        }
    }

    #[test]
    fn small_or_empty_buffers_stay_on_the_heap_and_all_are_writable() {
        let (memory, offsets) = HostMemory::gather(&[], true);
        assert!(offsets.is_empty());
        assert!(memory.as_slice().is_empty());
        assert!(!memory.is_mapped());
        let mut small = HostMemory::zeroed(10, true);
        assert!(!small.is_mapped());
        let mut large = HostMemory::zeroed(MIN_MAPPED_BYTES / 4 + 1, true);
        assert_eq!(large.is_mapped(), cfg!(target_os = "linux"));
        for m in [&mut small, &mut large] {
            let n = m.as_slice().len();
            m.as_mut_slice()[n - 1] = 3.0;
            assert_eq!(m.as_slice()[n - 1], 3.0);
            assert!(m.as_slice()[..n - 1].iter().all(|&v| v == 0.0));
        }
    }
}
