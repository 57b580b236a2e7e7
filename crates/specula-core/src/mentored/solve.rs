//! The whole solve: the cases settled without a search, then the bucket walks and the
//! exact search on the few tokens left.

use super::exact::{Side, Solver, Token};
use super::scan::Scan;
use super::walk::{Hist, Source, walk};
use super::{ACCEPT_ALL_SLACK, MIN_REJECTION, MentoredPlan};

/// Below this many surviving tokens the exact search takes over.
const EXACT_LIMIT: usize = 1024;

/// Below this many surviving tokens they are copied out of the arrays (32 bytes each).
const GATHER_LIMIT: usize = 4096;

/// The plan of standard speculative sampling (`D = 0`), which needs no logarithm.
fn standard_plan(target: &[f64], draft: &[f64]) -> MentoredPlan {
    let tv: f64 = target
        .iter()
        .zip(draft)
        .map(|(&t, &d)| (d - t).max(0.0))
        .sum();
    MentoredPlan {
        kl_budget: 0.0,
        alpha: 1.0,
        beta: 1.0,
        zero_target_accept: 0.0,
        acceptance: 1.0 - tv,
        kl: 0.0,
        accepts_all: false,
    }
}

/// The whole solve: first pass, bucket walks, exact search on the few tokens left.
pub(super) fn solve(target: &[f64], draft: &[f64], budget: f64, tolerance: f64) -> MentoredPlan {
    let standard = (budget == 0.0).then(|| standard_plan(target, draft));
    if let Some(plan) = standard {
        // Pinsker (KL ≥ 2·TV²): only a pair this close can have KL(t ‖ d) = 0 after
        // rounding and so accept everything; others skip the logarithms.
        if plan.acceptance < 1.0 - 1e-6 {
            return plan;
        }
    }
    let scan = Scan::new(target, draft);
    let kl_draft = if scan.infinite {
        f64::INFINITY
    } else {
        scan.w_total.max(0.0)
    };
    if let Some(plan) = standard.filter(|_| kl_draft > 0.0) {
        return plan;
    }
    // Up to rounding: sums taken in another order may put KL(t ‖ d) an ulp above D.
    if kl_draft <= budget * (1.0 + ACCEPT_ALL_SLACK) {
        return MentoredPlan {
            kl_budget: budget,
            alpha: 0.0,
            beta: scan.max_ratio(target, draft),
            zero_target_accept: 1.0,
            acceptance: 1.0,
            kl: kl_draft,
            accepts_all: true,
        };
    }
    let floor = MIN_REJECTION.min(scan.tv);
    let arrays = (target, draft);
    let hists = scan.hists();
    // At A = TV both thresholds are 1 and KL is exactly 0.
    let mut region = walk(
        &hists.0,
        &hists.1,
        scan.w_total,
        budget,
        floor,
        (0.0, scan.tv),
        (0.0, 0.0),
    );
    let ids = scan.id_ranges(&region);

    let mut spans = (hists.0.span(&region.low), hists.1.span(&region.high));
    let mut count = hists.0.count(&region.low) + hists.1.count(&region.high);
    // Many tokens left (ratios crowded into a few buckets): bucket them again, finer.
    // They are read from the arrays until few enough to hold in memory (a large buffer
    // costs more in page faults than a second pass).
    let in_span = |span: (f64, f64), x: &Token| span.0 <= x.ratio && x.ratio < span.1;
    let mut tokens: Option<(Vec<Token>, Vec<Token>)> = None;
    loop {
        if tokens.is_none() && count <= GATHER_LIMIT {
            let (mut low, mut high) = (Vec::with_capacity(count), Vec::new());
            scan.each_candidate(arrays, &ids, spans, |is_high, x| {
                if is_high { high.push(x) } else { low.push(x) }
            });
            tokens = Some((low, high));
        }
        if count <= EXACT_LIMIT {
            break;
        }
        let source = match &tokens {
            None => Source::Arrays(&scan, arrays, &ids),
            Some((low, high)) => Source::Tokens(low, high),
        };
        let hists = Hist::refine(spans, region.fixed, source);
        let next = walk(
            &hists.0,
            &hists.1,
            scan.w_total,
            budget,
            floor,
            (region.a_lo, region.a_hi),
            region.anchor,
        );
        let left = hists.0.count(&next.low) + hists.1.count(&next.high);
        spans = (hists.0.span(&next.low), hists.1.span(&next.high));
        region = next;
        if let Some((low, high)) = &mut tokens {
            low.retain(|x| in_span(spans.0, x));
            high.retain(|x| in_span(spans.1, x));
        }
        if 2 * left > count {
            break; // ties or a pathological spread: the exact search copes
        }
        count = left;
    }
    let (low, high) = tokens.unwrap_or_else(|| {
        let (mut low, mut high) = (Vec::new(), Vec::new());
        scan.each_candidate(arrays, &ids, spans, |is_high, x| {
            if is_high { high.push(x) } else { low.push(x) }
        });
        (low, high)
    });
    let mut solver = Solver {
        low: Side::new(false, low, region.fixed.0),
        high: Side::new(true, high, region.fixed.1),
        w_total: scan.w_total,
    };
    let (lo, hi) = solver.bracket(budget, floor, region.a_lo, region.a_hi);
    let (a, point) = solver.refine(lo, hi, budget, tolerance, floor);
    let zero_target_accept = if point.alpha > 0.0 || scan.zero_target <= 0.0 {
        0.0
    } else {
        (1.0 - a / scan.zero_target).clamp(0.0, 1.0)
    };
    MentoredPlan {
        kl_budget: budget,
        alpha: point.alpha,
        beta: point.beta,
        zero_target_accept,
        acceptance: 1.0 - a,
        kl: point.kl,
        accepts_all: false,
    }
}
