//! Causal attention of a few new positions in one dispatch: per (row, head, new position),
//! one invocation runs an online softmax over the shared prefix's keys, the row's branch
//! and the new positions up to itself, reading queries, keys and values in place (the
//! packed `qkv` projection and the caches, by their strides). burn's composite takes ~15
//! dispatches per layer (copies of the heads, two score products, a concatenation, the
//! scale, the mask, five for the softmax, two value products, a sum and a copy back).

use burn::tensor::Tensor as BurnTensor;
use burn_cubecl::Cube;
// The `#[cube]` macro names `cubecl::…`; burn-cubecl re-exports the exact version it uses.
use burn_cubecl::cubecl;
use burn_cubecl::cubecl::prelude::*;

use crate::KeysValues;
use crate::launch::{cube, empty_f32, grid};

/// Below any score: the running maximum starts here (WGSL has no infinity literal).
const LOWEST: f32 = -3.0e38;

/// `Σ_j a[a_at + j·a_step] · b[b_at + j·b_step]` over `head_dim` terms.
#[cube]
fn dot(
    a: &Tensor<f32>,
    a_at: usize,
    a_step: usize,
    b: &Tensor<f32>,
    b_at: usize,
    b_step: usize,
    #[comptime] head_dim: usize,
) -> f32 {
    let mut sum = 0.0f32;
    for j in 0..head_dim {
        sum += a[a_at + j * a_step] * b[b_at + j * b_step];
    }
    sum
}

/// One key of the online softmax: with `state = [running max, running sum]`, rescales the
/// accumulated values to the new maximum and adds this key's value with weight
/// `exp(score − max)`.
#[cube]
fn absorb(
    acc: &mut Array<f32>,
    state: &mut Array<f32>,
    score: f32,
    v: &Tensor<f32>,
    v_at: usize,
    v_step: usize,
    #[comptime] head_dim: usize,
) {
    let max = f32::max(state[0], score);
    let rescale = f32::exp(state[0] - max);
    let weight = f32::exp(score - max);
    state[0] = max;
    state[1] = state[1] * rescale + weight;
    for j in 0..head_dim {
        acc[j] = acc[j] * rescale + weight * v[v_at + j * v_step];
    }
}

/// Where a query is read in `qkv` (`at`, then every `step`), and which row and head of a
/// cache it attends to, with the score scale.
#[derive(CubeType, Clone, Copy)]
struct Query {
    at: usize,
    step: usize,
    row: usize,
    head: usize,
    scale: f32,
}

/// Every key of one cached part (`[1 or rows, heads, len, head_dim]` keys and values) into
/// the online softmax of `query`.
#[cube]
fn absorb_cached(
    acc: &mut Array<f32>,
    state: &mut Array<f32>,
    qkv: &Tensor<f32>,
    query: Query,
    keys: &Tensor<f32>,
    values: &Tensor<f32>,
    #[comptime] head_dim: usize,
) {
    let (row, head) = (query.row, query.head);
    for i in 0..keys.shape(2) {
        let k_at = row * keys.stride(0) + head * keys.stride(1) + i * keys.stride(2);
        let score = dot(
            qkv,
            query.at,
            query.step,
            keys,
            k_at,
            keys.stride(3),
            head_dim,
        );
        let v_at = row * values.stride(0) + head * values.stride(1) + i * values.stride(2);
        absorb(
            acc,
            state,
            score * query.scale,
            values,
            v_at,
            values.stride(3),
            head_dim,
        );
    }
}

