//! `plan_report` by decoding's names: SpecTr's three selection rules under one method,
//! the sampling settings processing both distributions for every method, and greedy
//! verification as standard speculative sampling at temperature 0.

use specula_core::{
    Bug, Distribution, PlanError, PlanInput, PlanMethod, PlanParams, PlanReport, PlanSelection,
    SamplingConfig, plan_report,
};

const TARGET: [f64; 4] = [0.1, 0.2, 0.3, 0.4];
const DRAFT: [f64; 4] = [0.5, 0.3, 0.15, 0.05];

fn input(method: PlanMethod, params: PlanParams, sampling: SamplingConfig) -> PlanInput {
    PlanInput {
        method,
        target: TARGET.to_vec(),
        draft: DRAFT.to_vec(),
        normalize: false,
        params,
        sampling,
        bug: None,
    }
}

fn plan(method: PlanMethod, params: PlanParams, sampling: SamplingConfig) -> PlanReport {
    plan_report(&input(method, params, sampling)).unwrap()
}

fn at(temperature: f64) -> SamplingConfig {
    SamplingConfig {
        temperature,
        ..SamplingConfig::default()
    }
}

#[test]
fn spectr_names_its_selection_and_only_spectr_has_one() {
    let one = SamplingConfig::default();
    for (params, selection) in [
        (PlanParams::KSeq { k: 2, rho: None }, PlanSelection::Kseq),
        (PlanParams::Race(2), PlanSelection::Race),
        (PlanParams::Otm(2), PlanSelection::Otm),
    ] {
        let report = plan(PlanMethod::Spectr, params, one);
        assert_eq!(
            (report.method, report.selection, report.drafts),
            (PlanMethod::Spectr, Some(selection), Some(2))
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["method"], "spectr");
        assert_eq!(json["selection"], selection.name());
        assert!(report.tv_target_output < 1e-9, "{selection:?} is lossless");
    }
    let report = plan(PlanMethod::Multiround, PlanParams::Drafts(2), one);
    let json = serde_json::to_value(&report).unwrap();
    assert!(json.get("selection").is_none(), "{json}");
    assert_eq!(
        (json["method"].as_str(), json["temperature"].as_f64()),
        (Some("multiround"), Some(1.0))
    );
    // A method with another's parameters is a front end's bug, refused.
    let wrong = input(PlanMethod::Multiround, PlanParams::Race(2), one);
    assert!(matches!(
        plan_report(&wrong),
        Err(PlanError::ParamsMismatch { .. })
    ));
}

#[test]
fn greedy_is_speculative_at_temperature_zero() {
    let report = plan(PlanMethod::Speculative, PlanParams::None, at(0.0));
    assert_eq!(report.title(), "greedy verification, temperature 0");
    // Both one-hot on their argmax (target 3, draft 0): the draft's argmax is rejected
    // and the target's emitted.
    let one_hot = |x: usize| {
        (0..4)
            .map(|i| f64::from(u8::from(i == x)))
            .collect::<Vec<_>>()
    };
    assert_eq!(report.target, one_hot(3));
    assert_eq!(report.draft, one_hot(0));
    assert_eq!(report.acceptance, 0.0);
    assert_eq!(report.output, one_hot(3));
    // Greedy verification's own columns: accepted exactly at the target's argmax.
    assert_eq!(report.accept_probs, Some(one_hot(3)));
    assert_eq!(report.residual, Some(one_hot(3)));
    // Exact with respect to the temperature-0 target.
    assert_eq!(
        (report.kl_target_output, report.tv_target_output),
        (0.0, 0.0)
    );
    assert_eq!(report.tv_target_draft, 1.0);
    // Standard speculative sampling on the same processed pair gives the same output and
    // acceptance: greedy verification is that scheme at temperature 0.
    let pair = |values: &[f64]| Distribution::from_probs(values.to_vec()).unwrap();
    let sampled = specula_core::Speculative::new(&pair(&report.target), &pair(&report.draft))
        .unwrap()
        .analysis();
    assert_eq!(
        (sampled.acceptance, sampled.output),
        (report.acceptance, report.output.clone())
    );
    // A subnormal temperature is greedy too, as in decoding.
    assert_eq!(
        plan(PlanMethod::Speculative, PlanParams::None, at(1e-310)).output,
        one_hot(3)
    );
    // When the argmaxes agree, the draft is always accepted.
    let mut agree = input(PlanMethod::Speculative, PlanParams::None, at(0.0));
    agree.draft = vec![0.1, 0.1, 0.1, 0.7];
    assert_eq!(plan_report(&agree).unwrap().acceptance, 1.0);
}

