//! `generate`, `sample`, `bench` and `train` with the bundled models: output shape and
//! the one-line errors for bad flags.

use std::process::{Command, Output};

use serde_json::Value;

fn specula(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Fails with exit status 2 and exactly one `error: …` line containing `needle`.
fn assert_error(args: &[&str], needle: &str) {
    let out = specula(args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{args:?}: expected one line, got {stderr:?}"
    );
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{args:?}: {stderr:?} lacks {needle:?}"
    );
    assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
}

/// The run `specula generate --prompt PROMPT --temperature 0 --max-tokens N` makes, done
/// here in-process through the engine with the bundled pair on the CPU, for its trace.
fn engine_run(prompt: &str, max_new_tokens: usize) -> specula_engine::Generation {
    use specula_engine::{DecodeConfig, Decoder, GammaPolicy, Method, SamplingConfig, generate};
    use specula_host::{HostLm, HostPass};
    use specula_model::{ModelRole, bundled};
    let _ = specula_model::set_cpu_threads(1);
    let build = |role| {
        let bundle = bundled::bundle(role).unwrap();
        let mut lm = HostLm::from_pass(HostPass::from_bundle(&bundle).unwrap());
        lm.pass_mut().set_threads(1).unwrap();
        (bundle, lm)
    };
    let (_, mut draft) = build(ModelRole::Draft);
    let (bundle, mut target) = build(ModelRole::Target);
    let prompt = bundle.meta.tokenizer.encode(prompt).unwrap();
    let config = DecodeConfig::builder(Method::Speculative {
        gamma: 4,
        policy: GammaPolicy::Fixed,
    })
    .sampling(SamplingConfig::greedy())
    .max_new_tokens(max_new_tokens)
    .seed(0)
    .build()
    .unwrap();
    let mut decoder = Decoder::new(config, prompt).unwrap();
    generate(&mut decoder, &mut draft, &mut target).unwrap()
}

fn generate<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["generate", "--prompt", "ROMEO:"];
    args.extend_from_slice(extra);
    args
}

