//! A session answered through `logits(tokens, count)` calls or whole requests gives the
//! engine's own `generate` tokens, and every refusal has its code.

use specula_engine::options::{DecodeOptions, Raw};
use specula_engine::synthetic::MarkovModel;
use specula_engine::{ApiError, Decoder, ErrorCode, Role, generate};

use super::{Next, Pending, Session};
use crate::report::DecodeRound;

mod parallel;

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

/// `model`'s answer to `pending`: its calls' answers end to end, or one row per query.
fn answer(model: &MarkovModel, pending: &Pending, by_calls: bool) -> Vec<f32> {
    if by_calls {
        return pending
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
    }
    pending
        .request
        .prefixes()
        .flat_map(|p| {
            model
                .logits(p.expect("a prefix"))
                .expect("a context")
                .to_vec()
        })
        .collect()
}

/// Answers `role`'s running request from `model`.
fn supply(
    session: &mut Session,
    role: Role,
    model: &MarkovModel,
    by_calls: bool,
) -> Result<Option<DecodeRound>, ApiError> {
    let answers = answer(model, session.running(role).expect("running"), by_calls);
    if by_calls {
        session.supply_calls(role, &answers)
    } else {
        session.supply_queries(role, answers)
    }
}

/// A finished run: its tokens and rounds, the most requests that ran at once, and how
/// many still ran when it ended (answers no longer needed).
struct Run {
    tokens: Vec<u32>,
    rounds: Vec<DecodeRound>,
    most_running: usize,
    left_running: usize,
}

/// Which requests run now, the draft's first.
fn running(session: &Session) -> Vec<Role> {
    [Role::Draft, Role::Target]
        .into_iter()
        .filter(|&r| session.running(r).is_some())
        .collect()
}

/// The order running requests are answered in: the models' timing.
trait Schedule {
    /// `role`'s request just started.
    fn started(&mut self, _role: Role) {}
    /// Which of the `running` requests is answered next.
    fn pick(&mut self, running: &[Role]) -> Role;
}

/// The draft's answer first when both run: decode() with synchronous models.
struct DraftFirst;

impl Schedule for DraftFirst {
    fn pick(&mut self, running: &[Role]) -> Role {
        running.first().copied().expect("a running request")
    }
}

/// Runs `options` to the end as decode() does: starts every request [`Session::start_next`]
/// hands out, then answers the running request `schedule` picks, until done. With
/// `refuse_first`, each answer comes after a refused one (too short; for the target, a
/// NaN too), whose error must name the model.
fn drive(
    options: &str,
    models: [&MarkovModel; 2],
    by_calls: bool,
    schedule: &mut impl Schedule,
    refuse_first: bool,
) -> Result<Run, ApiError> {
    let [draft, target] = models;
    let mut session = Session::new(raw(options), target.vocab())?;
    let mut rounds = Vec::new();
    let mut most_running = 0;
    'run: loop {
        loop {
            match session.start_next()? {
                Next::Done => break 'run,
                Next::Wait => break,
                Next::Start(role) => schedule.started(role),
            }
        }
        let running = running(&session);
        most_running = most_running.max(running.len());
        let role = schedule.pick(&running);
        let model = if role == Role::Draft { draft } else { target };
        if refuse_first {
            refuse(&mut session, role, model);
        }
        rounds.extend(supply(&mut session, role, model, by_calls)?);
    }
    let left_running = running(&session).len();
    let summary = session.summary(false);
    let emitted: Vec<u32> = rounds.iter().flat_map(|r| r.tokens.clone()).collect();
    assert_eq!(emitted, summary.tokens);
    assert_eq!(summary.metrics.rounds as usize, rounds.len());
    assert!(summary.finish.is_some());
    Ok(Run {
        tokens: summary.tokens,
        rounds,
        most_running,
        left_running,
    })
}

/// Answers `role`'s running request wrongly: refused, naming the model, and the request
/// still runs.
fn refuse(session: &mut Session, role: Role, model: &MarkovModel) {
    let good = answer(model, session.running(role).expect("running"), true);
    let e = session.supply_calls(role, &good[1..]).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadModel, "{e}");
    assert!(
        e.message.contains(&format!("the {role} model's answers")),
        "{e}"
    );
    // A stale draft answer is dropped unread, so only the target's rows are sure to be.
    if role == Role::Target {
        let mut nan = answer(model, session.running(role).expect("running"), false);
        nan[0] = f32::NAN;
        let e = session.supply_queries(role, nan).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadModel, "{e}");
        assert!(
            e.message.contains("target model returned invalid logits"),
            "{e}"
        );
    }
    assert!(session.running(role).is_some());
}

/// Runs `options` to the end, one model call at a time, answering by calls or by whole
/// requests.
fn run(
    options: &str,
    draft: &MarkovModel,
    target: &MarkovModel,
    by_calls: bool,
) -> Result<Vec<u32>, ApiError> {
    let run = drive(options, [draft, target], by_calls, &mut DraftFirst, false)?;
    assert_eq!(run.left_running, 0);
    Ok(run.tokens)
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
    assert_eq!(session.start_next().unwrap(), Next::Start(Role::Draft));
    assert_eq!(session.start_next().unwrap(), Next::Wait);
    let e = session.supply_calls(Role::Target, &[0.0; 3]).unwrap_err();
    assert_eq!(e.code, ErrorCode::Internal, "{e}");
    assert!(
        e.message.contains("the target model runs no request"),
        "{e}"
    );
    let e = session.supply_calls(Role::Draft, &[0.0; 4]).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadModel);
    assert!(e.message.contains("the draft model"), "{e}");
    let e = session
        .supply_calls(Role::Draft, &[0.0, f32::NAN, 0.0])
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::BadModel);
    assert!(
        e.message.contains("draft model returned invalid logits"),
        "{e}"
    );
    // The session still waits for the same request, and takes a good answer.
    assert!(
        session
            .supply_calls(Role::Draft, &[0.0, 1.0, 0.0])
            .unwrap()
            .is_none()
    );
    assert_eq!(session.start_next().unwrap(), Next::Start(Role::Draft));
    assert_eq!(session.committed_len(), 1);
}
