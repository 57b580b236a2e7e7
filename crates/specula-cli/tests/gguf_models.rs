//! `generate` and `sample` with GGUF models (`--target`/`--draft`): small synthetic Llama
//! files written to a scratch directory, so that the runs take well under a second each;
//! the refusals of files and flags the CLI cannot take; and, when the SmolLM2 fixtures
//! are present, one greedy continuation of the real model.

mod gguf_support;

use std::process::Command;

use gguf_support::*;
use serde_json::Value;
use specula_gguf::synthetic::{BASE_VOCAB, SyntheticLlama};

#[test]
fn greedy_drafting_methods_match_autoregressive_and_text_decodes_tokens() {
    let (_dir, target, draft, small) = models("greedy", 256);
    let tok = tokenizer(&target);
    let greedy = ["--temperature", "0", "--max-tokens", "24"];
    let reference = generate_json(
        &["--target", &target],
        &[&["--method", "autoregressive"][..], &greedy].concat(),
    );
    let expected = tokens(&reference);
    assert_eq!(expected.len(), 24, "{reference}");
    // A run of one repeated token would match a decoder that loses its place.
    let distinct: std::collections::BTreeSet<_> = expected.iter().collect();
    assert!(distinct.len() >= 4, "a degenerate reference: {expected:?}");
    assert_eq!(reference["text"], tok.decode(&expected).expect("decodes"));
    let with = |d: &str| {
        vec![
            "--target".to_owned(),
            target.clone(),
            "--draft".to_owned(),
            d.to_owned(),
        ]
    };
    let runs = [
        ("speculative", with(&draft)),
        ("speculative", with(&small)),
        ("spectr", with(&draft)),
        ("spectr", with(&small)),
        ("lookup", vec!["--target".to_owned(), target.clone()]),
    ];
    for (method, models) in &runs {
        let models: Vec<&str> = models.iter().map(String::as_str).collect();
        let out = generate_json(&models, &[&["--method", method][..], &greedy].concat());
        assert_eq!(out["method"], *method, "{out}");
        let got = tokens(&out);
        assert_eq!(
            got, expected,
            "{method} {models:?}: greedy decoding with a draft must give the target's own tokens"
        );
        assert_eq!(out["text"], tok.decode(&got).expect("decodes"), "{method}");
        let metrics = &out["metrics"];
        let drafted = metrics["numDraftTokens"].as_u64().expect("drafted");
        let accepted = metrics["numAcceptedTokens"].as_u64().expect("accepted");
        assert!(drafted > 0, "{method} drafted nothing: {out}");
        if *method == "speculative" && models.contains(&draft.as_str()) {
            // The quantized draft must take both paths, or the comparison proves less.
            assert!(
                0 < accepted && accepted < drafted,
                "the Q4_1 draft accepted {accepted} of {drafted}"
            );
        }
    }
}

#[test]
fn greedy_speculative_matches_autoregressive_across_a_sliding_window() {
    // A 32-position context: 48 new tokens slide the window (and drop the caches).
    let (_dir, target, draft, small) = models("slide", 32);
    let greedy = ["--temperature", "0", "--max-tokens", "48"];
    let ar = generate_json(
        &["--target", &target],
        &[&["--method", "autoregressive"][..], &greedy].concat(),
    );
    assert_eq!(tokens(&ar).len(), 48, "{ar}");
    for d in [&draft, &small] {
        let spec = generate_json(
            &["--target", &target, "--draft", d],
            &[&["--method", "speculative"][..], &greedy].concat(),
        );
        assert_eq!(tokens(&spec), tokens(&ar), "draft {d}");
        assert_eq!(spec["text"], ar["text"], "draft {d}");
    }
}