#[test]
fn bad_generate_flags_are_refused_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["--method", "beam"], "method must be one of"),
        (&["--gamma", "0"], "--gamma"),
        (&["--gamma", "x"], "--gamma"),
        (
            &["--method", "mentored"],
            "--kl is required: method \"mentored\" needs a KL budget",
        ),
        (&["--method", "mentored", "--kl", "-1"], "--kl"),
        (&["--method", "mentored", "--kl", "NaN"], "--kl"),
        (&["--method", "spectr", "--tree", "2,0"], "--tree"),
        (
            &["--method", "spectr", "--tree", "2,2", "--drafts", "3"],
            "--drafts must be the number of leaves of tree [2, 2] (4), or left out, got 3",
        ),
        (
            &["--method", "spectr", "--tree", "2,2", "--gamma", "3"],
            "--gamma must be the depth of tree [2, 2] (2), or left out, got 3",
        ),
        (
            &["--method", "spectr", "--drafts", "1024", "--gamma", "64"],
            "--drafts must be at most 1024 draft nodes per round with gamma (drafts × gamma), got 1024 × 64 = 65536",
        ),
        (
            &["--method", "multiround", "--tree", "32,32"],
            "--tree must be a tree of at most 1024 draft nodes per round, got [32, 32] with 1056 nodes",
        ),
        (
            &["--method", "spectr", "--selection", "race", "--tree", "2,0"],
            "--tree",
        ),
        (
            &["--method", "spectr", "--selection", "optimal"],
            "--selection",
        ),
        (&["--selection", "race"], "--selection"),
        (&["--temperature", "-1"], "--temperature"),
        (&["--top-k", "0"], "--top-k"),
        (&["--top-p", "0"], "--top-p"),
        (&["--top-p", "1.5"], "--top-p"),
        (&["--seed", "-3"], "--seed"),
        (&["--max-tokens", "0"], "--max-tokens"),
        (&["--max-tokens", "65537"], "--max-tokens"),
        (&["--backend", "tpu"], "--backend"),
        (&["--backend", "wgpu"], "--features wgpu"),
        (&["--models", "/nonexistent"], "--models"),
    ];
    for (extra, needle) in cases {
        assert_error(&generate(extra), needle);
    }
    assert_error(
        &["generate", "--prompt", ""],
        "--prompt must be at least one character to continue, got an empty string",
    );
    assert_error(&["generate", "--prompt", "ROMEO€"], "'€'");
    assert_error(&["sample", "--prompt", "A", "--samples", "0"], "--samples");
    assert_error(
        &["sample", "--prompt", "A", "--max-tokens", "x"],
        "--max-tokens",
    );
    assert_error(&["bench", "--gammas", "1,,2"], "--gammas");
    assert_error(&["bench", "--kls", "-0.5"], "--kls");
    assert_error(&["train", "--role", "critic"], "--role");
    assert_error(
        &["train", "--role", "draft", "--corpus", "/nonexistent"],
        "fetch-corpus",
    );
    let impostor = std::env::temp_dir().join(format!("not-shakespeare-{}", std::process::id()));
    std::fs::write(&impostor, "To be, or not to be.\n").unwrap();
    assert_error(
        &[
            "train",
            "--role",
            "draft",
            "--corpus",
            impostor.to_str().unwrap(),
        ],
        "is not Tiny Shakespeare (sha256",
    );
    let _ = std::fs::remove_file(&impostor);
    assert_error(
        &["train", "--role", "draft", "--resume", "--lr", "0.1"],
        "--lr cannot change",
    );
    assert_error(
        &[
            "train",
            "--role",
            "draft",
            "--resume",
            "--init-from",
            "bundled",
        ],
        "--init-from starts a new run",
    );
    let distill = ["train", "--role", "draft", "--distill-from", "bundled"];
    assert_error(
        &[&distill[..], &["--distill-weight", "1.5"]].concat(),
        "--distill-weight",
    );
    assert_error(
        &[&distill[..], &["--distill-stride", "0"]].concat(),
        "--distill-stride",
    );
    assert_error(
        &["train", "--role", "draft", "--distill-weight", "0.5"],
        "--distill-weight needs --distill-from",
    );
    assert_error(
        &["train", "--role", "draft", "--distill-stride", "64"],
        "--distill-stride needs --distill-from",
    );
}