#[test]
fn temperature_zero_is_refused_where_greedy_verification_would_ignore_the_plan() {
    for (method, params) in [
        (PlanMethod::Spectr, PlanParams::KSeq { k: 2, rho: None }),
        (PlanMethod::Multiround, PlanParams::Drafts(2)),
        (PlanMethod::Mentored, PlanParams::Kl(0.1)),
    ] {
        let err = plan_report(&input(method, params, at(0.0))).unwrap_err();
        assert!(matches!(err, PlanError::Greedy { .. }), "{err}");
    }
    let mut bugged = input(PlanMethod::Speculative, PlanParams::None, at(0.0));
    bugged.bug = Some(Bug::ResampleFromTarget);
    let err = plan_report(&bugged).unwrap_err();
    assert!(err.to_string().contains("without a bug"), "{err}");
}

#[test]
fn sampling_settings_process_both_distributions_for_every_method() {
    let sampling = SamplingConfig {
        temperature: 0.5,
        top_k: Some(3),
        top_p: None,
    };
    let logits = |p: &[f64]| p.iter().map(|x| x.ln()).collect::<Vec<_>>();
    let target = Distribution::from_logits(&logits(&TARGET), &sampling).unwrap();
    let draft = Distribution::from_logits(&logits(&DRAFT), &sampling).unwrap();
    for (method, params) in [
        (PlanMethod::Speculative, PlanParams::None),
        (PlanMethod::Spectr, PlanParams::Race(3)),
        (PlanMethod::Multiround, PlanParams::Drafts(3)),
        (PlanMethod::Mentored, PlanParams::Kl(0.0)),
    ] {
        let report = plan(method, params, sampling);
        assert_eq!(report.target, target.probs(), "{method:?}");
        assert_eq!(report.draft, draft.probs(), "{method:?}");
        assert_eq!((report.temperature, report.top_k), (0.5, Some(3)));
        // Lossless with respect to the processed target.
        assert!(report.tv_target_output < 1e-9, "{method:?}");
    }
    // The default settings use the distributions as given, bit for bit.
    let report = plan(
        PlanMethod::Speculative,
        PlanParams::None,
        SamplingConfig::default(),
    );
    assert_eq!(
        (report.target.as_slice(), report.draft.as_slice()),
        (&TARGET[..], &DRAFT[..])
    );
    let json = serde_json::to_value(&report).unwrap();
    assert!(
        json.get("topK").is_none() && json.get("topP").is_none(),
        "{json}"
    );
}

#[test]
fn the_output_splits_into_what_accepted_drafts_and_the_residual_emit() {
    let one = SamplingConfig::default();
    let cases = [
        (PlanMethod::Speculative, PlanParams::None, one),
        (PlanMethod::Speculative, PlanParams::None, at(0.0)),
        (PlanMethod::Mentored, PlanParams::Kl(0.05), one),
        (
            PlanMethod::Typical,
            PlanParams::Typical {
                epsilon: 0.3,
                delta: 0.09,
            },
            one,
        ),
        (
            PlanMethod::Spectr,
            PlanParams::KSeq { k: 3, rho: None },
            one,
        ),
        (PlanMethod::Spectr, PlanParams::Race(3), one),
        (PlanMethod::Multiround, PlanParams::Drafts(3), one),
    ];
    for (method, params, sampling) in cases {
        let report = plan(method, params, sampling);
        let (accepted, residual) = (
            report.accepted_mass.clone().expect("accepted"),
            report.residual_mass.clone().expect("residual"),
        );
        let rejected = 1.0 - report.acceptance;
        for x in 0..TARGET.len() {
            let whole = accepted[x] + residual[x];
            assert!(
                (whole - report.output[x]).abs() < 1e-12,
                "{method:?} {params:?}"
            );
            let r = report.residual.as_ref().unwrap()[x];
            assert!((residual[x] - rejected * r).abs() < 1e-12, "{method:?}");
        }
        // One draft: what acceptance emits is the draft times its acceptance probability,
        // computed apart from the output (for standard sampling, min(target, draft)).
        if matches!(
            method,
            PlanMethod::Speculative | PlanMethod::Mentored | PlanMethod::Typical
        ) {
            let accept = report.accept_probs.as_ref().unwrap();
            for x in 0..TARGET.len() {
                let direct = report.draft[x] * accept[x];
                assert!(
                    (accepted[x] - direct).abs() < 1e-12,
                    "{method:?} {params:?} x={x}"
                );
            }
        }
    }
    let report = plan(PlanMethod::Speculative, PlanParams::None, one);
    let mins: Vec<f64> = TARGET.iter().zip(DRAFT).map(|(t, d)| t.min(d)).collect();
    let accepted = report.accepted_mass.unwrap();
    assert_eq!(accepted.len(), mins.len());
    for (a, m) in accepted.iter().zip(&mins) {
        assert!(
            (a - m).abs() < 1e-12,
            "{accepted:?} is not min(target, draft) {mins:?}"
        );
    }
    let otm = plan(PlanMethod::Spectr, PlanParams::Otm(2), one);
    assert!(
        otm.accepted_mass.is_none(),
        "OTM's coupling has no residual"
    );
}
