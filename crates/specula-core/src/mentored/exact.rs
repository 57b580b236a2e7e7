//! The exact search: the undecided tokens, their sums, one threshold's side, and the
//! quickselect search and final bisection that decide the rest.

use std::cmp::Ordering;
use std::ops::Add;

use super::MAX_REFINE_STEPS;

/// A token whose group (below α, between, above β) depends on the budget.
#[derive(Debug, Clone, Copy)]
pub(super) struct Token {
    pub(super) ratio: f64,
    pub(super) t: f64,
    pub(super) d: f64,
    /// `t·ln(t/d)`, its KL term while between the thresholds.
    pub(super) w: f64,
}

/// Sums of `t`, `d` and `w` over a group of tokens.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sums {
    pub(super) t: f64,
    pub(super) d: f64,
    pub(super) w: f64,
}

impl Add for Sums {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self {
            t: self.t + o.t,
            d: self.d + o.d,
            w: self.w + o.w,
        }
    }
}

fn sums(tokens: &[Token]) -> Sums {
    tokens.iter().fold(Sums::default(), |s, x| Sums {
        t: s.t + x.t,
        d: s.d + x.d,
        w: s.w + x.w,
    })
}

/// One threshold and its candidate tokens. The low side (α) has members with
/// `ratio ≤ α` and rejection mass `Σ (d − t/α)`; the high side (β) has members with
/// `ratio ≥ β` and mass `Σ (t/β − d)`. `tokens[lo..hi]` are still undecided and are
/// ordered members-first (ascending ratio for low, descending for high); `fixed` sums
/// the tokens known to be members.
pub(super) struct Side {
    high: bool,
    tokens: Vec<Token>,
    lo: usize,
    hi: usize,
    fixed: Sums,
}

impl Side {
    pub(super) fn new(high: bool, tokens: Vec<Token>, fixed: Sums) -> Self {
        let hi = tokens.len();
        Self {
            high,
            tokens,
            lo: 0,
            hi,
            fixed,
        }
    }

    fn open(&self) -> usize {
        self.hi - self.lo
    }

    fn members_first(high: bool) -> impl Fn(&Token, &Token) -> Ordering {
        move |a, b| {
            if high {
                b.ratio.total_cmp(&a.ratio)
            } else {
                a.ratio.total_cmp(&b.ratio)
            }
        }
    }

    /// The rejection mass with the threshold at `x` and members `s`. Along the
    /// members-first order it never decreases, which is what the searches rely on.
    fn mass(&self, s: Sums, x: f64) -> f64 {
        side_mass(self.high, s, x)
    }

    /// The threshold at which members `s` give rejection mass `a` (the inverse of
    /// [`Self::mass`]), clamped to α in `[0, 1]` and β ≥ 1 against rounding.
    fn threshold(&self, s: Sums, a: f64) -> f64 {
        if self.high {
            let den = a + s.d;
            if den > 0.0 {
                (s.t / den).max(1.0)
            } else {
                f64::INFINITY
            }
        } else if s.t <= 0.0 {
            0.0 // no member with t > 0: the α = 0 regime
        } else {
            let den = s.d - a;
            if den > s.t { s.t / den } else { 1.0 }
        }
    }

    /// Splits the undecided range around its median; returns the end of the members at
    /// that pivot (pivot included), their sums with `fixed`, and the pivot's ratio.
    fn split_at_median(&mut self) -> (usize, Sums, f64) {
        let m = (self.hi - self.lo) / 2;
        let range = &mut self.tokens[self.lo..self.hi];
        range.select_nth_unstable_by(m, Self::members_first(self.high));
        let end = self.lo + m + 1;
        (
            end,
            self.fixed + sums(&self.tokens[self.lo..end]),
            self.tokens[end - 1].ratio,
        )
    }

    /// Finds the threshold giving rejection mass `a`: returns the end of its members in
    /// the reordered undecided range, their sums with `fixed`, and the threshold.
    /// Quickselect, expected O(undecided).
    fn locate(&mut self, a: f64) -> (usize, Sums, f64) {
        let order = Self::members_first(self.high);
        let (mut lo, mut hi, mut s) = (self.lo, self.hi, self.fixed);
        while lo < hi {
            let m = (hi - lo) / 2;
            self.tokens[lo..hi].select_nth_unstable_by(m, &order);
            let p = lo + m;
            let with = s + sums(&self.tokens[lo..=p]);
            if self.mass(with, self.tokens[p].ratio) <= a {
                (lo, s) = (p + 1, with);
            } else {
                hi = p;
            }
        }
        (lo, s, self.threshold(s, a))
    }
}

