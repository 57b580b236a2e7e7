//! Closed-form output distributions of every lossless scheme equal the target, on
//! thousands of random pairs of many shapes and sizes.

mod common;

use common::{max_abs_diff, pair_zoo, rng};
use specula_core::{
    Distribution, greedy_analysis, kseq_analysis, multiround_analysis, overlap,
    speculative_analysis,
};

const EXACT: f64 = 1e-9;

fn check_all_schemes(label: &str, target: &Distribution, draft: &Distribution) {
    let t = target.probs();
    let standard = speculative_analysis(target, draft).unwrap();
    assert!(
        max_abs_diff(&standard.output, t) < EXACT,
        "standard {label}"
    );
    assert!(
        (standard.acceptance - overlap(t, draft.probs())).abs() < EXACT,
        "standard acceptance {label}"
    );
    for k in 1..=4 {
        let (plan, kseq) = kseq_analysis(target, draft, k, None).unwrap();
        assert!(
            max_abs_diff(&kseq.output, t) < EXACT,
            "k-Seq k={k} {label}: rho={} diff={}",
            plan.rho,
            max_abs_diff(&kseq.output, t)
        );
        assert!(
            (kseq.acceptance - plan.acceptance).abs() < EXACT,
            "k-Seq acceptance k={k} {label}"
        );
        let multi = multiround_analysis(target, draft, k).unwrap();
        assert!(
            max_abs_diff(&multi.output, t) < EXACT,
            "multi-round k={k} {label}"
        );
    }
    let greedy = greedy_analysis(target, draft).unwrap();
    let mut one_hot = vec![0.0; t.len()];
    one_hot[target.argmax()] = 1.0;
    assert_eq!(greedy.output, one_hot, "greedy {label}");
}

#[test]
fn lossless_on_thousands_of_small_and_medium_pairs() {
    let mut r = rng(20261121);
    let mut checked = 0;
    for n in [2, 3, 4, 5, 8, 16, 64, 256] {
        for _ in 0..40 {
            for (label, target, draft) in pair_zoo(&mut r, n) {
                check_all_schemes(&format!("{label} V={n}"), &target, &draft);
                checked += 1;
            }
        }
    }
    assert!(checked >= 2000, "only {checked} pairs");
}

#[test]
fn lossless_at_large_vocabularies() {
    let mut r = rng(50257);
    for n in [5_000, 32_000, 50_000] {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            check_all_schemes(&format!("{label} V={n}"), &target, &draft);
        }
    }
}

#[test]
fn kseq_with_one_draft_is_standard_speculative_sampling() {
    let mut r = rng(11);
    for n in [2, 7, 100] {
        for (label, target, draft) in pair_zoo(&mut r, n) {
            let standard = speculative_analysis(&target, &draft).unwrap();
            let (plan, kseq) = kseq_analysis(&target, &draft, 1, None).unwrap();
            assert_eq!(plan.rho, 1.0, "{label}");
            assert!(
                (standard.acceptance - kseq.acceptance).abs() < 1e-12,
                "{label}"
            );
            assert!(
                max_abs_diff(&standard.output, &kseq.output) < 1e-12,
                "{label}"
            );
        }
    }
}

#[test]
fn larger_rho_than_rho_star_stays_lossless_but_accepts_less() {
    let mut r = rng(5);
    for (label, target, draft) in pair_zoo(&mut r, 12) {
        for k in 2..=4 {
            let (plan, best) = kseq_analysis(&target, &draft, k, None).unwrap();
            for factor in [1.0 + 1e-9, 1.5, 3.0] {
                let (_, looser) =
                    kseq_analysis(&target, &draft, k, Some(plan.rho_star * factor)).unwrap();
                assert!(
                    max_abs_diff(&looser.output, target.probs()) < EXACT,
                    "{label} k={k}"
                );
                assert!(
                    looser.acceptance <= best.acceptance + 1e-12,
                    "{label} k={k}"
                );
            }
        }
    }
}
