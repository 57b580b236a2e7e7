//! A dense call shared with the [helper thread](crate::helper_thread) or a
//! [remote copy](crate::dense_remote) of the model: each side computes about half of the
//! output columns.
//!
//! The unit of work is a column panel of one row. With an even number of panels each
//! thread takes half of them; with an odd number and several rows the middle panel is
//! shared by rows, so that a 320-wide layer (7 panels of up to 48 columns with AVX-512)
//! splits 17 : 18 row-panels at 5 rows instead of 3 : 4 panels. Each thread still reads
//! only its own panels' weights (the shared one from both).

use std::ops::Range;
use std::sync::Arc;

use crate::dense::PackedDense;
use crate::dense_remote::{DenseCall, DenseRemote, RemoteSlot, index_of};
use crate::helper_thread::{Helper, Task};

/// Multiply-adds per call from which a call is split: below it the hand-over costs more
/// than it saves (the draft's layers stay whole).
const SPLIT_WORK: usize = 1 << 18;

/// Whether a call of `rows` rows through `layer` would be split.
pub(crate) fn splits(layer: &PackedDense, rows: usize) -> bool {
    layer.n_panels() >= 2 && rows * layer.work_per_row() >= SPLIT_WORK
}

/// Who computes what: the calling thread panels `ours` for every row and, when
/// `shared_rows` is `Some(r)`, the first `r` rows of panel `ours.end`; the helper the
/// remaining rows of that panel and panels `theirs` for every row.
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    ours: Range<usize>,
    shared_rows: Option<usize>,
    theirs: Range<usize>,
}

impl Plan {
    fn new(panels: usize, rows: usize) -> Self {
        let half = panels / 2;
        if panels.is_multiple_of(2) || rows < 2 {
            // With one row the odd panel goes to the helper: the caller also hands over.
            return Self {
                ours: 0..half,
                shared_rows: None,
                theirs: half..panels,
            };
        }
        Self {
            ours: 0..half,
            shared_rows: Some(rows / 2),
            theirs: half + 1..panels,
        }
    }
}

/// What happens to a dense call's outputs: element by element, so each thread applies it
/// to its own part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Activation {
    Identity,
    Gelu,
}

/// Who computes the other half of a dense call, if anyone.
#[derive(Clone, Copy)]
pub(crate) enum Partner<'h, 'm> {
    /// The helper thread of this forward pass.
    Thread(&'h Helper<'h, 'm>),
    /// A remote copy of the model; `u32` is the layer's index among its dense layers.
    Remote(&'h dyn DenseRemote, u32),
}

/// The partner for `layer`'s call in a forward pass: its helper thread when it has one,
/// else the model's remote, if any.
pub(crate) fn partner<'h, 'm>(
    helper: Option<&'h Helper<'h, 'm>>,
    remote: &'m RemoteSlot,
    layers: impl Iterator<Item = &'m PackedDense>,
    layer: &PackedDense,
) -> Option<Partner<'h, 'm>>
where
    'm: 'h,
{
    if let Some(helper) = helper {
        return Some(Partner::Thread(helper));
    }
    let remote = remote.0.as_deref()?;
    Some(Partner::Remote(remote, index_of(layers, layer)?))
}

/// `layer` applied to `rows` rows of `x`, then `activation`, about half of the work on the
/// partner when there is one and the call is large enough; `None` when `x` has the wrong
/// length. `x` is shared with a helper thread, not copied.
pub(crate) fn apply<'m>(
    layer: &'m PackedDense,
    x: Arc<Vec<f32>>,
    rows: usize,
    activation: Activation,
    partner: Option<Partner<'_, 'm>>,
) -> Option<Vec<f32>> {
    let Some(partner) = partner.filter(|_| splits(layer, rows)) else {
        return layer
            .apply(&x, rows)
            .map(|out| finish(layer, activation, out));
    };
    let k = layer.d_in();
    if x.len() != rows * k {
        return None;
    }
    let plan = Plan::new(layer.n_panels(), rows);
    let mid = plan.ours.end;
    let ours = || {
        let head = layer.columns(&x, rows, plan.ours.clone());
        let shared = match plan.shared_rows {
            Some(r) => finish(
                layer,
                activation,
                layer.columns(&x[..r * k], r, mid..mid + 1),
            ),
            None => Vec::new(),
        };
        (finish(layer, activation, head), shared)
    };
    let (ours, theirs) = match partner {
        Partner::Thread(helper) => {
            let theirs: Task<'m> = Arc::new({
                let x = Arc::clone(&x);
                move || their_part(layer, &x, rows, activation).unwrap_or_default()
            });
            helper.join(theirs, ours)
        }
        Partner::Remote(remote, index) => {
            let call = DenseCall {
                layer: index,
                gelu: activation == Activation::Gelu,
                rows: u32::try_from(rows).ok()?,
                d_out: u32::try_from(layer.columns_in(0..layer.n_panels())).ok()?,
                x: &x,
            };
            let posted = remote.post(call);
            let mine = ours();
            let want = their_len(layer, &plan, rows);
            let theirs = posted
                .then(|| remote.collect())
                .flatten()
                .filter(|theirs| theirs.len() == want);
            // A remote that refused or failed: its part is computed here, the same way.
            let theirs = theirs.or_else(|| their_part(layer, &x, rows, activation))?;
            (mine, theirs)
        }
    };
    Some(merge(layer, &plan, rows, ours, theirs))
}

/// `out` after `activation`.
fn finish(layer: &PackedDense, activation: Activation, mut out: Vec<f32>) -> Vec<f32> {
    if activation == Activation::Gelu {
        layer.gelu(&mut out);
    }
    out
}

