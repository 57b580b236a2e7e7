//! [`Kv`]: keys/values of a batch of rows, either burn tensors (the reference forward, and
//! GPU devices) or host memory (the CPU forward of [`HostGpt`](crate::host_model::HostGpt)).
//! A model uses one kind throughout; switching kinds clears its caches.

use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::host_kv::HostKv;
use crate::transformer::LayerKv;

/// Keys and values of `rows` sequences × `len` positions, every layer.
#[derive(Debug, Clone)]
pub(crate) enum Kv {
    /// Per layer, `[rows, heads, len, head_dim]` tensors.
    Burn(Vec<LayerKv>),
    /// Host buffers.
    Host(HostKv),
}

impl Kv {
    /// Positions per row.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Burn(layers) => layers.first().map_or(0, |l| l.k.dims()[2]),
            Self::Host(kv) => kv.len,
        }
    }

    /// The first `len` positions of row `row`.
    pub(crate) fn row_prefix(&self, row: usize, len: usize) -> Self {
        match self {
            Self::Burn(layers) => Self::Burn(
                layers
                    .iter()
                    .map(|l| LayerKv {
                        k: l.k.clone().narrow(0, row, 1).narrow(2, 0, len),
                        v: l.v.clone().narrow(0, row, 1).narrow(2, 0, len),
                    })
                    .collect(),
            ),
            Self::Host(kv) => Self::Host(kv.row_prefix(row, len)),
        }
    }

    /// Rows `index`, in that order.
    pub(crate) fn select(&self, index: &[usize], device: &Device) -> Self {
        match self {
            Self::Burn(layers) => {
                let index: Vec<i64> = index.iter().map(|&i| i as i64).collect();
                let len = index.len();
                let index = Tensor::<1, Int>::from_data(TensorData::new(index, [len]), device);
                Self::Burn(
                    layers
                        .iter()
                        .map(|l| LayerKv {
                            k: l.k.clone().select(0, index.clone()),
                            v: l.v.clone().select(0, index.clone()),
                        })
                        .collect(),
                )
            }
            Self::Host(kv) => Self::Host(kv.select(index)),
        }
    }

    /// `self` then `newer` along the positions; `None` for mismatched kinds or shapes.
    pub(crate) fn cat(self, newer: Self) -> Option<Self> {
        match (self, newer) {
            (Self::Burn(old), Self::Burn(new)) => Some(Self::Burn(
                old.into_iter()
                    .zip(new)
                    .map(|(o, n)| LayerKv {
                        k: Tensor::cat(vec![o.k, n.k], 2),
                        v: Tensor::cat(vec![o.v, n.v], 2),
                    })
                    .collect(),
            )),
            (Self::Host(old), Self::Host(new)) => old.cat(&new).map(Self::Host),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_kv::HostLayer;

    fn host(rows: usize, len: usize) -> Kv {
        let size = rows * len;
        Kv::Host(HostKv {
            rows,
            heads: 1,
            len,
            head_dim: 1,
            layers: vec![HostLayer {
                k: (0..size).map(|i| i as f32).collect(),
                v: vec![0.0; size],
            }],
        })
    }

    fn burn(rows: usize, len: usize) -> Kv {
        let device = Device::flex();
        Kv::Burn(vec![LayerKv {
            k: Tensor::zeros([rows, 1, len, 1], &device),
            v: Tensor::zeros([rows, 1, len, 1], &device),
        }])
    }

    #[test]
    fn both_kinds_narrow_select_and_join_alike() {
        let device = Device::flex();
        for kv in [host(3, 2), burn(3, 2)] {
            assert_eq!(kv.len(), 2);
            assert_eq!(kv.row_prefix(1, 1).len(), 1);
            let picked = kv.select(&[2, 0], &device);
            let joined = picked.clone().cat(picked).map(|j| j.len());
            assert_eq!(joined, Some(4));
        }
    }

    #[test]
    fn kinds_do_not_mix() {
        assert!(host(1, 1).cat(burn(1, 1)).is_none());
        assert!(burn(1, 1).cat(host(1, 1)).is_none());
        assert!(host(1, 1).cat(host(2, 1)).is_none(), "row counts differ");
    }
}
