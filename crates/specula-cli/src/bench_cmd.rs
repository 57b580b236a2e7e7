//! `specula bench`: every method (or those `--methods` names) on fixed prompts (or those
//! of `--prompts`) in one run, against autoregressive decoding measured in the same run,
//! plus the per-position forward costs of both models.

use serde::Serialize;
use specula_engine::options::MethodName;
use specula_engine::options::limits::{DEFAULT_TYPICAL_DELTA, DEFAULT_TYPICAL_EPSILON};
use specula_engine::{
    DecodeConfig, DraftShape, GammaPolicy, Method, Metrics, SamplingConfig, Selection,
};
use specula_model::Backend;

pub use crate::bench_args::BenchArgs;
use crate::bench_args::{BenchSettings, check};
use crate::bench_costs::{Costs, costs_table, measure_costs};
use crate::error::CliError;
use crate::{bench_inputs, decode, models, progress};

/// The fixed prompts (speaker cues, as the corpus has them), unless `--prompts` gives others.
pub const PROMPTS: [&str; 4] = [
    "ROMEO:\n",
    "JULIET:\n",
    "First Citizen:\n",
    "KING RICHARD III:\n",
];

/// The fixed prompts for GGUF models (plain English; the chat form is left to the user,
/// with `--prompts`).
pub const GGUF_PROMPTS: [&str; 4] = [
    "Once upon a time, there was a little",
    "The capital of France is",
    "Here is a short poem about the sea:\n",
    "def fibonacci(n):\n",
];

/// The most values each list flag of `bench` takes (`--gammas`, `--drafts`, `--kls`,
/// `--ngrams`): every value is a row decoded on every prompt and repeat, so a long list
/// is a run of hours, and the table shows a sweep of a few.
pub const MAX_LIST_VALUES: usize = 16;

/// The most prompts a `--prompts` file holds: each is decoded by every row and repeat,
/// so the run's length grows with them as with a list flag's values.
pub const MAX_BENCH_PROMPTS: usize = 64;

/// The largest `--prompts` file read: 64 prompts of 16 KiB, far past what fits the
/// positions of the models bench runs; a larger file is refused unread.
pub const MAX_PROMPTS_BYTES: u64 = 1 << 20;

/// The largest K of a `--drafts` entry: bench sweeps the few drafts a table compares,
/// below the engine's `MAX_DRAFTS` (K × `--gamma` is bounded by `MAX_ROUND_NODES` too).
pub const MAX_BENCH_DRAFTS: usize = 64;

/// One method's totals.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    method: &'static str,
    params: String,
    tokens: u64,
    seconds: f64,
    tokens_per_second: f64,
    speedup: f64,
    acceptance_rate: Option<f64>,
    mean_acceptance_length: Option<f64>,
    block_efficiency: Option<f64>,
    /// α inverted from the block efficiency (speculative only).
    alpha: Option<f64>,
    /// Mean draft call time / mean autoregressive target call time.
    c: Option<f64>,
    /// Mean target call time / mean autoregressive target call time: what one verification
    /// costs in autoregressive steps (the theory below assumes 1).
    verify: Option<f64>,
    /// Block efficiency / (1 + draft calls per round × c): the ideal walltime factor if
    /// verification cost one autoregressive step (Leviathan et al. for speculative).
    theoretical_factor: f64,
    /// speedup / theoretical_factor.
    of_theory: f64,
    /// Block efficiency / (verify + draft calls per round × c): the same factor with a
    /// verification costing what it was measured to cost, so that `speedup /
    /// costed_factor` shows what the decoding loop loses besides the model calls.
    costed_factor: f64,
    /// speedup / costed_factor.
    of_costed: f64,
    /// The mean target call, in nanoseconds: the autoregressive row's is the unit of
    /// `c` and `verify`.
    #[serde(skip)]
    target_call_nanos: Option<f64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    prompts: Vec<String>,
    tokens_per_prompt: usize,
    repeat: u64,
    temperature: f64,
    threads: usize,
    costs: Costs,
    rows: Vec<Row>,
}

