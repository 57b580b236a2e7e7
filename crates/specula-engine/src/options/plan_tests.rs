//! The plan options: each refusal names its option, on every surface alike.

use super::{OptionError, PlanFailure, PlanOptions, Raw, run_plan};

/// The options of one plan over a fixed pair, by method (also the names tests').
pub(super) fn opts(method: &str) -> PlanOptions {
    PlanOptions {
        method: Some(method.into()),
        target: Some(vec![0.1, 0.2, 0.3, 0.4]),
        draft: Some(vec![0.5, 0.3, 0.15, 0.05]),
        ..PlanOptions::default()
    }
}

/// Method spectr with `selection`.
pub(super) fn spectr(selection: &str) -> PlanOptions {
    PlanOptions {
        selection: Some(selection.into()),
        ..opts("spectr")
    }
}

/// The option error of `options`, from resolving or from the math.
fn refusal(options: &PlanOptions) -> OptionError {
    match options.resolve().map(|input| run_plan(&input)) {
        Err(e) | Ok(Err(PlanFailure::Input(e))) => e,
        Ok(Err(other)) => panic!("not an option error: {other}"),
        Ok(Ok(_)) => panic!("accepted: {options:?}"),
    }
}

fn check(options: PlanOptions, field: &str, needle: &str) {
    let e = refusal(&options);
    assert_eq!(e.field, field, "{e}");
    assert!(e.to_string().contains(needle), "{e} lacks {needle:?}");
}

#[test]
fn a_resolved_plan_matches_the_core_report() {
    let report = run_plan(&opts("speculative").resolve().unwrap()).unwrap();
    assert!((report.acceptance - 0.5).abs() < 1e-12);
    let with_k = |k: Option<f64>| PlanOptions {
        drafts: k,
        ..opts("spectr")
    };
    let report = run_plan(&with_k(Some(3.0)).resolve().unwrap()).unwrap();
    assert_eq!(report.drafts, Some(3));
    // K's default is the decoding options' default.
    let report = run_plan(&with_k(None).resolve().unwrap()).unwrap();
    assert_eq!(report.drafts, Some(super::limits::DEFAULT_DRAFTS));
}

