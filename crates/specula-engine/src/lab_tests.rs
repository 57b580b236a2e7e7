use specula_core::{Bug, SamplingConfig};

use super::*;
use crate::config::GammaPolicy;

fn config(method: Method, bug: Option<Bug>) -> DecodeConfig {
    DecodeConfig::builder(method)
        .bug(bug)
        .max_new_tokens(2)
        .build()
        .unwrap()
}

fn speculative() -> Method {
    Method::Speculative {
        gamma: 4,
        policy: GammaPolicy::Fixed,
    }
}

fn logits() -> LabLogits {
    LabLogits {
        target: vec![0.0, 1.0, 2.0],
        draft: vec![2.0, 1.0, 0.0],
        first_tokens: vec![0, 1, 2],
        slides: false,
        end_token: None,
        after_prompt: vec![
            vec![0.0, 0.0, 3.0],
            vec![3.0, 0.0, 0.0],
            vec![0.0, 3.0, 0.0],
        ],
        alone: vec![
            vec![1.0, 0.0, 0.0],
            vec![0.0, 1.0, 0.0],
            vec![0.0, 0.0, 1.0],
        ],
    }
}

fn sums_to_one(p: &[f64]) {
    assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{p:?}");
}

#[test]
fn a_lossless_method_is_exact_at_both_positions() {
    let c = config(speculative(), None);
    let first = exact(&c, 1, &logits()).unwrap();
    assert_eq!(first.kind, "target");
    assert_eq!(first.expected, first.target);
    assert_eq!(first.tv_from_target, 0.0);
    let second = exact(&c, 2, &logits()).unwrap();
    sums_to_one(&second.expected);
    assert_eq!(second.expected, second.target);
    // The mixture is not the first position's distribution.
    assert!(total_variation(&second.expected, &first.expected) > 0.1);
}

#[test]
fn cache_reset_mixes_in_the_context_without_the_prompt() {
    let c = config(speculative(), Some(Bug::CacheReset));
    // At the first position the bug has not acted yet.
    assert_eq!(exact(&c, 1, &logits()).unwrap().kind, "target");
    let second = exact(&c, 2, &logits()).unwrap();
    assert_eq!(second.kind, "cache-reset");
    sums_to_one(&second.expected);
    assert!(second.tv_from_target > 0.05, "{second:?}");
    // A draft equal to the target never rejects: no reset, no error.
    let mut same = logits();
    same.draft = same.target.clone();
    let exact_again = exact(&c, 2, &same).unwrap();
    assert!(exact_again.tv_from_target < 1e-12);
}

#[test]
fn token_level_bugs_and_mentored_have_first_position_closed_forms() {
    for bug in [
        Bug::ResampleFromTarget,
        Bug::SharedUniform,
        Bug::ArgmaxDraft,
    ] {
        let c = config(speculative(), Some(bug));
        let e = exact(&c, 1, &logits()).unwrap();
        assert_eq!(e.kind, bug.name());
        sums_to_one(&e.expected);
        assert!(e.tv_from_target > 1e-3, "{bug:?} {e:?}");
        let refused = exact(&c, 2, &logits()).unwrap_err();
        assert_eq!(refused.field, "position");
    }
    let mentored = Method::Mentored {
        gamma: 2,
        kl_budget: 0.5,
        policy: GammaPolicy::Fixed,
    };
    let e = exact(&config(mentored.clone(), None), 1, &logits()).unwrap();
    assert_eq!(e.kind, "mentored");
    assert!(e.tv_from_target > 1e-3);
    assert_eq!(
        exact(&config(mentored, None), 2, &logits())
            .unwrap_err()
            .field,
        "position"
    );
}

#[test]
fn what_has_no_closed_form_is_refused_with_its_field() {
    let greedy = config(speculative(), Some(Bug::SharedUniform))
        .into_builder()
        .sampling(SamplingConfig {
            temperature: 0.0,
            ..SamplingConfig::default()
        })
        .build()
        .unwrap();
    assert_eq!(
        exact(&greedy, 1, &logits()).unwrap_err().field,
        "temperature"
    );
    let spectr = Method::SpecTr {
        drafts: crate::config::DraftShape::Iid { k: 2, length: 2 },
        selection: crate::config::Selection::KSeq,
    };
    let c = config(spectr, Some(Bug::SharedUniform));
    assert_eq!(exact(&c, 1, &logits()).unwrap_err().field, "method");
    let mut short = logits();
    short.after_prompt.pop();
    let c = config(speculative(), None);
    assert_eq!(exact(&c, 2, &short).unwrap_err().field, "model");
    // Logits that are not finite are the models' doing, said without naming an option.
    let mut broken = logits();
    broken.target[0] = f64::NAN;
    let e = exact(&c, 1, &broken).unwrap_err();
    assert_eq!(
        super::model_fault(&e).as_deref(),
        Some(
            "the models' logits cannot give the exact distribution: the target's logits: \
             entry 0 is NaN (it needs finite logits)"
        ),
    );
    assert_eq!(super::model_fault(&check_position(3.0).unwrap_err()), None);
    assert_eq!(check_position(3.0).unwrap_err().field, "position");
    assert_eq!(check_position(2.0), Ok(2));
}