/// A side's rejection mass with threshold `x` and members `s`: `Σ d − Σ t/x` below α,
/// `Σ t/x − Σ d` above β (no `t/x` term without members with `t > 0`, where `x` may be 0).
pub(super) fn side_mass(high: bool, s: Sums, x: f64) -> f64 {
    let scaled = if s.t > 0.0 { s.t / x } else { 0.0 };
    if high { scaled - s.d } else { s.d - scaled }
}

/// Members' KL term `Σ t·ln(x/ratio) = T·ln x − W`; none with `t > 0` gives 0 (α = 0).
pub(super) fn kl_term(s: Sums, x: f64) -> f64 {
    if s.t > 0.0 { s.t * x.ln() - s.w } else { -s.w }
}

/// α, β and KL at one rejection mass.
#[derive(Debug, Clone, Copy)]
pub(super) struct Point {
    pub(super) alpha: f64,
    pub(super) beta: f64,
    pub(super) kl: f64,
}

/// The exact search over the tokens the bucket walk left undecided.
pub(super) struct Solver {
    pub(super) low: Side,
    pub(super) high: Side,
    /// `Σ t·ln(t/d)` over tokens with finite terms.
    pub(super) w_total: f64,
}

impl Solver {
    /// Decides every candidate token, returning a bracket `(lo, hi]` on the rejection
    /// mass, inside which no token changes group, with `hi` feasible (`KL ≤ D` and at
    /// least `floor`) and `lo` not.
    pub(super) fn bracket(
        &mut self,
        budget: f64,
        floor: f64,
        mut a_lo: f64,
        mut a_hi: f64,
    ) -> (f64, f64) {
        let Self { low, high, w_total } = self;
        while low.open() + high.open() > 0 {
            let (pivot, other) = if low.open() >= high.open() {
                (&mut *low, &mut *high)
            } else {
                (&mut *high, &mut *low)
            };
            let (end, members, x) = pivot.split_at_median();
            let a = pivot.mass(members, x);
            // Outside the bracket the answer is known, and the other side's fixed groups
            // may not hold there, so only pivots inside it are evaluated.
            let more = if a <= a_lo || a < floor {
                true
            } else if a >= a_hi {
                false
            } else {
                let (other_end, other_members, y) = other.locate(a);
                let kl = *w_total + kl_term(members, x) + kl_term(other_members, y);
                if kl > budget {
                    (other.lo, other.fixed) = (other_end, other_members);
                } else {
                    other.hi = other_end;
                }
                kl > budget
            };
            if more {
                // More rejection needed: α rises and β falls, so the members stay.
                a_lo = a_lo.max(a);
                (pivot.lo, pivot.fixed) = (end, members);
            } else {
                // Less rejection: the non-members (and the pivot) stay out.
                a_hi = a_hi.min(a);
                pivot.hi = end - 1;
            }
        }
        (a_lo, a_hi)
    }

    /// α, β and KL at rejection mass `a`, with the groups fixed by [`Self::bracket`].
    fn eval(&self, a: f64) -> Point {
        let alpha = self.low.threshold(self.low.fixed, a);
        let beta = self.high.threshold(self.high.fixed, a);
        let kl = self.w_total + kl_term(self.low.fixed, alpha) + kl_term(self.high.fixed, beta);
        Point { alpha, beta, kl }
    }

    /// Bisection on the rejection mass inside the bracket, keeping the feasible end `hi`
    /// (`KL ≤ D`) until its KL is within the tolerance of `D`; `floor` if that is feasible.
    pub(super) fn refine(
        &self,
        mut lo: f64,
        mut hi: f64,
        budget: f64,
        tolerance: f64,
        floor: f64,
    ) -> (f64, Point) {
        let mut best = self.eval(hi);
        if hi <= floor {
            return (hi, best);
        }
        if lo < floor {
            let point = self.eval(floor);
            if point.kl <= budget {
                return (floor, point);
            }
            lo = floor;
        }
        for _ in 0..MAX_REFINE_STEPS {
            if best.kl >= budget * (1.0 - tolerance) {
                break;
            }
            // Geometric steps while the bracket spans orders of magnitude: with a token
            // the draft lacks, the root can sit near A = exp(−D/t).
            let floor = lo.max(f64::MIN_POSITIVE);
            let mid = if hi > 4.0 * floor {
                floor.sqrt() * hi.sqrt()
            } else {
                0.5 * (lo + hi)
            };
            if !(mid > lo && mid < hi) {
                break;
            }
            let point = self.eval(mid);
            if point.kl > budget {
                lo = mid;
            } else {
                (hi, best) = (mid, point);
            }
        }
        (hi, best)
    }
}
