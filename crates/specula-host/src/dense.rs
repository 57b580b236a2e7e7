//! Dense layers on the CPU, with the weights packed once at load time.
//!
//! Why: burn-flex multiplies through the `gemm` crate, which packs its operands on every
//! call. For one row it takes a matrix–vector path, but from two rows up the packing of
//! the weights dominates, so verifying 8 positions cost ~3× one position — the opposite of
//! the regime speculative decoding needs. Packing the weights once into column panels a
//! few SIMD vectors wide lets blocks of up to 8 rows (with AVX-512) share every weight
//! load, with independent accumulator registers per row; every block of rows runs against
//! a panel while it is in cache, so the weights are read from memory once per call at any
//! row count, and blocks of several rows prefetch the weights ahead of them. Natively one
//! row runs against two panels at once, for more independent multiply-adds. SIMD dispatch
//! (AVX-512, AVX2+FMA, NEON, wasm simd128 or scalar) is `pulp`'s, which gemm itself uses,
//! so it adds no new dependency tree and no `unsafe` here (the prefetch's is in
//! `prefetch.rs`).

use std::sync::Arc;

use pulp::{Arch, Simd, WithSimd};

use crate::const_rows::{each_row, with_rows};
use crate::host_memory::HostMemory;

/// `y = x · W + b` for `W: [d_in, d_out]`, stored as panels of `width` output columns:
/// panel `p` holds `W[i, p·width + c]` at `p·d_in·width + i·w + c`, where `w` is the
/// panel's width: `width` for all but the last, which is only as many whole SIMD vectors
/// wide as the columns it has left (zero-padded to them), so no call streams padding. A
/// panel is up to `unroll` SIMD vectors wide, so each row has that many independent
/// accumulators.
#[derive(Debug, Clone)]
pub(crate) struct PackedDense {
    d_in: usize,
    d_out: usize,
    width: usize,
    /// f32 lanes per SIMD vector.
    lanes: usize,
    /// Holds the panels from `start` on, alone or with other layers' (see
    /// [`gather_panels`]).
    memory: Arc<HostMemory>,
    start: usize,
    /// The bias padded to whole panels (zeros without a bias).
    bias: Vec<f32>,
    /// The SIMD level detected once at packing, so calls skip feature detection.
    arch: Arch,
}

/// The width of panel `p` of a layer with `d_out` columns in panels of `width`: `width`, or
/// for the last panel its columns rounded up to whole SIMD vectors of `lanes`.
fn panel_width(d_out: usize, width: usize, lanes: usize, p: usize) -> usize {
    let left = d_out - p * width;
    left.next_multiple_of(lanes).min(width)
}

/// How many f32 the panels of a `d_in × d_out` layer take (see [`panel_width`]).
fn packed_len(d_in: usize, d_out: usize, width: usize, lanes: usize) -> usize {
    let last = d_out.div_ceil(width) - 1;
    last * d_in * width + d_in * panel_width(d_out, width, lanes, last)
}

/// Accumulator vectors per row and panel: enough independent chains to hide the latency
/// of a multiply-add (scalar code needs more of them). With AVX-512, 3 (48-column panels)
/// so that 8 rows fit the 32 registers together (8 × 3 accumulators + 3 weight vectors +
/// a broadcast). With 4 (64 columns) 8 rows ran as a block of 5 with the weight stream
/// and one of 3 from cache after it; the 320-wide target's 8-position forward cost 0.70–0.73
/// ms against 0.85–0.86 then (with the two-panel row and the attention changes of the
/// same change; MODELS.md, "Dense layers").
const fn unroll(lanes: usize) -> usize {
    match lanes {
        1 => 4,
        16.. => 3,
        _ => 2,
    }
}

