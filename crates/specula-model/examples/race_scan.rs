//! How much of the gap between SpecTr's k-Seq and the best possible selection among K = 4
//! i.i.d. drafts (OTM's α₄, `otm_upper_bound`) a simple alternative rule closes, computed
//! exactly over the validation split (bundled pair, T = 1, no sampling). Not a decoding
//! method of this project; a measurement for BENCHMARKS.md (eleventh session).
//!
//! The rule, a "ratio race": each draft x gets the key g(x)/U with g = (target/draft)^β and
//! U uniform on (0, 1), the draft with the largest key is chosen, and the chosen token z
//! is then tested once against the rule's own selection marginal r: accepted with
//! probability min(1, target(z)/r(z)), else a draw from (target − r)⁺. Any selection rule
//! followed by that test emits exactly the target, and accepts Σₓ min(target(x), r(x)).
//! k-Seq's coin at threshold ρ succeeds when target/(draft·U) ≥ ρ, so at β = 1 the race
//! runs that test at every threshold at once. `r` is in closed form (below); it was
//! checked against 400,000 simulated selections and sums to 1 within 1e-14.
//! The "split" variant first gives every draft above Lemma 3's best prefix (in
//! target/draft order) priority over every draft in it, then races within each part.
//!
//! `cargo run --release -p specula-model --example race_scan [-- WINDOWS]`

use specula_core::{Distribution, SamplingConfig, kseq_plan, otm_upper_bound, overlap};
use specula_model::data::{Corpus, Split};
use specula_model::{Backend, ModelRole, bundled};

fn probs(logits: &[f32]) -> Distribution {
    Distribution::from_logits(logits, &SamplingConfig::default()).unwrap()
}

/// Selection marginal r of the race with keys g(x)/U among k i.i.d. drafts.
fn race_marginal(t: &[f64], d: &[f64], k: i32, beta: f64) -> Vec<f64> {
    let all = vec![true; t.len()];
    let mut r = vec![0.0; t.len()];
    race_part(t, d, k, beta, &all, 0.0, &mut r);
    r
}

/// The race's marginal for the tokens in `part`, when drafts outside it either always lose
/// (`floor` = their draft mass) or always win (left out of `floor`).
fn race_part(t: &[f64], d: &[f64], k: i32, beta: f64, part: &[bool], floor: f64, r: &mut [f64]) {
    let n = t.len();
    let g: Vec<f64> = (0..n)
        .map(|i| {
            if d[i] > 0.0 {
                (t[i] / d[i]).powf(beta)
            } else {
                0.0
            }
        })
        .collect();
    // Drafted tokens sorted by g descending.
    let mut order: Vec<usize> = (0..n).filter(|&i| d[i] > 0.0 && part[i]).collect();
    order.sort_by(|&a, &b| g[b].total_cmp(&g[a]));
    // r(y) = k·d(y)·g(y)·∫₀^{1/g(y)} G(v)^(k−1) dv with v = 1/key, where G(v), the chance
    // that another draft loses, is floor + Σ over the part's tokens x with g(x)·v < 1 of
    // d(x)·(1 − g(x)·v): between consecutive 1/g it is A − B·v, integrated in closed form.
    // Over the segment before 1/g(order[j]) the tokens still in play are order[j..].
    // Suffix sums, added from the small end so that none is a difference.
    let m = order.len();
    let (mut suf_a, mut suf_b) = (vec![0.0; m + 1], vec![0.0; m + 1]);
    for j in (0..m).rev() {
        suf_a[j] = suf_a[j + 1] + d[order[j]];
        suf_b[j] = suf_b[j + 1] + d[order[j]] * g[order[j]];
    }
    let mut v_lo = 0.0;
    let mut integral = 0.0; // ∫_0^{v_lo} G^{k-1} dv
    for (j, &i) in order.iter().enumerate() {
        let (a, b) = (suf_a[j] + floor, suf_b[j]);
        let v_hi = if g[i] > 0.0 {
            1.0 / g[i]
        } else {
            f64::INFINITY
        };
        if v_hi > v_lo {
            // (x^k − y^k)/(k·b) with x − y = b·(v_hi − v_lo), as a sum with no
            // cancellation: (v_hi − v_lo)·Σᵢ x^(k−1−i)·yⁱ / k.
            let x = (a - b * v_lo).max(0.0);
            let y = if v_hi.is_finite() {
                (a - b * v_hi).max(0.0)
            } else {
                0.0
            };
            let seg = if v_hi.is_finite() {
                let sum: f64 = (0..k).map(|i| x.powi(k - 1 - i) * y.powi(i)).sum();
                (v_hi - v_lo) * sum / k as f64
            } else {
                // Only reached by tokens keyed 0, whose r is set apart below.
                0.0
            };
            integral += seg;
            v_lo = v_hi;
        }
        if g[i] > 0.0 {
            r[i] = k as f64 * d[i] * g[i] * integral;
        } else {
            // No draft of the part keyed above 0: one of those keyed 0 is chosen, when
            // there is one (the drafts below the part lose).
            let q0: f64 = order.iter().filter(|&&x| g[x] == 0.0).map(|&x| d[x]).sum();
            r[i] = d[i] / q0 * ((q0 + floor).powi(k) - floor.powi(k));
        }
    }
}

