//! `DecodeConfig` is built only through its checks: the constructor and the builder refuse
//! every bad setting with its typed error, deserialising runs the same checks, and a good
//! configuration round-trips.

use specula_core::Bug;
use specula_engine::options::limits::MAX_ROUND_NODES;
use specula_engine::{
    DEFAULT_MAX_NEW_TOKENS, DecodeConfig, DecodeConfigBuilder, DraftShape, Error, GammaPolicy,
    Method, SamplingConfig, Selection,
};

fn speculative(gamma: usize) -> Method {
    Method::Speculative {
        gamma,
        policy: GammaPolicy::Fixed,
    }
}

fn iid(k: usize, length: usize) -> DraftShape {
    DraftShape::Iid { k, length }
}

fn tree(k: usize, branching: &[usize]) -> DraftShape {
    DraftShape::Tree {
        k,
        branching: branching.to_vec(),
    }
}

fn spectr(drafts: DraftShape) -> Method {
    Method::SpecTr {
        drafts,
        selection: Selection::KSeq,
    }
}

fn mentored(gamma: usize, kl_budget: f64) -> Method {
    Method::Mentored {
        gamma,
        kl_budget,
        policy: GammaPolicy::Fixed,
    }
}

fn typical(gamma: usize, epsilon: f64, delta: f64) -> Method {
    Method::Typical {
        gamma,
        epsilon,
        delta,
        policy: GammaPolicy::Fixed,
    }
}

fn sampling(temperature: f64, top_k: Option<usize>, top_p: Option<f64>) -> SamplingConfig {
    SamplingConfig {
        temperature,
        top_k,
        top_p,
    }
}

/// One case per rule: a name, the settings that break it, and the error `build` gives.
fn bad_settings() -> Vec<(&'static str, DecodeConfigBuilder, Error)> {
    let b = DecodeConfig::builder;
    let too_many = |nodes: u128| Error::TooManyDraftNodes {
        nodes,
        limit: MAX_ROUND_NODES,
    };
    vec![
        (
            "temperature",
            b(speculative(2)).sampling(sampling(-1.0, None, None)),
            Error::Core(specula_core::Error::BadTemperature(-1.0)),
        ),
        (
            "top-k",
            b(speculative(2)).sampling(sampling(1.0, Some(0), None)),
            Error::Core(specula_core::Error::BadTopK),
        ),
        (
            "top-p",
            b(Method::Autoregressive).sampling(sampling(1.0, None, Some(0.0))),
            Error::Core(specula_core::Error::BadTopP(0.0)),
        ),
        ("speculative gamma", b(speculative(0)), Error::ZeroGamma),
        (
            "speculative gamma over the node limit",
            b(speculative(MAX_ROUND_NODES + 1)),
            too_many(MAX_ROUND_NODES as u128 + 1),
        ),
        (
            "max_gamma below gamma",
            b(Method::Speculative {
                gamma: 5,
                policy: GammaPolicy::Heuristic { max_gamma: 3 },
            }),
            Error::BadMaxGamma {
                gamma: 5,
                max_gamma: 3,
            },
        ),
        (
            "max_gamma over the node limit",
            b(Method::Speculative {
                gamma: 2,
                policy: GammaPolicy::Heuristic {
                    max_gamma: MAX_ROUND_NODES + 1,
                },
            }),
            too_many(MAX_ROUND_NODES as u128 + 1),
        ),
        (
            "cost ratio",
            b(Method::Speculative {
                gamma: 2,
                policy: GammaPolicy::Optimal {
                    max_gamma: 8,
                    cost_ratio: -1.0,
                },
            }),
            Error::BadCostRatio(-1.0),
        ),
        ("no drafts", b(spectr(iid(0, 3))), Error::NoDrafts),
        ("draft length", b(spectr(iid(3, 0))), Error::ZeroDraftLength),
        (
            "empty tree",
            b(spectr(tree(4, &[]))),
            Error::ZeroDraftLength,
        ),
        (
            "tree depth without children",
            b(spectr(tree(4, &[2, 0, 2]))),
            Error::ZeroBranching { depth: 2 },
        ),
        (
            "tree leaves",
            b(Method::MultiRound {
                drafts: tree(4, &[2, 3]),
            }),
            Error::BranchingMismatch { product: 6, k: 4 },
        ),
        (
            "draft nodes",
            b(Method::MultiRound {
                drafts: iid(MAX_ROUND_NODES + 1, 1),
            }),
            too_many(MAX_ROUND_NODES as u128 + 1),
        ),
        ("mentored gamma", b(mentored(0, 0.1)), Error::ZeroGamma),
        ("KL budget", b(mentored(2, -0.1)), Error::BadKlBudget(-0.1)),
        ("typical gamma", b(typical(0, 0.3, 0.1)), Error::ZeroGamma),
        (
            "typical epsilon",
            b(typical(2, 1.5, 0.1)),
            Error::BadTypicalEpsilon(1.5),
        ),
        (
            "typical delta",
            b(typical(2, 0.3, f64::INFINITY)),
            Error::BadTypicalDelta(f64::INFINITY),
        ),
        (
            "lookup gamma",
            b(Method::Lookup { gamma: 0, ngram: 2 }),
            Error::ZeroGamma,
        ),
        (
            "lookup gamma over the node limit",
            b(Method::Lookup {
                gamma: MAX_ROUND_NODES + 1,
                ngram: 2,
            }),
            too_many(MAX_ROUND_NODES as u128 + 1),
        ),
        (
            "lookup n-gram",
            b(Method::Lookup { gamma: 3, ngram: 0 }),
            Error::ZeroNgram,
        ),
        (
            "a bug without drafts",
            b(Method::Autoregressive).bug(Bug::SharedUniform),
            Error::BugNotApplicable {
                bug: Bug::SharedUniform,
                method: "autoregressive",
            },
        ),
        (
            "a bug in a lossy method",
            b(mentored(2, 0.1)).bug(Bug::ArgmaxDraft),
            Error::BugNotApplicable {
                bug: Bug::ArgmaxDraft,
                method: "mentored",
            },
        ),
        (
            "a bug with prompt lookup",
            b(Method::Lookup { gamma: 3, ngram: 2 }).bug(Bug::CacheReset),
            Error::BugNotApplicable {
                bug: Bug::CacheReset,
                method: "lookup",
            },
        ),
        (
            "parallel drafting with SpecTr",
            b(spectr(iid(2, 2))).parallel_draft(true),
            Error::ParallelDraftNotApplicable { method: "spectr" },
        ),
        (
            "parallel drafting with a dynamic gamma",
            b(Method::Speculative {
                gamma: 2,
                policy: GammaPolicy::Heuristic { max_gamma: 8 },
            })
            .parallel_draft(true),
            Error::ParallelDraftNotApplicable {
                method: "speculative with a dynamic gamma",
            },
        ),
        (
            "an empty stop string",
            b(speculative(2)).stop_strings(vec!["x".into(), String::new()]),
            Error::EmptyStopString { index: 1 },
        ),
    ]
}

