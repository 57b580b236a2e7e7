//! The options' rules, one case each, and property tests over arbitrary raw objects.

use proptest::prelude::*;

use super::limits::*;
use super::*;
use crate::{DraftShape, GammaPolicy, Method, Selection};

fn json(text: &str) -> Result<Resolved, OptionError> {
    let raw: Raw = serde_json::from_str(text).expect("test JSON");
    DecodeOptions::from_raw(raw)?.resolve()
}

fn field(text: &str) -> (String, String) {
    let e = json(text).expect_err(text);
    (e.field.clone(), e.to_string())
}

#[test]
fn defaults_come_from_the_limits() {
    let r = json(r#"{"prompt":"To be"}"#).unwrap();
    assert_eq!(r.prompt, "To be");
    assert_eq!(r.config.max_new_tokens(), DEFAULT_MAX_TOKENS);
    assert_eq!(r.config.seed(), DEFAULT_SEED);
    assert_eq!(r.config.sampling().temperature, DEFAULT_TEMPERATURE);
    assert_eq!(
        *r.config.method(),
        Method::Speculative {
            gamma: DEFAULT_GAMMA,
            policy: GammaPolicy::Fixed
        }
    );
    let r = json(r#"{"prompt":"x","method":"spectr","selection":"race"}"#).unwrap();
    assert_eq!(
        *r.config.method(),
        Method::SpecTr {
            drafts: DraftShape::Iid {
                k: DEFAULT_DRAFTS,
                length: DEFAULT_GAMMA
            },
            selection: Selection::Race,
        }
    );
    let r = json(r#"{"prompt":"x","method":"spectr"}"#).unwrap();
    assert!(matches!(
        r.config.method(),
        Method::SpecTr {
            selection: Selection::KSeq,
            ..
        }
    ));
}

#[test]
fn typical_and_lookup_take_their_options_and_defaults() {
    let r = json(r#"{"prompt":"x","method":"typical"}"#).unwrap();
    assert_eq!(
        *r.config.method(),
        Method::Typical {
            gamma: DEFAULT_GAMMA,
            epsilon: DEFAULT_TYPICAL_EPSILON,
            delta: DEFAULT_TYPICAL_DELTA,
            policy: GammaPolicy::Fixed
        }
    );
    let r =
        json(r#"{"prompt":"x","method":"typical","epsilon":0.2,"delta":2,"dynamicGamma":true}"#)
            .unwrap();
    assert!(matches!(
        r.config.method(),
        Method::Typical { epsilon, delta, policy: GammaPolicy::Heuristic { .. }, .. }
            if *epsilon == 0.2 && *delta == 2.0
    ));
    let r = json(r#"{"prompt":"x","method":"lookup","gamma":6}"#).unwrap();
    assert_eq!(
        *r.config.method(),
        Method::Lookup {
            gamma: 6,
            ngram: DEFAULT_NGRAM
        }
    );
    assert!(!r.config.method().needs_draft());
    for (text, want, needle) in [
        (
            r#"{"prompt":"x","method":"typical","epsilon":1.01}"#,
            "epsilon",
            "from 0 to 1",
        ),
        (
            r#"{"prompt":"x","method":"typical","delta":-0.5}"#,
            "delta",
            "got -0.5",
        ),
        (
            r#"{"prompt":"x","method":"lookup","ngram":0}"#,
            "ngram",
            "from 1 to 16",
        ),
        (
            r#"{"prompt":"x","method":"lookup","ngram":17}"#,
            "ngram",
            "got 17",
        ),
        (
            r#"{"prompt":"x","method":"speculative","ngram":2}"#,
            "ngram",
            "for method \"lookup\"",
        ),
        (
            r#"{"prompt":"x","method":"typical","kl":0.1}"#,
            "kl",
            "refused rather than ignored",
        ),
        (
            r#"{"prompt":"x","method":"lookup","dynamicGamma":false}"#,
            "dynamicGamma",
            "typical",
        ),
        (
            r#"{"prompt":"x","method":"lookup","bug":"shared-uniform"}"#,
            "bug",
            "\"lookup\" draws no draft",
        ),
        (
            r#"{"prompt":"x","method":"typical","bug":"shared-uniform"}"#,
            "bug",
            "lossless drafting methods",
        ),
    ] {
        let (f, message) = field(text);
        assert_eq!(f, want, "{text}");
        assert!(message.contains(needle), "{text}: {message}");
    }
}

#[test]
fn every_method_builds() {
    for m in MethodName::ALL {
        let kl = if m == MethodName::Mentored {
            r#","kl":0.1"#
        } else {
            ""
        };
        let r = json(&format!(r#"{{"prompt":"x","method":"{m}"{kl}}}"#)).unwrap();
        assert_eq!(r.config.method().needs_draft(), m.needs_draft_model());
        assert_eq!(r.config.method().name(), m.as_str());
    }
}

#[test]
fn each_mistake_names_its_option() {
    let cases = [
        (
            r#"{"prompt":"x","gamma":0}"#,
            "gamma",
            "gamma must be a whole number from 1 to 64 (draft tokens per round), got 0",
        ),
        (r#"{"prompt":"x","gamma":2.5}"#, "gamma", "got 2.5"),
        (
            r#"{"prompt":"x","gamma":"4"}"#,
            "gamma",
            "gamma must be a number, got the string \"4\"",
        ),
        (
            r#"{"prompt":"x","temprature":1}"#,
            "temprature",
            "unknown option \"temprature\"; the options are: prompt, method",
        ),
        (
            r#"{"prompt":""}"#,
            "prompt",
            "prompt must be at least one character",
        ),
        (r#"{}"#, "prompt", "prompt is required"),
        (
            "[1]",
            "options",
            "options must be an object such as { prompt }, got an array",
        ),
        (
            r#"{"prompt":"x","method":"beam"}"#,
            "method",
            "method must be one of autoregressive, speculative",
        ),
        (
            r#"{"prompt":"x","method":"otm"}"#,
            "method",
            "the optimal selection is method \"spectr\" with selection \"race\"",
        ),
        (
            r#"{"prompt":"x","method":"spectr","selection":"otm"}"#,
            "selection",
            "selection must be \"kseq\"",
        ),
        (
            r#"{"prompt":"x","method":"multiround","selection":"race"}"#,
            "selection",
            "does not apply to method \"multiround\"",
        ),
        (
            r#"{"prompt":"x","method":"mentored"}"#,
            "kl",
            "kl is required",
        ),
        (
            r#"{"prompt":"x","drafts":3}"#,
            "drafts",
            "drafts does not apply to method \"speculative\"",
        ),
        (
            r#"{"prompt":"x","method":"autoregressive","gamma":3}"#,
            "gamma",
            "does not apply",
        ),
        (r#"{"prompt":"x","kl":0.1}"#, "kl", "does not apply"),
        (
            r#"{"prompt":"x","method":"spectr","dynamicGamma":true}"#,
            "dynamicGamma",
            "does not apply",
        ),
        (
            r#"{"prompt":"x","method":"mentored","kl":0,"bug":"shared-uniform"}"#,
            "bug",
            "does not apply",
        ),
        (
            r#"{"prompt":"x","bug":"typo"}"#,
            "bug",
            "bug must be one of resample-from-target",
        ),
        (
            r#"{"prompt":"x","method":"spectr","tree":[2,0]}"#,
            "tree[1]",
            "got 0",
        ),
        (
            r#"{"prompt":"x","method":"spectr","tree":[2,"a"]}"#,
            "tree[1]",
            "tree[1] must be a number, got the string \"a\"",
        ),
        (
            r#"{"prompt":"x","method":"spectr","tree":[]}"#,
            "tree",
            "got 0 depths",
        ),
        (
            r#"{"prompt":"x","method":"spectr","tree":[32,32,2]}"#,
            "tree",
            "2048 leaves",
        ),
        (
            r#"{"prompt":"x","method":"spectr","tree":[2,2],"gamma":3}"#,
            "gamma",
            "the depth of tree [2, 2] (2)",
        ),
        (
            r#"{"prompt":"x","method":"spectr","tree":[2,2],"drafts":3}"#,
            "drafts",
            "leaves of tree [2, 2] (4)",
        ),
        (
            r#"{"prompt":"x","method":"spectr","drafts":64,"gamma":17}"#,
            "drafts",
            "64 × 17 = 1088",
        ),
        (
            r#"{"prompt":"x","temperature":-1}"#,
            "temperature",
            "got -1",
        ),
        (r#"{"prompt":"x","topK":0}"#, "topK", "got 0"),
        (r#"{"prompt":"x","topP":0}"#, "topP", "(0, 1]"),
        (
            r#"{"prompt":"x","seed":9007199254740992}"#,
            "seed",
            "got 9007199254740992",
        ),
        (
            r#"{"prompt":"x","maxTokens":65537}"#,
            "maxTokens",
            "from 1 to 65536",
        ),
        (
            r#"{"prompt":"x","stop":[""]}"#,
            "stop[0]",
            "an empty string",
        ),
        (
            r#"{"prompt":"x","stop":"x"}"#,
            "stop",
            "an array of strings",
        ),
        (
            r#"{"prompt":"x","recordDistributions":1}"#,
            "recordDistributions",
            "true or false",
        ),
    ];
    for (text, want_field, want_message) in cases {
        let (got_field, message) = field(text);
        assert_eq!(got_field, want_field, "{text}: {message}");
        assert!(message.contains(want_message), "{text}: {message}");
    }
}

fn tokens(text: &str, vocab: usize) -> Result<ResolvedTokens, OptionError> {
    let raw: Raw = serde_json::from_str(text).expect("test JSON");
    DecodeOptions::from_raw_tokens(raw)?.resolve_tokens(vocab)
}

#[test]
fn decode_takes_token_ids_for_the_prompt_and_the_stop_list() {
    let r = tokens(r#"{"prompt":[3,0,4],"stop":[1,4],"method":"spectr"}"#, 5).unwrap();
    assert_eq!(r.prompt, vec![3, 0, 4]);
    assert_eq!(r.config.stop_tokens(), vec![1, 4]);
    assert!(r.config.stop_strings().is_empty());
    assert_eq!(r.config.method().name(), "spectr");
    // Every other option is read and checked as for text.
    let e = tokens(r#"{"prompt":[1],"topK":0}"#, 5).unwrap_err();
    assert_eq!(e.field, "topK");
    for (text, field, needle) in [
        (
            r#"{"prompt":[1,5]}"#,
            "prompt[1]",
            "a whole number from 0 to 4 (a token id of the models' vocabulary of 5), got 5",
        ),
        (r#"{"prompt":[-1]}"#, "prompt[0]", "got -1"),
        (r#"{"prompt":[0.5]}"#, "prompt[0]", "got 0.5"),
        (r#"{"prompt":[]}"#, "prompt", "at least one token id"),
        (
            r#"{"prompt":"To be"}"#,
            "prompt",
            "prompt must be an array of token ids, got the string",
        ),
        (r#"{"prompt":[1,"2"]}"#, "prompt[1]", "must be a number"),
        (r#"{}"#, "prompt", "give the token ids to continue"),
        (
            r#"{"prompt":[1],"stop":["a"]}"#,
            "stop[0]",
            "must be a number",
        ),
        (r#"{"prompt":[1],"stop":[7]}"#, "stop[0]", "got 7"),
        (
            r#"{"prompt":[1],"stop":2}"#,
            "stop",
            "an array of stop token ids",
        ),
    ] {
        let e = tokens(text, 5).expect_err(text);
        assert_eq!(e.field, field, "{text}: {e}");
        assert!(e.to_string().contains(needle), "{text}: {e}");
    }
    let many: Vec<String> = (0..=MAX_STOP_STRINGS).map(|_| "0".to_owned()).collect();
    let e = tokens(
        &format!(r#"{{"prompt":[1],"stop":[{}]}}"#, many.join(",")),
        5,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "stop must be at most 64 stop tokens, got 65 tokens"
    );
    // The text surfaces keep text: token ids given to them in Rust are refused.
    let o = DecodeOptions {
        prompt: Some(Prompt::Tokens(vec![1.0])),
        ..DecodeOptions::default()
    };
    assert!(
        o.resolve()
            .unwrap_err()
            .to_string()
            .contains("token ids are for decode()")
    );
    let o = DecodeOptions {
        prompt: Some("x".into()),
        stop: Some(Stop::Tokens(vec![1.0])),
        ..DecodeOptions::default()
    };
    assert_eq!(o.resolve().unwrap_err().field, "stop");
}

#[test]
fn null_means_not_given_and_negative_zero_is_zero() {
    let r = json(r#"{"prompt":"x","gamma":null,"seed":null,"stop":null}"#).unwrap();
    assert_eq!(r.config.seed(), 0);
    let r = json(r#"{"prompt":"x","temperature":-0.0}"#).unwrap();
    assert_eq!(r.config.sampling().temperature.to_bits(), 0.0f64.to_bits());
}

#[test]
fn trees_and_dynamic_gamma_build() {
    let r = json(r#"{"prompt":"x","method":"spectr","tree":[2,2,1]}"#).unwrap();
    assert_eq!(
        *r.config.method(),
        Method::SpecTr {
            drafts: DraftShape::Tree {
                k: 4,
                branching: vec![2, 2, 1]
            },
            selection: Selection::KSeq,
        }
    );
    let r = json(r#"{"prompt":"x","dynamicGamma":true}"#).unwrap();
    assert!(matches!(
        r.config.method(),
        Method::Speculative {
            policy: GammaPolicy::Heuristic { .. },
            ..
        }
    ));
}

#[test]
fn the_names_are_the_serialised_fields() {
    let all = DecodeOptions {
        prompt: Some(String::new().into()),
        method: Some(String::new()),
        selection: Some(String::new()),
        gamma: Some(0.0),
        drafts: Some(0.0),
        tree: Some(vec![]),
        dynamic_gamma: Some(false),
        parallel_draft: Some(false),
        kl: Some(0.0),
        epsilon: Some(0.0),
        delta: Some(0.0),
        ngram: Some(0.0),
        temperature: Some(0.0),
        top_k: Some(0.0),
        top_p: Some(0.0),
        seed: Some(0.0),
        max_tokens: Some(0.0),
        stop: Some(Vec::<String>::new().into()),
        record_distributions: Some(false),
        bug: Some(String::new()),
    };
    let value = serde_json::to_value(&all).unwrap();
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut names = DECODE_OPTION_NAMES.to_vec();
    let mut sorted = keys.clone();
    names.sort_unstable();
    sorted.sort_unstable();
    assert_eq!(sorted, names);
}

/// Where a property test's case count comes from: `SPECULA_PROPTEST_CASES` for the
/// on-demand long run (BENCHMARKS.md), 10,000 in CI.
pub(crate) fn cases() -> u32 {
    std::env::var("SPECULA_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-3i64..80).prop_map(|n| n as f64),
        prop::num::f64::ANY,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-0.0),
        Just(9_007_199_254_740_992.0),
        (0u32..2000).prop_map(|n| f64::from(n) / 7.0),
    ]
}

fn leaf() -> impl Strategy<Value = Raw> {
    prop_oneof![
        Just(Raw::Null),
        any::<bool>().prop_map(Raw::Bool),
        number().prop_map(Raw::Number),
        prop_oneof![
            Just("speculative".to_owned()),
            Just("spectr".to_owned()),
            Just("mentored".to_owned()),
            Just("typical".to_owned()),
            Just("lookup".to_owned()),
            Just("race".to_owned()),
            Just("shared-uniform".to_owned()),
            ".{0,6}"
        ]
        .prop_map(Raw::String),
        Just(Raw::Other("a function")),
        Just(Raw::BigInt("9007199254740993".into())),
    ]
}

fn value() -> impl Strategy<Value = Raw> {
    leaf().prop_recursive(2, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Raw::Array),
            prop::collection::vec(("[a-z]{1,3}", inner), 0..3).prop_map(Raw::Object),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(DECODE_OPTION_NAMES.to_vec()).prop_map(str::to_owned),
        1 => "[a-zA-Z_]{1,8}",
    ]
}

fn object() -> impl Strategy<Value = Raw> {
    prop::collection::vec((key(), value()), 0..8).prop_map(|mut entries| {
        // Most cases carry a prompt, so that they get past it to the other options.
        entries.insert(0, ("prompt".into(), Raw::String("To be".into())));
        Raw::Object(entries)
    })
}

fn known_field(field: &str) -> bool {
    let base = field.split('[').next().unwrap_or(field);
    field == "options" || DECODE_OPTION_NAMES.contains(&base)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Any object: no panic; a refusal names an option given (or an unknown name given);
    /// an acceptance is a configuration the engine accepts, within every limit.
    #[test]
    fn any_options_resolve_or_name_their_field(raw in object()) {
        let given: Vec<String> = match &raw { Raw::Object(e) => e.iter().map(|(k, _)| k.clone()).collect(), _ => vec![] };
        match DecodeOptions::from_raw(raw).and_then(|o| o.resolve()) {
            Ok(r) => {
                prop_assert_eq!(r.config.clone().into_builder().build(), Ok(r.config.clone()));
                prop_assert!((1..=MAX_TOKENS).contains(&r.config.max_new_tokens()));
                prop_assert!(r.config.seed() <= MAX_SEED);
                let nodes = match r.config.method() {
                    Method::SpecTr { drafts, .. } | Method::MultiRound { drafts } => {
                        crate::config::node_count(&drafts.branching())
                    }
                    Method::Speculative { gamma, .. }
                    | Method::Mentored { gamma, .. }
                    | Method::Typical { gamma, .. }
                    | Method::Lookup { gamma, .. } => *gamma as u128,
                    Method::Autoregressive => 0,
                };
                prop_assert!(nodes <= MAX_ROUND_NODES as u128);
            }
            Err(e) => {
                let base = e.field.split('[').next().unwrap_or(&e.field).to_owned();
                prop_assert!(
                    known_field(&e.field) && (base == "options" || base == "prompt" || base == "kl" || given.contains(&base))
                        || (e.problem == Problem::Unknown && given.contains(&e.field)),
                    "{e:?}"
                );
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }
}
