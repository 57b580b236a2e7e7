//! One block of memory for all of a model's packed dense weights.
//!
//! Why: one target position streams ~30 MB of weights. On 4 KiB pages that is ~7,500
//! TLB misses per forward, and the hardware prefetchers stop at every page boundary.
//! Gathered into one anonymous mapping advised for transparent huge pages (Linux; most
//! systems set THP to `madvise`), the same forward ran ~1.5× faster here (MODELS.md).
//! Elsewhere, or when the mapping fails, it is an ordinary heap buffer.

/// Read-only f32 storage for packed weights.
#[derive(Debug)]
pub(crate) struct PanelMemory(Storage);

#[derive(Debug)]
enum Storage {
    Heap(Vec<f32>),
    #[cfg(target_os = "linux")]
    Mapped(memmap2::MmapMut),
}

/// Floats between the starts of two parts: a 64-byte cache line.
const PART_ALIGN: usize = 16;

impl PanelMemory {
    /// `values` on the heap.
    pub(crate) fn heap(values: Vec<f32>) -> Self {
        Self(Storage::Heap(values))
    }

    /// All `parts` in one block (in huge pages where the system allows), each starting on
    /// a cache line; returns the block and each part's offset in it.
    pub(crate) fn gather(parts: &[&[f32]], huge_pages: bool) -> (Self, Vec<usize>) {
        let mut offsets = Vec::with_capacity(parts.len());
        let mut len = 0;
        for part in parts {
            offsets.push(len);
            len += part.len().next_multiple_of(PART_ALIGN);
        }
        let mut storage = if huge_pages {
            mapped_zeros(len).unwrap_or_else(|| Storage::Heap(vec![0.0; len]))
        } else {
            Storage::Heap(vec![0.0; len])
        };
        let all = storage.as_mut_slice();
        for (part, &at) in parts.iter().zip(&offsets) {
            all[at..at + part.len()].copy_from_slice(part);
        }
        (Self(storage), offsets)
    }

    /// The stored values (padding between parts included).
    pub(crate) fn as_slice(&self) -> &[f32] {
        match &self.0 {
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => bytemuck::cast_slice(&m[..]),
        }
    }

    /// Whether the values live in a mapping advised for huge pages.
    pub(crate) fn is_mapped(&self) -> bool {
        match &self.0 {
            Storage::Heap(_) => false,
            #[cfg(target_os = "linux")]
            Storage::Mapped(_) => true,
        }
    }
}

impl Storage {
    fn as_mut_slice(&mut self) -> &mut [f32] {
        match self {
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => bytemuck::cast_slice_mut(&mut m[..]),
        }
    }
}

/// `len` zeros in an anonymous mapping advised for transparent huge pages, its length
/// rounded up to whole 2 MiB pages (so the kernel also aligns it to them); `None` when
/// there is nothing to map or the system refuses.
#[cfg(target_os = "linux")]
fn mapped_zeros(len: usize) -> Option<Storage> {
    const HUGE_PAGE: usize = 2 << 20;
    if len == 0 {
        return None;
    }
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
        let b: Vec<f32> = (0..40).map(|i| 100.0 + i as f32).collect();
        for huge in [false, true] {
            let (memory, offsets) = PanelMemory::gather(&[&a, &b, &[]], huge);
            assert_eq!(offsets, [0, 16, 64]);
            let all = memory.as_slice();
            assert_eq!(&all[0..5], &a[..]);
            assert!(all[5..16].iter().all(|&v| v == 0.0));
            assert_eq!(&all[16..56], &b[..]);
            assert_eq!(memory.is_mapped(), huge && cfg!(target_os = "linux"));
        }
    }

    #[test]
    fn nothing_to_gather_is_an_empty_heap_block() {
        let (memory, offsets) = PanelMemory::gather(&[], true);
        assert!(offsets.is_empty());
        assert!(memory.as_slice().is_empty());
        assert!(!memory.is_mapped());
    }
}