#[test]
fn sampling_is_reproducible_and_lines_carry_tokens_and_their_text() {
    let (_dir, target, draft) = pair("sample", 256);
    let tok = tokenizer(&target);
    let models = ["--target", target.as_str(), "--draft", draft.as_str()];
    let sample = |seed: &str| {
        let args = [
            &[
                "sample",
                "--prompt",
                PROMPT,
                "--samples",
                "4",
                "--max-tokens",
                "6",
            ][..],
            &models,
            &["--seed", seed],
        ]
        .concat();
        run_ok(&args)
    };
    let first = sample("7");
    assert_eq!(
        first,
        sample("7"),
        "the same seed must give the same samples"
    );
    assert_ne!(
        first,
        sample("8"),
        "another seed gave the same four samples"
    );
    let lines: Vec<Value> = first
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 4, "{first}");
    for line in &lines {
        let ids = tokens(line);
        assert_eq!(ids.len(), 6, "{line}");
        assert_eq!(line["text"], tok.decode(&ids).expect("decodes"), "{line}");
    }
    // A line's seed given to `generate` (with the same --max-tokens) repeats it.
    let seed = lines[0]["seed"].as_u64().expect("a seed").to_string();
    let again = generate_json(&models, &["--seed", &seed, "--max-tokens", "6"]);
    assert_eq!(tokens(&again), tokens(&lines[0]));
    assert_eq!(again["text"], lines[0]["text"]);
    // And `generate` itself repeats under one seed, at temperature 1.
    let a = generate_json(&models, &["--seed", "3", "--max-tokens", "12"]);
    let b = generate_json(&models, &["--seed", "3", "--max-tokens", "12"]);
    assert_eq!(tokens(&a), tokens(&b));
}

/// The streamed text is the `--json` text: a BPE token can end inside a character, and
/// the stream holds such a tail back until it completes; at the end of the run it must
/// still print what is left (as U+FFFD, like `--json`). The random models end on a cut
/// character for about a third of these seeds.
#[test]
fn streamed_text_is_the_json_text() {
    let dir = Scratch::new("stream");
    let target = dir.write("target.gguf", &target_model(256).build());
    for seed in 1..=12 {
        let seed = seed.to_string();
        let args = [
            "generate",
            "--prompt",
            PROMPT,
            "--target",
            &target,
            "--method",
            "lookup",
            "--seed",
            &seed,
            "--max-tokens",
            "12",
        ];
        let streamed = run_ok(&args);
        let json: Value = serde_json::from_str(&run_ok(&[&args[..], &["--json"]].concat()))
            .expect("one JSON object");
        let body = streamed
            .rfind("\n\n--- lookup:")
            .map_or(streamed.as_str(), |end| &streamed[..end]);
        let text = json["text"].as_str().expect("text");
        assert_eq!(body, format!("{PROMPT}{text}"), "--seed {seed}");
    }
}

/// `generate --json` refused as the user's mistake (status 2, nothing on stdout, one JSON
/// object on stderr) with the code `code`, as npm gives it, and a message that contains
/// every one of `needles`.
fn assert_refused_json(args: &[&str], code: &str, needles: &[&str]) {
    let out = run_within(args, REFUSAL_LIMIT);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
    assert!(out.stdout.is_empty(), "{args:?} wrote {}", out.stdout);
    let error: Value = serde_json::from_str(&out.stderr)
        .unwrap_or_else(|e| panic!("{args:?}: not one JSON error ({e}): {}", out.stderr));
    assert_eq!(error["code"], code, "{args:?}: {error}");
    let message = error["message"].as_str().expect("a message");
    for needle in needles {
        assert!(
            message.contains(needle),
            "{args:?}: {message} lacks {needle}"
        );
    }
}

fn generate_args<'a>(models: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "generate",
        "--prompt",
        PROMPT,
        "--max-tokens",
        "4",
        "--json",
    ];
    args.extend_from_slice(models);
    args
}