#[test]
fn options_are_read_from_raw_values() {
    let raw: Raw = serde_json::from_str(
        r#"{ "method": "mentored", "target": [0.5, 0.5], "draft": [0.9, 0.1], "kl": 0.01 }"#,
    )
    .unwrap();
    let input = PlanOptions::from_raw(raw).unwrap().resolve().unwrap();
    assert_eq!(input.params, specula_core::PlanParams::Kl(0.01));
    let raw: Raw =
        serde_json::from_str(r#"{ "method": "speculative", "normalise": true }"#).unwrap();
    assert_eq!(PlanOptions::from_raw(raw).unwrap_err().field, "normalise");
    let raw: Raw = serde_json::from_str(r#"{ "draft": [0.5, "0.5"] }"#).unwrap();
    let e = PlanOptions::from_raw(raw).unwrap_err();
    assert_eq!(e.field, "draft[1]");
    assert_eq!(
        e.to_string(),
        "draft[1] must be a number, got the string \"0.5\""
    );
}

#[test]
fn every_input_refusal_names_its_option() {
    check(opts("beam"), "method", "method must be one of speculative");
    check(
        PlanOptions {
            method: None,
            ..opts("speculative")
        },
        "method",
        "method is required",
    );
    check(
        PlanOptions {
            draft: Some(vec![0.5, 0.5]),
            ..opts("speculative")
        },
        "draft",
        "draft must be as many entries as target (4), got 2 entries",
    );
    check(
        PlanOptions {
            drafts: Some(2.0),
            ..opts("speculative")
        },
        "drafts",
        "drafts does not apply to method \"speculative\"",
    );
    check(
        PlanOptions {
            drafts: Some(1e6 + 1.0),
            ..spectr("race")
        },
        "drafts",
        "from 1 to 1000000",
    );
    check(opts("mentored"), "kl", "kl is required");
    for (kl, got) in [(-1.0, "got -1"), (f64::NAN, "got NaN")] {
        check(
            PlanOptions {
                kl: Some(kl),
                ..opts("mentored")
            },
            "kl",
            got,
        );
    }
    check(
        PlanOptions {
            rho: Some(f64::INFINITY),
            ..opts("spectr")
        },
        "rho",
        "rho must be a finite number",
    );
}

#[test]
fn what_the_math_refuses_names_its_option() {
    check(
        PlanOptions {
            target: Some(vec![0.5, 0.6, 0.0, 0.0]),
            ..opts("speculative")
        },
        "target",
        "set normalize to rescale them, got a sum of 1.1",
    );
    check(
        PlanOptions {
            draft: Some(vec![0.5, f64::NAN, 0.0, 0.5]),
            ..opts("speculative")
        },
        "draft[1]",
        "got NaN",
    );
    check(
        PlanOptions {
            target: Some(vec![-0.5, 1.5, 0.0, 0.0]),
            ..opts("speculative")
        },
        "target[0]",
        "got -0.5",
    );
    check(
        PlanOptions {
            rho: Some(0.5),
            ..spectr("kseq")
        },
        "rho",
        "at least rho* =",
    );
    let wide = vec![0.01; 100];
    check(
        PlanOptions {
            drafts: Some(3.0),
            target: Some(wide.clone()),
            draft: Some(wide),
            ..spectr("otm")
        },
        "drafts",
        "needs 100000000",
    );
    let wide = vec![0.005; 200];
    check(
        PlanOptions {
            drafts: Some(1e6),
            target: Some(wide.clone()),
            draft: Some(wide),
            ..opts("multiround")
        },
        "drafts",
        "at most 671088 for a multi-round plan over 200 tokens",
    );
    let long = vec![0.0; specula_core::report::MAX_PLAN_VOCAB + 1];
    check(
        PlanOptions {
            target: Some(long.clone()),
            draft: Some(long),
            ..opts("speculative")
        },
        "target",
        "target must be at most 1048576 entries, got 1048577 entries",
    );
}

#[test]
fn a_planted_bug_reports_its_output_and_tv() {
    let input = PlanOptions {
        bug: Some("resample-from-target".into()),
        temperature: Some(0.5),
        ..opts("speculative")
    }
    .resolve()
    .unwrap();
    let report = run_plan(&input).unwrap();
    let tv = report.tv.unwrap();
    assert!(tv > 0.05 && tv == report.tv_target_output, "{tv}");
    let bug = |name: &str, method: &str| PlanOptions {
        bug: Some(name.into()),
        ..opts(method)
    };
    check(bug("typo", "speculative"), "bug", "got \"typo\"");
    check(
        bug("cache-reset", "speculative"),
        "bug",
        "cache-reset acts only over a sequence",
    );
    check(
        bug("argmax-draft", "spectr"),
        "bug",
        "bug does not apply to method \"spectr\"",
    );
}

#[test]
fn negative_zero_is_read_as_zero() {
    let options = PlanOptions {
        target: Some(vec![-0.0, 1.0]),
        draft: Some(vec![0.5, 0.5]),
        ..opts("speculative")
    };
    let report = run_plan(&options.resolve().unwrap()).expect("plan");
    assert!(report.target[0].is_sign_positive(), "{:?}", report.target);
    assert!(report.output.iter().all(|x| x.is_sign_positive()));
}

#[test]
fn typical_acceptance_takes_epsilon_and_delta() {
    let input = opts("typical").resolve().unwrap();
    assert_eq!(
        input.params,
        specula_core::PlanParams::Typical {
            epsilon: super::limits::DEFAULT_TYPICAL_EPSILON,
            delta: super::limits::DEFAULT_TYPICAL_DELTA,
        }
    );
    let report = run_plan(&input).unwrap();
    assert!(report.threshold.is_some() && report.entropy.is_some());
    check(
        PlanOptions {
            epsilon: Some(1.5),
            ..opts("typical")
        },
        "epsilon",
        "epsilon must be a probability from 0 to 1, got 1.5",
    );
    check(
        PlanOptions {
            delta: Some(-1.0),
            ..opts("typical")
        },
        "delta",
        "delta must be a number from 0 to 1e6, got -1",
    );
    check(
        PlanOptions {
            epsilon: Some(0.1),
            ..opts("mentored")
        },
        "epsilon",
        "epsilon does not apply to method \"mentored\"",
    );
}

#[test]
fn what_the_tolerances_let_through_is_noted() {
    use specula_core::PlanNoteKind;
    // Rounding of the decimals: no note.
    let report = run_plan(&opts("spectr").resolve().unwrap()).unwrap();
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    // A sum 5e-7 short of 1, inside the tolerance: rescaled and noted.
    let short = PlanOptions {
        draft: Some(vec![0.5, 0.3, 0.15, 0.0499995]),
        ..opts("speculative")
    };
    let report = run_plan(&short.resolve().unwrap()).unwrap();
    assert!(!report.normalized);
    let [note] = report.notes.as_slice() else {
        panic!("{:?}", report.notes)
    };
    assert_eq!((note.kind, note.field), (PlanNoteKind::Rescaled, "draft"));
    assert!((note.given - 0.9999995).abs() < 1e-15 && note.used == 1.0);
    assert!((report.draft.iter().sum::<f64>() - 1.0).abs() < 1e-15);
    // With normalize the rescale was asked for: no note.
    let asked = PlanOptions {
        normalize: Some(true),
        ..short
    };
    assert!(
        run_plan(&asked.resolve().unwrap())
            .unwrap()
            .notes
            .is_empty()
    );
    // ρ* itself, then ρ* less a relative 1e-13: the second is raised and noted.
    let rho_star = run_plan(&opts("spectr").resolve().unwrap())
        .unwrap()
        .rho_star
        .unwrap();
    let with_rho = |rho| PlanOptions {
        rho: Some(rho),
        ..opts("spectr")
    };
    assert!(
        run_plan(&with_rho(rho_star).resolve().unwrap())
            .unwrap()
            .notes
            .is_empty()
    );
    let below = rho_star * (1.0 - 1e-13);
    let report = run_plan(&with_rho(below).resolve().unwrap()).unwrap();
    assert_eq!(report.rho, Some(rho_star));
    let [note] = report.notes.as_slice() else {
        panic!("{:?}", report.notes)
    };
    assert_eq!(
        (note.kind, note.field, note.given),
        (PlanNoteKind::RhoRaised, "rho", below)
    );
    assert!(note.message.contains("rho* was used"), "{}", note.message);
}
