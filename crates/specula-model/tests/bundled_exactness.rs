//! The speculative methods sample the bundled target's distribution with the bundled
//! models themselves (the engine's exactness tests use small synthetic models): the joint
//! distribution of the first two characters after a prompt, enumerated exactly from the
//! target's logits, against seeded runs under a chi-square test; the same counts must be
//! far from the draft model's joint, or the test could not tell the two apart, and it
//! must reject lossy mentored decoding.

use specula_engine::{
    DecodeConfig, Decoder, DraftShape, ForwardRequest, GammaPolicy, LanguageModel, Method, Query,
    Role, SamplingConfig, generate,
};
use specula_model::{Backend, BurnLm, ModelRole, bundled};
use statrs::distribution::{ChiSquared, ContinuousCDF};

const PROMPT: &str = "ROMEO:\nWhat";
const RUNS: u64 = 10_000;
/// Cells of the joint whose expected count is below this are pooled into one.
const MIN_EXPECTED: f64 = 5.0;

/// The exact joint of the next two tokens, `joint[a · V + b]`, from one batched forward
/// (the prompt's row and one row per first token).
fn exact_joint(model: &mut BurnLm, prompt: &[u32], sampling: &SamplingConfig) -> Vec<f64> {
    let vocab = model.vocab_size();
    let len = prompt.len();
    let mut sequences = vec![prompt.to_vec()];
    let mut queries = vec![Query {
        sequence: 0,
        prefix_len: len,
    }];
    for a in 0..vocab {
        let mut sequence = prompt.to_vec();
        sequence.push(u32::try_from(a).unwrap());
        sequences.push(sequence);
        queries.push(Query {
            sequence: a + 1,
            prefix_len: len + 1,
        });
    }
    let request = ForwardRequest {
        role: Role::Target,
        committed_len: len,
        sequences,
        queries,
    };
    let response = model.forward(&request).unwrap();
    let dist = |row: usize| {
        specula_core::Distribution::from_logits(response.row(row).unwrap(), sampling).unwrap()
    };
    let first = dist(0);
    let mut joint = vec![0.0; vocab * vocab];
    for a in 0..vocab {
        let second = dist(a + 1);
        for b in 0..vocab {
            joint[a * vocab + b] = first.prob(a) * second.prob(b);
        }
    }
    joint
}

/// Counts of the first two generated tokens over `RUNS` seeds.
fn counts(method: &Method, prompt: &[u32], draft: &mut BurnLm, target: &mut BurnLm) -> Vec<u64> {
    let vocab = target.vocab_size();
    let mut counts = vec![0_u64; vocab * vocab];
    for seed in 0..RUNS {
        let config = DecodeConfig {
            max_new_tokens: 2,
            seed,
            ..DecodeConfig::new(method.clone())
        };
        let mut decoder = Decoder::new(config, prompt.to_vec()).unwrap();
        let out = generate(&mut decoder, draft, target).unwrap();
        assert_eq!(out.tokens.len(), 2);
        counts[out.tokens[0] as usize * vocab + out.tokens[1] as usize] += 1;
    }
    counts
}

/// Pearson's chi-square p-value of `counts` against `probs`, with the cells expected
/// below [`MIN_EXPECTED`] under `bins_from` pooled (the same bins for any `probs`, so
/// the power check below uses the partition of the null it is compared with).
fn chi_square_p(counts: &[u64], probs: &[f64], bins_from: &[f64]) -> f64 {
    let n = counts.iter().sum::<u64>() as f64;
    let (mut pooled_observed, mut pooled_prob) = (0.0, 0.0);
    let (mut stat, mut cells) = (0.0, 0);
    let mut add = |observed: f64, prob: f64| {
        if prob == 0.0 {
            // An observation in a cell of probability 0 rejects outright.
            return if observed > 0.0 { f64::INFINITY } else { 0.0 };
        }
        cells += 1;
        (observed - prob * n).powi(2) / (prob * n)
    };
    for ((&o, &prob), &bin) in counts.iter().zip(probs).zip(bins_from) {
        if bin * n < MIN_EXPECTED {
            pooled_observed += o as f64;
            pooled_prob += prob;
        } else {
            stat += add(o as f64, prob);
        }
    }
    stat += add(pooled_observed, pooled_prob);
    if stat.is_infinite() {
        return 0.0;
    }
    assert!(cells >= 20, "only {cells} bins: too few runs for this test");
    1.0 - ChiSquared::new(f64::from(cells - 1)).unwrap().cdf(stat)
}

/// The bundled pair, the encoded prompt, and the target's exact joint at T = 1.
struct Setup {
    prompt: Vec<u32>,
    draft: BurnLm,
    target: BurnLm,
    truth: Vec<f64>,
}

fn setup() -> Setup {
    let prompt = bundled::tokenizer().unwrap().encode(PROMPT).unwrap();
    let mut target = bundled::load(ModelRole::Target, Backend::Cpu).unwrap();
    let draft = bundled::load(ModelRole::Draft, Backend::Cpu).unwrap();
    let truth = exact_joint(&mut target, &prompt, &SamplingConfig::default());
    Setup {
        prompt,
        draft,
        target,
        truth,
    }
}

fn assert_samples_target(method: Method) {
    let Setup {
        prompt,
        mut draft,
        mut target,
        truth,
    } = setup();
    let draft_joint = exact_joint(&mut draft, &prompt, &SamplingConfig::default());
    let observed = counts(&method, &prompt, &mut draft, &mut target);
    let p_value = chi_square_p(&observed, &truth, &truth);
    assert!(
        p_value > 1e-4,
        "{}: chi-square p-value {p_value} against the target's joint",
        method.name()
    );
    let wrong = chi_square_p(&observed, &draft_joint, &truth);
    assert!(
        wrong < 1e-6,
        "{}: the test cannot tell the target from the draft (p-value {wrong})",
        method.name()
    );
}

#[test]
fn speculative_sampling_with_the_bundled_pair_samples_the_target() {
    assert_samples_target(Method::Speculative {
        gamma: 3,
        policy: GammaPolicy::Fixed,
    });
}

#[test]
fn spectr_with_the_bundled_pair_samples_the_target() {
    assert_samples_target(Method::SpecTr {
        drafts: DraftShape::Iid { k: 4, length: 2 },
    });
}

#[test]
fn otm_selection_with_the_bundled_pair_samples_the_target() {
    assert_samples_target(Method::Otm {
        drafts: DraftShape::Iid { k: 4, length: 2 },
    });
}

#[test]
fn multi_round_prefix_tree_with_the_bundled_pair_samples_the_target() {
    assert_samples_target(Method::MultiRound {
        drafts: DraftShape::Tree {
            k: 4,
            branching: vec![2, 2],
        },
    });
}

/// Power against a small deviation: mentored decoding is lossy by design, with
/// KL(target ‖ output) ≤ D per token; at D = 0.05 the same test rejects it.
#[test]
fn lossy_mentored_decoding_is_told_apart_from_the_target() {
    let Setup {
        prompt,
        mut draft,
        mut target,
        truth,
    } = setup();
    let method = Method::Mentored {
        gamma: 3,
        kl_budget: 0.05,
        policy: GammaPolicy::Fixed,
    };
    let observed = counts(&method, &prompt, &mut draft, &mut target);
    let p_value = chi_square_p(&observed, &truth, &truth);
    assert!(p_value < 1e-6, "mentored D = 0.05: p-value {p_value}");
}
