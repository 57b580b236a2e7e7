//! Dense layers for a few rows on the CPU, with the weights packed once at load time.
//!
//! Why: burn-flex multiplies through the `gemm` crate, which packs its operands on every
//! call. For one row it takes a matrix–vector path, but from two rows up the packing of
//! the weights dominates, so verifying 8 positions cost ~3× one position — the opposite of
//! the regime speculative decoding needs. Packing the weights once into column panels of
//! one SIMD vector's width lets `rows` rows stream every weight exactly once, with one
//! accumulator register per row. SIMD dispatch (AVX-512, AVX2+FMA, NEON, wasm simd128 or
//! scalar) is `pulp`'s, which gemm itself uses, so it adds no new dependency tree and no
//! `unsafe` here.

use pulp::{Arch, Simd, WithSimd};

/// Rows up to which [`PackedDense`] is used; above it burn's gemm is as fast (its packing
/// is amortised) and better tuned.
pub(crate) const MAX_PACKED_ROWS: usize = 32;

/// Rows handled per pass over the weights: one accumulator register each.
const BLOCK_ROWS: usize = 8;

/// `y = x · W + b` for `W: [d_in, d_out]`, stored as panels of `lanes` output columns:
/// panel `p` holds `W[i, p·lanes + l]` at `(p·d_in + i)·lanes + l`, zero-padded.
#[derive(Debug, Clone)]
pub(crate) struct PackedDense {
    d_in: usize,
    d_out: usize,
    lanes: usize,
    panels: Vec<f32>,
    /// The bias padded to whole panels (zeros without a bias).
    bias: Vec<f32>,
}

impl PackedDense {
    /// Packs a row-major `[d_in, d_out]` weight and an optional `[d_out]` bias; `None`
    /// when the lengths do not match the shape.
    pub(crate) fn new(
        weight: &[f32],
        bias: Option<&[f32]>,
        d_in: usize,
        d_out: usize,
    ) -> Option<Self> {
        if d_in == 0 || d_out == 0 || weight.len() != d_in * d_out {
            return None;
        }
        if bias.is_some_and(|b| b.len() != d_out) {
            return None;
        }
        let lanes = Arch::new().dispatch(Lanes);
        let n_panels = d_out.div_ceil(lanes);
        let mut panels = vec![0.0; n_panels * d_in * lanes];
        for (p, panel) in panels.chunks_exact_mut(d_in * lanes).enumerate() {
            for (i, out) in panel.chunks_exact_mut(lanes).enumerate() {
                let row = &weight[i * d_out..(i + 1) * d_out];
                let cols = (p * lanes..d_out).take(lanes);
                for (o, j) in out.iter_mut().zip(cols) {
                    *o = row[j];
                }
            }
        }
        let mut padded = vec![0.0; n_panels * lanes];
        if let Some(b) = bias {
            padded[..d_out].copy_from_slice(b);
        }
        Some(Self {
            d_in,
            d_out,
            lanes,
            panels,
            bias: padded,
        })
    }

    /// Input width.
    pub(crate) fn d_in(&self) -> usize {
        self.d_in
    }

    /// Output width.
    pub(crate) fn d_out(&self) -> usize {
        self.d_out
    }

    /// `rows × d_out` outputs for `rows × d_in` inputs (row-major); `None` when `x` has
    /// the wrong length.
    pub(crate) fn apply(&self, x: &[f32], rows: usize) -> Option<Vec<f32>> {
        if x.len() != rows * self.d_in {
            return None;
        }
        let mut out = vec![0.0; rows * self.d_out];
        Arch::new().dispatch(Apply {
            layer: self,
            x,
            out: &mut out,
        });
        Some(out)
    }
}

/// The f32 lane count of the SIMD level `pulp` picks on this machine.
struct Lanes;

impl WithSimd for Lanes {
    type Output = usize;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) -> usize {
        S::F32_LANES
    }
}

struct Apply<'a> {
    layer: &'a PackedDense,
    x: &'a [f32],
    out: &'a mut [f32],
}