/// The race's marginal for keys g(x)/U with any weights g.
fn race_with(g: &[f64], d: &[f64], k: i32) -> Vec<f64> {
    // g = (t/d)^1 with t := g·d reproduces race_part's weights.
    let t: Vec<f64> = g.iter().zip(d).map(|(g, d)| g * d).collect();
    let all = vec![true; d.len()];
    let mut r = vec![0.0; d.len()];
    race_part(&t, d, k, 1.0, &all, 0.0, &mut r);
    r
}

/// The race with weights fitted by `iters` multiplicative steps g ← g·(target/r)^eta.
fn race_fitted(t: &[f64], d: &[f64], k: i32, iters: usize, eta: f64) -> f64 {
    let mut g: Vec<f64> = t
        .iter()
        .zip(d)
        .map(|(t, d)| if *d > 0.0 { t / d } else { 0.0 })
        .collect();
    let mut best = 0.0_f64;
    for _ in 0..=iters {
        let r = race_with(&g, d, k);
        let acc: f64 = r.iter().zip(t).map(|(r, p)| r.min(*p)).sum();
        best = best.max(acc);
        for ((g, r), p) in g.iter_mut().zip(&r).zip(t) {
            if *r > 0.0 {
                *g *= (p / r).powf(eta);
            }
        }
        // Only ratios of weights matter: keep the largest at 1.
        let top = g.iter().copied().fold(0.0_f64, f64::max);
        if top > 0.0 && top.is_finite() {
            g.iter_mut().for_each(|g| *g = (*g / top).max(1e-100));
        }
    }
    best
}

/// The weights after `iters` steps (for debugging).
fn fitted_weights(t: &[f64], d: &[f64], k: i32, iters: usize) -> Vec<f64> {
    let mut g: Vec<f64> = t
        .iter()
        .zip(d)
        .map(|(t, d)| if *d > 0.0 { t / d } else { 0.0 })
        .collect();
    for _ in 0..iters {
        let r = race_with(&g, d, k);
        for ((g, r), p) in g.iter_mut().zip(&r).zip(t) {
            if *r > 0.0 {
                *g *= p / r;
            }
        }
        let top = g.iter().copied().fold(0.0_f64, f64::max);
        if top > 0.0 && top.is_finite() {
            g.iter_mut().for_each(|g| *g = (*g / top).max(1e-100));
        }
    }
    g
}

/// The race with the optimal split first: drafts in the upper part (above Lemma 3's best
/// prefix) beat every draft below it; a race inside each part.
fn race_split(t: &[f64], d: &[f64], k: i32, beta: f64) -> Vec<f64> {
    let n = t.len();
    let ratio = |i: usize| {
        if d[i] > 0.0 {
            t[i] / d[i]
        } else {
            f64::INFINITY
        }
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| ratio(a).total_cmp(&ratio(b)));
    let (mut worst, mut cut, mut dm, mut tm) = (0.0_f64, 0, 0.0_f64, 0.0);
    for (j, &i) in order.iter().enumerate() {
        dm += d[i];
        tm += t[i];
        if dm.min(1.0).powi(k) - tm > worst {
            worst = dm.min(1.0).powi(k) - tm;
            cut = j + 1;
        }
    }
    let mut low = vec![false; n];
    for &i in &order[..cut] {
        low[i] = true;
    }
    let high: Vec<bool> = low.iter().map(|l| !l).collect();
    let low_mass: f64 = (0..n).filter(|&i| low[i]).map(|i| d[i]).sum();
    let mut r = vec![0.0; n];
    race_part(t, d, k, beta, &high, low_mass, &mut r);
    race_part(t, d, k, beta, &low, 0.0, &mut r);
    r
}

