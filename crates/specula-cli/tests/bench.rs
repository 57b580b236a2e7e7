//! `specula bench` with the bundled models, run small: a row per method and setting, the
//! figures consistent with one another and with the theory they are quoted against, and
//! every acceptance figure reproducible from the fixed seeds (only times may differ).
//!
//! No check here depends on how fast anything ran: measured times only enter through the
//! relations that define the derived figures. How fast the draft is next to the target
//! (the cost ratio c) is what `specula bench` itself reports, not something a test can
//! hold a machine to.

use std::process::{Command, Output};

use serde_json::Value;

const TOKENS: u64 = 24;
/// The host pass's stages as the bench names them, in their order (written out here, not
/// read from the engine, so a renamed stage fails these tests).
const STAGES: [&str; 8] = [
    "embed",
    "norms",
    "qkv",
    "attention",
    "attnOut",
    "mlpIn",
    "mlpOut",
    "head",
];
const PROMPTS: u64 = 4;
const SMALL: [&str; 13] = [
    "bench", "--tokens", "24", "--repeat", "1", "--gammas", "1,3", "--drafts", "2", "--kls", "0.1",
    "--gamma", "3",
];

fn specula(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn bench_json() -> Value {
    let mut args = SMALL.to_vec();
    args.push("--json");
    serde_json::from_slice(&specula(&args).stdout).unwrap()
}

fn num(row: &Value, key: &str) -> f64 {
    row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {row}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn bench_reports_every_method_with_consistent_figures() {
    let report = bench_json();
    assert_eq!(
        report["prompts"].as_array().unwrap().len(),
        PROMPTS as usize
    );
    let rows = report["rows"].as_array().unwrap();
    let names = method_params(rows);
    assert_eq!(
        names,
        [
            ("autoregressive", "-"),
            ("speculative", "gamma=1"),
            ("speculative", "gamma=3"),
            ("spectr", "K=2 L=3 selection=kseq"),
            ("multiround", "K=4 L=3"),
            ("spectr", "K=2 L=3 selection=race"),
            ("mentored", "gamma=3 D=0.1"),
            ("typical", "gamma=3 eps=0.09 delta=0.3"),
            ("lookup", "gamma=3 n=3"),
        ]
    );
    let ar_rate = num(&rows[0], "tokensPerSecond");
    for (row, (method, _)) in rows.iter().zip(&names) {
        assert_eq!(row["tokens"].as_u64(), Some(PROMPTS * TOKENS), "{row}");
        let rate = num(row, "tokensPerSecond");
        assert!(close(
            rate,
            PROMPTS as f64 * TOKENS as f64 / num(row, "seconds")
        ));
        assert!(close(num(row, "speedup"), rate / ar_rate), "{row}");
        let theory = num(row, "theoreticalFactor");
        assert!(close(num(row, "ofTheory"), num(row, "speedup") / theory));
        let costed = num(row, "costedFactor");
        assert!(close(num(row, "ofCosted"), num(row, "speedup") / costed));
        if *method == "autoregressive" {
            assert!(close(theory, 1.0) && row["acceptanceRate"].is_null());
            assert!(close(costed, 1.0));
            continue;
        }
        // At most L + 1 = 4 tokens per target call, and the theory lies between the
        // block efficiency discounted by a full round of draft calls and the block
        // efficiency itself.
        let be = num(row, "blockEfficiency");
        if *method == "lookup" {
            // No draft model: no draft cost, so the theory is the block efficiency; a
            // short run may propose nothing that is accepted.
            assert!(row["c"].is_null() && close(theory, be), "{row}");
            assert!((1.0..=4.0).contains(&be), "{row}");
            assert!(
                row["acceptanceRate"]
                    .as_f64()
                    .is_none_or(|a| (0.0..=1.0).contains(&a))
            );
            continue;
        }
        let c = num(row, "c");
        assert!((1.0..=4.0).contains(&be), "{row}");
        assert!(c >= 0.0 && c.is_finite(), "{row}");
        assert!(theory <= be && theory >= be / (1.0 + 3.0 * c) * (1.0 - 1e-12));
        let acceptance = num(row, "acceptanceRate");
        assert!(acceptance > 0.0 && acceptance <= 1.0, "{row}");
        let verify = num(row, "verify");
        // The costed factor swaps the theory's one step per verification for the
        // measured cost: be / (verify + calls × c), where 1 + calls × c = be / theory.
        assert!(close(costed, be / (be / theory - 1.0 + verify)), "{row}");
    }
    // α is inverted from the block efficiency: 1 + α + … + α^γ.
    for (row, gamma) in rows[1..3].iter().zip([1, 3]) {
        let alpha = num(row, "alpha");
        assert!(alpha > 0.5 && alpha < 1.0, "{row}");
        let series: f64 = (0..=gamma).map(|i| alpha.powi(i)).sum();
        assert!((series - num(row, "blockEfficiency")).abs() < 1e-9, "{row}");
    }
    // The cost table: the target at 1, 2, 3, 4, 5 and 8 new positions, the draft at one
    // row and at each K, and the cost ratio as defined (draft row / target position, both
    // at one), whatever the times were.
    let costs = &report["costs"];
    let pairs = |key: &str| -> Vec<(u64, f64)> {
        costs[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} missing in {costs}"))
            .iter()
            .map(|pair| (pair[0].as_u64().unwrap(), pair[1].as_f64().unwrap()))
            .collect()
    };
    let target = pairs("targetPositionsMs");
    let draft = pairs("draftRowsMs");
    let counts = |v: &[(u64, f64)]| v.iter().map(|p| p.0).collect::<Vec<_>>();
    assert_eq!(counts(&target), [1, 2, 3, 4, 5, 8], "{costs}");
    assert_eq!(counts(&draft)[0], 1, "{costs}");
    assert!(counts(&draft).contains(&2), "{costs}");
    assert!(
        close(num(costs, "costRatio"), draft[0].1 / target[0].1),
        "{costs}"
    );
}

#[test]
fn bench_acceptance_figures_repeat_exactly() {
    let fixed = |report: &Value| -> Vec<Value> {
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let keep = [
                    "method",
                    "params",
                    "tokens",
                    "acceptanceRate",
                    "meanAcceptanceLength",
                    "blockEfficiency",
                    "alpha",
                ];
                keep.iter().map(|k| r[*k].clone()).collect()
            })
            .collect()
    };
    assert_eq!(fixed(&bench_json()), fixed(&bench_json()));
}

