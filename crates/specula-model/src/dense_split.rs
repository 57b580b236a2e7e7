//! A dense call shared with the [helper thread](crate::helper_thread): the output columns
//! in pieces that either thread takes as it becomes free ([`Helper::share`]).
//!
//! A piece is one column panel for every row, or, for layers of fewer than
//! [`FEW_PANELS`] panels (the target's 320-wide layers have 5) and several rows, one
//! panel for half of the rows: five whole panels would leave one thread a whole panel
//! behind the other.

use std::ops::Range;
use std::sync::Arc;

use crate::dense::PackedDense;
use crate::helper_thread::{Helper, Work};

/// Multiply-adds per call from which a call is split: below it the hand-over costs more
/// than it saves (the draft's layers stay whole).
const SPLIT_WORK: usize = 1 << 18;

/// Layers with fewer panels are cut by rows too.
const FEW_PANELS: usize = 8;

/// Whether a call of `rows` rows through `layer` would be split.
pub(crate) fn splits(layer: &PackedDense, rows: usize) -> bool {
    layer.n_panels() >= 2 && rows * layer.work_per_row() >= SPLIT_WORK
}

/// One piece of a split call: panel `panel` for rows `rows`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    panel: usize,
    rows: Range<usize>,
}

/// The pieces of a call of `rows` rows through `panels` panels, panel by panel.
fn pieces(panels: usize, rows: usize) -> Vec<Piece> {
    let halves = if panels < FEW_PANELS && rows >= 2 {
        let mid = rows / 2;
        vec![0..mid, mid..rows]
    } else {
        vec![0..rows]
    };
    (0..panels)
        .flat_map(|panel| {
            halves.iter().map(move |rows| Piece {
                panel,
                rows: rows.clone(),
            })
        })
        .collect()
}

/// What happens to a dense call's outputs: element by element, so each thread applies it
/// to its own part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Activation {
    Identity,
    Gelu,
}

/// `layer` applied to `rows` rows of `x`, then `activation`, shared with the helper when
/// there is one and the call is large enough; `None` when `x` has the wrong length. `x`
/// is shared with the helper, not copied.
pub(crate) fn apply<'m>(
    layer: &'m PackedDense,
    x: Arc<Vec<f32>>,
    rows: usize,
    activation: Activation,
    helper: Option<&Helper<'_, 'm>>,
) -> Option<Vec<f32>> {
    let finish = move |mut out: Vec<f32>| {
        if activation == Activation::Gelu {
            layer.gelu(&mut out);
        }
        out
    };
    let Some(helper) = helper.filter(|_| splits(layer, rows)) else {
        return layer.apply(&x, rows).map(finish);
    };
    let k = layer.d_in();
    if x.len() != rows * k {
        return None;
    }
    let pieces = Arc::new(pieces(layer.n_panels(), rows));
    let work: Work<'m> = Arc::new({
        let pieces = Arc::clone(&pieces);
        move |i| {
            let Piece { panel, rows } = &pieces[i];
            let x = &x[rows.start * k..rows.end * k];
            finish(layer.columns(x, rows.len(), *panel..*panel + 1))
        }
    });
    let outs = helper.share(pieces.len(), work);
    Some(assemble(layer, rows, &pieces, &outs))
}

/// The row-major `[rows, d_out]` output from the pieces' outputs.
fn assemble(layer: &PackedDense, rows: usize, pieces: &[Piece], outs: &[Vec<f32>]) -> Vec<f32> {
    let d_out = layer.columns_in(0..layer.n_panels());
    let mut out = vec![0.0; rows * d_out];
    for (piece, part) in pieces.iter().zip(outs) {
        let first = layer.columns_in(0..piece.panel);
        let width = layer.columns_in(piece.panel..piece.panel + 1);
        for (r, values) in piece.rows.clone().zip(part.chunks_exact(width)) {
            out[r * d_out + first..r * d_out + first + width].copy_from_slice(values);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::helper_thread::with_helper;

    #[test]
    fn few_panels_are_cut_by_rows_too() {
        let piece = |panel, rows| Piece { panel, rows };
        assert_eq!(
            pieces(2, 5),
            vec![
                piece(0, 0..2),
                piece(0, 2..5),
                piece(1, 0..2),
                piece(1, 2..5)
            ]
        );
        assert_eq!(pieces(2, 1), vec![piece(0, 0..1), piece(1, 0..1)]);
        assert_eq!(pieces(20, 5).len(), 20);
    }

    #[test]
    fn a_split_call_equals_the_whole_call_and_small_calls_stay_whole() {
        // Panels of 64 columns with AVX-512 (fewer lanes make more panels): few panels, many,
        // and a ragged last panel.
        for (k, n) in [(1024, 320), (256, 1280), (256, 1030)] {
            let w: Vec<f32> = (0..k * n)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 97.0)
                .collect();
            let b: Vec<f32> = (0..n).map(|j| j as f32 / 100.0).collect();
            let layer = PackedDense::new(&w, Some(&b), k, n).unwrap();
            let x: Vec<f32> = (0..8 * k)
                .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
                .collect();
            let small = PackedDense::new(&w[..k * 64], None, k, 64).unwrap();
            assert!(!splits(&small, 3));
            let (outs, served) = with_helper(2, |helper| {
                let helper = helper.expect("a helper thread");
                let part = |range: std::ops::Range<usize>| Arc::new(x[range].to_vec());
                let both = [Activation::Identity, Activation::Gelu];
                let outs: Vec<_> = (1..=8)
                    .flat_map(|rows| both.map(|a| (rows, a)))
                    .map(|(rows, a)| apply(&layer, part(0..rows * k), rows, a, Some(helper)))
                    .collect();
                let whole = apply(
                    &small,
                    part(0..3 * k),
                    3,
                    Activation::Identity,
                    Some(helper),
                );
                assert_eq!(whole, small.apply(&x[..3 * k], 3));
                let wrong = apply(
                    &layer,
                    part(1..3 * k),
                    3,
                    Activation::Identity,
                    Some(helper),
                );
                assert_eq!(wrong, None, "wrong length");
                (outs, helper.served())
            });
            let split_calls = (1..=8).filter(|&rows| splits(&layer, rows)).count();
            assert!(split_calls >= 5, "{k} × {n}");
            assert_eq!(served, 2 * split_calls, "one task per split call");
            for (rows, out) in (1..=8).zip(outs.chunks(2)) {
                let want = layer.apply(&x[..rows * k], rows).unwrap();
                assert_eq!(out[0].as_ref(), Some(&want), "{n} columns, {rows} rows");
                let mut gelu = want;
                layer.gelu(&mut gelu);
                assert_eq!(
                    out[1].as_ref(),
                    Some(&gelu),
                    "{n} columns, {rows} rows, GELU"
                );
            }
        }
    }
}
