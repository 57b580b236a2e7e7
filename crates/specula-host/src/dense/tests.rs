//! Tests of the packed dense layers and GELU against plain loops and libm.

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
            let all = Out {
                panels: 0..n.div_ceil(layer.width),
                width: n,
                interleave: false,
            };
            scalar_reference(&layer, &x, &mut reference, &all);
            // Any run of panels gives those columns (how a call splits across threads).
            let panels = all.panels.len();
            let (p0, p1) = (panels / 3, (panels / 3 + 2).min(panels));
            let part = layer.columns(&x, rows, p0..p1);
            let (c0, c1) = (p0 * layer.width, n.min(p1 * layer.width));
            assert_eq!(part.len(), rows * (c1 - c0));
            for r in 0..rows {
                assert_eq!(
                    part[r * (c1 - c0)..(r + 1) * (c1 - c0)],
                    got[r * n + c0..r * n + c1]
                );
            }
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
fn the_scalar_level_and_both_input_layouts_agree_too() {
    // 129 columns: with AVX-512 two whole panels and a last one of 33 columns padded to
    // a whole panel's width, so one row's two-panel blocks meet padding too.
    let (k, n) = (37, 129);
    let w: Vec<f32> = (0..k * n)
        .map(|i| ((i * 31 % 89) as f32 - 44.0) / 61.0)
        .collect();
    let scalar = PackedDense::with_lanes(&w, None, k, n, 1).unwrap();
    let simd = PackedDense::new(&w, None, k, n).unwrap();
    let run = |layer: &PackedDense, x: &[f32], interleave: bool| {
        let mut got = vec![0.0; x.len() / k * n];
        let apply = Apply {
            layer,
            x,
            out: &mut got,
            cols: Out {
                panels: 0..n.div_ceil(layer.width),
                width: n,
                interleave,
            },
        };
        if layer.width == 4 {
            apply.with_simd(pulp::Scalar::new());
        } else {
            layer.arch.dispatch(apply);
        }
        got
    };
    // Both input layouts, at the scalar level and at this machine's, for one row
    // (natively blocks of two panels) and for several (blocks of one).
    for rows in [1, 6, 9] {
        let x: Vec<f32> = (0..rows * k)
            .map(|i| ((i * 7 % 23) as f32 - 11.0) / 9.0)
            .collect();
        let want = naive(&w, &vec![0.0; n], &x, k, n);
        for interleave in [false, true] {
            for layer in [&scalar, &simd] {
                let got = run(layer, &x, interleave);
                for (g, w) in got.iter().zip(&want) {
                    assert!(
                        (g - w).abs() < 1e-3 * (1.0 + w.abs()),
                        "{rows} rows, interleave {interleave}"
                    );
                }
                // Each output is the same sum in the same order whatever the block
                // shape, so a row alone gives the very same bits.
                let alone = run(layer, &x[..k], interleave);
                assert_eq!(alone, got[..n], "{rows} rows, interleave {interleave}");
            }
        }
    }
}

#[test]
fn gelu_matches_the_erf_definition() {
    let mut worst = 0.0_f64;
    let xs: Vec<f32> = (-12_000..=12_000).map(|i| i as f32 / 1000.0).collect();
    let mut ys = xs.clone();
    gelu_in_place(Arch::new(), &mut ys);
    for (&x, &y) in xs.iter().zip(&ys) {
        let x = f64::from(x);
        let exact = 0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2));
        worst = worst.max((f64::from(y) - exact).abs() / (1.0 + exact.abs()));
    }
    // A few f32 ulps: the output itself is rounded to f32.
    assert!(worst < 2e-6, "max relative error {worst}");
    let mut edge = [f32::INFINITY, 0.0, 0.0];
    gelu_in_place(Arch::new(), &mut edge);
    assert_eq!(edge[2], 0.0);
    assert_eq!(edge[0], f32::INFINITY);
}

#[test]
fn rejects_mismatched_shapes() {
    assert!(PackedDense::new(&[1.0; 6], None, 2, 4).is_none());
    assert!(PackedDense::new(&[1.0; 8], Some(&[0.0; 3]), 2, 4).is_none());
    let layer = PackedDense::new(&[1.0; 8], None, 2, 4).unwrap();
    assert!(layer.apply(&[1.0; 5], 2).is_none());
    assert_eq!(layer.apply(&[1.0, 2.0], 1).unwrap(), vec![3.0; 4]);
}

#[test]
fn row_blocks_are_as_few_as_fit_and_even() {
    for max_rows in 1..=8 {
        for rows in 1..=40 {
            let spans: Vec<(usize, usize)> = row_block_spans(rows, max_rows).collect();
            assert_eq!(spans.len(), rows.div_ceil(max_rows), "{rows} rows, {max_rows} a block");
            let mut next = 0;
            for &(r0, n) in &spans {
                assert_eq!(r0, next, "contiguous: {spans:?}");
                assert!((1..=max_rows).contains(&n), "{spans:?}");
                next += n;
            }
            assert_eq!(next, rows);
            let sizes = spans.iter().map(|s| s.1);
            assert!(sizes.clone().max().unwrap() - sizes.min().unwrap() <= 1, "{spans:?}");
        }
    }
    // The case that motivated it: a verification of γ = 4 in blocks of 4.
    assert_eq!(row_block_spans(5, 4).collect::<Vec<_>>(), [(0, 3), (3, 2)]);
}
