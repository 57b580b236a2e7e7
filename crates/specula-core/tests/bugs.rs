//! The deliberate bugs do what they say: sampled with the real code paths, standard
//! speculative sampling with each token-level bug fits the bug's own closed form
//! (`bug_analysis`) and is far from the target; in every scheme the bugs rewire only the
//! part they name, and a bug outside the selection leaves it exactly as it was.

mod common;

use common::{assert_fits, buggy_speculative_counts, rng};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use specula_core::{
    Bug, BugPair, BugScheme, Distribution, DraftDraw, KSeq, MultiRound, Race, Residual,
    SamplingConfig, Speculative, bug_analysis, buggy_sample, draw_draft, total_variation,
};

const DRAWS: usize = 200_000;
const ALPHA: f64 = 1e-4;

fn logits_pair() -> (Vec<f64>, Vec<f64>) {
    (
        vec![0.3, 1.2, -0.4, 0.9, -1.5, 0.1],
        vec![1.0, 0.2, 0.1, 1.1, -0.2, -1.0],
    )
}

#[test]
fn every_bug_has_its_kebab_case_name() {
    for bug in Bug::ALL {
        assert_eq!(Bug::from_name(bug.name()), Some(bug));
        assert_eq!(bug.to_string(), bug.name());
        assert!(!bug.description().is_empty());
    }
    assert_eq!(Bug::from_name("resample_from_target"), None);
    let names: Vec<&str> = Bug::ALL.iter().map(|b| b.name()).collect();
    assert_eq!(
        names,
        [
            "resample-from-target",
            "argmax-draft",
            "shared-uniform",
            "unprocessed-target",
            "filtered-draft",
            "cache-reset"
        ]
    );
}

/// Each token-level bug, sampled, fits its closed form, which is far from the target; the
/// closed form of the correct scheme on the same pair is the target.
#[test]
fn buggy_speculative_sampling_fits_its_closed_form_and_misses_the_target() {
    let (t_logits, d_logits) = logits_pair();
    let plain = SamplingConfig::default();
    let top3 = SamplingConfig {
        top_k: Some(3),
        ..plain
    };
    let cold = SamplingConfig {
        temperature: 0.5,
        ..plain
    };
    let dist = |logits: &[f64], s: &SamplingConfig| Distribution::from_logits(logits, s).unwrap();
    for (i, bug) in [
        Bug::ResampleFromTarget,
        Bug::ArgmaxDraft,
        Bug::SharedUniform,
        Bug::UnprocessedTarget,
        Bug::FilteredDraft,
    ]
    .into_iter()
    .enumerate()
    {
        let sampling = match bug {
            Bug::UnprocessedTarget => cold,
            Bug::FilteredDraft => top3,
            _ => plain,
        };
        let target = dist(&t_logits, &sampling);
        let draft = dist(&d_logits, &sampling);
        let tested_target = dist(&t_logits, &bug.tested_target_sampling(&sampling));
        let tested_draft = dist(&d_logits, &bug.tested_draft_sampling(&sampling));
        let pair = BugPair {
            target: &target,
            draft: &draft,
            tested_target: &tested_target,
            tested_draft: &tested_draft,
        };
        let analysis = bug_analysis(bug, &pair).unwrap();
        let counts = buggy_speculative_counts(bug, &pair, DRAWS, 40 + i as u64);
        assert_fits(bug.name(), &counts, &analysis.output, ALPHA);
        let tv = total_variation(&analysis.output, target.probs());
        assert!(tv > 0.02, "{bug}: TV {tv} from the target");
        let correct = Speculative::new(&target, &draft).unwrap().analysis();
        assert!(total_variation(&correct.output, target.probs()) < 1e-12);
    }
}

