//! Hostile conditions for streaming commands: `sample` and `generate` end when their
//! reader goes away, and long generations slide the context window alike for every
//! method.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::{bin, run};
use serde_json::Value;

#[test]
fn sample_stops_when_its_reader_goes_away() {
    let mut child = bin()
        .args(["sample", "--prompt", "A", "--samples", "1000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("one line");
    assert!(first.starts_with("{\"tokens\""), "{first}");
    // The reader is gone (its end of the pipe dropped): the run must end by itself, long
    // before the million samples (hours) it was asked for. Two minutes is a bound on a
    // hang, not a timing: the fixed run stops at the next sample.
    let mut waited = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if waited >= 1200 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("sample still running two minutes after its reader went away");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    };
    assert!(status.success(), "{status}");
}

/// Reads one line of `args`' stdout, closes it, and waits for the run to end by itself:
/// long before what it was asked for (hours). Two minutes is a bound on a hang, not a
/// timing: the fixed run stops at its next round or decode.
fn stops_after_one_line(args: &[&str]) -> std::process::ExitStatus {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("one line");
    assert!(!first.is_empty(), "{args:?} wrote nothing");
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if start.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} still running two minutes after its reader went away");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn bench_stops_when_its_reader_goes_away() {
    // The first line is the forward-cost table's; the rows come only after every
    // decode, so the run must notice between decodes that no one reads it.
    let status = stops_after_one_line(&["bench", "--tokens", "200", "--repeat", "1000"]);
    assert!(status.success(), "{status}");
}

#[test]
fn generate_json_lines_stream_rounds_and_stop_when_the_reader_goes_away() {
    let status = stops_after_one_line(&[
        "generate",
        "--prompt",
        "A",
        "--max-tokens",
        "65536",
        "--json-lines",
    ]);
    assert!(status.success(), "{status}");
    // The rounds add up to the summary, the summary is --json's object.
    let flags = ["--prompt", "ROMEO:", "--max-tokens", "40", "--seed", "3"];
    let owned = |args: &[&str]| -> Vec<String> { args.iter().map(|s| (*s).to_owned()).collect() };
    let lines_out = run(
        &owned(&[&["generate", "--json-lines"][..], &flags].concat()),
        None,
    );
    assert!(lines_out.status.success());
    let lines: Vec<Value> = String::from_utf8_lossy(&lines_out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let (summary, rounds) = lines.split_last().expect("lines");
    assert!(rounds.len() > 1, "{lines:?}");
    let mut tokens = Vec::new();
    let mut text = String::new();
    for (i, round) in rounds.iter().enumerate() {
        assert_eq!(round["round"].as_u64(), Some(i as u64 + 1), "{round}");
        tokens.extend(round["tokens"].as_array().expect("tokens").iter().cloned());
        text.push_str(round["text"].as_str().expect("text"));
    }
    assert_eq!(summary["tokens"].as_array(), Some(&tokens));
    assert_eq!(summary["text"].as_str(), Some(text.as_str()));
    let json_out = run(
        &owned(&[&["generate", "--json"][..], &flags].concat()),
        None,
    );
    let json: Value = serde_json::from_slice(&json_out.stdout).expect("json");
    assert_eq!(json["tokens"], summary["tokens"]);
    assert_eq!(
        json["metrics"]["numDrafts"],
        summary["metrics"]["numDrafts"]
    );
}

#[test]
fn generate_stops_when_its_reader_goes_away() {
    let mut child = bin()
        .args(["generate", "--prompt", "A", "--max-tokens", "250"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut byte = [0_u8; 1];
    std::io::Read::read_exact(&mut stdout, &mut byte).expect("one byte");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{:?}", out.status);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `generate --temperature 0 --json` tokens.
fn greedy_tokens(prompt: &str, max_tokens: usize, method: &[&str]) -> Vec<u64> {
    let mut args: Vec<String> = [
        "generate",
        "--prompt",
        prompt,
        "--max-tokens",
        &max_tokens.to_string(),
        "--temperature",
        "0",
        "--json",
    ]
    .map(str::to_owned)
    .to_vec();
    args.extend(method.iter().map(|s| (*s).to_owned()));
    let out = run(&args, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{method:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    json["tokens"]
        .as_array()
        .expect("tokens")
        .iter()
        .map(|t| t.as_u64().expect("token"))
        .collect()
}

#[test]
fn long_generations_slide_the_window_alike_for_every_method() {
    // "ROMEO:" and 300 characters: the 256 positions fill after 250, and both models
    // go on from the last 128 characters.
    let reference = greedy_tokens("ROMEO:", 300, &["--method", "autoregressive"]);
    assert_eq!(reference.len(), 300);
    let methods: [&[&str]; 5] = [
        &["--method", "speculative", "--gamma", "5"],
        &["--method", "spectr", "--drafts", "3", "--gamma", "4"],
        &["--method", "multiround", "--tree", "2,2,1"],
        &[
            "--method",
            "spectr",
            "--selection",
            "race",
            "--drafts",
            "2",
            "--gamma",
            "3",
        ],
        &["--method", "mentored", "--kl", "0"],
    ];
    for method in methods {
        assert_eq!(
            greedy_tokens("ROMEO:", 300, method),
            reference,
            "{method:?}"
        );
    }
    // The policy itself: after the slide, the continuation is that of the last 128
    // characters read afresh.
    let text = |tokens: &[u64]| -> String {
        let json = run(
            &[
                "generate",
                "--prompt",
                "ROMEO:",
                "--max-tokens",
                "300",
                "--temperature",
                "0",
                "--json",
            ]
            .map(str::to_owned),
            None,
        );
        let value: Value = serde_json::from_slice(&json.stdout).expect("json");
        let all = value["text"].as_str().expect("text").to_owned();
        assert_eq!(all.chars().count(), tokens.len());
        all
    };
    let generated: Vec<char> = text(&reference).chars().collect();
    let context: String = "ROMEO:"
        .chars()
        .chain(generated[..250].iter().copied())
        .collect::<Vec<char>>()[128..]
        .iter()
        .collect();
    let fresh = greedy_tokens(&context, 50, &["--method", "autoregressive"]);
    assert_eq!(
        fresh,
        reference[250..],
        "the slide is not a fresh read of 128"
    );
}
