//! Sums and maxima of f32 slices that the compiler vectorises.
//!
//! Why: a plain `iter().sum()` is one chain of dependent adds (float addition is not
//! associative, so the compiler keeps the order), ~4 cycles per element; LayerNorm and the
//! softmax were a few per cent of a forward pass that way. Sixteen independent running
//! sums, one per lane, let each step be a vector add on any SIMD width; the lanes are
//! added at the end. The result differs from the sequential sum only by rounding.

/// Independent accumulators: one AVX-512 vector, four wasm/NEON/SSE ones.
const LANES: usize = 16;

/// `Σ f(x)` over `xs`.
#[inline(always)]
pub(crate) fn sum_by(xs: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut acc = [0.0_f32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (a, &x) in acc.iter_mut().zip(chunk) {
            *a += f(x);
        }
    }
    for (a, &x) in acc.iter_mut().zip(tail) {
        *a += f(x);
    }
    acc.into_iter().sum()
}

/// `Σ xs`.
#[inline(always)]
pub(crate) fn sum(xs: &[f32]) -> f32 {
    sum_by(xs, |x| x)
}

/// The largest of `xs` (−∞ when empty; NaNs are skipped, as `f32::max` does).
#[inline(always)]
pub(crate) fn max(xs: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (a, &x) in acc.iter_mut().zip(chunk) {
            *a = a.max(x);
        }
    }
    for (a, &x) in acc.iter_mut().zip(tail) {
        *a = a.max(x);
    }
    acc.into_iter().fold(f32::NEG_INFINITY, f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agree_with_sequential_loops_at_every_length() {
        for n in [0, 1, 5, 15, 16, 17, 33, 100, 321] {
            let xs: Vec<f32> = (0..n)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
                .collect();
            let want: f64 = xs.iter().map(|&x| f64::from(x)).sum();
            assert!((f64::from(sum(&xs)) - want).abs() < 1e-3, "sum of {n}");
            let squares: f64 = xs.iter().map(|&x| f64::from(x * x)).sum();
            assert!((f64::from(sum_by(&xs, |x| x * x)) - squares).abs() < 1e-2 * (1.0 + squares));
            let top = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(max(&xs), top, "max of {n}");
        }
        assert_eq!(max(&[f32::NAN, -3.0, f32::NAN]), -3.0);
    }
}
