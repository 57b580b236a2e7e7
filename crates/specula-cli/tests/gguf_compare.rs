//! `sample --compare` with GGUF models: the lab's exact distribution over a BPE
//! vocabulary, at the first and the second position (rows only for the first tokens the
//! target can emit), its most likely tokens listed with the rest pooled, and the refusal
//! of a second position whose rows would not fit.
//!
//! These are wiring checks at a modest number of runs (a wrong position or a wrong row
//! gives p ≈ 0 at once); the exactness claims with their power live in specula-model's
//! tests/smollm2_exact.rs and specula-engine's tests/lab.rs.

mod gguf_support;

use gguf_support::*;
use serde_json::Value;

/// `sample --compare` over the pair with `extra` flags: the comparison object.
fn compare(models: &[&str], extra: &[&str]) -> Value {
    let args = [
        &["sample", "--prompt", PROMPT, "--compare"][..],
        models,
        extra,
    ]
    .concat();
    serde_json::from_str(&run_ok(&args)).expect("one JSON object")
}

fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// The comparison's own arithmetic: one entry per token, the top list most likely first
/// with the rest pooled, the counts summing to the runs.
fn check_shape(report: &Value, vocab: usize, samples: u64) {
    let expected = numbers(&report["expected"]);
    assert_eq!(expected.len(), vocab);
    assert!((expected.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    let counts = numbers(&report["counts"]);
    // Runs that ended at the end token before the position are reported, not counted.
    let counted = report["samples"].as_u64().expect("samples");
    assert_eq!(
        counted + report["unreached"].as_u64().expect("unreached"),
        samples
    );
    assert_eq!(counts.iter().sum::<f64>(), counted as f64);
    let samples = counted;
    assert_eq!(report["alphabet"], "");
    let top = report["top"].as_array().expect("top");
    assert_eq!(top.len(), 12);
    let probs: Vec<f64> = top
        .iter()
        .map(|t| t["expected"].as_f64().unwrap())
        .collect();
    assert!(probs.windows(2).all(|w| w[0] >= w[1]), "{probs:?}");
    for t in top {
        let id = t["token"].as_u64().unwrap() as usize;
        assert_eq!(t["expected"].as_f64(), Some(expected[id]));
        assert_eq!(t["count"].as_f64(), Some(counts[id]));
        assert!(t["text"].is_string());
    }
    let rest = &report["rest"];
    assert_eq!(rest["tokens"].as_u64(), Some((vocab - 12) as u64));
    let pooled = rest["expected"].as_f64().unwrap() + probs.iter().sum::<f64>();
    assert!((pooled - 1.0).abs() < 1e-9, "{pooled}");
    let counted = rest["count"].as_u64().unwrap()
        + top
            .iter()
            .map(|t| t["count"].as_u64().unwrap())
            .sum::<u64>();
    assert_eq!(counted, samples);
}

#[test]
fn the_lab_over_a_bpe_vocabulary_fits_the_target_at_both_positions() {
    let (_dir, target, draft) = pair("compare", 256);
    let vocab = tokenizer(&target).vocab_size();
    let models = ["--target", target.as_str(), "--draft", draft.as_str()];
    for (position, method) in [("1", "speculative"), ("2", "speculative"), ("2", "spectr")] {
        let flags = [
            "--position",
            position,
            "--method",
            method,
            "--max-tokens",
            "2",
            "--samples",
            "300",
            "--top-k",
            "6",
            "--seed",
            "3",
        ];
        let report = compare(&models, &flags);
        check_shape(&report, vocab, 300);
        assert_eq!(report["exact"], "target");
        let p = report["pValue"].as_f64().unwrap();
        assert!(p > 1e-4, "position {position} {method}: p = {p}");
        assert!(report["degreesOfFreedom"].as_u64().unwrap() >= 2);
        // With top-k 6 at most 6 tokens can come first; at the second position the
        // mixture spreads over more.
        let support = numbers(&report["expected"])
            .iter()
            .filter(|&&x| x > 0.0)
            .count();
        if position == "1" {
            assert!(support <= 6, "{support}");
        } else {
            assert!(support > 6, "{support}");
        }
    }
    // A planted bug's closed form over the BPE vocabulary, far from the target.
    let report = compare(
        &models,
        &[
            "--bug",
            "resample-from-target",
            "--max-tokens",
            "2",
            "--samples",
            "300",
            "--seed",
            "3",
            // Without a top-k, 300 runs over the 267 tokens leave no bin expecting 5.
            "--top-k",
            "6",
        ],
    );
    assert_eq!(report["exact"], "resample-from-target");
    assert!(report["pValue"].as_f64().unwrap() > 1e-4, "{report}");
}

#[test]
fn smollm2_position_2_needs_a_top_k_and_fits_with_one() {
    let Some(gguf) = smollm2() else { return };
    let models = ["--target", gguf.as_str(), "--draft", gguf.as_str()];
    let base = ["--position", "2", "--max-tokens", "2", "--seed", "1"];
    // 49,152 rows of 49,152 logits would not fit: refused before any run, naming the flag.
    let out = run(&[
        &[
            "sample",
            "--prompt",
            "The capital of France is",
            "--compare",
            "--samples",
            "10",
        ][..],
        &models,
        &base,
    ]
    .concat());
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("--top-k") && out.stderr.contains("49152"),
        "{}",
        out.stderr
    );
    // 40 runs at position 2 with top-k 4 after `prompt`: the comparison object.
    let top4 = |prompt: &str| -> Value {
        let flags = [
            "sample",
            "--prompt",
            prompt,
            "--compare",
            "--samples",
            "40",
            "--top-k",
            "4",
        ];
        let args = [&flags[..], &models, &base].concat();
        serde_json::from_str(&run_ok(&args)).expect("one JSON object")
    };
    let report = top4("The capital of France is");
    check_shape(&report, 49_152, 40);
    assert!(report["pValue"].as_f64().unwrap() > 1e-4, "{report}");
    assert_eq!(report["unreached"], 0);
    // After a finished answer the end token is likely first: those runs end at one token,
    // are reported as unreached, and the exact distribution is conditioned on the rest.
    let chat = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\nThe answer is 4.";
    let report = top4(chat);
    let unreached = report["unreached"].as_u64().unwrap();
    let counted = report["samples"].as_u64().unwrap();
    assert!(unreached > 0 && counted + unreached == 40, "{report}");
    let expected = numbers(&report["expected"]);
    assert!((expected.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    if let Some(p) = report["pValue"].as_f64() {
        assert!(p > 1e-4, "{report}");
    } else {
        assert!(report["noTest"].is_string(), "{report}");
    }
}
