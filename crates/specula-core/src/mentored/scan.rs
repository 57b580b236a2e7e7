//! The first pass over both vectors: the ratio grid and each bucket's sums.

use std::ops::Range;

use super::exact::{Sums, Token};
use super::walk::{Hist, Region};

/// The ratio buckets of the first pass: `2^bits` per octave (the top `bits` mantissa
/// bits of the ratio) for ratios in `[2^-OCTAVES, 2^OCTAVES)`, the first and last
/// buckets also taking everything beyond. Bucket `one()` starts at ratio 1: below it the
/// low side, from it the high side. Larger vocabularies get finer buckets (64 per octave
/// from 16 384 tokens); small ones few, so the walk and the allocation stay small.
/// The bucket comes from the ratio's bits, not its logarithm, so the histogram's
/// addresses are known early and the first pass overlaps well.
#[derive(Debug, Clone, Copy)]
struct Grid {
    bits: u32,
}

const OCTAVES: usize = 32;
/// The bucket id of tokens that are in no bucket (t = 0, d = 0, ratio 1 or overflowed).
const NO_BUCKET: u16 = u16::MAX;

impl Grid {
    fn for_vocab(n: usize) -> Self {
        let log2 = usize::BITS - n.leading_zeros();
        Self {
            bits: log2.saturating_sub(9).min(6),
        }
    }

    fn len(self) -> usize {
        (2 * OCTAVES) << self.bits
    }

    fn one(self) -> usize {
        self.len() / 2
    }

    /// A ratio's bit pattern cut to `(exponent, top mantissa bits)`: monotone in the ratio.
    fn key(self, ratio: f64) -> i64 {
        i64::try_from(ratio.to_bits() >> (52 - self.bits)).unwrap_or(i64::MAX)
    }

    fn first_key(self) -> i64 {
        self.key(1.0) - ((OCTAVES as i64) << self.bits)
    }

    fn bucket(self, ratio: f64) -> usize {
        let k = (self.key(ratio) - self.first_key()).clamp(0, self.len() as i64 - 1);
        usize::try_from(k).unwrap_or(0)
    }

    /// Where bucket `k` starts: 0 for the first, `+inf` past the last.
    fn start(self, k: usize) -> f64 {
        match k {
            0 => 0.0,
            k if k >= self.len() => f64::INFINITY,
            k => f64::from_bits(
                u64::try_from(self.first_key() + k as i64).unwrap_or(0) << (52 - self.bits),
            ),
        }
    }
}

/// The first pass: everything that needs one look at each token.
pub(super) struct Scan {
    grid: Grid,
    /// Sums and token counts per ratio bucket.
    buckets: Vec<Sums>,
    counts: Vec<u32>,
    /// Each token's bucket, or [`NO_BUCKET`].
    ids: Vec<u16>,
    /// The used buckets, trimmed: low side `lowest..low_end`, high side
    /// `high_bottom..=highest` (either may be empty).
    lowest: usize,
    low_end: usize,
    high_bottom: usize,
    highest: usize,
    /// `Σ t·ln(t/d)` over tokens with finite terms; `KL(t ‖ d)` unless `infinite`.
    pub(super) w_total: f64,
    /// Some token has `d = 0 < t`.
    pub(super) infinite: bool,
    /// `Σ max(0, d − t)`: the rejection mass of standard speculative sampling.
    pub(super) tv: f64,
    /// `Σ d` over tokens with `t = 0` (ratio 0: below every α > 0).
    pub(super) zero_target: f64,
    /// Tokens above every β: `d = 0 < t` (their `w` left out), or `t/d` overflowed.
    always_high: Sums,
}

impl Scan {
    /// The only place `ln` is taken for every token.
    pub(super) fn new(target: &[f64], draft: &[f64]) -> Self {
        let grid = Grid::for_vocab(target.len());
        let mut s = Self {
            grid,
            buckets: vec![Sums::default(); grid.len()],
            counts: vec![0; grid.len()],
            ids: Vec::with_capacity(target.len()),
            lowest: grid.one(),
            low_end: grid.one(),
            high_bottom: grid.one(),
            highest: grid.one() - 1,
            w_total: 0.0,
            infinite: false,
            tv: 0.0,
            zero_target: 0.0,
            always_high: Sums::default(),
        };
        // Hot loop: one branch for the common case (0 < ratio < ∞, ratio ≠ 1) and no
        // floating-point accumulator (they would be spilled around every `ln` call);
        // the totals come from the buckets afterwards.
        let (mut lowest, mut highest) = (s.lowest, s.highest);
        for (&t, &d) in target.iter().zip(draft) {
            let ratio = t / d;
            if ratio > 0.0 && ratio < f64::INFINITY && ratio != 1.0 {
                let w = t * ratio.ln();
                let b = grid.bucket(ratio);
                let sums = &mut s.buckets[b];
                (sums.t, sums.d, sums.w) = (sums.t + t, sums.d + d, sums.w + w);
                s.counts[b] += 1;
                (lowest, highest) = (lowest.min(b), highest.max(b));
                s.ids.push(u16::try_from(b).unwrap_or(NO_BUCKET));
            } else {
                s.add_rare(t, d, ratio);
                s.ids.push(NO_BUCKET);
            }
        }
        let one = grid.one();
        (s.lowest, s.highest) = (lowest, highest);
        // Trim the empty buckets next to ratio 1, so the walk skips them.
        s.low_end = (lowest..one)
            .rev()
            .find(|&b| s.counts[b] > 0)
            .map_or(lowest, |b| b + 1);
        s.high_bottom = (one..=highest)
            .find(|&b| s.counts[b] > 0)
            .unwrap_or(highest + 1);
        let used = &s.buckets[lowest..=highest.max(lowest)];
        s.w_total = used.iter().map(|b| b.w).sum::<f64>() + s.always_high.w;
        // Σ max(0, d − t): d − t on every token below ratio 1, d on those with t = 0.
        s.tv = s.zero_target
            + s.buckets[lowest..one]
                .iter()
                .map(|b| b.d - b.t)
                .sum::<f64>();
        s
    }