fn main() {
    let windows: usize = std::env::args()
        .nth(1)
        .map_or(usize::MAX, |w| w.parse().unwrap());
    let text = std::fs::read_to_string("data/tinyshakespeare.txt").unwrap();
    let val = Corpus::from_text(&text).unwrap().part(Split::Val).to_vec();
    let target = bundled::load(ModelRole::Target, Backend::Cpu).unwrap();
    let draft = bundled::load(ModelRole::Draft, Backend::Cpu).unwrap();
    let vocab = target.config().vocab_size;
    let window = target.config().max_seq.min(draft.config().max_seq);
    let betas = [0.9, 1.0, 1.1];
    let k = 4;
    let (mut alpha, mut kseq, mut opt, mut best) = (0.0, 0.0, 0.0, 0.0);
    let mut races = vec![0.0; betas.len()];
    let mut splits = vec![0.0; betas.len()];
    let fits = [(5usize, 1.0), (10, 1.0), (20, 1.0), (50, 1.0), (200, 1.0)];
    let mut fitted = vec![0.0; fits.len()];
    let mut shortfall = vec![0.0_f64; fits.len()];
    let mut worst_sum = 0.0_f64;
    let mut count = 0;
    for start in (0..val.len() - window).step_by(window).take(windows) {
        let input = &val[start..start + window];
        let tl = target.logits_uncached(input).unwrap();
        let dl = draft.logits_uncached(input).unwrap();
        for (tl, dl) in tl.chunks(vocab).zip(dl.chunks(vocab)) {
            let (t, d) = (probs(tl), probs(dl));
            alpha += overlap(t.probs(), d.probs());
            kseq += kseq_plan(&t, &d, k, None).unwrap().acceptance;
            opt += otm_upper_bound(&t, &d, k).unwrap();
            let mut b = 0.0_f64;
            for (j, &beta) in betas.iter().enumerate() {
                let r = race_marginal(t.probs(), d.probs(), k as i32, beta);
                worst_sum = worst_sum.max((r.iter().sum::<f64>() - 1.0).abs());
                let acc: f64 = r.iter().zip(t.probs()).map(|(r, p)| r.min(*p)).sum();
                races[j] += acc;
                let r2 = race_split(t.probs(), d.probs(), k as i32, beta);
                worst_sum = worst_sum.max((r2.iter().sum::<f64>() - 1.0).abs());
                splits[j] += r2
                    .iter()
                    .zip(t.probs())
                    .map(|(r, p)| r.min(*p))
                    .sum::<f64>();
                b = b.max(acc);
            }
            best += b;
            let o = otm_upper_bound(&t, &d, k).unwrap();
            for (j, (f, &(iters, eta))) in fitted.iter_mut().zip(&fits).enumerate() {
                let a = race_fitted(t.probs(), d.probs(), k as i32, iters, eta);
                if a > o + 1e-9 || (count == 777 && iters == 200) {
                    let mut best_it = 0;
                    let mut best_a = 0.0;
                    for it in 0..=iters {
                        let g = fitted_weights(t.probs(), d.probs(), k as i32, it);
                        let r = race_with(&g, d.probs(), k as i32);
                        let acc: f64 = r.iter().zip(t.probs()).map(|(r, p)| r.min(*p)).sum();
                        if acc > best_a {
                            best_a = acc;
                            best_it = it;
                        }
                    }
                    let g = fitted_weights(t.probs(), d.probs(), k as i32, best_it);
                    let r = race_with(&g, d.probs(), k as i32);
                    std::fs::write("/tmp/s/case.json", format!("{{\"t\": {:?}, \"d\": {:?}, \"g\": {:?}, \"r\": {:?}, \"opt\": {o}, \"acc\": {best_a}}}", t.probs(), d.probs(), g, r)).unwrap();
                    if a > o + 1e-9 {
                        panic!("race {a} above the optimum {o}");
                    }
                }
                *f += a;
                shortfall[j] = shortfall[j].max(o - a);
            }
            count += 1;
        }
    }
    let n = count as f64;
    println!(
        "positions {count}: alpha {:.4} kseq {:.4} optimal {:.6} best-beta-per-position {:.4} (max |Σr−1| {worst_sum:.1e})",
        alpha / n,
        kseq / n,
        opt / n,
        best / n
    );
    for (((iters, eta), f), s) in fits.iter().zip(&fitted).zip(&shortfall) {
        println!(
            "fitted race, {iters} steps of g·(t/r)^{eta}: {:.6} (largest shortfall from the optimum {s:.2e})",
            f / n
        );
    }
    for ((beta, acc), split) in betas.iter().zip(&races).zip(&splits) {
        println!(
            "race beta {beta}: {:.4}  split race {:.4}",
            acc / n,
            split / n
        );
    }
}
