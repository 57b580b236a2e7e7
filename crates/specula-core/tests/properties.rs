//! Property tests: invariants that hold for every pair of distributions.

use proptest::prelude::*;
use rand::SeedableRng;
use specula_core::{Distribution, KSeq, MultiRound, SamplingConfig, Speculative, total_variation};

/// Two weight vectors of one length, with zeros common enough to hit sparse supports.
fn pair() -> impl Strategy<Value = (Distribution, Distribution)> {
    (1usize..10)
        .prop_flat_map(|n| {
            let weight = prop_oneof![1 => Just(0.0), 3 => 0.0..1.0f64];
            (
                prop::collection::vec(weight.clone(), n),
                prop::collection::vec(weight, n),
            )
        })
        .prop_filter_map("needs mass", |(a, b)| {
            Some((
                Distribution::from_weights(a).ok()?,
                Distribution::from_weights(b).ok()?,
            ))
        })
}

fn is_distribution(v: &[f64]) -> bool {
    v.iter().all(|&x| x >= 0.0) && (v.iter().sum::<f64>() - 1.0).abs() < 1e-9
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Every closed form is a distribution; its `output = target` is built in whenever the
    /// accepted mass stays under the target (see lossless.rs), so those lines check that
    /// condition (ρ* large enough for k-Seq); ρ* within [1, k], and the acceptances' order
    /// (k drafts accept at least as often as one) can fail on their own.
    #[test]
    fn analyses_are_distributions_within_the_target_and_ordered((target, draft) in pair(), k in 1usize..6) {
        let standard = Speculative::new(&target, &draft).unwrap().analysis();
        prop_assert!(is_distribution(&standard.output));
        prop_assert!((standard.acceptance - (1.0 - total_variation(target.probs(), draft.probs()))).abs() < 1e-9);
        let scheme = KSeq::new(&target, &draft, k, None).unwrap();
        let (plan, kseq) = (scheme.plan(), scheme.analysis());
        prop_assert!(is_distribution(&kseq.output));
        prop_assert!(total_variation(&kseq.output, target.probs()) < 1e-9);
        prop_assert!(plan.rho_star >= 1.0 && plan.rho_star <= k as f64);
        prop_assert!(kseq.acceptance + 1e-12 >= standard.acceptance);
        prop_assert!((0.0..=1.0 + 1e-12).contains(&kseq.acceptance));
        let multi = MultiRound::new(&target, &draft, k).unwrap().analysis();
        prop_assert!(total_variation(&multi.output, target.probs()) < 1e-9);
        prop_assert!(multi.acceptance + 1e-12 >= standard.acceptance);
    }

    #[test]
    fn samplers_emit_only_target_support((target, draft) in pair(), seed in any::<u64>(), k in 1usize..5) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let standard = Speculative::new(&target, &draft).unwrap();
        let kseq = KSeq::new(&target, &draft, k, None).unwrap();
        let multiround = MultiRound::new(&target, &draft, k).unwrap();
        for _ in 0..20 {
            let x = draft.sample(&mut rng);
            let outcome = standard.sample(x, &mut rng);
            prop_assert!(target.prob(outcome.token) > 0.0);
            prop_assert_eq!(outcome.accepted(), outcome.residual.is_none());
            let drafts: Vec<usize> = (0..k).map(|_| draft.sample(&mut rng)).collect();
            let outcome = kseq.sample(&drafts, &mut rng);
            prop_assert!(target.prob(outcome.token) > 0.0);
            if let Some(i) = outcome.accepted_draft {
                prop_assert_eq!(outcome.token, drafts[i]);
                prop_assert_eq!(outcome.tests.len(), i + 1);
            } else {
                prop_assert_eq!(outcome.tests.len(), k);
            }
            let outcome = multiround.sample(&drafts, &mut rng);
            prop_assert!(target.prob(outcome.token) > 0.0);
        }
    }

    #[test]
    fn logits_give_valid_filtered_distributions(
        logits in prop::collection::vec(-30.0f64..30.0, 1..40),
        temperature in 0.0f64..3.0,
        top_k in prop::option::of(1usize..50),
        top_p in prop::option::of(0.01f64..=1.0),
    ) {
        let config = SamplingConfig { temperature, top_k, top_p };
        let d = Distribution::from_logits(&logits, &config).unwrap();
        prop_assert!(is_distribution(d.probs()));
        let kept = d.probs().iter().filter(|&&p| p > 0.0).count();
        if let Some(k) = top_k {
            prop_assert!(kept <= k);
        }
        prop_assert!(kept >= 1);
        // The most likely logit always survives.
        let best = logits.iter().enumerate().fold(0, |b, (i, &l)| if l > logits[b] { i } else { b });
        prop_assert!(d.prob(best) > 0.0);
    }
}
