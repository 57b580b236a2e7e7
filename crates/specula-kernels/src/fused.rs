//! A whole pre-norm block in one dispatch, for a small model's passes of a few positions:
//! one workgroup walks the new positions in order and, for each, runs layer norm, the
//! query/key/value projection (writing the keys and values into the preallocated cache in
//! place), attention over the cache, the output projection and residual, layer norm, the
//! GELU MLP and residual; the first block also looks the embeddings up, the last applies
//! the final norm and the head. A pass is then one dispatch per block where the few-row
//! kernels and burn's glue take a dozen per block (MODELS.md, "On WebGPU"): on a model as
//! small as the draft the dispatches, not the arithmetic, were the cost.
//!
//! One workgroup, because positions depend on one another through the cache and blocks of
//! one position through barriers; its working vectors live in workgroup memory.

use burn::tensor::{Tensor as BurnTensor, TensorData};
use burn_cubecl::Cube;
// The `#[cube]` macro names `cubecl::…`; burn-cubecl re-exports the exact version it uses.
use burn_cubecl::cubecl;
use burn_cubecl::cubecl::prelude::*;
use burn_cubecl::cubecl::{CubeCount, CubeDim};
use burn_cubecl::tensor::CubeTensor;

use crate::launch::{cube, empty_f32};
use crate::{KeysValues, ModelShape};

/// Invocations of the one workgroup: every loop strides over them. On the software adapter
/// (a workgroup is one CPU thread) 32 beat 64 by 5% and 128 by 20%; a real GPU runs them
/// as one warp.
const UNITS: u32 = 32;
/// WebGPU's guaranteed workgroup memory (`maxComputeWorkgroupStorageSize`).
const SHARED_BYTES: usize = 16_384;

/// `out[c] = γ[c]·(x[c] − mean)/√(var + ε) + β[c]` with `γ` at `weights[at ..]` and `β`
/// after it (the biased variance, as burn's); one unit takes the statistics.
#[cube]
fn norm(
    x: &Shared<[f32]>,
    out: &mut Shared<[f32]>,
    stats: &mut Shared<[f32]>,
    weights: &[f32],
    at: usize,
    epsilon: f32,
    #[comptime] d: usize,
) {
    let unit = UNIT_POS as usize;
    let units = CUBE_DIM as usize;
    if unit == 0 {
        let width = f32::cast_from(d);
        let mut sum = 0.0f32;
        for i in 0..d {
            sum += x[i];
        }
        let mean = sum / width;
        let mut squares = 0.0f32;
        for i in 0..d {
            let c = x[i] - mean;
            squares += c * c;
        }
        stats[0] = mean;
        stats[1] = 1.0f32 / f32::sqrt(squares / width + epsilon);
    }
    sync_cube();
    let mut c = unit;
    while c < d {
        out[c] = (x[c] - stats[0]) * stats[1] * weights[at + c] + weights[at + d + c];
        c += units;
    }
    sync_cube();
}

/// `b[c] + Σ_i v[i] · W[i, c]` for a `[k, n]` weight at `weights[w ..]` and its bias after.
#[cube]
fn dot_column(
    v: &Shared<[f32]>,
    weights: &[f32],
    w: usize,
    c: usize,
    #[comptime] k: usize,
    #[comptime] n: usize,
) -> f32 {
    let mut acc = weights[w + k * n + c];
    for i in 0..k {
        acc += v[i] * weights[w + i * n + c];
    }
    acc
}

