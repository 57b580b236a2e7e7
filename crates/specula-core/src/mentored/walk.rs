//! The bucket walk: per-side histograms, their finer re-bucketing, and the walk that
//! narrows the bracket on the rejection mass from bucket sums alone.

use std::ops::Range;

use super::exact::{Sums, Token, kl_term, side_mass};
use super::scan::Scan;

/// One side's tokens summed per ratio bucket, members first (ascending ratio below α,
/// descending above β): bucket `i` lies between `bounds[i]` and `bounds[i + 1]`, and
/// `base` sums the tokens known to be members before bucket 0.
pub(super) struct Hist {
    high: bool,
    bounds: Vec<f64>,
    sums: Vec<Sums>,
    counts: Vec<u32>,
    base: Sums,
}

/// Where the surviving tokens are read from: the arrays (through the first pass's bucket
/// ids) or copies already made.
pub(super) enum Source<'a> {
    Arrays(
        &'a Scan,
        (&'a [f64], &'a [f64]),
        &'a (Range<usize>, Range<usize>),
    ),
    Tokens(&'a [Token], &'a [Token]),
}

/// Buckets per side when the surviving tokens are bucketed again.
const REFINE_BUCKETS: u64 = 1024;

/// Buckets cut from a ratio's bit pattern (nearly log-uniform) across a span of ratios.
#[derive(Debug, Clone, Copy)]
struct BitGrid {
    high: bool,
    origin: u64,
    shift: u32,
    n: usize,
}

impl BitGrid {
    /// At most [`REFINE_BUCKETS`] buckets covering ratios in `[lo, hi)`.
    fn over(high: bool, (lo, hi): (f64, f64)) -> Self {
        let (origin, top) = (lo.to_bits(), hi.to_bits().max(lo.to_bits() + 1));
        let span = top - origin;
        let mut shift = 0;
        while (span - 1) >> shift >= REFINE_BUCKETS {
            shift += 1;
        }
        Self {
            high,
            origin,
            shift,
            n: usize::try_from(((span - 1) >> shift) + 1).unwrap_or(1),
        }
    }

    /// The bucket of a ratio in the span, members first.
    fn index(self, ratio: f64) -> usize {
        let k =
            usize::try_from(ratio.to_bits().saturating_sub(self.origin) >> self.shift).unwrap_or(0);
        let k = k.min(self.n - 1);
        if self.high { self.n - 1 - k } else { k }
    }

    /// Bucket boundaries, members first.
    fn bounds(self) -> Vec<f64> {
        let at = |k: usize| {
            let bits = self.origin.saturating_add((k as u64) << self.shift);
            f64::from_bits(bits.min(f64::INFINITY.to_bits()))
        };
        (0..=self.n)
            .map(|i| if self.high { at(self.n - i) } else { at(i) })
            .collect()
    }
}

impl Hist {
    pub(super) fn new(
        high: bool,
        bounds: Vec<f64>,
        sums: Vec<Sums>,
        counts: Vec<u32>,
        base: Sums,
    ) -> Self {
        Self {
            high,
            bounds,
            sums,
            counts,
            base,
        }
    }

    /// Buckets the candidate tokens of both sides again, finer, over their spans.
    pub(super) fn refine(
        spans: ((f64, f64), (f64, f64)),
        fixed: (Sums, Sums),
        source: Source<'_>,
    ) -> (Self, Self) {
        let grids = [BitGrid::over(false, spans.0), BitGrid::over(true, spans.1)];
        let mut sums = [
            vec![Sums::default(); grids[0].n],
            vec![Sums::default(); grids[1].n],
        ];
        let mut counts = [vec![0; grids[0].n], vec![0; grids[1].n]];
        let mut add = |high: bool, x: Token| {
            let side = usize::from(high);
            let b = grids[side].index(x.ratio);
            sums[side][b] = sums[side][b]
                + Sums {
                    t: x.t,
                    d: x.d,
                    w: x.w,
                };
            counts[side][b] += 1;
        };
        match source {
            Source::Arrays(scan, arrays, ids) => scan.each_candidate(arrays, ids, spans, add),
            Source::Tokens(low, high) => {
                low.iter().for_each(|&x| add(false, x));
                high.iter().for_each(|&x| add(true, x));
            }
        }
        let [low_sums, high_sums] = sums;
        let [low_counts, high_counts] = counts;
        (
            Self::new(false, grids[0].bounds(), low_sums, low_counts, fixed.0),
            Self::new(true, grids[1].bounds(), high_sums, high_counts, fixed.1),
        )
    }

    /// The ratios `[lo, hi)` covered by buckets `range`.
    pub(super) fn span(&self, range: &Range<usize>) -> (f64, f64) {
        let (a, b) = (self.bounds[range.start], self.bounds[range.end]);
        if self.high { (b, a) } else { (a, b) }
    }

    pub(super) fn count(&self, range: &Range<usize>) -> usize {
        self.counts[range.clone()].iter().map(|&c| c as usize).sum()
    }

