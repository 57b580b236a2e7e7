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
fn exp_is_within_a_few_ulp_of_f64_on_softmax_arguments() {
    let mut worst = 0.0_f64;
    for i in 0..=870_000 {
        let x = -(i as f32) / 10_000.0;
        let want = f64::from(x).exp();
        let got = f64::from(exp(x));
        worst = worst.max((got - want).abs() / want);
    }
    assert!(worst < 3e-7, "max relative error {worst}");
    assert_eq!(exp(0.0), 1.0);
    assert!(exp(-1e4) < 1e-37 && exp(f32::NEG_INFINITY) >= 0.0);
}

#[test]
fn matches_softmax_attention_over_cache_branch_and_causal_new_positions() {
    // Head widths with and without a ragged tail after whole groups of vectors.
    // 1 to 6 and 9 queries (blocks of up to 8 share each key load; blocks of up to 5
    // walk several vectors of columns at once). A shared prefix over two key tiles,
    // the second one partly filled, or over five (several whole vectors of keys for
    // any SIMD width, then a ragged one).
    const SHORT: usize = TILE + 3;
    const LONG: usize = 4 * TILE + 6;
    let cases = [
        (20, 2, 3, SHORT),
        (64, 2, 3, SHORT),
        (72, 2, 3, SHORT),
        (64, 1, 1, SHORT),
        (20, 3, 3, SHORT),
        (64, 1, 1, LONG),
        (72, 1, 2, LONG),
        (64, 1, 3, LONG),
        (72, 2, 2, LONG),
        (64, 1, 5, LONG),
    ];
    // Multi-head (the GPT's fused layout) and grouped-query attention (3 query heads
    // per key/value head, the queries in a wider row as in a Llama projection).
    for (hd, rows, n, shared) in cases {
        for group in [1, 3] {
            check_case(hd, rows, n, shared, group, LONG + 16);
        }
    }
}

fn check_case(hd: usize, rows: usize, n: usize, shared: usize, group: usize, max: usize) {
    let kv_heads = 2;
    let heads = kv_heads * group;
    let d = heads * hd;
    let queries = Queries {
        stride: d + 2 * kv_heads * hd + usize::from(group > 1),
        group,
    };
    let mut cache = HostCache::new(1, kv_heads, max, hd);
    let written = kv(1, kv_heads, shared, hd, 1);
    assert!(cache.write(0, &written));
    let branch = kv(rows, kv_heads, 1, hd, 3);
    let new = kv(rows, kv_heads, n, hd, 5);
    let qkv: Vec<f32> = (0..rows * n * queries.stride)
        .map(|i| ((i * 13) % 89) as f32 / 40.0 - 1.0)
        .collect();
    let mut out = vec![0.0; rows * n * d];
    let context = Context {
        shared: Some((&cache, shared)),
        branch: Some(&branch),
    };
    let arch = Arch::new();
    attend(arch, &qkv, queries, new.layer(0), 0, context, &mut out);
    // Two complementary sets of (head, query) pairs make the same output.
    let units = heads * rows * n;
    for cut in [0, 1, units / 2, units - 1] {
        let mut parts = vec![f32::NAN; rows * n * d];
        let (layer, new) = (0, new.layer(0));
        attend_units(arch, &qkv, queries, new, layer, context, 0..cut, &mut parts);
        let mut rest = parts.clone();
        attend_units(
            arch,
            &qkv,
            queries,
            new,
            layer,
            context,
            cut..units,
            &mut rest,
        );
        for (h, m) in (0..heads).flat_map(|h| (0..rows * n).map(move |m| (h, m))) {
            let at = m * d + h * hd..m * d + (h + 1) * hd;
            let part = if h * rows * n + m < cut {
                &parts
            } else {
                &rest
            };
            assert_eq!(part[at.clone()], out[at], "cut {cut}");
        }
    }
    for r in 0..rows {
        for t in 0..n {
            for h in 0..heads {
                let kvh = h / group;
                let split = |block: &[f32], len: usize| -> Vec<Vec<f32>> {
                    block[..len * hd].chunks(hd).map(<[f32]>::to_vec).collect()
                };
                let (ck, cv) = written.head(0, 0, kvh);
                let (bk, bv) = branch.head(0, r, kvh);
                let (nk, nv) = new.head(0, r, kvh);
                let mut keys = split(ck, shared);
                keys.extend(split(bk, 1));
                keys.extend(split(nk, t + 1));
                let mut values = split(cv, shared);
                values.extend(split(bv, 1));
                values.extend(split(nv, t + 1));
                let at = (r * n + t) * queries.stride + h * hd;
                let want = naive(&qkv[at..at + hd], &keys, &values);
                let at = (r * n + t) * d + h * hd;
                for (g, w) in out[at..at + hd].iter().zip(&want) {
                    assert!(
                        (g - w).abs() < 1e-5,
                        "hd {hd} row {r} pos {t} head {h} group {group}"
                    );
                }
            }
        }
    }
}
