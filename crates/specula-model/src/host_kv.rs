//! Keys and values in plain host memory, for [`HostGpt`](crate::host_model::HostGpt): the
//! shared-prefix cache ([`HostCache`]: per layer, keys transposed as `[heads, head_dim,
//! max_seq]` and values as `[heads, max_seq, head_dim]`, preallocated) and per-sequence runs
//! ([`HostKv`], `[rows, heads, len, head_dim]`). Each head's data is contiguous, so
//! attention streams it in order (a position-major layout made attention a strided walk
//! that the weight stream had evicted from cache); transposed keys turn a query's scores
//! against the whole prefix into `head_dim` vector updates with no horizontal sums.

/// Keys and values of one layer, in one layout (see the users).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HostLayer {
    pub(crate) k: Vec<f32>,
    pub(crate) v: Vec<f32>,
}

/// `rows` sequences × `len` positions of keys/values for every layer,
/// `[rows, heads, len, head_dim]` each.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HostKv {
    pub(crate) rows: usize,
    pub(crate) heads: usize,
    pub(crate) len: usize,
    pub(crate) head_dim: usize,
    pub(crate) layers: Vec<HostLayer>,
}

impl HostKv {
    /// Keys and values of every position of head `head` in row `row`, `[len, head_dim]`.
    pub(crate) fn head(&self, layer: usize, row: usize, head: usize) -> (&[f32], &[f32]) {
        let l = &self.layers[layer];
        let size = self.len * self.head_dim;
        let at = (row * self.heads + head) * size;
        (&l.k[at..at + size], &l.v[at..at + size])
    }

    /// The first `len` positions of row `row` (`len` ≤ `self.len`), as one row.
    pub(crate) fn row_prefix(&self, row: usize, len: usize) -> Self {
        self.gather(&[row], len)
    }

    /// The rows `index` (in that order), every position.
    pub(crate) fn select(&self, index: &[usize]) -> Self {
        self.gather(index, self.len)
    }

    fn gather(&self, index: &[usize], len: usize) -> Self {
        let (hd, size) = (self.head_dim, self.len * self.head_dim);
        let take = |buf: &[f32]| {
            let mut out = Vec::with_capacity(index.len() * self.heads * len * hd);
            for &r in index {
                for h in 0..self.heads {
                    let at = (r * self.heads + h) * size;
                    out.extend_from_slice(&buf[at..at + len * hd]);
                }
            }
            out
        };
        Self {
            rows: index.len(),
            len,
            layers: self
                .layers
                .iter()
                .map(|l| HostLayer {
                    k: take(&l.k),
                    v: take(&l.v),
                })
                .collect(),
            ..*self
        }
    }

    /// `self` then `newer` along the positions, row by row; `None` when the shapes differ.
    pub(crate) fn cat(&self, newer: &Self) -> Option<Self> {
        if (self.rows, self.heads, self.head_dim, self.layers.len())
            != (newer.rows, newer.heads, newer.head_dim, newer.layers.len())
        {
            return None;
        }
        let hd = self.head_dim;
        let (a_size, b_size) = (self.len * hd, newer.len * hd);
        let join = |a: &[f32], b: &[f32]| {
            let mut out = Vec::with_capacity(a.len() + b.len());
            for rh in 0..self.rows * self.heads {
                out.extend_from_slice(&a[rh * a_size..(rh + 1) * a_size]);
                out.extend_from_slice(&b[rh * b_size..(rh + 1) * b_size]);
            }
            out
        };
        Some(Self {
            len: self.len + newer.len,
            layers: self
                .layers
                .iter()
                .zip(&newer.layers)
                .map(|(a, b)| HostLayer {
                    k: join(&a.k, &b.k),
                    v: join(&a.v, &b.v),
                })
                .collect(),
            ..*self
        })
    }
}

/// The shared-prefix cache: per layer, keys and values of `max_seq` positions, written in
/// place; how many are valid is the owner's business (its token list).
#[derive(Debug, Clone)]
pub(crate) struct HostCache {
    heads: usize,
    head_dim: usize,
    max_seq: usize,
    layers: Vec<HostLayer>,
}

impl HostCache {
    /// Zeroed buffers for `n_layers` layers of `heads × max_seq × head_dim` values.
    pub(crate) fn new(n_layers: usize, heads: usize, max_seq: usize, head_dim: usize) -> Self {
        let size = heads * max_seq * head_dim;
        let layer = HostLayer {
            k: vec![0.0; size],
            v: vec![0.0; size],
        };
        Self {
            heads,
            head_dim,
            max_seq,
            layers: vec![layer; n_layers],
        }
    }

