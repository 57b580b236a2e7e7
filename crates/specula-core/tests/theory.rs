//! The closed-form theory against direct computation.

use specula_core::theory::{
    acceptance, expected_tokens_per_round, kseq_acceptance_curve, optimal_gamma, walltime_factor,
};
use specula_core::{Distribution, Error};

#[test]
fn expected_tokens_per_round_is_the_geometric_sum() {
    for alpha in [0.0_f64, 0.3, 0.7, 0.99, 1.0] {
        for gamma in 0..10u32 {
            let direct: f64 = (0..=gamma).map(|i| alpha.powi(i as i32)).sum();
            let got = expected_tokens_per_round(alpha, gamma).unwrap();
            assert!((got - direct).abs() < 1e-12, "alpha={alpha} gamma={gamma}");
            if alpha < 1.0 {
                let closed = (1.0 - alpha.powi(gamma as i32 + 1)) / (1.0 - alpha);
                assert!((got - closed).abs() < 1e-9);
            }
        }
    }
    assert_eq!(expected_tokens_per_round(1.0, 4).unwrap(), 5.0);
}

#[test]
fn walltime_factor_and_its_best_gamma() {
    // Leviathan et al. Table/Figure values: α = 0.8, c = 0.05, γ = 5 → ≈ 2.95.
    let f = walltime_factor(0.8, 5, 0.05).unwrap();
    assert!((f - (1.0 - 0.8f64.powi(6)) / (0.2 * 1.25)).abs() < 1e-12);
    for (alpha, c) in [
        (0.5, 0.1),
        (0.8, 0.05),
        (0.9, 0.2),
        (0.99, 0.01),
        (0.1, 0.5),
    ] {
        let (gamma, best) = optimal_gamma(alpha, c, 30).unwrap();
        for g in 1..=30 {
            assert!(walltime_factor(alpha, g, c).unwrap() <= best + 1e-12);
        }
        assert_eq!(walltime_factor(alpha, gamma, c).unwrap(), best);
    }
    // A free draft with perfect acceptance: the longest draft wins.
    assert_eq!(optimal_gamma(1.0, 0.0, 12).unwrap().0, 12);
}

#[test]
fn invalid_theory_parameters_are_errors() {
    assert!(matches!(
        expected_tokens_per_round(1.1, 3),
        Err(Error::BadParameter { name: "alpha", .. })
    ));
    assert!(matches!(
        expected_tokens_per_round(f64::NAN, 3),
        Err(Error::BadParameter { .. })
    ));
    assert!(matches!(
        walltime_factor(0.5, 3, -1.0),
        Err(Error::BadParameter {
            name: "cost_ratio",
            ..
        })
    ));
    assert!(matches!(
        walltime_factor(0.5, 3, f64::INFINITY),
        Err(Error::BadParameter { .. })
    ));
    assert!(matches!(
        optimal_gamma(0.5, 0.1, 0),
        Err(Error::BadParameter {
            name: "max_gamma",
            ..
        })
    ));
}

#[test]
fn acceptance_and_kseq_curve() {
    let target = Distribution::from_probs(vec![0.1, 0.2, 0.3, 0.4]).unwrap();
    let draft = Distribution::from_probs(vec![0.5, 0.3, 0.15, 0.05]).unwrap();
    assert!((acceptance(&target, &draft).unwrap() - 0.5).abs() < 1e-12);
    let curve = kseq_acceptance_curve(&target, &draft, 8).unwrap();
    assert_eq!(curve.len(), 8);
    assert!((curve[0] - 0.5).abs() < 1e-12);
    assert!(curve.windows(2).all(|w| w[1] + 1e-12 >= w[0]));
    let wrong = Distribution::uniform(3).unwrap();
    assert!(matches!(
        acceptance(&target, &wrong),
        Err(Error::LengthMismatch {
            target: 4,
            draft: 3
        })
    ));
}