#[test]
fn generate_json_reports_text_tokens_and_vllm_metrics() {
    let out = specula(&generate(&[
        "--temperature",
        "0",
        "--max-tokens",
        "24",
        "--json",
    ]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tokens = json["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 24);
    assert_eq!(json["text"].as_str().unwrap().chars().count(), 24);
    // Every figure against the engine's own trace of the same run (the bundled pair,
    // greedy speculative decoding with the CLI's defaults: gamma 4, seed 0), with the
    // figures derived here from the rounds.
    let run = engine_run("ROMEO:", 24);
    let tokens: Vec<u64> = tokens.iter().map(|t| t.as_u64().unwrap()).collect();
    let traced: Vec<u64> = run.tokens.iter().map(|&t| u64::from(t)).collect();
    assert_eq!(tokens, traced, "the CLI's tokens are the engine's");
    let rounds = run.rounds.len() as u64;
    let drafted: u64 = run.rounds.iter().map(|r| r.drafts.len() as u64).sum();
    let accepted: u64 = run.rounds.iter().map(|r| r.counts.accepted as u64).sum();
    let draft_calls: u64 = run.rounds.iter().map(|r| r.draft_calls as u64).sum();
    let positions = run.rounds.iter().map(|r| r.branching.len()).max().unwrap();
    let at = |i: usize, f: &dyn Fn(&specula_engine::RoundTrace) -> usize| {
        run.rounds.iter().filter(|r| f(r) > i).count() as u64
    };
    let accepted_per_pos: Vec<u64> = (0..positions)
        .map(|i| at(i, &|r| r.counts.accepted))
        .collect();
    let drafted_per_pos: Vec<u64> = (0..positions)
        .map(|i| at(i, &|r| r.branching.len()))
        .collect();
    let mut histogram = vec![0_u64; positions + 1];
    for r in &run.rounds {
        histogram[r.counts.accepted] += 1;
    }
    while histogram.last() == Some(&0) {
        histogram.pop();
    }
    let m = &json["metrics"];
    let num = |key: &str| {
        m[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} missing in {m}"))
    };
    let list = |key: &str| -> Vec<Value> { m[key].as_array().unwrap().clone() };
    assert_eq!(m["numGeneratedTokens"], 24);
    assert_eq!(m["numDrafts"], rounds);
    assert_eq!(m["numTargetCalls"], rounds);
    assert_eq!(m["numDraftCalls"], draft_calls);
    assert_eq!(m["numDraftTokens"], drafted);
    assert_eq!(m["numAcceptedTokens"], accepted);
    assert_eq!(
        list("numAcceptedTokensPerPos"),
        accepted_per_pos
            .iter()
            .map(|&n| Value::from(n))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        list("acceptedLengthHistogram"),
        histogram
            .iter()
            .map(|&n| Value::from(n))
            .collect::<Vec<_>>()
    );
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12;
    assert!(close(
        num("draftAcceptanceRate"),
        accepted as f64 / drafted as f64
    ));
    assert!(close(
        num("meanAcceptanceLength"),
        1.0 + accepted as f64 / rounds as f64
    ));
    assert!(close(num("blockEfficiency"), 24.0 / rounds as f64));
    let per_position: Vec<f64> = list("perPositionAcceptanceRate")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(per_position.len(), positions);
    for (i, rate) in per_position.iter().enumerate() {
        let expected = accepted_per_pos[i] as f64 / drafted_per_pos[i] as f64;
        assert!(
            close(*rate, expected),
            "position {}: {rate} vs {expected}",
            i + 1
        );
    }
    // Greedy speculative decoding reproduces greedy autoregressive decoding.
    let ar = specula(&generate(&[
        "--method",
        "autoregressive",
        "--temperature",
        "0",
        "--max-tokens",
        "24",
        "--json",
    ]));
    let ar: Value = serde_json::from_slice(&ar.stdout).unwrap();
    assert_eq!(ar["tokens"], json["tokens"]);
}

/// A flag the method does not use is refused, naming it (with `--json`, as the object
/// npm's SpeculaError carries); each method with its own flags decodes the same greedy
/// text.
#[test]
fn flags_a_method_does_not_use_are_refused_naming_them() {
    // (method, its trace name, its own flags, a flag it does not use and that flag's
    // option name). The rule is the engine's, as for npm generate() and the page.
    type Case<'a> = (&'a str, &'a str, &'a [&'a str], &'a [&'a str], &'a str);
    let cases: &[Case] = &[
        (
            "autoregressive",
            "autoregressive",
            &[],
            &["--gamma", "3"],
            "gamma",
        ),
        (
            "speculative",
            "speculative",
            &["--gamma", "3"],
            &["--tree", "2,2,1"],
            "tree",
        ),
        (
            "spectr",
            "spectr",
            &["--tree", "2,2,1"],
            &["--kl", "0.1"],
            "kl",
        ),
        (
            "multiround",
            "multiround",
            &["--tree", "2,2,1"],
            &["--dynamic-gamma"],
            "dynamicGamma",
        ),
        (
            "spectr",
            "spectr",
            &["--selection", "race", "--tree", "2,2,1"],
            &["--kl", "0.1"],
            "kl",
        ),
        (
            "mentored",
            "mentored",
            &["--gamma", "3", "--kl", "0.1"],
            &["--drafts", "2"],
            "drafts",
        ),
    ];
    let shared = ["--temperature", "0", "--max-tokens", "12", "--json"];
    let mut texts = Vec::new();
    for (method, name, own, unused, field) in cases {
        let args = [&["--method", method][..], own, &shared].concat();
        let refused = specula(&generate(&[&args[..], unused].concat()));
        assert_eq!(refused.status.code(), Some(2), "{method}");
        assert!(refused.stdout.is_empty(), "{method}");
        let error: Value = serde_json::from_slice(&refused.stderr).expect("a JSON error");
        assert_eq!(error["code"], "invalid_option", "{method}: {error}");
        assert_eq!(error["field"], *field, "{method}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "{} does not apply to method \"{method}\"",
                unused[0]
            )),
            "{method}: {message}"
        );
        let out = specula(&generate(&args));
        let stderr = text(&out.stderr);
        assert!(
            out.status.success() && stderr.is_empty(),
            "{method}: {stderr}"
        );
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["method"], *name);
        if *method != "autoregressive" {
            assert!(
                json["metrics"]["numDrafts"].as_u64().unwrap() > 0,
                "{method}"
            );
        }
        texts.push(json["text"].as_str().unwrap().to_owned());
    }
    // Greedy decoding is the same text for every method.
    assert!(texts.iter().all(|t| *t == texts[0]), "{texts:?}");
    // Without --json the refusal is one `error:` line naming the flag.
    let out = specula(&generate(&["--method", "speculative", "--drafts", "2"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with("error: --drafts does not apply to method \"speculative\""),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn generate_streams_text_then_metrics() {
    let out = specula(&generate(&[
        "--method",
        "spectr",
        "--tree",
        "2,2,1",
        "--max-tokens",
        "16",
        "--seed",
        "3",
    ]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("ROMEO:"));
    assert!(
        stdout.contains("--- spectr (tree 2,2,1, kseq): ") && stdout.contains("block efficiency")
    );
}

/// The settings `sample` and `generate` share in the tests below.
const MENTORED: [&str; 6] = ["--prompt", "JULIET:", "--method", "mentored", "--kl", "0.2"];

/// `sample --seed S`'s lines for [`MENTORED`].
fn mentored_samples(seed: &str) -> Vec<Value> {
    let rest = ["--max-tokens", "5", "--samples", "4", "--seed", seed];
    let out = specula(&[&["sample"][..], &MENTORED, &rest].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn sample_writes_one_json_line_per_sample() {
    let lines = mentored_samples("9");
    assert_eq!(lines.len(), 4);
    for line in &lines {
        assert_eq!(line["tokens"].as_array().unwrap().len(), 5);
        assert_eq!(line["text"].as_str().unwrap().chars().count(), 5);
    }
    // Every line's seed reproduces it through `generate`.
    let seed = lines[2]["seed"].as_u64().unwrap().to_string();
    let rest = ["--max-tokens", "5", "--seed", &seed, "--json"];
    let out = specula(&[&["generate"][..], &MENTORED, &rest].concat());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["tokens"], lines[2]["tokens"]);
    // Nearby --seed values give samples of their own, not shifted copies.
    let seeds = |lines: &[Value]| -> Vec<u64> {
        lines.iter().map(|l| l["seed"].as_u64().unwrap()).collect()
    };
    let (nine, ten) = (seeds(&lines), seeds(&mentored_samples("10")));
    assert!(nine.iter().all(|s| !ten.contains(s)), "{nine:?} {ten:?}");
    assert_eq!(seeds(&mentored_samples("9")), nine);
}

/// Prompt lookup with the bundled target: proposals copied from a prompt that repeats
/// itself are verified (some accepted), no draft call is made, and greedy decoding gives
/// autoregressive decoding's text; typical acceptance at temperature 0 does too.
#[test]
fn lookup_drafts_from_the_context_without_a_draft_model() {
    let prompt = "ROMEO:\nAy.\nROMEO:\nAy.\nRO";
    let run = |method: &[&str]| -> Value {
        let mut args = vec![
            "generate",
            "--prompt",
            prompt,
            "--max-tokens",
            "40",
            "--temperature",
            "0",
            "--json",
        ];
        args.extend_from_slice(method);
        let out = specula(&args);
        assert!(out.status.success(), "{method:?}: {}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("one JSON object")
    };
    let lookup = run(&["--method", "lookup", "--ngram", "3", "--gamma", "4"]);
    let m = &lookup["metrics"];
    assert_eq!(m["numDraftCalls"], 0, "{m}");
    assert!(m["numDraftTokens"].as_u64() > Some(0), "{m}");
    assert!(m["numAcceptedTokens"].as_u64() > Some(0), "{m}");
    let reference = run(&["--method", "autoregressive"]);
    assert_eq!(lookup["text"], reference["text"]);
    let typical = run(&["--method", "typical", "--epsilon", "0.2", "--delta", "0.5"]);
    assert_eq!(typical["text"], reference["text"]);
}
