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