/// Rows per block, so that rows × unroll accumulators plus the weight vectors fit in the
/// registers (32 vector registers with AVX-512: 8 × 3 + 3 + 1; 16 otherwise: 4 × 2 + 2 +
/// 1, or 4 × 4 scalars).
const fn block_rows(lanes: usize) -> usize {
    if lanes >= 16 { 8 } else { 4 }
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
        Self::with_lanes(
            weight,
            bias,
            d_in,
            d_out,
            crate::simd::arch().dispatch(Lanes),
        )
    }

    /// [`new`](Self::new) for SIMD vectors of `lanes` f32 (the tests pack for `pulp`'s
    /// scalar level too, which is what wasm without simd128 runs).
    fn with_lanes(
        weight: &[f32],
        bias: Option<&[f32]>,
        d_in: usize,
        d_out: usize,
        lanes: usize,
    ) -> Option<Self> {
        let width = lanes * unroll(lanes);
        let n_panels = d_out.div_ceil(width);
        let mut panels = vec![0.0; packed_len(d_in, d_out, width, lanes)];
        for p in 0..n_panels {
            let w = panel_width(d_out, width, lanes, p);
            let panel = &mut panels[p * d_in * width..][..d_in * w];
            for (i, out) in panel.chunks_exact_mut(w).enumerate() {
                let row = &weight[i * d_out..(i + 1) * d_out];
                let cols = (p * width..d_out).take(w);
                for (o, j) in out.iter_mut().zip(cols) {
                    *o = row[j];
                }
            }
        }
        let mut padded = vec![0.0; n_panels * width];
        if let Some(b) = bias {
            padded[..d_out].copy_from_slice(b);
        }
        Some(Self {
            d_in,
            d_out,
            width,
            lanes,
            memory: Arc::new(HostMemory::from_vec(panels)),
            start: 0,
            bias: padded,
            arch: crate::simd::arch(),
        })
    }

    /// The width of panel `p` (see [`panel_width`]).
    fn panel_width(&self, p: usize) -> usize {
        panel_width(self.d_out, self.width, self.lanes, p)
    }

    /// How many f32 the packed panels take.
    fn packed_len(&self) -> usize {
        packed_len(self.d_in, self.d_out, self.width, self.lanes)
    }

    /// The packed weights: `d_out / width` panels (rounded up) of `d_in × width`, the last
    /// one narrower.
    fn panels(&self) -> &[f32] {
        &self.memory.as_slice()[self.start..self.start + self.packed_len()]
    }

    /// Panel `p`'s weights, `d_in` rows of its width.
    fn panel(&self, p: usize) -> &[f32] {
        &self.panels()[p * self.d_in * self.width..][..self.d_in * self.panel_width(p)]
    }

    /// Whether the panels live in memory advised for huge pages.
    pub(crate) fn on_huge_pages(&self) -> bool {
        self.memory.is_mapped()
    }

    /// `rows × d_out` outputs for `rows × d_in` inputs (row-major); `None` when `x` has
    /// the wrong length.
    pub(crate) fn apply(&self, x: &[f32], rows: usize) -> Option<Vec<f32>> {
        if x.len() != rows * self.d_in {
            return None;
        }
        let n_panels = self.d_out.div_ceil(self.width);
        Some(self.columns(x, rows, 0..n_panels))
    }

    /// Inputs per row.
    pub(crate) fn d_in(&self) -> usize {
        self.d_in
    }

    /// The number of column panels.
    pub(crate) fn n_panels(&self) -> usize {
        self.d_out.div_ceil(self.width)
    }

    /// GELU on `values` in place, with the SIMD level detected at packing.
    pub(crate) fn gelu(&self, values: &mut [f32]) {
        gelu_in_place(self.arch, values);
    }

    /// How many output columns `panels` hold (the last panel may be partly padding).
    pub(crate) fn columns_in(&self, panels: std::ops::Range<usize>) -> usize {
        self.d_out.min(panels.end * self.width) - panels.start * self.width
    }

    /// Multiply-adds per row.
    pub(crate) fn work_per_row(&self) -> usize {
        self.d_in * self.d_out
    }

    /// The output columns of `panels` for every row, `[rows, those columns]`; `x` must
    /// hold `rows × d_in` inputs and `panels` lie within [`n_panels`](Self::n_panels).
    pub(crate) fn columns(
        &self,
        x: &[f32],
        rows: usize,
        panels: std::ops::Range<usize>,
    ) -> Vec<f32> {
        let width = self.columns_in(panels.clone());
        let mut out = vec![0.0; rows * width];
        self.arch.dispatch(Apply {
            layer: self,
            x,
            out: &mut out,
            cols: Out {
                panels,
                width,
                interleave: INTERLEAVE_INPUTS,
            },
        });
        out
    }
}