    /// Tokens in no bucket.
    fn add_rare(&mut self, t: f64, d: f64, ratio: f64) {
        if t <= 0.0 {
            self.zero_target += d; // ratio 0: below every α > 0
        } else if d <= 0.0 {
            self.always_high.t += t; // infinite ratio: above every β, infinite KL term
            self.infinite = true;
        } else if ratio.is_infinite() {
            // t/d overflowed: far above every β, but its KL term is finite.
            let w = t * (t.ln() - d.ln());
            self.always_high = self.always_high + Sums { t, d, w };
        }
        // Otherwise the ratio is exactly 1: between the thresholds for every budget.
    }

    /// The largest ratio (β when every draft is accepted), from the top bucket's tokens.
    pub(super) fn max_ratio(&self, target: &[f64], draft: &[f64]) -> f64 {
        let top = u16::try_from(self.highest).unwrap_or(NO_BUCKET);
        let mut max = 1.0_f64;
        for ((&id, &t), &d) in self.ids.iter().zip(target).zip(draft) {
            if id == top {
                max = max.max(t / d);
            }
        }
        max
    }

    /// Both sides' histograms on the grid: low buckets ascending, high buckets
    /// descending, each side's last bucket stretched to ratio 1 over the empty ones.
    pub(super) fn hists(&self) -> (Hist, Hist) {
        let grid = self.grid;
        let low_buckets = self.lowest..self.low_end;
        let high_buckets = self.high_bottom..self.highest + 1;
        let low = Hist::new(
            false,
            low_buckets
                .clone()
                .map(|k| grid.start(k))
                .chain([1.0])
                .collect(),
            self.buckets[low_buckets.clone()].to_vec(),
            self.counts[low_buckets].to_vec(),
            Sums {
                d: self.zero_target,
                ..Sums::default()
            },
        );
        let high = Hist::new(
            true,
            high_buckets
                .clone()
                .rev()
                .map(|k| grid.start(k + 1))
                .chain([1.0])
                .collect(),
            self.buckets[high_buckets.clone()]
                .iter()
                .rev()
                .copied()
                .collect(),
            self.counts[high_buckets].iter().rev().copied().collect(),
            self.always_high,
        );
        (low, high)
    }

    /// The grid buckets (as id ranges) of the first walk's undecided stretch: low bucket
    /// `i` is grid bucket `lowest + i`, high bucket `i` is `highest − i`.
    pub(super) fn id_ranges(&self, region: &Region) -> (Range<usize>, Range<usize>) {
        (
            self.lowest + region.low.start..self.lowest + region.low.end,
            self.highest + 1 - region.high.end..self.highest + 1 - region.high.start,
        )
    }

    /// Calls `visit(high, token)` for every token in `ids` whose ratio lies in `spans`,
    /// with its `ln` taken again (only these tokens are read).
    pub(super) fn each_candidate(
        &self,
        (target, draft): (&[f64], &[f64]),
        ids: &(Range<usize>, Range<usize>),
        spans: ((f64, f64), (f64, f64)),
        mut visit: impl FnMut(bool, Token),
    ) {
        for (i, &id) in self.ids.iter().enumerate() {
            let b = usize::from(id);
            let (high, span) = if ids.0.contains(&b) {
                (false, spans.0)
            } else if ids.1.contains(&b) {
                (true, spans.1)
            } else {
                continue;
            };
            if let (Some(&t), Some(&d)) = (target.get(i), draft.get(i)) {
                let ratio = t / d;
                if span.0 <= ratio && ratio < span.1 {
                    // Exactly as in the first pass.
                    visit(
                        high,
                        Token {
                            ratio,
                            t,
                            d,
                            w: t * ratio.ln(),
                        },
                    );
                }
            }
        }
    }
}