/// Runs `specula bench`.
///
/// # Errors
/// Usage errors for bad flags; failures for model errors.
pub fn run(args: BenchArgs) -> Result<(), CliError> {
    let BenchSettings {
        tokens,
        repeat,
        temperature,
        gammas,
        ks,
        length,
        kls,
        ngrams,
        threads,
        methods: chosen,
        source,
        prompt_texts,
    } = check(&args)?;
    let mut pair = models::load_source(&source, Backend::Cpu, threads)?;
    let prompts =
        bench_inputs::encode_prompts(&pair, &prompt_texts, tokens, args.prompts.is_some())?;
    let costs = measure_costs(&mut pair, &ks)?;
    if args.burn_forward {
        pair.use_burn_forward()?;
    }
    // A reader that goes away (`| head -1`) ends the run at once, with status 0 as for
    // `sample`: nothing is left to measure for.
    if !args.json
        && !crate::write_out(&format!(
            "{}{}",
            bench_inputs::prompts_list(&prompt_texts),
            costs_table(&costs)
        ))?
    {
        return Ok(());
    }
    let methods = method_table(
        &chosen,
        &gammas,
        &ks,
        length,
        &kls,
        &ngrams,
        args.parallel_draft,
    );
    let sampling = SamplingConfig {
        temperature,
        top_k: None,
        top_p: None,
    };
    let Some(totals) = measure(
        &mut pair, &methods, &prompts, repeat, tokens, sampling, args.json,
    )?
    else {
        return Ok(());
    };
    if !args.json && !crate::write_out(&format!("{}\n", header()))? {
        return Ok(());
    }
    let mut rows: Vec<Row> = Vec::new();
    for ((method, params, parallel), (total, seconds)) in methods.into_iter().zip(totals) {
        let row = row_of(&method, params, parallel, &total, seconds, rows.first());
        if !args.json && !crate::write_out(&format!("{}\n", line(&row)))? {
            return Ok(());
        }
        rows.push(row);
    }
    if args.json {
        let report = Report {
            prompts: prompt_texts,
            tokens_per_prompt: tokens,
            repeat,
            temperature,
            threads,
            costs,
            rows,
        };
        let mut json = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::failure(format!("cannot serialise the report: {e}")))?;
        json.push('\n');
        crate::emit(&json)?;
    }
    Ok(())
}

/// The table of benchmarked methods, in the report's order: one row per method chosen
/// (`chosen`, autoregressive decoding first) and parameter value, with the parameters as
/// the report prints them and whether it drafts in parallel (after each speculative γ,
/// with `parallel`).
fn method_table(
    chosen: &[MethodName],
    gammas: &[usize],
    ks: &[usize],
    length: usize,
    kls: &[f64],
    ngrams: &[usize],
    parallel: bool,
) -> Vec<(Method, String, bool)> {
    // A method left out sweeps none of its values, and a one-row method has no row.
    let on = |name: MethodName| chosen.contains(&name);
    let sweep = |name, values: &[usize]| {
        if on(name) {
            values.to_vec()
        } else {
            Vec::new()
        }
    };
    let gammas = sweep(MethodName::Speculative, gammas);
    let ks = sweep(MethodName::Spectr, ks);
    let ngrams = sweep(MethodName::Lookup, ngrams);
    let kls = if on(MethodName::Mentored) { kls } else { &[] };
    let spectr = |k, selection: Selection| {
        (
            Method::SpecTr {
                drafts: DraftShape::Iid { k, length },
                selection,
            },
            format!("K={k} L={length} selection={}", selection.name()),
        )
    };
    let fixed = GammaPolicy::Fixed;
    let speculative = |gamma| Method::Speculative {
        gamma,
        policy: fixed,
    };
    let multiround = on(MethodName::Multiround).then(|| {
        (
            Method::MultiRound {
                drafts: DraftShape::Iid { k: 4, length },
            },
            format!("K=4 L={length}"),
        )
    });
    let typical = on(MethodName::Typical).then(|| {
        (
            Method::Typical {
                gamma: length,
                epsilon: DEFAULT_TYPICAL_EPSILON,
                delta: DEFAULT_TYPICAL_DELTA,
                policy: fixed,
            },
            format!("gamma={length} eps={DEFAULT_TYPICAL_EPSILON} delta={DEFAULT_TYPICAL_DELTA}"),
        )
    });
    let table: Vec<(Method, String)> = std::iter::once((Method::Autoregressive, "-".to_owned()))
        .chain(
            gammas
                .iter()
                .map(|&gamma| (speculative(gamma), format!("gamma={gamma}"))),
        )
        .chain(ks.iter().map(|&k| spectr(k, Selection::KSeq)))
        .chain(multiround)
        .chain(ks.iter().map(|&k| spectr(k, Selection::Race)))
        .chain(kls.iter().map(|&kl_budget| {
            (
                Method::Mentored {
                    gamma: length,
                    kl_budget,
                    policy: fixed,
                },
                format!("gamma={length} D={kl_budget}"),
            )
        }))
        .chain(typical)
        .chain(ngrams.iter().map(|&ngram| {
            (
                Method::Lookup {
                    gamma: length,
                    ngram,
                },
                format!("gamma={length} n={ngram}"),
            )
        }))
        .collect();
    let mut rows: Vec<(Method, String, bool)> =
        table.into_iter().map(|(m, p)| (m, p, false)).collect();
    if parallel {
        let at = 1 + gammas.len();
        let parallel_rows = gammas
            .iter()
            .map(|&gamma| (speculative(gamma), format!("gamma={gamma} parallel"), true));
        rows.splice(at..at, parallel_rows);
    }
    rows
}

