//! Keys and values in plain host memory, for [`HostGpt`](crate::host_model::HostGpt): the
//! shared-prefix cache ([`HostCache`], per layer and head, keys and values in tiles of 16
//! columns, preallocated) and per-sequence runs ([`HostKv`], `[rows, heads, len,
//! head_dim]`). Each head's data is contiguous, so attention streams it in order; the
//! cache lives in huge pages where the system allows ([`HostMemory`]).

use crate::host_memory::HostMemory;

/// Keys and values of one layer, in one layout (see the users).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HostLayer {
    pub(crate) k: Vec<f32>,
    pub(crate) v: Vec<f32>,
}

/// `rows` sequences × `len` positions of keys/values for every layer,
/// `[rows, heads, len, head_dim]` each.
#[derive(Debug, Clone, PartialEq)]
pub struct HostKv {
    pub(crate) rows: usize,
    pub(crate) heads: usize,
    pub(crate) len: usize,
    pub(crate) head_dim: usize,
    pub(crate) layers: Vec<HostLayer>,
}

/// One layer of a [`HostKv`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct NewKv<'a> {
    pub(crate) kv: &'a HostLayer,
    pub(crate) rows: usize,
    pub(crate) heads: usize,
    pub(crate) len: usize,
    pub(crate) head_dim: usize,
}

impl<'a> NewKv<'a> {
    /// Keys and values of every position of head `head` in row `row`, `[len, head_dim]`.
    pub(crate) fn head(&self, row: usize, head: usize) -> (&'a [f32], &'a [f32]) {
        let size = self.len * self.head_dim;
        let at = (row * self.heads + head) * size;
        (&self.kv.k[at..at + size], &self.kv.v[at..at + size])
    }
}

impl HostKv {
    /// Layer `layer`, with this run's shape.
    pub(crate) fn layer(&self, layer: usize) -> NewKv<'_> {
        self.with_layer(&self.layers[layer])
    }

    /// `kv` viewed with this run's shape.
    pub(crate) fn with_layer<'a>(&self, kv: &'a HostLayer) -> NewKv<'a> {
        NewKv {
            kv,
            rows: self.rows,
            heads: self.heads,
            len: self.len,
            head_dim: self.head_dim,
        }
    }

    /// Keys and values of every position of head `head` in row `row`, `[len, head_dim]`.
    pub(crate) fn head(&self, layer: usize, row: usize, head: usize) -> (&[f32], &[f32]) {
        self.layer(layer).head(row, head)
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

/// Columns per tile of a [`Tiled`] matrix: a whole AVX-512 vector, and a multiple of
/// every narrower one, so a vector never straddles two tiles.
pub(crate) const TILE: usize = 16;

/// A matrix of `rows` rows stored in tiles of [`TILE`] columns, each tile row-major:
/// `m[i, c]` at `(c / TILE · rows + i) · TILE + c % TILE`. A vector of columns is one
/// load, and a walk down the rows of one tile is a contiguous stream. The last tile is
/// whole too (its columns past the matrix's width are padding), so attention loads whole
/// vectors even where only some of their columns count.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tiled<'a> {
    pub(crate) data: &'a [f32],
    pub(crate) rows: usize,
}

/// Where `m[i, c]` lives in a [`Tiled`] matrix of `rows` rows.
#[inline(always)]
pub(crate) fn tiled_at(rows: usize, i: usize, c: usize) -> usize {
    (c / TILE * rows + i) * TILE + c % TILE
}

impl Tiled<'_> {
    /// `m[i, c]`.
    #[cfg(test)]
    pub(crate) fn get(&self, i: usize, c: usize) -> f32 {
        self.data[tiled_at(self.rows, i, c)]
    }
}

/// The shared-prefix cache: per layer and head, keys as a tiled `[head_dim, max_seq]`
/// (transposed: scores against the prefix are `head_dim` vector updates with no
/// horizontal sums) and values as a tiled `[max_seq, head_dim]`, written in place; how
/// many positions are valid is the owner's business (its token list). Both layouts keep
/// what attention reads together: the first positions' keys are contiguous, and so is a
/// tile of value columns down the positions. (Rows over all `max_seq` positions, or
/// position-major values read in column passes, made attention a walk of short strided
/// runs that the weight stream had evicted from cache: a fifth of a forward pass.)
#[derive(Debug)]
pub struct HostCache {
    heads: usize,
    head_dim: usize,
    max_seq: usize,
    n_layers: usize,
    /// All layers' keys, then (in `values`) all layers' values, layer after layer and
    /// head after head, in huge pages where the system allows (see [`HostMemory`]).
    keys: HostMemory,
    values: HostMemory,
}

impl HostCache {
    /// Zeroed buffers for `n_layers` layers of `heads × max_seq × head_dim` keys and
    /// values (each rounded up to whole tiles).
    pub(crate) fn new(n_layers: usize, heads: usize, max_seq: usize, head_dim: usize) -> Self {
        let keys_per_layer = heads * Self::key_size(max_seq, head_dim);
        let values_per_layer = heads * Self::value_size(max_seq, head_dim);
        let keys = HostMemory::zeroed(n_layers * keys_per_layer, true);
        let values = HostMemory::zeroed(n_layers * values_per_layer, true);
        Self {
            heads,
            head_dim,
            max_seq,
            n_layers,
            keys,
            values,
        }
    }