impl WithSimd for Apply<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self { layer, x, out } = self;
        if S::F32_LANES != layer.lanes {
            // Packed under another SIMD level (cannot happen: one machine, one Arch).
            scalar_reference(layer, x, out);
            return;
        }
        let rows = x.len() / layer.d_in;
        let mut r0 = 0;
        while r0 < rows {
            let n = (rows - r0).min(BLOCK_ROWS);
            let x = &x[r0 * layer.d_in..(r0 + n) * layer.d_in];
            let out = &mut out[r0 * layer.d_out..(r0 + n) * layer.d_out];
            match n {
                1 => block::<S, 1>(simd, layer, x, out),
                2 => block::<S, 2>(simd, layer, x, out),
                3 => block::<S, 3>(simd, layer, x, out),
                4 => block::<S, 4>(simd, layer, x, out),
                5 => block::<S, 5>(simd, layer, x, out),
                6 => block::<S, 6>(simd, layer, x, out),
                7 => block::<S, 7>(simd, layer, x, out),
                _ => block::<S, 8>(simd, layer, x, out),
            }
            r0 += n;
        }
    }
}

/// `R` rows against every panel: per weight vector, `R` broadcast multiply-adds.
#[inline(always)]
fn block<S: Simd, const R: usize>(simd: S, layer: &PackedDense, x: &[f32], out: &mut [f32]) {
    let (k, n, lanes) = (layer.d_in, layer.d_out, layer.lanes);
    let xs: [&[f32]; R] = std::array::from_fn(|r| &x[r * k..(r + 1) * k]);
    let (bias, _) = S::as_simd_f32s(&layer.bias);
    for (p, (panel, &b)) in layer.panels.chunks_exact(k * lanes).zip(bias).enumerate() {
        let (weights, _) = S::as_simd_f32s(panel);
        let mut acc = [b; R];
        for (i, &w) in weights.iter().enumerate() {
            for r in 0..R {
                acc[r] = simd.mul_add_e_f32s(simd.splat_f32s(xs[r][i]), w, acc[r]);
            }
        }
        let j0 = p * lanes;
        let cols = lanes.min(n - j0);
        for (r, a) in acc.into_iter().enumerate() {
            simd.partial_store_f32s(&mut out[r * n + j0..r * n + j0 + cols], a);
        }
    }
}

/// Plain loops over the packed layout; the SIMD path must agree with it.
fn scalar_reference(layer: &PackedDense, x: &[f32], out: &mut [f32]) {
    let (k, n, lanes) = (layer.d_in, layer.d_out, layer.lanes);
    for (xr, or) in x.chunks_exact(k).zip(out.chunks_exact_mut(n)) {
        for (j, o) in or.iter_mut().enumerate() {
            let (p, l) = (j / lanes, j % lanes);
            let panel = &layer.panels[p * k * lanes..(p + 1) * k * lanes];
            *o = layer.bias[j]
                + xr.iter()
                    .enumerate()
                    .map(|(i, &xi)| xi * panel[i * lanes + l])
                    .sum::<f32>();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(w: &[f32], b: &[f32], x: &[f32], k: usize, n: usize) -> Vec<f32> {
        x.chunks_exact(k)
            .flat_map(|xr| {
                (0..n).map(move |j| b[j] + (0..k).map(|i| xr[i] * w[i * n + j]).sum::<f32>())
            })
            .collect()
    }

    #[test]
    fn matches_a_naive_product_for_every_row_count_and_ragged_widths() {
        for (k, n) in [(3, 5), (17, 33), (96, 65), (192, 576)] {
            let w: Vec<f32> = (0..k * n)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 97.0)
                .collect();
            let b: Vec<f32> = (0..n).map(|j| j as f32 / 10.0 - 1.0).collect();
            let layer = PackedDense::new(&w, Some(&b), k, n).unwrap();
            for rows in [1, 2, 3, 7, 8, 9, 16, 17, 33] {
                let x: Vec<f32> = (0..rows * k)
                    .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
                    .collect();
                let got = layer.apply(&x, rows).unwrap();
                let want = naive(&w, &b, &x, k, n);
                let mut reference = vec![0.0; rows * n];
                scalar_reference(&layer, &x, &mut reference);
                for ((g, w), r) in got.iter().zip(&want).zip(&reference) {
                    assert!(
                        (g - w).abs() < 1e-3 * (1.0 + w.abs()),
                        "{k}x{n}, {rows} rows"
                    );
                    assert!((r - w).abs() < 1e-3 * (1.0 + w.abs()));
                }
            }
        }
    }

    #[test]
    fn rejects_mismatched_shapes() {
        assert!(PackedDense::new(&[1.0; 6], None, 2, 4).is_none());
        assert!(PackedDense::new(&[1.0; 8], Some(&[0.0; 3]), 2, 4).is_none());
        let layer = PackedDense::new(&[1.0; 8], None, 2, 4).unwrap();
        assert!(layer.apply(&[1.0; 5], 2).is_none());
        assert_eq!(layer.apply(&[1.0, 2.0], 1).unwrap(), vec![3.0; 4]);
    }
}