    /// The positions per key row of [`keys_t`](Self::keys_t).
    pub(crate) fn max_seq(&self) -> usize {
        self.max_seq
    }

    /// Keys of head `head`, transposed: `[head_dim, max_seq]` (row `i` holds component `i`
    /// of every position; the first `len` of each row are valid).
    pub(crate) fn keys_t(&self, layer: usize, head: usize) -> &[f32] {
        let size = self.max_seq * self.head_dim;
        &self.layers[layer].k[head * size..(head + 1) * size]
    }

    /// Values of head `head` at the first `len` positions, `[len, head_dim]`.
    pub(crate) fn values(&self, layer: usize, head: usize, len: usize) -> &[f32] {
        let at = head * self.max_seq * self.head_dim;
        &self.layers[layer].v[at..at + len * self.head_dim]
    }

    /// Writes the single row of `new` at positions `start..start + new.len`; `false` (and
    /// nothing written) when it has several rows, another shape, or does not fit.
    pub(crate) fn write(&mut self, start: usize, new: &HostKv) -> bool {
        if new.rows != 1
            || (new.heads, new.head_dim) != (self.heads, self.head_dim)
            || new.layers.len() != self.layers.len()
            || start + new.len > self.max_seq
        {
            return false;
        }
        let (hd, n, max_seq) = (self.head_dim, new.len, self.max_seq);
        for (l, src) in self.layers.iter_mut().zip(&new.layers) {
            for h in 0..self.heads {
                let at = (h * max_seq + start) * hd;
                let from = h * n * hd..(h + 1) * n * hd;
                l.v[at..at + n * hd].copy_from_slice(&src.v[from.clone()]);
                let keys_t = &mut l.k[h * max_seq * hd..(h + 1) * max_seq * hd];
                for (t, key) in src.k[from].chunks_exact(hd).enumerate() {
                    for (i, &x) in key.iter().enumerate() {
                        keys_t[i * max_seq + start + t] = x;
                    }
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rows` rows, 2 heads, `len` positions, head_dim 1: value = base + flat index.
    fn kv(rows: usize, len: usize, base: f32) -> HostKv {
        let values: Vec<f32> = (0..rows * 2 * len).map(|i| base + i as f32).collect();
        HostKv {
            rows,
            heads: 2,
            len,
            head_dim: 1,
            layers: vec![HostLayer {
                k: values.clone(),
                v: values.iter().map(|x| -x).collect(),
            }],
        }
    }

    #[test]
    fn narrowing_selecting_and_joining_move_whole_positions_per_head() {
        let a = kv(3, 2, 0.0);
        // Row 1 is [head 0: 4, 5 | head 1: 6, 7].
        assert_eq!(a.row_prefix(1, 1).layers[0].k, vec![4.0, 6.0]);
        let picked = a.select(&[2, 0]);
        assert_eq!(
            picked.layers[0].k,
            vec![8.0, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0]
        );
        let b = kv(2, 1, 100.0);
        let joined = picked.cat(&b).unwrap();
        assert_eq!(joined.len, 3);
        assert_eq!(joined.head(0, 0, 1).0, &[10.0, 11.0, 101.0]);
        assert_eq!(joined.head(0, 1, 0).1, &[-0.0, -1.0, -102.0]);
        assert!(a.cat(&b).is_none(), "row counts differ");
    }

    #[test]
    fn the_cache_writes_one_row_in_place_and_refuses_what_does_not_fit() {
        let mut cache = HostCache::new(1, 2, 4, 1);
        assert!(cache.write(1, &kv(1, 2, 10.0)));
        assert_eq!(cache.keys_t(0, 0), &[0.0, 10.0, 11.0, 0.0]);
        assert_eq!(cache.values(0, 1, 3), &[0.0, -12.0, -13.0]);
        assert!(!cache.write(3, &kv(1, 2, 0.0)), "past max_seq");
        assert!(!cache.write(0, &kv(2, 1, 0.0)), "two rows");
        assert_eq!(cache.keys_t(0, 1), &[0.0, 12.0, 13.0, 0.0]);
        // Transposed keys: component i of position p at i · max_seq + p.
        let mut wide = HostCache::new(1, 1, 3, 2);
        let one = HostKv {
            rows: 1,
            heads: 1,
            len: 1,
            head_dim: 2,
            layers: vec![HostLayer {
                k: vec![5.0, 6.0],
                v: vec![7.0, 8.0],
            }],
        };
        assert!(wide.write(2, &one));
        assert_eq!(wide.keys_t(0, 0), &[0.0, 0.0, 5.0, 0.0, 0.0, 6.0]);
        assert_eq!(wide.values(0, 0, 3), &[0.0, 0.0, 0.0, 0.0, 7.0, 8.0]);
    }
}
