//! The plan options by decoding's names: `method` as decoding spells it, SpecTr's rule as
//! `selection`, greedy verification as `temperature: 0`, the former names refused with
//! the new spelling.

use specula_core::{PlanMethod, PlanParams, PlanSelection};

use super::plan_tests::{opts, spectr};
use super::{DecodeOptions, MethodName, PlanOptions, run_plan};
use crate::Selection;

/// The refusal of `options`: its field and message.
fn refused(options: &PlanOptions) -> (String, String) {
    let e = options.resolve().expect_err("refused");
    (e.field.clone(), e.to_string())
}

fn check(options: &PlanOptions, field: &str, needle: &str) {
    let (got, message) = refused(options);
    assert_eq!(got, field, "{message}");
    assert!(message.contains(needle), "{message} lacks {needle:?}");
}

#[test]
fn every_plan_method_is_spelled_as_decoding_spells_it() {
    for method in PlanMethod::ALL {
        let decoding: MethodName = method.name().parse().expect("a decoding method");
        assert_eq!(decoding.as_str(), method.name());
        assert!(opts(method.name()).method.is_some());
    }
    // Decoding's selection rules are the plan's, which adds the exact LP.
    for rule in Selection::ALL {
        assert!(PlanSelection::from_name(rule.name()).is_some(), "{rule:?}");
    }
}

#[test]
fn spectr_takes_its_three_selection_rules() {
    let resolve = |o: PlanOptions| o.resolve().unwrap();
    let default = resolve(opts("spectr"));
    assert_eq!(
        (default.method, default.params),
        (PlanMethod::Spectr, PlanParams::KSeq { k: 4, rho: None })
    );
    let kseq = resolve(PlanOptions {
        rho: Some(3.0),
        drafts: Some(3.0),
        ..spectr("kseq")
    });
    assert_eq!(
        kseq.params,
        PlanParams::KSeq {
            k: 3,
            rho: Some(3.0)
        }
    );
    assert_eq!(resolve(spectr("race")).params, PlanParams::Race(4));
    let otm = resolve(PlanOptions {
        drafts: Some(2.0),
        ..spectr("otm")
    });
    assert_eq!(otm.params, PlanParams::Otm(2));
    let report = run_plan(&otm).unwrap();
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(
        (&json["method"], &json["selection"]),
        (&"spectr".into(), &"otm".into())
    );
    assert_eq!(resolve(opts("multiround")).params, PlanParams::Drafts(4));
    check(
        &spectr("best"),
        "selection",
        "\"otm\" (the exact OTM linear program), got \"best\"",
    );
    check(
        &PlanOptions {
            selection: Some("race".into()),
            ..opts("multiround")
        },
        "selection",
        "selection does not apply to method \"multiround\"",
    );
    check(
        &PlanOptions {
            rho: Some(2.0),
            ..spectr("race")
        },
        "rho",
        "rho must be left out with selection \"race\" (rho is k-Seq's",
    );
    check(
        &PlanOptions {
            rho: Some(2.0),
            ..opts("multiround")
        },
        "rho",
        "it is for method \"spectr\" with selection \"kseq\"",
    );
    check(
        &PlanOptions {
            drafts: Some(2.0),
            ..opts("mentored")
        },
        "drafts",
        "it is for methods \"spectr\" and \"multiround\"",
    );
}

#[test]
fn former_names_are_refused_with_the_new_spelling() {
    for (name, hint) in [
        (
            "kseq",
            "SpecTr k-Seq is method \"spectr\", whose default selection is \"kseq\"",
        ),
        (
            "race",
            "the ratio race is method \"spectr\" with selection \"race\"",
        ),
        ("otm", "method \"spectr\" with selection \"otm\""),
        (
            "greedy",
            "greedy verification is method \"speculative\" with temperature 0",
        ),
        ("autoregressive", "drafts nothing"),
        ("lookup", "plan method \"speculative\" with a one-hot draft"),
    ] {
        check(&opts(name), "method", hint);
        check(
            &opts(name),
            "method",
            "method must be one of speculative, spectr, multiround, mentored, typical (",
        );
    }
    check(&opts("beam"), "method", "typical, got \"beam\"");
}

#[test]
fn greedy_is_speculative_at_temperature_zero() {
    let greedy = PlanOptions {
        temperature: Some(0.0),
        ..opts("speculative")
    };
    let report = run_plan(&greedy.resolve().unwrap()).unwrap();
    assert_eq!(report.title(), "greedy verification, temperature 0");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(
        (&json["method"], &json["temperature"]),
        (&"speculative".into(), &0.0.into())
    );
    assert_eq!(report.output, [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(report.accept_probs, Some(vec![0.0, 0.0, 0.0, 1.0]));
    assert_eq!(report.acceptance, 0.0);
    // Temperature 0 where greedy verification would leave the plan's options unused.
    for method in ["spectr", "multiround", "typical"] {
        check(
            &PlanOptions {
                temperature: Some(0.0),
                ..opts(method)
            },
            "temperature",
            "planned as method \"speculative\" with temperature 0",
        );
    }
    check(
        &PlanOptions {
            bug: Some("argmax-draft".into()),
            ..greedy.clone()
        },
        "bug",
        "greedy verification is unaffected by the bugs",
    );
    for (options, field) in [
        (
            PlanOptions {
                top_k: Some(2.0),
                ..greedy.clone()
            },
            "topK",
        ),
        (
            PlanOptions {
                top_p: Some(0.5),
                ..greedy.clone()
            },
            "topP",
        ),
    ] {
        check(&options, field, "must be left out at temperature 0");
    }
}

#[test]
fn sampling_settings_process_the_pair_for_every_method() {
    for options in [
        opts("speculative"),
        spectr("race"),
        opts("multiround"),
        PlanOptions {
            kl: Some(0.1),
            ..opts("mentored")
        },
        opts("typical"),
    ] {
        let input = PlanOptions {
            temperature: Some(0.5),
            top_k: Some(3.0),
            top_p: Some(0.9),
            ..options
        }
        .resolve()
        .unwrap();
        assert_eq!(
            (
                input.sampling.temperature,
                input.sampling.top_k,
                input.sampling.top_p
            ),
            (0.5, Some(3), Some(0.9))
        );
        let report = run_plan(&input).unwrap();
        assert_eq!(
            report.target[0], 0.0,
            "top-k drops the least likely target token"
        );
    }
    check(
        &PlanOptions {
            temperature: Some(-1.0),
            ..opts("spectr")
        },
        "temperature",
        "temperature must be a number from 0 (greedy)",
    );
}

#[test]
fn decoding_refuses_the_plan_only_selection() {
    let options = DecodeOptions {
        prompt: Some("ROMEO:".into()),
        method: Some("spectr".into()),
        selection: Some("otm".into()),
        ..DecodeOptions::default()
    };
    let e = options.resolve().unwrap_err();
    assert_eq!(e.field, "selection");
    assert!(
        e.to_string().contains(
            "acceptance; \"otm\", the exact linear program, is for plans only, and the race \
             reaches its acceptance), got \"otm\""
        ),
        "{e}"
    );
    let race = DecodeOptions {
        selection: Some("race".into()),
        ..options
    };
    assert!(race.resolve().is_ok());
}