/// Moves the panels of all `layers` into one shared block of memory, in huge pages when
/// `huge_pages` and the system allows (see [`HostMemory`]); the outputs do not change.
pub(crate) fn gather_panels(layers: &mut [&mut PackedDense], huge_pages: bool) {
    let parts: Vec<&[f32]> = layers.iter().map(|l| l.panels()).collect();
    let (memory, starts) = HostMemory::gather(&parts, huge_pages);
    let memory = Arc::new(memory);
    for (layer, start) in layers.iter_mut().zip(starts) {
        layer.memory = Arc::clone(&memory);
        layer.start = start;
    }
}

/// `gelu(x) = x/2 · (1 + erf(x/√2))` on every element, in place, with a rational `erf`
/// that the compiler vectorises (burn-flex calls libm's `erff` one element at a time,
/// ~5 ns each, which made GELU a sixth of an 8-position forward).
pub(crate) fn gelu_in_place(arch: Arch, values: &mut [f32]) {
    arch.dispatch(Gelu(values));
}

struct Gelu<'a>(&'a mut [f32]);

impl WithSimd for Gelu<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        for v in self.0.iter_mut() {
            *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    }
}

/// `erf` as `x · P(x²) / Q(x²)` on `[-4, 4]` (clamped: beyond it `erf` is ±1 in f32), the
/// rational approximation Eigen and XLA use for f32; max error ~1e-7 (tested against
/// libm's `erf`).
#[inline(always)]
fn erf(x: f32) -> f32 {
    const ALPHA: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.9546e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329_4e-3,
        -1.426_474e-2,
    ];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = ALPHA.iter().fold(0.0, |acc, &c| acc * x2 + c);
    let q = BETA.iter().fold(0.0, |acc, &c| acc * x2 + c);
    x * p / q
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
    /// `[rows, cols.width]`: the columns of `cols.panels`.
    out: &'a mut [f32],
    cols: Out,
}

impl WithSimd for Apply<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self {
            layer,
            x,
            out,
            cols: o,
        } = self;
        let lanes = S::F32_LANES;
        if lanes * unroll(lanes) != layer.width {
            // Packed under another SIMD level (cannot happen: one machine, one Arch).
            scalar_reference(layer, x, out, &o);
        } else if lanes == 1 {
            row_blocks::<S, { unroll(1) }>(simd, layer, x, out, &o, block_rows(1));
        } else if lanes >= 16 {
            row_blocks::<S, { unroll(16) }>(simd, layer, x, out, &o, block_rows(lanes));
        } else {
            row_blocks::<S, { unroll(2) }>(simd, layer, x, out, &o, block_rows(lanes));
        }
    }
}

/// For every panel, runs the rows against it in blocks of at most `max_rows`, so a panel
/// is fetched from memory once whatever the row count. Natively one row runs against two
/// adjacent panels at once instead (see [`block`]).
#[inline(always)]
fn row_blocks<S: Simd, const U: usize>(
    simd: S,
    layer: &PackedDense,
    x: &[f32],
    out: &mut [f32],
    o: &Out,
    max_rows: usize,
) {
    let (rows, k) = (x.len() / layer.d_in, layer.d_in);
    let interleaved;
    let x = if o.interleave {
        interleaved = interleave(x, k, max_rows);
        &interleaved[..]
    } else {
        x
    };
    let mut p = o.panels.start;
    while p < o.panels.end {
        let full = |q: usize| q < o.panels.end && layer.panel_width(q) == layer.width;
        if rows == 1 && !o.interleave && full(p) && full(p + 1) {
            block::<S, 1, U, 2>(simd, layer, p, x, out, o);
            p += 2;
            continue;
        }
        for (r0, n) in row_block_spans(rows, max_rows) {
            let x = &x[r0 * k..(r0 + n) * k];
            let out = &mut out[r0 * o.width..(r0 + n) * o.width];
            // The last panel may be fewer vectors wide.
            match layer.panel_width(p) / S::F32_LANES {
                v if v >= U => with_rows!(n, |R| block::<S, R, U, 1>(simd, layer, p, x, out, o)),
                1 => with_rows!(n, |R| block::<S, R, 1, 1>(simd, layer, p, x, out, o)),
                2 => with_rows!(n, |R| block::<S, R, 2, 1>(simd, layer, p, x, out, o)),
                _ => with_rows!(n, |R| block::<S, R, 3, 1>(simd, layer, p, x, out, o)),
            }
        }
        p += 1;
    }
}