#[test]
fn bench_table_has_a_header_and_a_line_per_row() {
    let out = specula(&SMALL);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let header = stdout
        .lines()
        .position(|l| l.starts_with("method") && l.contains("speedup") && l.contains("theory"))
        .unwrap_or_else(|| panic!("no table header in {stdout}"));
    let table: Vec<&str> = stdout.lines().skip(header + 1).collect();
    assert_eq!(table.len(), 9, "{stdout}");
    assert!(table[0].starts_with("autoregressive") && table[0].contains("1.00x"));
    assert!(stdout.contains("target, 8 new position(s)"), "{stdout}");
    let stages = stdout
        .lines()
        .position(|l| l.contains("target's host pass by stage"))
        .unwrap_or_else(|| panic!("no stage table in {stdout}"));
    let names: Vec<&str> = stdout
        .lines()
        .nth(stages + 1)
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(names[..3], ["n", "call", "pass"], "{stdout}");
    assert_eq!(names[3..], STAGES, "{stdout}");
}

/// `--json` has the target's host pass stage by stage for each count of new positions:
/// every stage named, each time >= 0, the stages within the pass and the pass within the
/// call.
#[test]
fn bench_json_has_the_target_stage_table() {
    let args = [
        "bench",
        "--methods",
        "speculative",
        "--gammas",
        "1",
        "--tokens",
        "4",
        "--repeat",
        "1",
        "--json",
    ];
    let report: Value = serde_json::from_slice(&specula(&args).stdout).unwrap();
    let rows = report["costs"]["targetStages"]
        .as_array()
        .unwrap_or_else(|| panic!("no costs.targetStages in {report}"));
    let positions: Vec<u64> = rows
        .iter()
        .map(|r| r["positions"].as_u64().unwrap())
        .collect();
    assert_eq!(positions, [1, 2, 3, 4, 5, 8]);
    for row in rows {
        let stages = row["stagesMs"].as_object().expect("stagesMs");
        // serde_json's map sorts its keys: compare as sorted lists.
        let names: Vec<&str> = stages.keys().map(String::as_str).collect();
        let mut want = STAGES;
        want.sort_unstable();
        assert_eq!(names, want, "{row}");
        let ms: Vec<f64> = stages.values().map(|v| v.as_f64().unwrap()).collect();
        assert!(ms.iter().all(|&ms| ms >= 0.0), "{row}");
        let (pass, call) = (num(row, "passMs"), num(row, "callMs"));
        let sum: f64 = ms.iter().sum();
        assert!(sum <= pass * (1.0 + 1e-9) && pass <= call, "{row}");
        assert!(num(row, "passMs") > 0.0, "{row}");
    }
}

/// bench does not slide the window: a --tokens past the models' positions is refused
/// with the most it may be here, not only the parser's bound.
#[test]
fn bench_tokens_past_the_context_say_the_most_they_may_be() {
    let out = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(["bench", "--tokens", "1048576", "--repeat", "1"])
        .output()
        .expect("specula runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--tokens may be at most"), "{err}");
    let most: usize = err
        .split("--tokens may be at most ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("a number");
    assert!(most > 0 && most < 256, "{err}");
}

/// `--prompts` replaces the fixed prompts (newlines and all) and `--methods` keeps only
/// the rows of the methods it names, besides the autoregressive one they are measured
/// against; the table lists the prompts as the JSON report does.
#[test]
fn bench_runs_the_given_prompts_and_only_the_given_methods() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-prompts-run");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join("prompts.json");
    let given = ["KING HENRY:\n", "ROMEO:\nO, she doth teach"];
    std::fs::write(&path, serde_json::to_string(&given).unwrap()).expect("write");
    let path = path.display().to_string();
    let args = [
        "bench",
        "--prompts",
        &path,
        "--methods",
        "speculative",
        "--gammas",
        "1,2",
        "--tokens",
        "8",
        "--repeat",
        "1",
    ];
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let report: Value = serde_json::from_slice(&specula(&json_args).stdout).unwrap();
    assert_eq!(report["prompts"], serde_json::json!(given), "{report}");
    let rows = report["rows"].as_array().unwrap();
    let names = method_params(rows);
    assert_eq!(
        names,
        [
            ("autoregressive", "-"),
            ("speculative", "gamma=1"),
            ("speculative", "gamma=2"),
        ]
    );
    for row in rows {
        assert_eq!(row["tokens"].as_u64(), Some(2 * 8), "{row}");
    }
    let table = String::from_utf8(specula(&args).stdout).unwrap();
    assert!(
        table.contains("prompts (2):\n  \"KING HENRY:\\n\"\n  \"ROMEO:\\nO, she doth teach\"\n"),
        "{table}"
    );
}

/// Each report row's method and params, in order.
fn method_params(rows: &[Value]) -> Vec<(&str, &str)> {
    rows.iter()
        .map(|r| (r["method"].as_str().unwrap(), r["params"].as_str().unwrap()))
        .collect()
}