#[test]
fn the_builder_refuses_each_bad_setting_with_its_typed_error() {
    for (rule, builder, expected) in bad_settings() {
        assert_eq!(builder.build(), Err(expected), "{rule}");
    }
}

#[test]
fn the_constructor_refuses_a_bad_method_or_sampling() {
    assert_eq!(
        DecodeConfig::new(speculative(0), SamplingConfig::default(), 10),
        Err(Error::ZeroGamma)
    );
    assert_eq!(
        DecodeConfig::new(speculative(2), sampling(f64::NAN, None, None), 10)
            .unwrap_err()
            .to_string(),
        Error::Core(specula_core::Error::BadTemperature(f64::NAN)).to_string()
    );
    let config = DecodeConfig::new(speculative(2), SamplingConfig::greedy(), 10).unwrap();
    assert_eq!(config.method(), &speculative(2));
    assert_eq!(config.sampling(), SamplingConfig::greedy());
    assert_eq!(config.max_new_tokens(), 10);
}

#[test]
fn a_bad_setting_is_refused_after_a_good_configuration_too() {
    let good = DecodeConfig::builder(speculative(2)).build().unwrap();
    assert_eq!(
        good.clone().into_builder().method(speculative(0)).build(),
        Err(Error::ZeroGamma)
    );
    assert_eq!(good.clone().into_builder().build(), Ok(good));
}