/// Writes one row's accumulators for panel `p` to `out` (that row's outputs for the
/// columns of `o.panels`), leaving out the padding columns.
#[inline(always)]
fn store_row<S: Simd, const U: usize>(
    simd: S,
    layer: &PackedDense,
    p: usize,
    acc: &[S::f32s; U],
    out: &mut [f32],
    o: &Out,
) {
    let (n, width, lanes) = (layer.d_out, layer.width, S::F32_LANES);
    let first = o.panels.start * width;
    for (u, &v) in acc.iter().enumerate() {
        let c0 = p * width + u * lanes;
        if c0 >= n {
            break;
        }
        let (cols, at) = (lanes.min(n - c0), c0 - first);
        simd.partial_store_f32s(&mut out[at..at + cols], v);
    }
}

/// Whether the kernel reads each row block's inputs interleaved (`[k, n]`) instead of row
/// by row: inside wasm that drops a bounds check per row and input from the inner loop,
/// which the 4-lane arithmetic does not hide; natively the row-by-row loop compiles to
/// multiply-adds with broadcast memory operands and ran ~15 % faster at 5 rows
/// (MODELS.md, "Dense layers").
const INTERLEAVE_INPUTS: bool = cfg!(target_arch = "wasm32");

/// `x` (`rows × k`, row-major) with each block of up to `max_rows` rows interleaved:
/// block `[r0, r0 + n)` at `r0 · k`, input `i` of its row `r` at `r0 · k + i · n + r`.
fn interleave(x: &[f32], k: usize, max_rows: usize) -> Vec<f32> {
    let rows = x.len() / k;
    let mut xt = vec![0.0; x.len()];
    for (r0, n) in row_block_spans(rows, max_rows) {
        let block = &mut xt[r0 * k..(r0 + n) * k];
        for (r, row) in x[r0 * k..(r0 + n) * k].chunks_exact(k).enumerate() {
            for (i, &v) in row.iter().enumerate() {
                block[i * n + r] = v;
            }
        }
    }
    xt
}

/// The blocks `(first row, rows)` that `rows` rows run in: as few blocks of at most
/// `max_rows` as cover them, their sizes differing by at most one (5 rows in blocks of 4
/// run as 3 + 2, not 4 + 1: a block of one row has too few independent multiply-add
/// chains, and costs nearly what a block of several does).
fn row_block_spans(rows: usize, max_rows: usize) -> impl Iterator<Item = (usize, usize)> {
    let blocks = rows.div_ceil(max_rows.max(1)).max(1);
    let (base, extra) = (rows / blocks, rows % blocks);
    (0..blocks).scan(0, move |r0, b| {
        let n = base + usize::from(b < extra);
        let span = (*r0, n);
        *r0 += n;
        Some(span)
    })
}

