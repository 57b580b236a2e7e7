//! Keys and values as burn tensors: [`BurnKv`] for the positions of one pass, and the
//! shared-prefix store (per layer, `[1, heads, max_seq, head_dim]` preallocated and
//! written in place).

use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::cached::RowsKv;
use crate::config::ModelConfig;
use crate::transformer::LayerKv;

/// Keys and values of `rows` sequences × `len` positions: per layer,
/// `[rows, heads, len, head_dim]` tensors.
#[derive(Debug, Clone)]
pub struct BurnKv(pub(crate) Vec<LayerKv>);

impl BurnKv {
    /// Every layer's keys and values.
    #[must_use]
    pub fn layers(&self) -> &[LayerKv] {
        &self.0
    }
}

impl RowsKv for BurnKv {
    fn positions(&self) -> usize {
        self.0.first().map_or(0, |l| l.k.dims()[2])
    }

    fn row_prefix(&self, row: usize, len: usize) -> Self {
        Self(
            self.0
                .iter()
                .map(|l| LayerKv {
                    k: l.k.clone().narrow(0, row, 1).narrow(2, 0, len),
                    v: l.v.clone().narrow(0, row, 1).narrow(2, 0, len),
                })
                .collect(),
        )
    }

    fn select(&self, rows: &[usize]) -> Self {
        let Some(first) = self.0.first() else {
            return Self(Vec::new());
        };
        let index: Vec<i64> = rows.iter().map(|&i| i as i64).collect();
        let len = index.len();
        let index = Tensor::<1, Int>::from_data(TensorData::new(index, [len]), &first.k.device());
        Self(
            self.0
                .iter()
                .map(|l| LayerKv {
                    k: l.k.clone().select(0, index.clone()),
                    v: l.v.clone().select(0, index.clone()),
                })
                .collect(),
        )
    }

    fn cat(self, newer: Self) -> Option<Self> {
        let rows = |kv: &Self| kv.0.first().map(|l| l.k.dims()[0]);
        if rows(&self) != rows(&newer) {
            return None;
        }
        Some(Self(
            self.0
                .into_iter()
                .zip(newer.0)
                .map(|(o, n)| LayerKv {
                    k: Tensor::cat(vec![o.k, n.k], 2),
                    v: Tensor::cat(vec![o.v, n.v], 2),
                })
                .collect(),
        ))
    }
}

/// An empty shared-prefix store for `config`.
pub(crate) fn new_shared(config: &ModelConfig, device: &Device) -> Vec<LayerKv> {
    let shape = [1, config.n_heads, config.max_seq, config.head_dim()];
    (0..config.n_layers)
        .map(|_| LayerKv {
            k: Tensor::zeros(shape, device),
            v: Tensor::zeros(shape, device),
        })
        .collect()
}

/// The keys and values of the first `len` positions of `shared`, or `None` for `len` = 0.
pub(crate) fn view(shared: &[LayerKv], len: usize) -> Option<Vec<LayerKv>> {
    (len > 0).then(|| {
        shared
            .iter()
            .map(|l| LayerKv {
                k: l.k.clone().narrow(2, 0, len),
                v: l.v.clone().narrow(2, 0, len),
            })
            .collect()
    })
}

/// Writes `new` (one row) into `shared` from position `start` on.
pub(crate) fn write(shared: &mut Vec<LayerKv>, start: usize, new: BurnKv) {
    // Move the tensors out so each is uniquely owned and written in place; a clone here
    // would make slice_assign copy the whole preallocated cache.
    let old = std::mem::take(shared);
    *shared = old
        .into_iter()
        .zip(new.0)
        .map(|(layer, kv)| {
            let [_, h, _, hd] = layer.k.dims();
            let end = start + kv.k.dims()[2];
            let range = [0..1, 0..h, start..end, 0..hd];
            LayerKv {
                k: layer.k.slice_assign(range.clone(), kv.k),
                v: layer.v.slice_assign(range, kv.v),
            }
        })
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(rows: usize, len: usize) -> BurnKv {
        let device = Device::flex();
        BurnKv(vec![LayerKv {
            k: Tensor::zeros([rows, 1, len, 1], &device),
            v: Tensor::zeros([rows, 1, len, 1], &device),
        }])
    }

    #[test]
    fn rows_narrow_select_and_join() {
        let three = kv(3, 2);
        assert_eq!(three.positions(), 2);
        assert_eq!(three.row_prefix(1, 1).positions(), 1);
        let picked = three.select(&[2, 0]);
        let joined = picked.clone().cat(picked).map(|j| j.positions());
        assert_eq!(joined, Some(4));
        assert!(three.cat(kv(2, 2)).is_none(), "row counts differ");
    }
}
