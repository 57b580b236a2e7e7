//! Causal self-attention of a few new positions over host-memory keys/values: the shared
//! prefix ([`HostCache`]), the row's branch ([`HostKv`]), then the new positions themselves.
//! Head by head: every query's scores against the shared prefix in blocks of queries that
//! share each key load, the few branch and new keys one by one, the softmax, then the
//! weighted sums of values the same way. Compiled under `pulp`'s SIMD dispatch so the dot
//! products and sums use the widest vectors.

use std::ops::Range;
use std::sync::Arc;

use pulp::{Arch, Simd, WithSimd};

use crate::const_rows::{each_row, with_rows};
use crate::helper_thread::{Helper, Task};
use crate::host_kv::{HostCache, HostKv, NewKv, TILE, Tiled, tiled_at};
use crate::reduce;

/// What the new positions attend to besides themselves.
#[derive(Clone, Copy, Default)]
pub(crate) struct Context<'a> {
    /// The shared prefix cache and how many of its positions are valid.
    pub(crate) shared: Option<(&'a HostCache, usize)>,
    /// One run of earlier positions per row, after the shared prefix.
    pub(crate) branch: Option<&'a HostKv>,
}

/// Where the queries sit in a projection's output and how they share key/value heads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Queries {
    /// Floats per row of the projection's output (query `m` starts at `m · stride`).
    pub(crate) stride: usize,
    /// Query heads per key/value head: 1 for multi-head attention, more for grouped-query
    /// attention, where query head `h` reads key/value head `h / group`.
    pub(crate) group: usize,
}

impl Queries {
    /// The GPT's fused projection: `[rows·n, 3d]`, queries then keys then values, one
    /// key/value head per query head.
    pub(crate) fn fused_qkv(d: usize) -> Self {
        Self {
            stride: 3 * d,
            group: 1,
        }
    }
}

/// `out[r, t, :]` (`[rows·n, query heads · head_dim]`) = attention of new position `t` of
/// row `r`, whose query is in `qkv` (row `r·n + t` of `queries.stride` floats, query heads
/// side by side first) and whose key and value, like those of the row's earlier new
/// positions, are in layer `layer` of `new`.
#[cfg(test)]
pub(crate) fn attend(
    arch: Arch,
    qkv: &[f32],
    queries: Queries,
    new: NewKv<'_>,
    layer: usize,
    context: Context<'_>,
    out: &mut [f32],
) {
    let units = 0..new.heads * queries.group * new.rows * new.len;
    attend_units(arch, qkv, queries, new, layer, context, units, out);
}

/// [`attend`] for the (query head, query) pairs `units` only, pair `h · queries + m` for
/// query head `h` and query `m` (row-major over rows and new positions); the rest of
/// `out` is left as it is. Two threads can share the heads of one call this way.
#[allow(
    clippy::too_many_arguments,
    reason = "one attention call's inputs; a struct would only rename them"
)]
pub(crate) fn attend_units(
    arch: Arch,
    qkv: &[f32],
    queries: Queries,
    new: NewKv<'_>,
    layer: usize,
    context: Context<'_>,
    units: Range<usize>,
    out: &mut [f32],
) {
    arch.dispatch(Attend {
        qkv,
        queries,
        new,
        layer,
        context,
        units,
        out,
    });
}