/// One block for every position of the pass, in order (see the module's documentation).
/// `weights` is the packed model ([`ModelShape`]), this block's parameters from
/// `layer_at`; `keys`/`values` are its `[heads, max_seq, head_dim]` caches; `stream` the
/// previous block's `[n, d]` output (read unless `first`); `out` this block's `[n, d]`
/// output, or the `[n, vocab]` logits when `last`.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn block_kernel(
    weights: &[f32],
    tokens: &[f32],
    stream: &[f32],
    keys: &mut [f32],
    values: &mut [f32],
    out: &mut [f32],
    n: usize,
    start: usize,
    layer_at: usize,
    epsilon: f32,
    scale: f32,
    #[comptime] d: usize,
    #[comptime] heads: usize,
    #[comptime] d_ff: usize,
    #[comptime] vocab: usize,
    #[comptime] max_seq: usize,
    #[comptime] first: bool,
    #[comptime] last: bool,
) {
    let unit = UNIT_POS as usize;
    let units = CUBE_DIM as usize;
    let hd = comptime!(d / heads);
    // The block's parameters, in the packed order.
    let qkv_w = layer_at + comptime!(2 * d);
    let proj_w = qkv_w + comptime!(3 * d * d + 3 * d);
    let norm_mlp = proj_w + comptime!(d * d + d);
    let fc_in_w = norm_mlp + comptime!(2 * d);
    let fc_out_w = fc_in_w + comptime!(d * d_ff + d_ff);
    let final_norm = fc_out_w + comptime!(d_ff * d + d);
    let head_w = final_norm + comptime!(2 * d);

    let mut x = Shared::<[f32]>::new_slice(d);
    let mut h = Shared::<[f32]>::new_slice(d);
    let mut q = Shared::<[f32]>::new_slice(d);
    let mut mlp = Shared::<[f32]>::new_slice(d_ff);
    let mut scores = Shared::<[f32]>::new_slice(comptime!(heads * max_seq));
    let mut stats = Shared::<[f32]>::new_slice(comptime!(if heads > 2 { heads } else { 2 }));

    for t in 0..n {
        let pos = start + t;
        let mut c = unit;
        while c < d {
            if comptime!(first) {
                let token = u32::cast_from(tokens[t]) as usize;
                x[c] = weights[token * d + c] + weights[comptime!(vocab * d) + pos * d + c];
            } else {
                x[c] = stream[t * d + c];
            }
            c += units;
        }
        sync_cube();
        norm(&x, &mut h, &mut stats, weights, layer_at, epsilon, d);

        // Queries stay here; keys and values go straight into the cache.
        let mut c = unit;
        while c < comptime!(3 * d) {
            let acc = dot_column(&h, weights, qkv_w, c, d, comptime!(3 * d));
            if c < d {
                q[c] = acc;
            } else {
                let e = c % d;
                let at = ((e / hd) * max_seq + pos) * hd + e % hd;
                if c < comptime!(2 * d) {
                    keys[at] = acc;
                } else {
                    values[at] = acc;
                }
            }
            c += units;
        }
        sync_storage();

        // Scores against every cached position up to this one, then each head's softmax
        // numerators (one unit per head) and their sum.
        let total = pos + 1;
        let mut c = unit;
        while c < heads * total {
            let head = c / total;
            let i = c % total;
            let k_at = (head * max_seq + i) * hd;
            let mut s = 0.0f32;
            for j in 0..hd {
                s += q[head * hd + j] * keys[k_at + j];
            }
            scores[head * max_seq + i] = s * scale;
            c += units;
        }
        sync_cube();
        if unit < heads {
            let row = unit * max_seq;
            let mut max = scores[row];
            for i in 1..total {
                max = f32::max(max, scores[row + i]);
            }
            let mut sum = 0.0f32;
            for i in 0..total {
                let e = f32::exp(scores[row + i] - max);
                scores[row + i] = e;
                sum += e;
            }
            stats[unit] = sum;
        }
        sync_cube();
        // The heads' outputs side by side, into `h` (the normed input is no longer read).
        let mut c = unit;
        while c < d {
            let head = c / hd;
            let row = head * max_seq;
            let v_at = head * max_seq * hd + c % hd;
            let mut acc = 0.0f32;
            for i in 0..total {
                acc += scores[row + i] * values[v_at + i * hd];
            }
            h[c] = acc / stats[head];
            c += units;
        }
        sync_cube();
        let mut c = unit;
        while c < d {
            x[c] += dot_column(&h, weights, proj_w, c, d, d);
            c += units;
        }
        sync_cube();

        norm(&x, &mut h, &mut stats, weights, norm_mlp, epsilon, d);
        let mut c = unit;
        while c < d_ff {
            let v = dot_column(&h, weights, fc_in_w, c, d, d_ff);
            // burn's exact (erf) GELU, in its order of operations.
            mlp[c] = v * (Erf::erf(v / std::f32::consts::SQRT_2) + 1.0f32) * 0.5f32;
            c += units;
        }
        sync_cube();
        let mut c = unit;
        while c < d {
            x[c] += dot_column(&mlp, weights, fc_out_w, c, d_ff, d);
            c += units;
        }
        sync_cube();

        if comptime!(last) {
            norm(&x, &mut h, &mut stats, weights, final_norm, epsilon, d);
            let mut c = unit;
            while c < vocab {
                out[t * vocab + c] = dot_column(&h, weights, head_w, c, d, vocab);
                c += units;
            }
        } else {
            let mut c = unit;
            while c < d {
                out[t * d + c] = x[c];
                c += units;
            }
        }
        // The next position overwrites the working vectors.
        sync_cube();
    }
}