#[test]
fn chi_square_tells_a_fit_from_a_misfit() {
    let expected = [0.5, 0.3, 0.2];
    let (_, df, p) = chi_square(&[5010, 2990, 2000], &expected);
    assert_eq!(df, 2);
    assert!(p.unwrap() > 0.5, "{p:?}");
    let (_, _, p) = chi_square(&[5500, 2700, 1800], &expected);
    assert!(p.unwrap() < 1e-10, "{p:?}");
    let (_, _, p) = chi_square(&[1, 0, 0, 1], &[0.5, 0.3, 0.2, 0.0]);
    assert_eq!(p, Some(0.0));
    let f = fit(&[5010, 2990, 2000], &expected, &[0.2, 0.3, 0.5]).unwrap();
    assert_eq!(f.samples, 10_000);
    assert!(f.p_value.unwrap() > 0.5 && f.target_p_value.unwrap() < 1e-10);
    assert!(f.tv < 0.01);
    assert_eq!(f.no_test, None);
    assert_eq!(
        fit(&[1, 2], &expected, &expected).unwrap_err().field,
        "counts"
    );
}

#[test]
fn a_lab_request_fixes_the_run_length_and_checks_runs_and_seeds() {
    let options = |json: &str| {
        crate::options::DecodeOptions::from_raw(serde_json::from_str(json).unwrap()).unwrap()
    };
    let r = lab_request(options(r#"{ "prompt": "ab", "seed": 5 }"#), None, None).unwrap();
    assert_eq!((r.position, r.runs, r.first_seed), (1, 1000, 5));
    assert_eq!(r.resolved.config.max_new_tokens(), RUN_TOKENS);
    let refused = |json: &str, position: Option<f64>, runs: Option<f64>| {
        lab_request(options(json), position, runs)
            .unwrap_err()
            .field
    };
    assert_eq!(
        refused(r#"{ "prompt": "ab", "maxTokens": 9 }"#, None, None),
        "maxTokens"
    );
    assert_eq!(
        refused(r#"{ "prompt": "ab", "stop": ["x"] }"#, None, None),
        "stop"
    );
    assert_eq!(
        refused(r#"{ "prompt": "ab" }"#, Some(0.0), None),
        "position"
    );
    assert_eq!(refused(r#"{ "prompt": "ab" }"#, None, Some(0.0)), "runs");
    assert_eq!(refused(r#"{ "prompt": "ab" }"#, None, Some(1.5)), "runs");
    assert_eq!(
        refused(
            r#"{ "prompt": "ab", "seed": 9007199254740991 }"#,
            None,
            Some(2.0)
        ),
        "runs"
    );
    assert_eq!(
        refused(r#"{ "prompt": "ab", "gamma": 0 }"#, None, None),
        "gamma"
    );
}

#[test]
fn the_second_position_reads_rows_only_for_tokens_the_target_can_emit() {
    // Top-k 2 keeps tokens 1 and 2 of the target's three: two rows, and the mixture
    // weighs them by the processed target.
    let c = config(speculative(), None)
        .into_builder()
        .sampling(SamplingConfig {
            top_k: Some(2),
            ..SamplingConfig::default()
        })
        .build()
        .unwrap();
    let mut two = logits();
    two.first_tokens = first_tokens(&c, &two.target).unwrap();
    assert_eq!(two.first_tokens, [1, 2]);
    two.after_prompt.remove(0);
    let second = exact(&c, 2, &two).unwrap();
    let (e1, e2) = (1.0_f64.exp(), 2.0_f64.exp());
    let (w1, w2) = (e1 / (e1 + e2), e2 / (e1 + e2));
    let row = |logits: &[f64]| Distribution::from_logits(logits, &c.sampling()).unwrap();
    let (r1, r2) = (row(&two.after_prompt[0]), row(&two.after_prompt[1]));
    for x in 0..3 {
        let want = w1 * r1.prob(x) + w2 * r2.prob(x);
        assert!((second.expected[x] - want).abs() < 1e-12, "{x}");
    }
    // A token the target can emit with no row is refused, not left out of the mixture.
    let mut missing = two.clone();
    missing.first_tokens = vec![2];
    missing.after_prompt.remove(0);
    assert_eq!(exact(&c, 2, &missing).unwrap_err().field, "model");
}

#[test]
fn a_large_vocabulary_without_a_top_k_is_refused_at_the_second_position() {
    let vocab = MAX_SECOND_POSITION_LOGITS / 100 + 1;
    let flat = vec![0.0; vocab];
    let c = config(speculative(), None);
    let e = first_tokens(&c, &flat).unwrap_err();
    assert_eq!(e.field, "topK");
    assert!(e.to_string().contains(&vocab.to_string()), "{e}");
    let k = c
        .into_builder()
        .sampling(SamplingConfig {
            top_k: Some(8),
            ..SamplingConfig::default()
        })
        .build()
        .unwrap();
    assert_eq!(first_tokens(&k, &flat).unwrap().len(), 8);
}

#[test]
fn a_context_with_room_for_one_token_follows_the_target_at_both_positions() {
    assert!(slides_between(255, 256) && !slides_between(254, 256));
    assert_eq!(shared_positions(255, 256), 0);
    assert_eq!(shared_positions(254, 256), 254);
    // The rows follow the slid contexts: the last half window of prompt + x.
    let prompt: Vec<u32> = (0..7).collect();
    let contexts = contexts_for_second(&prompt, &[9], false, 8);
    assert_eq!(contexts, [vec![4, 5, 6, 9]]);
    // Nothing is drafted: a bug's closed form gives way to the target at position 1,
    // and cache-reset needs no rows alone at position 2.
    let c = config(speculative(), Some(Bug::SharedUniform));
    let slid = LabLogits {
        slides: true,
        ..logits()
    };
    let first = exact(&c, 1, &slid).unwrap();
    assert_eq!((first.kind.as_str(), first.tv_from_target), ("target", 0.0));
    let reset = config(speculative(), Some(Bug::CacheReset));
    assert_eq!(needs(&reset, 2, true), (true, false));
    let second = exact(&reset, 2, &slid).unwrap();
    assert_eq!(second.kind, "target");
    let plain = exact(&config(speculative(), None), 2, &logits()).unwrap();
    assert_eq!(second.expected, plain.expected);
}

#[test]
fn with_fewer_than_two_bins_there_is_no_p_value_and_the_fit_says_why() {
    // One run: no token expects 5 counts, so everything pools into one bin.
    let expected = [0.5, 0.3, 0.2];
    let f = fit(&[1, 0, 0], &expected, &expected).unwrap();
    assert_eq!(
        (f.p_value, f.target_p_value, f.degrees_of_freedom),
        (None, None, 0)
    );
    let why = f.no_test.unwrap();
    assert!(
        why.starts_with("1 run is too few") && why.contains("at least 10 runs"),
        "{why}"
    );
    // An exact distribution on one token: no number of runs makes a test.
    let certain = [0.0, 1.0, 0.0];
    let f = fit(&[0, 400, 0], &certain, &certain).unwrap();
    assert_eq!(f.p_value, None);
    assert!(f.no_test.unwrap().contains("all its mass on one token"));
}

#[test]
fn the_second_position_is_conditioned_on_not_ending_after_the_first() {
    // Token 2 ends generation: the runs that reach position 2 mix rows 0 and 1 only,
    // renormalised; an end token the target always emits first is refused.
    let c = config(speculative(), None);
    let ended = LabLogits {
        end_token: Some(2),
        ..logits()
    };
    let second = exact(&c, 2, &ended).unwrap();
    let t = Distribution::from_logits(&ended.target, &c.sampling()).unwrap();
    let row = |i: usize| Distribution::from_logits(&ended.after_prompt[i], &c.sampling()).unwrap();
    let reach = 1.0 - t.prob(2);
    for x in 0..3 {
        let want = (t.prob(0) * row(0).prob(x) + t.prob(1) * row(1).prob(x)) / reach;
        assert!((second.expected[x] - want).abs() < 1e-12, "{x}");
    }
    let greedy_end = LabLogits {
        end_token: Some(2),
        target: vec![0.0, 0.0, 50.0],
        ..logits()
    };
    let top1 = c
        .into_builder()
        .sampling(SamplingConfig {
            top_k: Some(1),
            ..SamplingConfig::default()
        })
        .build()
        .unwrap();
    assert_eq!(exact(&top1, 2, &greedy_end).unwrap_err().field, "position");
}