/// The helper's part of a split call of `rows` rows of `x` through `layer`: the
/// remaining rows of the shared panel, then its panels for every row, after
/// `activation`; `None` when `x` has the wrong length.
pub(crate) fn their_part(
    layer: &PackedDense,
    x: &[f32],
    rows: usize,
    activation: Activation,
) -> Option<Vec<f32>> {
    let k = layer.d_in();
    if rows == 0 || x.len() != rows * k {
        return None;
    }
    let plan = Plan::new(layer.n_panels(), rows);
    let mid = plan.ours.end;
    let mut out = match plan.shared_rows {
        Some(r) => layer.columns(&x[r * k..], rows - r, mid..mid + 1),
        None => Vec::new(),
    };
    out.extend(layer.columns(x, rows, plan.theirs.clone()));
    Some(finish(layer, activation, out))
}

/// The length of [`their_part`]'s answer.
fn their_len(layer: &PackedDense, plan: &Plan, rows: usize) -> usize {
    let mid = plan.ours.end;
    let shared = plan
        .shared_rows
        .map_or(0, |r| (rows - r) * layer.columns_in(mid..mid + 1));
    shared + rows * layer.columns_in(plan.theirs.clone())
}

/// The row-major output from the pieces of [`apply`]: per row, our panels, the shared
/// panel (ours for the first `shared_rows` rows, theirs after), their panels.
fn merge(
    layer: &PackedDense,
    plan: &Plan,
    rows: usize,
    (head, shared): (Vec<f32>, Vec<f32>),
    theirs: Vec<f32>,
) -> Vec<f32> {
    let mid = plan.ours.end;
    let w_head = layer.columns_in(plan.ours.clone());
    let w_mid = plan
        .shared_rows
        .map_or(0, |_| layer.columns_in(mid..mid + 1));
    let w_tail = layer.columns_in(plan.theirs.clone());
    let r = plan.shared_rows.unwrap_or(0);
    let (their_mid, tail) = theirs.split_at((rows - r) * w_mid);
    let mut out = Vec::with_capacity(rows * (w_head + w_mid + w_tail));
    for row in 0..rows {
        out.extend_from_slice(&head[row * w_head..(row + 1) * w_head]);
        let piece = if row < r {
            &shared[row * w_mid..(row + 1) * w_mid]
        } else {
            &their_mid[(row - r) * w_mid..(row - r + 1) * w_mid]
        };
        out.extend_from_slice(piece);
        out.extend_from_slice(&tail[row * w_tail..(row + 1) * w_tail]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::helper_thread::with_helper;

    #[test]
    fn plans_share_the_middle_panel_by_rows_when_the_panels_are_odd() {
        let plan = Plan::new(5, 5);
        assert_eq!((plan.ours, plan.theirs), (0..2, 3..5));
        assert_eq!(plan.shared_rows, Some(2));
        let even = Plan::new(20, 5);
        assert_eq!(
            (even.ours, even.theirs, even.shared_rows),
            (0..10, 10..20, None)
        );
        let one_row = Plan::new(5, 1);
        assert_eq!(
            (one_row.ours, one_row.theirs, one_row.shared_rows),
            (0..2, 2..5, None)
        );
    }

    #[test]
    fn a_split_call_equals_the_whole_call_and_small_calls_stay_whole() {
        // Panels of 48 columns with AVX-512 (fewer lanes make more panels): odd numbers
        // of them with a narrower last panel (320, 1280 columns), and an even number.
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
                    .map(|(rows, a)| {
                        apply(
                            &layer,
                            part(0..rows * k),
                            rows,
                            a,
                            Some(Partner::Thread(helper)),
                        )
                    })
                    .collect();
                let whole = apply(
                    &small,
                    part(0..3 * k),
                    3,
                    Activation::Identity,
                    Some(Partner::Thread(helper)),
                );
                assert_eq!(whole, small.apply(&x[..3 * k], 3));
                let wrong = apply(
                    &layer,
                    part(1..3 * k),
                    3,
                    Activation::Identity,
                    Some(Partner::Thread(helper)),
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
    /// A remote in this process: the other copy of the layers, answered at `post`.
    struct LocalRemote {
        layers: Vec<PackedDense>,
        answer: std::sync::Mutex<Option<Vec<f32>>>,
        refuse: bool,
    }

    impl DenseRemote for LocalRemote {
        fn post(&self, call: DenseCall<'_>) -> bool {
            if self.refuse {
                return false;
            }
            *self.answer.lock().unwrap() = crate::dense_remote::serve(self.layers.iter(), call);
            true
        }

        fn collect(&self) -> Option<Vec<f32>> {
            self.answer.lock().unwrap().take()
        }
    }

    #[test]
    fn a_call_split_with_a_remote_equals_the_whole_call_and_a_refusal_changes_nothing() {
        let (k, n) = (256, 1030);
        let w: Vec<f32> = (0..k * n)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 97.0)
            .collect();
        let layer = PackedDense::new(&w, None, k, n).unwrap();
        let x: Vec<f32> = (0..8 * k)
            .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
            .collect();
        for refuse in [false, true] {
            let remote = LocalRemote {
                layers: vec![layer.clone()],
                answer: std::sync::Mutex::new(None),
                refuse,
            };
            for rows in 1..=8 {
                let part = Arc::new(x[..rows * k].to_vec());
                let split = apply(
                    &layer,
                    part,
                    rows,
                    Activation::Gelu,
                    Some(Partner::Remote(&remote, 0)),
                );
                let mut want = layer.apply(&x[..rows * k], rows).unwrap();
                layer.gelu(&mut want);
                assert_eq!(split, Some(want), "{rows} rows, refused: {refuse}");
            }
        }
    }
}