/// A cache part the kernel may write in place: contiguous, alone in its buffer, of shape
/// `[1, heads, max_seq, head_dim]`.
fn cache_part(t: &BurnTensor<4>, shape: &ModelShape) -> Option<CubeTensor> {
    let t = cube(t)?;
    let want = [1, shape.heads, shape.max_seq, shape.d_model / shape.heads];
    (t.meta.shape().to_vec() == want && t.is_contiguous() && t.is_contiguous_buffer()).then_some(t)
}

/// Logits (`[n, vocab]`) of `tokens` at positions `start..start + n` after the first
/// `start` cached positions, every block in one dispatch, writing the new positions' keys
/// and values into `cache` (one `(keys, values)` per block, each `[1, heads, max_seq,
/// head_dim]`, contiguous) in place. `weights` is the packed model of
/// [`ModelShape::packed_len`]. `None`, with nothing launched, for tensors elsewhere than a
/// CubeCL device, shapes that do not fit together, a pass beyond `max_seq`, a token outside
/// the vocabulary, or a model whose working vectors exceed WebGPU's guaranteed workgroup
/// memory.
#[must_use]
pub fn fused_forward(
    weights: &BurnTensor<1>,
    shape: ModelShape,
    epsilon: f64,
    tokens: &[u32],
    start: usize,
    cache: &[KeysValues<'_>],
) -> Option<BurnTensor<2>> {
    let ModelShape {
        d_model: d,
        heads,
        d_ff,
        vocab,
        max_seq,
        layers,
    } = shape;
    let n = tokens.len();
    let working = 3 * d + d_ff + heads * max_seq + heads.max(2);
    if heads == 0
        || d % heads != 0
        || d_ff == 0
        || vocab == 0
        || layers == 0
        || cache.len() != layers
        || n == 0
        || start + n > max_seq
        || working * 4 > SHARED_BYTES
        || tokens.iter().any(|&t| t as usize >= vocab)
    {
        return None;
    }
    let packed = cube(weights)?;
    if packed.meta.shape()[0] != shape.packed_len() || !packed.is_contiguous() {
        return None;
    }
    let parts = cache
        .iter()
        .map(|(k, v)| Some((cache_part(k, &shape)?, cache_part(v, &shape)?)))
        .collect::<Option<Vec<_>>>()?;

    // Token ids as f32 (exact below 2^24): one buffer type for every input.
    let ids: Vec<f32> = tokens.iter().map(|&t| t as f32).collect();
    let ids = cube(&BurnTensor::<1>::from_data(
        TensorData::new(ids, [n]),
        &weights.device(),
    ))?;
    let client = packed.client.clone();
    let scale = 1.0 / ((d / heads) as f32).sqrt();
    let mut layer_at = (vocab + max_seq) * d;
    let mut stream: Option<CubeTensor> = None;
    for (l, (keys, values)) in parts.into_iter().enumerate() {
        let (first, last) = (l == 0, l + 1 == layers);
        let out = empty_f32(&packed, [n, if last { vocab } else { d }]);
        // The first block reads no stream; the ids stand in for it (never read).
        let input = stream.take().unwrap_or_else(|| ids.clone());
        block_kernel::launch(
            &client,
            CubeCount::new_single(),
            CubeDim::new_1d(UNITS),
            packed.clone().into_buffer_arg(),
            ids.clone().into_buffer_arg(),
            input.into_buffer_arg(),
            keys.into_buffer_arg(),
            values.into_buffer_arg(),
            out.clone().into_buffer_arg(),
            n,
            start,
            layer_at,
            epsilon as f32,
            scale,
            d,
            heads,
            d_ff,
            vocab,
            max_seq,
            first,
            last,
        );
        stream = Some(out);
        layer_at += ModelShape::block_len(d, d_ff);
    }
    stream.map(BurnTensor::from_primitive::<Cube>)
}