/// The bugs that live outside the tests and the residual draw leave `buggy_sample` equal
/// to each correct scheme, random draws included; `draw_draft` without a bug is
/// `Distribution::sample`.
#[test]
fn bugs_outside_the_selection_change_nothing_there() {
    let (target, draft) = (t(), d());
    for seed in 0..200 {
        let (mut a, mut b) = (rng(seed), rng(seed));
        let drawn = draw_draft(None, &draft, &mut a);
        assert_eq!(drawn.token, draft.sample(&mut b));
        assert_eq!(a.random::<u64>(), b.random::<u64>());
    }
    let tokens = [0, 1, 3];
    let draws: Vec<DraftDraw> = tokens
        .iter()
        .map(|&token| DraftDraw {
            token,
            uniform: Some(0.25),
        })
        .collect();
    let correct = |scheme, r: &mut ChaCha8Rng| match scheme {
        BugScheme::Speculative => Speculative::new(&target, &draft)
            .unwrap()
            .sample(tokens[0], r),
        BugScheme::KSeq => KSeq::new(&target, &draft, 3, None)
            .unwrap()
            .sample(&tokens, r),
        BugScheme::MultiRound => MultiRound::new(&target, &draft, 3)
            .unwrap()
            .sample(&tokens, r),
        BugScheme::Race => Race::new(&target, &draft, 3).unwrap().sample(&tokens, r),
    };
    for bug in Bug::ALL.into_iter().filter(|b| !b.in_selection()) {
        for scheme in SCHEMES {
            let k = if scheme == BugScheme::Speculative {
                1
            } else {
                3
            };
            for seed in 0..50 {
                let (mut a, mut b) = (rng(seed), rng(seed));
                let buggy = buggy_sample(bug, scheme, &target, &draft, &draws[..k], &mut a);
                assert_eq!(
                    buggy.unwrap().outcome,
                    correct(scheme, &mut b),
                    "{bug} {scheme:?}"
                );
            }
        }
    }
}

const SCHEMES: [BugScheme; 4] = [
    BugScheme::Speculative,
    BugScheme::KSeq,
    BugScheme::MultiRound,
    BugScheme::Race,
];

fn t() -> Distribution {
    Distribution::from_probs(vec![0.1, 0.2, 0.3, 0.4]).unwrap()
}

fn d() -> Distribution {
    Distribution::from_probs(vec![0.5, 0.3, 0.15, 0.05]).unwrap()
}

/// Shared-uniform tests each draft with the uniform that drew it; resample-from-target
/// records a draw from the target after a rejection; in every scheme.
#[test]
fn the_selection_bugs_rewire_what_they_name() {
    let (target, draft) = (t(), d());
    for scheme in SCHEMES {
        let k = if scheme == BugScheme::Speculative {
            1
        } else {
            3
        };
        let (mut shared, mut from_target) = (0, 0);
        let mut r = rng(9);
        for _ in 0..2_000 {
            let draws: Vec<DraftDraw> = (0..k)
                .map(|_| draw_draft(Some(Bug::SharedUniform), &draft, &mut r))
                .collect();
            let sample =
                buggy_sample(Bug::SharedUniform, scheme, &target, &draft, &draws, &mut r).unwrap();
            for test in &sample.outcome.tests {
                assert_eq!(test.uniform, draws[test.draft_index].uniform, "{scheme:?}");
                shared += 1;
            }
            let sample = buggy_sample(
                Bug::ResampleFromTarget,
                scheme,
                &target,
                &draft,
                &draws,
                &mut r,
            )
            .unwrap();
            if let Some(draw) = &sample.outcome.residual {
                assert_eq!(draw.residual, Residual::Target, "{scheme:?}");
                from_target += 1;
            }
            assert_eq!(sample.kseq.is_some(), scheme == BugScheme::KSeq);
            assert_eq!(sample.race.is_some(), scheme == BugScheme::Race);
        }
        assert!(shared >= 2_000 && from_target > 100, "{scheme:?}");
    }
    let one = [draw_draft(None, &draft, &mut rng(1)); 2];
    assert!(
        buggy_sample(
            Bug::SharedUniform,
            BugScheme::Speculative,
            &target,
            &draft,
            &one,
            &mut rng(2)
        )
        .is_err()
    );
}