    /// Crossing `i`: the threshold at `bounds[i]`, members `base + sums[..i]`. Their
    /// rejection masses increase with `i` on both sides.
    fn crossings(&self) -> Vec<Crossing> {
        let mut members = self.base;
        self.bounds
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                if i > 0 {
                    members = members + self.sums[i - 1];
                }
                Crossing {
                    a: side_mass(self.high, members, x),
                    g: kl_term(members, x),
                    members,
                }
            })
            .collect()
    }

    /// The range of the threshold with `c` crossings passed.
    fn threshold_range(&self, c: usize) -> (f64, f64) {
        let (b, n) = (&self.bounds, self.sums.len());
        match (self.high, c) {
            (true, 0) => (b[0], f64::INFINITY),
            (true, c) if c > n => (1.0, b[n]),
            (true, c) => (b[c], b[c - 1]),
            (false, 0) => (0.0, b[0]),
            (false, c) if c > n => (b[n], 1.0),
            (false, c) => (b[c - 1], b[c]),
        }
    }

    /// Bounds on the side's KL term `Σ_members t·ln(x/ratio)` with `c` crossings passed.
    /// The term grows with the threshold (a token joining or leaving adds 0), so its
    /// values where the threshold's range starts and ends bound it.
    fn kl_bounds(&self, crossings: &[Crossing], c: usize) -> (f64, f64) {
        let n = self.sums.len();
        if c == 0 || c > n {
            // Members fixed (none of the buckets, or all): the term at the range's ends.
            let ((lo, hi), members) = (self.threshold_range(c), crossings[c.min(n)].members);
            return (kl_term(members, lo), kl_term(members, hi));
        }
        let (a, b) = (crossings[c - 1].g, crossings[c].g);
        (a.min(b), a.max(b))
    }
}

/// One bucket boundary on one side: the rejection mass when the threshold sits there,
/// the side's KL term there, and its members.
#[derive(Debug, Clone, Copy)]
struct Crossing {
    a: f64,
    g: f64,
    members: Sums,
}

/// Where the solution lies: a bracket on the rejection mass, the buckets of each side
/// (members-first indices) whose tokens may change group inside it, the sums of the
/// members before them, and bounds on KL at `a_hi`.
#[derive(Debug)]
pub(super) struct Region {
    pub(super) a_lo: f64,
    pub(super) a_hi: f64,
    pub(super) low: Range<usize>,
    pub(super) high: Range<usize>,
    pub(super) fixed: (Sums, Sums),
    pub(super) anchor: (f64, f64),
}

/// Narrows the bracket `(a_lo, a_hi]` on the rejection mass `A` using bucket sums only;
/// `anchor` bounds `KL(a_hi)`.
///
/// Each threshold moves monotonically with `A` and crosses its side's bucket boundaries
/// at known masses; between two consecutive crossings both thresholds stay inside one
/// bucket each. There KL is bounded two ways: directly by [`Hist::kl_bounds`], and by
/// integrating `dKL/dA = α − β` down from the anchor with α and β bounded by their
/// buckets. The second keeps the walk sharp when both thresholds are close to 1 and KL
/// is small (second order in the bucket width, where the first is first order). Walking
/// down from `a_hi`, the stretches certainly within budget are passed, and the walk stops
/// at the first stretch certainly over it (or below `floor`).
pub(super) fn walk(
    low: &Hist,
    high: &Hist,
    w_total: f64,
    budget: f64,
    floor: f64,
    bracket: (f64, f64),
    anchor: (f64, f64),
) -> Region {
    let (a_lo, a_hi) = bracket;
    let (lc, hc) = (low.crossings(), high.crossings());
    // Crossings passed just below `top`.
    let (mut cl, mut ch) = (
        lc.partition_point(|c| c.a < a_hi),
        hc.partition_point(|c| c.a < a_hi),
    );
    let (mut top, mut kl_top) = (a_hi, anchor);
    let mut region = Region {
        a_lo,
        a_hi,
        low: 0..0,
        high: 0..0,
        fixed: (low.base, high.base),
        anchor,
    };
    // The (low, high) states at the top and the bottom of the stretch kept.
    let mut kept: Option<((usize, usize), (usize, usize))> = None;
    while top > a_lo {
        let below = |cs: &[Crossing], c: usize| {
            if c > 0 {
                cs[c - 1].a
            } else {
                f64::NEG_INFINITY
            }
        };
        let bottom = below(&lc, cl).max(below(&hc, ch)).max(a_lo);
        let (gl, gh) = (low.kl_bounds(&lc, cl), high.kl_bounds(&hc, ch));
        let direct = (w_total + gl.0 + gh.0, w_total + gl.1 + gh.1);
        let (alpha, beta) = (low.threshold_range(cl), high.threshold_range(ch));
        let width = top - bottom;
        let kl_bottom = (
            direct.0.max(kl_top.0 + width * (beta.0 - alpha.1)),
            direct.1.min(kl_top.1 + width * (beta.1 - alpha.0)),
        );
        // KL decreases in A: on this stretch it lies in [KL(top), KL(bottom)].
        if kl_top.0.max(direct.0) > budget || top <= floor {
            region.a_lo = top; // certainly over budget: the solution is at or above top
            break;
        }
        if kl_bottom.1 <= budget && bottom >= floor {
            // Certainly within budget; kept only for its buckets, which hold the
            // thresholds at the new a_hi.
            (region.a_hi, region.anchor) = (bottom, kl_bottom);
            kept = Some(((cl, ch), (cl, ch)));
        } else {
            kept = Some((kept.map_or((cl, ch), |k| k.0), (cl, ch)));
        }
        (top, kl_top) = (bottom, kl_bottom);
        while cl > 0 && lc[cl - 1].a >= top {
            cl -= 1;
        }
        while ch > 0 && hc[ch - 1].a >= top {
            ch -= 1;
        }
    }
    let ((l1, h1), (l0, h0)) = kept.unwrap_or(((cl, ch), (cl, ch)));
    // State c in 1..=n has the threshold in bucket c − 1; states 0 and n + 1 in none.
    region.low = l0.max(1) - 1..l1.min(low.sums.len());
    region.high = h0.max(1) - 1..h1.min(high.sums.len());
    region.fixed = (lc[region.low.start].members, hc[region.high.start].members);
    region
}