/// Attention of layer `layer` (whose keys and values are the last of `new`) into `out`,
/// as [`attend`]: with a helper, the helper takes the later half of the (query head,
/// query) pairs.
#[allow(
    clippy::too_many_arguments,
    reason = "one attention call's inputs; a struct would only rename them"
)]
pub(crate) fn attend_split<'m>(
    arch: Arch,
    qkv: Vec<f32>,
    queries: Queries,
    new: &HostKv,
    layer: usize,
    context: Context<'m>,
    helper: Option<&Helper<'_, 'm>>,
    out: &mut [f32],
) {
    let heads = new.heads * queries.group;
    let units = heads * new.rows * new.len;
    let Some(helper) = helper else {
        attend_units(
            arch,
            &qkv,
            queries,
            new.layer(layer),
            layer,
            context,
            0..units,
            out,
        );
        return;
    };
    let mid = units / 2;
    // The helper's own copy of this layer's new keys/values, in a run of the same shape.
    let kv = new.layers[layer].clone();
    let shape = HostKv {
        layers: Vec::new(),
        ..*new
    };
    let qkv = Arc::new(qkv);
    let theirs: Task<'m> = Arc::new({
        let qkv = Arc::clone(&qkv);
        let len = out.len();
        move || {
            let mut out = vec![0.0; len];
            let new = shape.with_layer(&kv);
            attend_units(
                arch,
                &qkv,
                queries,
                new,
                layer,
                context,
                mid..units,
                &mut out,
            );
            out
        }
    });
    let ((), theirs) = helper.join(theirs, || {
        let new = new.layer(layer);
        attend_units(arch, &qkv, queries, new, layer, context, 0..mid, out);
    });
    // Copy the helper's pairs: pair `h · queries + q` is `out[q, h·hd..(h + 1)·hd]`.
    let (n_queries, hd) = (new.rows * new.len, new.head_dim);
    let d = heads * hd;
    for unit in mid..units {
        let (h, q) = (unit / n_queries, unit % n_queries);
        let at = q * d + h * hd..q * d + (h + 1) * hd;
        out[at.clone()].copy_from_slice(&theirs[at]);
    }
}

struct Attend<'a> {
    qkv: &'a [f32],
    queries: Queries,
    new: NewKv<'a>,
    layer: usize,
    context: Context<'a>,
    units: Range<usize>,
    out: &'a mut [f32],
}

