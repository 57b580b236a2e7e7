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