    fn key_size(max_seq: usize, head_dim: usize) -> usize {
        max_seq.next_multiple_of(TILE) * head_dim
    }

    fn value_size(max_seq: usize, head_dim: usize) -> usize {
        max_seq * head_dim.next_multiple_of(TILE)
    }

    /// Keys of head `head`: `m[i, p]` is component `i` of position `p`.
    pub(crate) fn keys(&self, layer: usize, head: usize) -> Tiled<'_> {
        let size = Self::key_size(self.max_seq, self.head_dim);
        let at = (layer * self.heads + head) * size;
        Tiled {
            data: &self.keys.as_slice()[at..at + size],
            rows: self.head_dim,
        }
    }

    /// Values of head `head`: `m[p, i]` is component `i` of position `p`.
    pub(crate) fn values(&self, layer: usize, head: usize) -> Tiled<'_> {
        let size = Self::value_size(self.max_seq, self.head_dim);
        let at = (layer * self.heads + head) * size;
        Tiled {
            data: &self.values.as_slice()[at..at + size],
            rows: self.max_seq,
        }
    }

    /// Writes the single row of `new` at positions `start..start + new.len`; `false` (and
    /// nothing written) when it has several rows, another shape, or does not fit.
    pub(crate) fn write(&mut self, start: usize, new: &HostKv) -> bool {
        if new.rows != 1
            || (new.heads, new.head_dim) != (self.heads, self.head_dim)
            || new.layers.len() != self.n_layers
            || start + new.len > self.max_seq
            || self.head_dim == 0
            || self.max_seq == 0
        {
            return false;
        }
        let (hd, n, max_seq) = (self.head_dim, new.len, self.max_seq);
        let (key_size, value_size) = (Self::key_size(max_seq, hd), Self::value_size(max_seq, hd));
        let all_keys = self.keys.as_mut_slice().chunks_exact_mut(key_size);
        let all_values = self.values.as_mut_slice().chunks_exact_mut(value_size);
        let heads = new
            .layers
            .iter()
            .flat_map(|l| (0..self.heads).map(move |h| (l, h)));
        for (((src, h), keys), values) in heads.zip(all_keys).zip(all_values) {
            let from = h * n * hd..(h + 1) * n * hd;
            let new_keys = src.k[from.clone()].chunks_exact(hd);
            let new_values = src.v[from].chunks_exact(hd);
            for (t, (key, value)) in new_keys.zip(new_values).enumerate() {
                let p = start + t;
                for (i, (&k, &v)) in key.iter().zip(value).enumerate() {
                    keys[tiled_at(hd, i, p)] = k;
                    values[tiled_at(max_seq, p, i)] = v;
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
        let keys = |c: &HostCache, h| (0..4).map(|p| c.keys(0, h).get(0, p)).collect::<Vec<_>>();
        let values =
            |c: &HostCache, h| (0..4).map(|p| c.values(0, h).get(p, 0)).collect::<Vec<_>>();
        assert_eq!(keys(&cache, 0), [0.0, 10.0, 11.0, 0.0]);
        assert_eq!(values(&cache, 1), [0.0, -12.0, -13.0, 0.0]);
        assert!(!cache.write(3, &kv(1, 2, 0.0)), "past max_seq");
        assert!(!cache.write(0, &kv(2, 1, 0.0)), "two rows");
        assert_eq!(keys(&cache, 1), [0.0, 12.0, 13.0, 0.0]);
    }

    #[test]
    fn tiles_hold_sixteen_columns_each_row_major() {
        // Head width 18 (a ragged second tile of values), positions over two key tiles.
        let (hd, max_seq) = (18, TILE + 5);
        let mut cache = HostCache::new(1, 1, max_seq, hd);
        let key: Vec<f32> = (0..hd).map(|i| 1.0 + i as f32).collect();
        let value: Vec<f32> = key.iter().map(|x| -x).collect();
        let one = HostKv {
            rows: 1,
            heads: 1,
            len: 1,
            head_dim: hd,
            layers: vec![HostLayer {
                k: key.clone(),
                v: value.clone(),
            }],
        };
        let p = TILE + 2;
        assert!(cache.write(p, &one));
        let (keys, values) = (cache.keys(0, 0), cache.values(0, 0));
        assert_eq!(keys.data.len(), 2 * TILE * hd);
        assert_eq!(values.data.len(), 2 * TILE * max_seq);
        for i in 0..hd {
            // Key component i of position p: tile 1, row i, column p - TILE.
            assert_eq!(keys.data[(hd + i) * TILE + 2], key[i]);
            assert_eq!(keys.get(i, p), key[i]);
            // Value component i: tile i / TILE, row p, column i % TILE.
            assert_eq!(
                values.data[(i / TILE * max_seq + p) * TILE + i % TILE],
                value[i]
            );
            assert_eq!(values.get(p, i), value[i]);
        }
        let written = |data: &[f32]| data.iter().filter(|&&x| x != 0.0).count();
        assert_eq!((written(keys.data), written(values.data)), (hd, hd));
    }
}
