//! A session answered through `logits(tokens, count)` calls or whole requests gives the
//! engine's own `generate` tokens, and every refusal has its code.

use specula_engine::options::{DecodeOptions, Raw};
use specula_engine::synthetic::MarkovModel;
use specula_engine::{ApiError, Decoder, ErrorCode, Role, generate};

use super::Session;

fn raw(json: &str) -> Raw {
    serde_json::from_str(json).expect("test JSON")
}

/// The logits `model` gives for the last `count` positions of `tokens`: what a
/// JavaScript model's `logits(tokens, count)` returns.
fn logits(model: &MarkovModel, tokens: &[u32], count: usize) -> Vec<f32> {
    (tokens.len() - count + 1..=tokens.len())
        .flat_map(|end| model.logits(&tokens[..end]).expect("a context").to_vec())
        .collect()
}

/// Runs `options` to the end, answering by calls or by whole requests.
fn run(
    options: &str,
    draft: &MarkovModel,
    target: &MarkovModel,
    by_calls: bool,
) -> Result<Vec<u32>, ApiError> {
    let mut session = Session::new(raw(options), target.vocab())?;
    let mut rounds = Vec::new();
    while let Some(pending) = session.next_request()? {
        let model = match pending.role {
            Role::Draft => draft,
            Role::Target => target,
        };
        let round = if by_calls {
            let answers: Vec<f32> = pending
                .calls
                .calls
                .iter()
                .flat_map(|c| {
                    logits(
                        model,
                        &pending.request.sequences[c.sequence][..c.len],
                        c.count,
                    )
                })
                .collect();
            session.supply_calls(&answers)?
        } else {
            let rows = pending
                .request
                .prefixes()
                .flat_map(|p| {
                    model
                        .logits(p.expect("a prefix"))
                        .expect("a context")
                        .to_vec()
                })
                .collect();
            session.supply_queries(rows)?
        };
        rounds.extend(round);
    }
    let summary = session.summary(false);
    let emitted: Vec<u32> = rounds.iter().flat_map(|r| r.tokens.clone()).collect();
    assert_eq!(emitted, summary.tokens);
    assert_eq!(summary.metrics.rounds as usize, rounds.len());
    assert!(summary.finish.is_some());
    Ok(summary.tokens)
}

/// The engine's own synchronous driver on the same options.
fn reference(options: &str, draft: &mut MarkovModel, target: &mut MarkovModel) -> Vec<u32> {
    let resolved = DecodeOptions::from_raw_tokens(raw(options))
        .and_then(|o| o.resolve_tokens(target.vocab()))
        .expect("options");
    let mut decoder = Decoder::new(resolved.config, resolved.prompt).expect("decoder");
    generate(&mut decoder, draft, target).expect("runs").tokens
}

#[test]
fn calls_and_requests_give_the_engines_tokens_for_every_method() {
    let mut target = MarkovModel::random(6, 2, 3, 2.0).unwrap();
    let mut draft = target.perturbed(4, 1.0).unwrap();
    for method in [
        r#""method":"autoregressive""#,
        r#""method":"speculative","gamma":3"#,
        r#""method":"spectr","drafts":3,"gamma":2"#,
        r#""method":"spectr","selection":"race","tree":[2,2,1]"#,
        r#""method":"multiround","tree":[3,1]"#,
        r#""method":"mentored","kl":0.1"#,
    ] {
        let options = format!(r#"{{"prompt":[1,2],{method},"seed":5,"maxTokens":24}}"#);
        let want = reference(&options, &mut draft, &mut target);
        assert_eq!(want.len(), 24, "{method}");
        for by_calls in [true, false] {
            let got = run(&options, &draft, &target, by_calls).expect(method);
            assert_eq!(got, want, "{method}, by calls: {by_calls}");
        }
    }
}

#[test]
fn stop_tokens_end_the_run() {
    let target = MarkovModel::random(4, 1, 9, 1.0).unwrap();
    let draft = target.perturbed(2, 1.0).unwrap();
    let options = r#"{"prompt":[0],"stop":[3],"maxTokens":500,"seed":1}"#;
    let tokens = run(options, &draft, &target, true).unwrap();
    assert_eq!(tokens.last(), Some(&3));
    assert!(tokens[..tokens.len() - 1].iter().all(|&t| t != 3));
}

fn refusal(options: &str, vocab: usize) -> ApiError {
    Session::new(raw(options), vocab).expect_err(options)
}

#[test]
fn options_are_refused_with_their_field() {
    for (options, field, needle) in [
        (r#"{"prompt":[1,6]}"#, "prompt[1]", "from 0 to 5"),
        (r#"{"prompt":[]}"#, "prompt", "at least one token id"),
        (r#"{"prompt":"ab"}"#, "prompt", "an array of token ids"),
        (r#"{"prompt":[1,"a"]}"#, "prompt[1]", "a number"),
        (r#"{"prompt":[1.5]}"#, "prompt[0]", "got 1.5"),
        (r#"{}"#, "prompt", "prompt is required"),
        (r#"{"prompt":[1],"stop":["x"]}"#, "stop[0]", "a number"),
        (r#"{"prompt":[1],"stop":[-1]}"#, "stop[0]", "got -1"),
        (r#"{"prompt":[1],"gamma":0}"#, "gamma", "from 1 to 64"),
        (r#"{"prompt":[1],"draft":{}}"#, "draft", "unknown option"),
    ] {
        let e = refusal(options, 6);
        assert_eq!(e.code, ErrorCode::InvalidOption, "{options}");
        assert_eq!(e.field.as_deref(), Some(field), "{options}: {e}");
        assert!(e.message.contains(needle), "{options}: {e}");
    }
    assert_eq!(refusal(r#"{"prompt":[0]}"#, 0).code, ErrorCode::BadModel);
}

#[test]
fn bad_answers_are_the_models_fault() {
    let options = r#"{"prompt":[1],"gamma":2}"#;
    let mut session = Session::new(raw(options), 3).unwrap();
    let pending = session.next_request().unwrap().unwrap();
    assert_eq!(pending.role, Role::Draft);
    let e = session.supply_calls(&[0.0; 4]).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadModel);
    assert!(e.message.contains("the draft model"), "{e}");
    let e = session.supply_calls(&[0.0, f32::NAN, 0.0]).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadModel);
    assert!(
        e.message.contains("draft model returned invalid logits"),
        "{e}"
    );
    // The session still waits for the same request, and takes a good answer.
    assert_eq!(session.supply_calls(&[0.0, 1.0, 0.0]).unwrap(), None);
    let pending = session.next_request().unwrap().unwrap();
    assert_eq!(pending.role, Role::Draft);
    assert_eq!(session.committed_len(), 1);
}