impl WithSimd for Attend<'_> {
    type Output = ();

    // Plain loops, no closures: a closure would be compiled apart from this function and
    // miss the SIMD features `pulp` enables for it.
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self {
            qkv,
            queries: layout,
            new,
            layer,
            context,
            units,
            out,
        } = self;
        let (rows, n, hd, group) = (new.rows, new.len, new.head_dim, layout.group);
        // Query heads; `d` is the width of a row of `out`.
        let heads = new.heads * group;
        let (d, q_stride) = (heads * hd, layout.stride);
        let queries = rows * n;
        let scale = 1.0 / (hd as f32).sqrt();
        let shared_len = context.shared.map_or(0, |(_, len)| len);
        let branch_len = context.branch.map_or(0, |b| b.len);
        // One score row per query: shared prefix, branch, then its own new positions.
        let stride = shared_len + branch_len + n;
        let mut scores = vec![0.0; queries * stride];
        // Heads outermost: one head's keys and values stay in cache for every query.
        for h in 0..heads {
            // This call's queries of this head.
            let first = units.start.clamp(h * queries, (h + 1) * queries) - h * queries;
            let end = units.end.clamp(h * queries, (h + 1) * queries) - h * queries;
            if first == end {
                continue;
            }
            // This query head's key/value head.
            let kvh = h / group;
            // The next key/value head's keys and values, on their way while this one runs.
            let next = (h + 1 < heads && (h + 1) % group == 0).then_some(kvh + 1);
            if let (Some((cache, len)), Some(next)) = (context.shared, next) {
                let keys = cache.keys(layer, next);
                crate::prefetch::into_l2(&keys.data[..len.div_ceil(TILE) * TILE * hd]);
                let values = cache.values(layer, next);
                for tile in values.data.chunks(values.rows * TILE) {
                    crate::prefetch::into_l2(&tile[..len * TILE]);
                }
            }
            // Every query against the shared prefix at once, in blocks of up to 8 queries
            // that share each load of the (transposed) keys.
            if let Some((cache, len)) = context.shared {
                let keys = cache.keys(layer, kvh);
                let mut m0 = first;
                while m0 < end {
                    let block = Rows {
                        first: m0,
                        input: (q_stride, h * hd),
                        output: (stride, 0),
                    };
                    let count = (end - m0).min(8);
                    with_rows!(count, |R| rows_times::<S, R>(
                        simd,
                        block,
                        qkv,
                        (keys, hd, len),
                        scale,
                        &mut scores
                    ));
                    m0 += count;
                }
            }
            for m in first..end {
                let (r, t) = (m / n, m % n);
                let at = m * q_stride + h * hd;
                let q = &qkv[at..at + hd];
                let row = &mut scores[m * stride..m * stride + shared_len + branch_len + t + 1];
                // The few branch and new keys one by one.
                let mut at = shared_len;
                if let Some(b) = context.branch {
                    for key in b.head(layer, r, kvh).0.chunks_exact(hd) {
                        row[at] = dot(simd, q, key) * scale;
                        at += 1;
                    }
                }
                let (new_k, _) = new.head(r, kvh);
                for key in new_k.chunks_exact(hd).take(t + 1) {
                    row[at] = dot(simd, q, key) * scale;
                    at += 1;
                }
                let max = reduce::max(row);
                // Plain loops so both vectorise (libm's `expf` would be one call per score).
                for s in row.iter_mut() {
                    *s = exp(*s - max);
                }
                let sum = reduce::sum(row);
                let inv = 1.0 / sum;
                for s in row.iter_mut() {
                    *s *= inv;
                }
            }
            // Outputs: the shared prefix's values in blocks of queries (this stores), then
            // the branch's and the new positions' (these add).
            let mut m0 = first;
            while m0 < end {
                let count = (end - m0).min(8);
                match context.shared {
                    Some((cache, len)) => {
                        let block = Rows {
                            first: m0,
                            input: (stride, 0),
                            output: (d, h * hd),
                        };
                        let values = cache.values(layer, kvh);
                        with_rows!(count, |R| rows_times::<S, R>(
                            simd,
                            block,
                            &scores,
                            (values, len, hd),
                            1.0,
                            out
                        ));
                    }
                    None => {
                        for m in m0..m0 + count {
                            out[m * d + h * hd..m * d + (h + 1) * hd].fill(0.0);
                        }
                    }
                }
                m0 += count;
            }
            for m in first..end {
                let (r, t) = (m / n, m % n);
                let weights = &scores[m * stride + shared_len..m * stride + stride];
                let acc = &mut out[m * d + h * hd..m * d + (h + 1) * hd];
                let mut at = 0;
                if let Some(b) = context.branch {
                    let values = b.head(layer, r, kvh).1;
                    weighted_sum(simd, &weights[..branch_len], values, acc);
                    at = branch_len;
                }
                let (_, new_v) = new.head(r, kvh);
                weighted_sum(simd, &weights[at..at + t + 1], &new_v[..(t + 1) * hd], acc);
            }
        }
    }
}

/// A block of queries `first..first + R`: query `m`'s input starts at
/// `m · input.0 + input.1` and its output row at `m · output.0 + output.1`.
#[derive(Clone, Copy)]
struct Rows {
    first: usize,
    input: (usize, usize),
    output: (usize, usize),
}

impl Rows {
    /// The input and output offsets of the block's `R` queries.
    #[inline(always)]
    fn offsets<const R: usize>(self) -> ([usize; R], [usize; R]) {
        let at = |(step, offset): (usize, usize), r: usize| (self.first + r) * step + offset;
        (
            std::array::from_fn(|r| at(self.input, r)),
            std::array::from_fn(|r| at(self.output, r)),
        )
    }
}