/// Decodes every prompt `repeat` times with every method; each method's summed metrics
/// and wall seconds, or `None` when stdout's reader went away meanwhile.
///
/// The rows are only complete at the end (see the interleaving below), so there is
/// nothing to write, and no write to fail, until then: between decodes the run asks
/// whether anyone still reads its output.
fn measure(
    pair: &mut models::Pair,
    methods: &[(Method, String, bool)],
    prompts: &[Vec<u32>],
    repeat: u64,
    tokens: usize,
    sampling: SamplingConfig,
    quiet: bool,
) -> Result<Option<Vec<(Metrics, f64)>>, CliError> {
    // Warm-up: first calls allocate and fault in the weights.
    let warm = DecodeConfig::default().with_max_new_tokens(20);
    decode::run(pair, warm, &prompts[0], |_| true)?;
    // Every method runs on each (prompt, seed) in turn, so slow spells of this shared
    // machine (its memory bandwidth varies from minute to minute) hit all methods alike
    // and the speedups compare like with like.
    let mut totals = vec![(Metrics::default(), 0.0_f64); methods.len()];
    let bar = progress::bar(
        (prompts.len() as u64) * repeat * methods.len() as u64,
        quiet,
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} decodes {msg}",
    );
    for (i, prompt) in prompts.iter().enumerate() {
        for r in 0..repeat {
            for ((method, _, parallel), (total, seconds)) in methods.iter().zip(&mut totals) {
                if crate::stdout_reader_gone() {
                    bar.finish_and_clear();
                    return Ok(None);
                }
                let config = DecodeConfig::builder(method.clone())
                    .sampling(sampling)
                    .max_new_tokens(tokens)
                    .seed(r * 1000 + i as u64)
                    .parallel_draft(*parallel)
                    .build()
                    .map_err(|e| CliError::engine_refused(e.to_string()))?;
                bar.set_message(method.name());
                // Every decode starts from empty caches: methods run on the same (prompt,
                // seed) in turn, and one whose text repeats the previous method's (mentored
                // decoding with a large D follows the draft's samples) would otherwise find
                // those positions cached and skip their forward passes.
                pair.draft.reset();
                pair.target.reset();
                let run = if *parallel {
                    decode::run_parallel(pair, config, prompt)?
                } else {
                    decode::run(pair, config, prompt, |_| true)?
                };
                *seconds += run.wall.as_secs_f64();
                total.add(&run.metrics);
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    Ok(Some(totals))
}

/// One report row from a method's summed metrics; `autoregressive` is the first row,
/// which the speedups and the relative call costs divide by (none for the first row).
/// The theoretical factors assume sequential drafting: a `parallel` row's are not its
/// own (and its α is not inverted: a fully accepted round there draws no bonus).
fn row_of(
    method: &Method,
    params: String,
    parallel: bool,
    total: &Metrics,
    seconds: f64,
    autoregressive: Option<&Row>,
) -> Row {
    let per_call = |nanos: u64, calls: u64| (calls > 0).then(|| nanos as f64 / calls as f64);
    let own_target_call = per_call(total.timing.target_nanos, total.target_calls);
    let ar_target_call = match autoregressive {
        Some(ar) => ar.target_call_nanos,
        None => own_target_call,
    };
    let rate = total.emitted_tokens as f64 / seconds.max(1e-9);
    let speedup = autoregressive.map_or(1.0, |ar| rate / ar.tokens_per_second);
    let relative = |call: Option<f64>| match (call, ar_target_call) {
        (Some(x), Some(t)) if t > 0.0 => Some(x / t),
        _ => None,
    };
    let c = relative(per_call(total.timing.draft_nanos, total.draft_calls));
    let verify = relative(own_target_call);
    let be = total.block_efficiency();
    let calls_per_round = total.draft_calls as f64 / total.rounds.max(1) as f64;
    let theoretical_factor = be.unwrap_or(1.0) / (1.0 + calls_per_round * c.unwrap_or(0.0));
    let costed_factor =
        be.unwrap_or(1.0) / (verify.unwrap_or(1.0) + calls_per_round * c.unwrap_or(0.0));
    let alpha = match (method, be) {
        (Method::Speculative { gamma, .. }, Some(be)) if !parallel => {
            Some(invert_block_efficiency(be, *gamma))
        }
        _ => None,
    };
    Row {
        method: method.name(),
        params,
        tokens: total.emitted_tokens,
        seconds,
        tokens_per_second: rate,
        speedup,
        acceptance_rate: total.acceptance_rate(),
        mean_acceptance_length: total.mean_acceptance_length(),
        block_efficiency: be,
        alpha,
        c,
        verify,
        theoretical_factor,
        of_theory: speedup / theoretical_factor,
        costed_factor,
        of_costed: speedup / costed_factor,
        target_call_nanos: own_target_call,
    }
}

/// The α with `(1 − α^{γ+1}) / (1 − α) = be` (bisection; the left side grows with α).
fn invert_block_efficiency(be: f64, gamma: usize) -> f64 {
    let f = |a: f64| (0..=gamma).map(|i| a.powi(i as i32)).sum::<f64>();
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < be {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

fn header() -> String {
    format!(
        "{:<15} {:<16} {:>8} {:>8} {:>7} {:>8} {:>7} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7}",
        "method",
        "params",
        "tok/s",
        "speedup",
        "accept",
        "mean_len",
        "blk_eff",
        "alpha",
        "c",
        "verify",
        "theory",
        "of_thy",
        "of_cost"
    )
}

fn line(r: &Row) -> String {
    let o = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
    format!(
        "{:<15} {:<16} {:>8.1} {:>7.2}x {:>7} {:>8} {:>7} {:>6} {:>6} {:>6} {:>6.2}x {:>6.0}% {:>6.0}%",
        r.method,
        r.params,
        r.tokens_per_second,
        r.speedup,
        o(r.acceptance_rate),
        o(r.mean_acceptance_length),
        o(r.block_efficiency),
        r.alpha.map_or_else(|| "-".into(), |a| format!("{a:.2}")),
        r.c.map_or_else(|| "-".into(), |c| format!("{c:.2}")),
        r.verify.map_or_else(|| "-".into(), |v| format!("{v:.2}")),
        r.theoretical_factor,
        r.of_theory * 100.0,
        r.of_costed * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_inversion_round_trips() {
        for &(a, g) in &[(0.3, 1), (0.7, 4), (0.9, 6)] {
            let be: f64 = (0..=g).map(|i| f64::powi(a, i as i32)).sum();
            assert!((invert_block_efficiency(be, g) - a).abs() < 1e-9);
        }
    }
}
