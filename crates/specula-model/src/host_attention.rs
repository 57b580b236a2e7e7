//! Causal self-attention of a few new positions over host-memory keys/values: the shared
//! prefix ([`HostCache`]), the row's branch ([`HostKv`]), then the new positions themselves.
//! One pass per (row, position, head): scores, softmax, weighted sum of values, each over
//! contiguous `[len, head_dim]` blocks. Compiled under `pulp`'s SIMD dispatch so the dot
//! products and sums use the widest vectors.

use pulp::{Arch, Simd, WithSimd};

use crate::host_kv::{HostCache, HostKv};

/// What the new positions attend to besides themselves.
#[derive(Clone, Copy)]
pub(crate) struct Context<'a> {
    /// The shared prefix cache and how many of its positions are valid.
    pub(crate) shared: Option<(&'a HostCache, usize)>,
    /// One run of earlier positions per row, after the shared prefix.
    pub(crate) branch: Option<&'a HostKv>,
}

/// `out[r, t, :]` (`[rows·n, d]`) = attention of new position `t` of row `r`, whose query is
/// in `qkv` (`[rows·n, 3d]`, queries first, heads side by side) and whose key and value,
/// like those of the row's earlier new positions, are in layer `layer` of `new`.
pub(crate) fn attend(
    qkv: &[f32],
    new: &HostKv,
    layer: usize,
    context: Context<'_>,
    out: &mut [f32],
) {
    Arch::new().dispatch(Attend {
        qkv,
        new,
        layer,
        context,
        out,
    });
}

struct Attend<'a> {
    qkv: &'a [f32],
    new: &'a HostKv,
    layer: usize,
    context: Context<'a>,
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
            new,
            layer,
            context,
            out,
        } = self;
        let (rows, n, heads, hd) = (new.rows, new.len, new.heads, new.head_dim);
        let d = heads * hd;
        let scale = 1.0 / (hd as f32).sqrt();
        let shared_len = context.shared.map_or(0, |(_, len)| len);
        let branch_len = context.branch.map_or(0, |b| b.len);
        let mut scores = Vec::with_capacity(shared_len + branch_len + n);
        for r in 0..rows {
            for t in 0..n {
                let at = (r * n + t) * 3 * d;
                let query = &qkv[at..at + d];
                let o = &mut out[(r * n + t) * d..(r * n + t + 1) * d];
                for h in 0..heads {
                    let q = &query[h * hd..(h + 1) * hd];
                    // The key/value blocks this position may see, in order.
                    let shared = context.shared.map(|(c, len)| c.head(layer, h, len));
                    let branch = context.branch.map(|b| b.head(layer, r, h));
                    let (new_k, new_v) = new.head(layer, r, h);
                    let own = ((t + 1) * hd).min(new_k.len());
                    let blocks = [shared, branch, Some((&new_k[..own], &new_v[..own]))];
                    scores.clear();
                    for (keys, _) in blocks.iter().flatten() {
                        for key in keys.chunks_exact(hd) {
                            scores.push(dot(simd, q, key) * scale);
                        }
                    }
                    let mut max = f32::NEG_INFINITY;
                    for &s in &scores {
                        max = max.max(s);
                    }
                    let mut sum = 0.0;
                    for s in &mut scores {
                        *s = (*s - max).exp();
                        sum += *s;
                    }
                    let inv = 1.0 / sum;
                    for s in &mut scores {
                        *s *= inv;
                    }
                    let acc = &mut o[h * hd..(h + 1) * hd];
                    acc.fill(0.0);
                    let mut from = 0;
                    for (_, values) in blocks.iter().flatten() {
                        let len = values.len() / hd;
                        weighted_sum(simd, &scores[from..from + len], values, acc);
                        from += len;
                    }
                }
            }
        }
    }
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
mod tests {
    use super::*;
    use crate::host_kv::HostLayer;

    /// Softmax attention written out for one head of one query.
    fn naive(q: &[f32], keys: &[Vec<f32>], values: &[Vec<f32>]) -> Vec<f32> {
        let scale = 1.0 / (q.len() as f32).sqrt();
        let s: Vec<f32> = keys
            .iter()
            .map(|k| q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale)
            .collect();
        let max = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = s.iter().map(|x| (x - max).exp()).collect();
        let z: f32 = e.iter().sum();
        (0..q.len())
            .map(|i| e.iter().zip(values).map(|(w, v)| w / z * v[i]).sum())
            .collect()
    }

    fn kv(rows: usize, heads: usize, len: usize, hd: usize, salt: usize) -> HostKv {
        let val = |i: usize, s: usize| ((i * 31 + s * 17) % 97) as f32 / 50.0 - 1.0;
        let size = rows * heads * len * hd;
        HostKv {
            rows,
            heads,
            len,
            head_dim: hd,
            layers: vec![HostLayer {
                k: (0..size).map(|i| val(i, salt)).collect(),
                v: (0..size).map(|i| val(i, salt + 1)).collect(),
            }],
        }
    }

    #[test]
    fn matches_softmax_attention_over_cache_branch_and_causal_new_positions() {
        // Head widths with and without a ragged tail after whole groups of vectors.
        for hd in [20, 64, 72] {
            let (heads, rows, n) = (2, 2, 3);
            let d = heads * hd;
            let mut cache = HostCache::new(1, heads, 8, hd);
            assert!(cache.write(0, &kv(1, heads, 2, hd, 1)));
            let branch = kv(rows, heads, 1, hd, 3);
            let new = kv(rows, heads, n, hd, 5);
            let qkv: Vec<f32> = (0..rows * n * 3 * d)
                .map(|i| ((i * 13) % 89) as f32 / 40.0 - 1.0)
                .collect();
            let mut out = vec![0.0; rows * n * d];
            let context = Context {
                shared: Some((&cache, 2)),
                branch: Some(&branch),
            };
            attend(&qkv, &new, 0, context, &mut out);
            for r in 0..rows {
                for t in 0..n {
                    for h in 0..heads {
                        let split = |block: &[f32], len: usize| -> Vec<Vec<f32>> {
                            block[..len * hd].chunks(hd).map(<[f32]>::to_vec).collect()
                        };
                        let (ck, cv) = cache.head(0, h, 2);
                        let (bk, bv) = branch.head(0, r, h);
                        let (nk, nv) = new.head(0, r, h);
                        let mut keys = split(ck, 2);
                        keys.extend(split(bk, 1));
                        keys.extend(split(nk, t + 1));
                        let mut values = split(cv, 2);
                        values.extend(split(bv, 1));
                        values.extend(split(nv, t + 1));
                        let at = (r * n + t) * 3 * d + h * hd;
                        let want = naive(&qkv[at..at + hd], &keys, &values);
                        let at = (r * n + t) * d + h * hd;
                        for (g, w) in out[at..at + hd].iter().zip(&want) {
                            assert!((g - w).abs() < 1e-5, "hd {hd} row {r} pos {t} head {h}");
                        }
                    }
                }
            }
        }
    }
}