#[test]
fn files_and_pairs_the_cli_cannot_take_are_refused_naming_the_flag() {
    let (dir, target, draft) = pair("refusals", 256);
    // Each drafting method without a draft.
    for method in ["speculative", "spectr", "multiround", "typical"] {
        let args = [
            &generate_args(&["--target", &target])[..],
            &["--method", method],
        ]
        .concat();
        assert_refused_json(&args, "usage", &["--draft", method]);
    }
    // A draft whose vocabulary has 8 more tokens.
    let other = dir.write(
        "other-vocab.gguf",
        &SyntheticLlama {
            vocab_size: BASE_VOCAB + 8,
            ..draft_model(256)
        }
        .build(),
    );
    // Model files that do not load or do not belong together: npm's bad_weights.
    assert_refused_json(
        &generate_args(&["--target", &target, "--draft", &other]),
        "bad_weights",
        &["--draft", "tokenizer"],
    );
    let not_gguf = dir.write("notes.gguf", b"this is not a GGUF file\n");
    let mut bytes = target_model(256).build();
    bytes.truncate(bytes.len() / 2);
    let truncated = dir.write("truncated.gguf", &bytes);
    let header_only = dir.write("header.gguf", &bytes[..20]);
    let empty = dir.write("empty.gguf", b"");
    let mamba = dir.write(
        "mamba.gguf",
        &SyntheticLlama {
            architecture: "mamba".to_owned(),
            ..target_model(256)
        }
        .build(),
    );
    let missing = arg(&dir.0.join("missing.gguf"));
    let fifo = arg(&dir.0.join("fifo.gguf"));
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {fifo}");
    let subdir = arg(&dir.0);
    // Each file, and a fragment of why it is refused.
    let bad = [
        (&not_gguf, "not a readable GGUF file"),
        (&truncated, "not a readable GGUF file"),
        (&header_only, "not a readable GGUF file"),
        (&empty, "not a readable GGUF file"),
        (&mamba, "\"mamba\""),
        // The OS words the reason; the path alone must be named.
        (&missing, ""),
        // Opening a FIFO would wait for a writer: the run limit catches a hang.
        (&fifo, "not a regular file"),
        (&subdir, "not a regular file"),
    ];
    for (path, why) in bad {
        assert_refused_json(
            &generate_args(&["--target", path, "--method", "lookup"]),
            "bad_weights",
            &["--target", path, why],
        );
        assert_refused_json(
            &generate_args(&["--target", &target, "--draft", path]),
            "bad_weights",
            &["--draft", path, why],
        );
    }
    // Flags clap refuses before anything runs: usage errors naming the flags involved.
    let clap = |args: &[&str], needles: &[&str]| {
        let out = run_within(args, REFUSAL_LIMIT);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}");
        for needle in needles {
            assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
        }
    };
    clap(
        &["generate", "--prompt", PROMPT, "--draft", &draft],
        &["--target"],
    );
    clap(
        &generate_args(&["--models", &subdir, "--target", &target]),
        &["--models", "--target"],
    );
}

/// SmolLM2-135M, when `scripts/smollm2-reference.sh` has fetched it; the same policy as
/// specula-model's tests/smollm2.rs: skipped with a note without the file, unless
/// `SPECULA_REQUIRE_REAL_MODELS` is set.
#[test]
fn smollm2_completes_the_capital_of_france() {
    let Some(gguf) = smollm2() else { return };
    // The Python reference's greedy continuation is " Paris.\n\nThe answer is".
    let prompt = "The capital of France is";
    let out = run_ok(&[
        "generate",
        "--target",
        &gguf,
        "--method",
        "lookup",
        "--prompt",
        prompt,
        "--temperature",
        "0",
        "--max-tokens",
        "8",
    ]);
    assert!(
        out.starts_with("The capital of France is Paris.\n\nThe answer is"),
        "{out:?}"
    );
    // A chat turn ends at the file's end token (<|im_end|>, id 2): the reference's
    // greedy answer is "The answer is 4." and then that token.
    let chat = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n";
    let out = run_ok(&[
        "generate",
        "--target",
        &gguf,
        "--method",
        "lookup",
        "--prompt",
        chat,
        "--temperature",
        "0",
        "--max-tokens",
        "40",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(json["text"], "The answer is 4.<|im_end|>", "{out}");
    assert_eq!(
        json["tokens"].as_array().and_then(|t| t.last()),
        Some(&2.into())
    );
}