/// Invocation `(r, h, t)` (row-major): the attention output of new position `t` of row
/// `r` in head `h`, written to `out[r, t, h·head_dim ..]`.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn attention_kernel(
    qkv: &Tensor<f32>,
    shared_k: &Tensor<f32>,
    shared_v: &Tensor<f32>,
    branch_k: &Tensor<f32>,
    branch_v: &Tensor<f32>,
    out: &mut Tensor<f32>,
    heads: usize,
    scale: f32,
    #[comptime] head_dim: usize,
    #[comptime] has_shared: bool,
    #[comptime] has_branch: bool,
) {
    let rows = qkv.shape(0);
    let n = qkv.shape(1);
    let pos = ABSOLUTE_POS;
    if pos >= rows * heads * n {
        terminate!();
    }
    let t = pos % n;
    let h = (pos / n) % heads;
    let r = pos / (n * heads);
    let d = heads * head_dim;
    let step = qkv.stride(2);
    let q_at = r * qkv.stride(0) + t * qkv.stride(1) + h * head_dim * step;

    let mut acc = Array::<f32>::new(head_dim);
    for j in 0..head_dim {
        acc[j] = 0.0f32;
    }
    let mut state = Array::<f32>::new(2usize);
    state[0] = LOWEST;
    state[1] = 0.0f32;

    if comptime!(has_shared) {
        // The prefix is stored once for all rows (dimension 0 of size 1) or per row.
        let sr = if shared_k.shape(0) == 1 { 0usize } else { r };
        let query = Query {
            at: q_at,
            step,
            row: sr,
            head: h,
            scale,
        };
        absorb_cached(
            &mut acc, &mut state, qkv, query, shared_k, shared_v, head_dim,
        );
    }
    if comptime!(has_branch) {
        let query = Query {
            at: q_at,
            step,
            row: r,
            head: h,
            scale,
        };
        absorb_cached(
            &mut acc, &mut state, qkv, query, branch_k, branch_v, head_dim,
        );
    }
    // The new positions up to and including this one (causal).
    for i in 0..t + 1 {
        let row_at = r * qkv.stride(0) + i * qkv.stride(1);
        let k_at = row_at + (d + h * head_dim) * step;
        let score = dot(qkv, q_at, step, qkv, k_at, step, head_dim) * scale;
        let v_at = row_at + (2 * d + h * head_dim) * step;
        absorb(&mut acc, &mut state, score, qkv, v_at, step, head_dim);
    }

    let out_step = out.stride(2);
    let out_at = r * out.stride(0) + t * out.stride(1) + h * head_dim * out_step;
    let inv = 1.0f32 / state[1];
    for j in 0..head_dim {
        out[out_at + j * out_step] = acc[j] * inv;
    }
}

/// Causal self-attention for the new positions whose projections are `qkv`
/// (`[rows, n, 3·d]`: queries, keys, values, heads side by side), after the `shared`
/// prefix (stored once or per row) and each row's `branch`: `[rows, n, d]`, the heads side
/// by side. `None` for tensors elsewhere than a CubeCL device, of another type, or of
/// shapes that do not fit together.
#[must_use]
pub fn attention(
    qkv: &BurnTensor<3>,
    heads: usize,
    shared: Option<KeysValues<'_>>,
    branch: Option<KeysValues<'_>>,
) -> Option<BurnTensor<3>> {
    let qkv = cube(qkv)?;
    let [rows, n, three_d] = <[usize; 3]>::try_from(qkv.meta.shape().to_vec()).ok()?;
    if heads == 0 || three_d % (3 * heads) != 0 || rows * n == 0 {
        return None;
    }
    let head_dim = three_d / (3 * heads);
    let part = |kv: Option<KeysValues<'_>>, per_row_only: bool| -> Option<Option<_>> {
        let Some((k, v)) = kv else {
            return Some(None);
        };
        let (k, v) = (cube(k)?, cube(v)?);
        let (ks, vs) = (k.meta.shape().to_vec(), v.meta.shape().to_vec());
        let fits = ks.len() == 4
            && ks == vs
            && (ks[0] == rows || (ks[0] == 1 && !per_row_only))
            && ks[1] == heads
            && ks[3] == head_dim;
        fits.then_some(Some((k, v)))
    };
    let shared = part(shared, false)?;
    let branch = part(branch, true)?;

    let client = qkv.client.clone();
    let d = heads * head_dim;
    let out = empty_f32(&qkv, [rows, n, d]);
    let (has_shared, has_branch) = (shared.is_some(), branch.is_some());
    // An absent part is never read (its comptime flag is off); qkv stands in for it.
    let (shared_k, shared_v) = shared.unwrap_or_else(|| (qkv.clone(), qkv.clone()));
    let (branch_k, branch_v) = branch.unwrap_or_else(|| (qkv.clone(), qkv.clone()));
    let units = rows * heads * n;
    let (cube_count, cube_dim) = grid(&client, units);
    attention_kernel::launch(
        &client,
        cube_count,
        cube_dim,
        qkv.into_tensor_arg(),
        shared_k.into_tensor_arg(),
        shared_v.into_tensor_arg(),
        branch_k.into_tensor_arg(),
        branch_v.into_tensor_arg(),
        out.clone().into_tensor_arg(),
        heads,
        1.0 / (head_dim as f32).sqrt(),
        head_dim,
        has_shared,
        has_branch,
    );
    Some(BurnTensor::from_primitive::<Cube>(out))
}