/// `out[r][c] = scale · Σ_{i < k} x[r][i] · m[i, c]` for `c < width` and the block's `R`
/// rows (row `r` of `x` and of `out` at the block's input and output offsets): per vector
/// of columns, each load of `m` is shared by the `R` rows, and the walk down `i` streams
/// through one tile. With `m` the keys (`k` = head_dim) these are scores; with `m` the
/// values (`k` = positions), outputs.
///
/// Blocks of few rows walk several vectors of columns (several tiles, with AVX-512) at
/// once: one row against one vector is a single chain of dependent multiply-adds and a
/// single stream of loads, while the keys and values mostly come from memory (the weight
/// stream evicts them between passes).
#[inline(always)]
fn rows_times<S: Simd, const R: usize>(
    simd: S,
    block: Rows,
    x: &[f32],
    m: (Tiled<'_>, usize, usize),
    scale: f32,
    out: &mut [f32],
) {
    let mut c0 = 0;
    if S::F32_LANES >= 16 {
        // AVX-512's 32 registers hold up to 24 accumulators with the loaded vectors.
        if R <= 5 {
            c0 = vectors_at_once::<S, R, 4>(simd, block, x, m, c0, scale, out);
        } else {
            c0 = vectors_at_once::<S, R, 3>(simd, block, x, m, c0, scale, out);
        }
        c0 = vectors_at_once::<S, R, 2>(simd, block, x, m, c0, scale, out);
    } else {
        // At most 10 accumulators, so that they and the loaded vectors fit AVX2's 16.
        if R <= 2 {
            c0 = vectors_at_once::<S, R, 4>(simd, block, x, m, c0, scale, out);
        }
        if R <= 5 {
            c0 = vectors_at_once::<S, R, 2>(simd, block, x, m, c0, scale, out);
        }
    }
    vectors_at_once::<S, R, 1>(simd, block, x, m, c0, scale, out);
}

/// [`rows_times`] for the columns from `c0` on, `V` vectors of them at a time while `V`
/// whole vectors remain (any remainder when `V` = 1); the column where it stopped.
#[inline(always)]
fn vectors_at_once<S: Simd, const R: usize, const V: usize>(
    simd: S,
    block: Rows,
    x: &[f32],
    (m, k, width): (Tiled<'_>, usize, usize),
    mut c0: usize,
    scale: f32,
    out: &mut [f32],
) -> usize {
    let (x_at, out_at) = block.offsets::<R>();
    let lanes = S::F32_LANES;
    let scale = simd.splat_f32s(scale);
    // Each query's inputs as long as the walk, so indexing them needs no check.
    let xs: [&[f32]; R] = std::array::from_fn(|r| &x[x_at[r]..][..k]);
    while c0 < width && (V == 1 || c0 + V * lanes <= width) {
        // Vector `v` covers columns `c0 + v·lanes ..`, the last one possibly partial. It is
        // loaded whole all the same: a `Tiled` matrix holds whole tiles, and the columns
        // past `width` are never stored. (A masked load per step made the compiler spill
        // the accumulators around it.)
        let at: [usize; V] = std::array::from_fn(|v| tiled_at(m.rows, 0, c0 + v * lanes));
        let mut acc = [[simd.splat_f32s(0.0); V]; R];
        // `i` indexes every query's inputs and every tile's stream at once.
        #[allow(clippy::needless_range_loop)]
        for i in 0..k {
            let columns: [S::f32s; V] = std::array::from_fn(|v| {
                let s = &m.data[at[v] + i * TILE..][..lanes];
                S::as_simd_f32s(s).0[0]
            });
            each_row!(R, |r| {
                let xi = simd.splat_f32s(xs[r][i]);
                for (a, &c) in acc[r].iter_mut().zip(&columns) {
                    *a = simd.mul_add_e_f32s(xi, c, *a);
                }
            });
        }
        each_row!(R, |r| {
            for (v, &a) in acc[r].iter().enumerate() {
                let at = c0 + v * lanes;
                let row = &mut out[out_at[r] + at..out_at[r] + at + lanes.min(width - at)];
                store(simd, row, simd.mul_f32s(a, scale));
            }
        });
        c0 += V * lanes;
    }
    c0.min(width)
}

/// Stores `v` to `s` (at most a vector long): a plain store when it is whole (a partial
/// store is masked on x86 and lane by lane in wasm).
#[inline(always)]
fn store<S: Simd>(simd: S, s: &mut [f32], v: S::f32s) {
    match S::as_mut_simd_f32s(s) {
        ([whole], []) => *whole = v,
        _ => simd.partial_store_f32s(s, v),
    }
}

/// `e^x` for `x ≤ 0` (softmax arguments), to ~2 ulp, in branch-free arithmetic the compiler
/// vectorises: `x = n·ln 2 + r` with `|r| ≤ ln 2 / 2`, `e^r` by its degree-6 Taylor
/// polynomial, `2^n` built in the exponent bits. Arguments below −87 count as −87
/// (e^−87 ≈ 1.6·10^−38, nothing next to the row maximum's e^0 = 1).
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split so that n · LN2_HI is exact for the n that occur.
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // Adding and subtracting 1.5 · 2^23 rounds to the nearest integer without a branch.
    const ROUND: f32 = 12_582_912.0;
    // A compare-and-select (wasm's `pmax`), not `f32::max`, whose NaN rule costs more.
    let x = if x < -87.0 { -87.0 } else { x };
    let n = (x * LOG2_E + ROUND) - ROUND;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let scale = f32::from_bits(((n as i32 + 127) as u32) << 23);
    p * scale
}

/// Σ a·b over SIMD vectors, then the ragged tail.
#[inline(always)]
fn dot<S: Simd>(simd: S, a: &[f32], b: &[f32]) -> f32 {
    let (av, at) = S::as_simd_f32s(a);
    let (bv, bt) = S::as_simd_f32s(b);
    let mut acc = simd.splat_f32s(0.0);
    for (&x, &y) in av.iter().zip(bv) {
        acc = simd.mul_add_e_f32s(x, y, acc);
    }
    let mut sum = simd.reduce_sum_f32s(acc);
    for (x, y) in at.iter().zip(bt) {
        sum += x * y;
    }
    sum
}

/// `out += Σ_p weights[p] · values[p]` for `values` of `weights.len()` rows as wide as
/// `out`, in groups of 4 SIMD vectors of columns held in registers across the rows.
#[inline(always)]
fn weighted_sum<S: Simd>(simd: S, weights: &[f32], values: &[f32], out: &mut [f32]) {
    const GROUP: usize = 4;
    let hd = out.len();
    let group = GROUP * S::F32_LANES;
    let mut c0 = 0;
    while c0 + group <= hd {
        let mut acc = [simd.splat_f32s(0.0); GROUP];
        for (row, &w) in values.chunks_exact(hd).zip(weights) {
            let (v, _) = S::as_simd_f32s(&row[c0..c0 + group]);
            let wv = simd.splat_f32s(w);
            for u in 0..GROUP {
                acc[u] = simd.mul_add_e_f32s(wv, v[u], acc[u]);
            }
        }
        let (o, _) = S::as_mut_simd_f32s(&mut out[c0..c0 + group]);
        for u in 0..GROUP {
            o[u] = simd.add_f32s(o[u], acc[u]);
        }
        c0 += group;
    }
    if c0 < hd {
        for (row, &w) in values.chunks_exact(hd).zip(weights) {
            axpy(simd, w, &row[c0..], &mut out[c0..]);
        }
    }
}

/// `y += w · x` over SIMD vectors, then the ragged tail.
#[inline(always)]
fn axpy<S: Simd>(simd: S, w: f32, x: &[f32], y: &mut [f32]) {
    let (xv, xt) = S::as_simd_f32s(x);
    let (yv, yt) = S::as_mut_simd_f32s(y);
    let wv = simd.splat_f32s(w);
    for (y, &x) in yv.iter_mut().zip(xv) {
        *y = simd.mul_add_e_f32s(wv, x, *y);
    }
    for (y, x) in yt.iter_mut().zip(xt) {
        *y += w * x;
    }
}

#[cfg(test)]
mod tests;