#[test]
fn the_builder_defaults_and_every_setting_read_back() {
    let d = DecodeConfig::builder(speculative(3)).build().unwrap();
    assert_eq!(
        (d.max_new_tokens(), d.seed(), d.bug(), d.parallel_draft()),
        (DEFAULT_MAX_NEW_TOKENS, 0, None, false)
    );
    assert_eq!(d.sampling(), SamplingConfig::default());
    assert!(d.stop_tokens().is_empty() && d.stop_strings().is_empty());
    assert!(d.token_text().is_none() && !d.record_distributions());
    assert_eq!(DecodeConfig::default().method(), &Method::Autoregressive);

    let text = vec!["a".to_string(), "b".to_string()];
    let c = DecodeConfig::builder(speculative(3))
        .sampling(SamplingConfig::greedy())
        .max_new_tokens(7)
        .stop_tokens(vec![1, 2])
        .stop_strings(vec!["ab".into()])
        .token_text(text.clone())
        .seed(9)
        .record_distributions(true)
        .bug(Bug::ArgmaxDraft)
        .parallel_draft(true)
        .build()
        .unwrap();
    assert_eq!(c.method(), &speculative(3));
    assert_eq!(c.sampling(), SamplingConfig::greedy());
    assert_eq!(c.max_new_tokens(), 7);
    assert_eq!(c.stop_tokens(), [1, 2]);
    assert_eq!(c.stop_strings(), ["ab"]);
    assert_eq!(c.token_text(), Some(&text[..]));
    assert_eq!(c.seed(), 9);
    assert!(c.record_distributions());
    assert_eq!(c.bug(), Some(Bug::ArgmaxDraft));
    assert!(c.parallel_draft());
    // The fields no check reads change on a built configuration, each alone.
    let w = c
        .clone()
        .with_seed(1)
        .with_max_new_tokens(2)
        .with_stop_tokens(vec![3])
        .with_token_text(None)
        .with_record_distributions(false);
    assert_eq!(
        (
            w.seed(),
            w.max_new_tokens(),
            w.stop_tokens(),
            w.token_text()
        ),
        (1, 2, &[3][..], None)
    );
    assert!(!w.record_distributions());
    assert_eq!(
        (w.method(), w.bug(), w.stop_strings()),
        (c.method(), c.bug(), c.stop_strings())
    );
}

#[test]
fn a_good_configuration_round_trips_through_json() {
    let configs = [
        DecodeConfig::default(),
        DecodeConfig::builder(spectr(tree(4, &[2, 2])))
            .sampling(sampling(0.7, Some(5), Some(0.9)))
            .max_new_tokens(12)
            .stop_tokens(vec![0])
            .stop_strings(vec!["\n".into()])
            .token_text(vec!["a".to_string(), "\n".to_string()])
            .seed(42)
            .record_distributions(true)
            .bug(Bug::CacheReset)
            .build()
            .unwrap(),
        DecodeConfig::builder(speculative(4))
            .parallel_draft(true)
            .build()
            .unwrap(),
        DecodeConfig::builder(typical(3, 0.3, 0.1)).build().unwrap(),
    ];
    for config in configs {
        let json = serde_json::to_string(&config).unwrap();
        let back: DecodeConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, config, "{json}");
    }
    // The optional fields may be left out.
    let minimal: DecodeConfig = serde_json::from_str(
        r#"{"method":{"kind":"lookup","gamma":4,"ngram":3},"sampling":{"temperature":0.0},"maxNewTokens":5}"#,
    )
    .unwrap();
    assert_eq!(
        minimal,
        DecodeConfig::new(
            Method::Lookup { gamma: 4, ngram: 3 },
            SamplingConfig::greedy(),
            5
        )
        .unwrap()
    );
}

#[test]
fn deserialising_a_bad_configuration_fails_with_the_rule_broken() {
    let good =
        serde_json::to_value(DecodeConfig::builder(speculative(2)).build().unwrap()).unwrap();
    let bad = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut value = good.clone();
        edit(&mut value);
        serde_json::from_value::<DecodeConfig>(value)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        bad(&|v| v["method"]["gamma"] = 0.into()),
        Error::ZeroGamma.to_string()
    );
    assert_eq!(
        bad(&|v| v["sampling"]["temperature"] = (-1.0).into()),
        Error::Core(specula_core::Error::BadTemperature(-1.0)).to_string()
    );
    assert_eq!(
        bad(&|v| v["stopStrings"] = serde_json::json!([""])),
        Error::EmptyStopString { index: 0 }.to_string()
    );
    assert_eq!(
        bad(&|v| {
            v["method"] = serde_json::json!({"kind": "autoregressive"});
            v["bug"] = "argmax-draft".into();
        }),
        Error::BugNotApplicable {
            bug: Bug::ArgmaxDraft,
            method: "autoregressive"
        }
        .to_string()
    );
    assert_eq!(
        bad(&|v| {
            v["method"] = serde_json::json!({"kind": "multiround", "drafts": {"kind": "iid", "k": 2, "length": 2}});
            v["parallelDraft"] = true.into();
        }),
        Error::ParallelDraftNotApplicable {
            method: "multiround"
        }
        .to_string()
    );
    // A missing required field is still serde's own error.
    assert!(bad(&|v| v.as_object_mut().unwrap().clear()).contains("missing field"));
}