/// `R` rows against the `P` panels from `p` on, each of `U` vectors: per weight vector, `R`
/// broadcast multiply-adds into independent accumulators. `x` holds the rows' inputs,
/// interleaved when `o.interleave` (`x[i · R + r]` = input `i` of row `r`), else row by
/// row.
///
/// Why two panels for one row: one row against one panel is too few independent
/// multiply-add chains for the core to run far enough ahead of the weight stream; against
/// two, a one-position forward of the 320-wide target cost ~10 % less, with the same sums. Two to
/// four rows against two panels were slower than against one, and so was one row inside
/// wasm, where blocks read interleaved inputs (MODELS.md, "Dense layers").
#[inline(always)]
fn block<S: Simd, const R: usize, const U: usize, const P: usize>(
    simd: S,
    layer: &PackedDense,
    p: usize,
    x: &[f32],
    out: &mut [f32],
    o: &Out,
) {
    let (k, width) = (layer.d_in, layer.width);
    let weights: [&[[S::f32s; U]]; P] = std::array::from_fn(|q| {
        let (w, _) = S::as_simd_f32s(layer.panel(p + q));
        w.as_chunks::<U>().0
    });
    let init: [[S::f32s; U]; P] = std::array::from_fn(|q| {
        let (bias, _) = S::as_simd_f32s(&layer.bias[(p + q) * width..(p + q + 1) * width]);
        std::array::from_fn(|u| bias[u])
    });
    let mut acc = [init; R];
    // Every stream cut to the same length, so indexing them needs no check.
    let len = weights.iter().map(|w| w.len()).min().unwrap_or(0);
    let weights = weights.map(|w| &w[..len]);
    if o.interleave {
        let (inputs, _) = x.as_chunks::<R>();
        for (i, xi) in inputs[..len].iter().enumerate() {
            for q in 0..P {
                let w = &weights[q][i];
                each_row!(R, |r| {
                    multiply_add(simd, &mut acc[r][q], xi[r], w);
                });
            }
        }
    } else {
        let xs: [&[f32]; R] = std::array::from_fn(|r| &x[r * k..][..len]);
        for i in 0..len {
            for q in 0..P {
                let w = &weights[q][i];
                if R > 1 {
                    // One row is light enough for the out-of-order core to run ahead of
                    // the weight stream by itself; several are not (MODELS.md, "Software
                    // prefetch").
                    crate::prefetch::ahead(w);
                }
                each_row!(R, |r| {
                    multiply_add(simd, &mut acc[r][q], xs[r][i], w);
                });
            }
        }
    }
    each_row!(R, |r| {
        for (q, a) in acc[r].iter().enumerate() {
            store_row(simd, layer, p + q, a, &mut out[r * o.width..], o);
        }
    });
}

/// `acc[u] += x · w[u]` for every vector of the panel (a function, not a closure, so it is
/// inlined into the SIMD-enabled caller).
#[inline(always)]
fn multiply_add<S: Simd, const U: usize>(
    simd: S,
    acc: &mut [S::f32s; U],
    x: f32,
    w: &[S::f32s; U],
) {
    let xv = simd.splat_f32s(x);
    for u in 0..U {
        acc[u] = simd.mul_add_e_f32s(xv, w[u], acc[u]);
    }
}

/// Which output columns a call computes: those of `panels`, `width` of them per row, and
/// how the kernel reads its inputs.
struct Out {
    panels: std::ops::Range<usize>,
    width: usize,
    /// Whether the kernel reads the inputs interleaved (see [`INTERLEAVE_INPUTS`]).
    interleave: bool,
}

/// Plain loops over the packed layout; the SIMD path must agree with it.
fn scalar_reference(layer: &PackedDense, x: &[f32], out: &mut [f32], cols: &Out) {
    let (k, width) = (layer.d_in, layer.width);
    let first = cols.panels.start * width;
    for (xr, or) in x.chunks_exact(k).zip(out.chunks_exact_mut(cols.width)) {
        for (j, o) in or.iter_mut().enumerate().map(|(j, o)| (j + first, o)) {
            let (p, c) = (j / width, j % width);
            let (panel, w) = (layer.panel(p), layer.panel_width(p));
            *o = layer.bias[j]
                + xr.iter()
                    .enumerate()
                    .map(|(i, &xi)| xi * panel[i * w + c])
                    .sum::<f32>();
        }
    }
}

#[cfg(test)]
mod tests;
