//! `specula bench`: every method on fixed prompts in one run, against autoregressive
//! decoding measured in the same run, plus the per-position forward costs of both models.

use std::fmt::Write as _;
use std::time::Instant;

use clap::Args;
use serde::Serialize;
use specula_engine::{
    DecodeConfig, DraftShape, ForwardRequest, GammaPolicy, LanguageModel, Method, Metrics, Query,
    Role, SamplingConfig, Selection,
};
use specula_model::{Backend, BurnLm};

use crate::error::CliError;
use crate::{decode, models, parse, progress};

/// The fixed prompts (speaker cues, as the corpus has them).
pub const PROMPTS: [&str; 4] = [
    "ROMEO:\n",
    "JULIET:\n",
    "First Citizen:\n",
    "KING RICHARD III:\n",
];

/// Flags of `specula bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Characters generated per prompt.
    #[arg(
        long,
        value_name = "N",
        default_value = "200",
        allow_hyphen_values = true
    )]
    pub tokens: String,
    /// Runs per prompt (seeds 0..R).
    #[arg(
        long,
        value_name = "R",
        default_value = "2",
        allow_hyphen_values = true
    )]
    pub repeat: String,
    /// Sampling temperature.
    #[arg(
        long,
        value_name = "T",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub temperature: String,
    /// γ values for speculative decoding.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "1,2,3,4,6",
        allow_hyphen_values = true
    )]
    pub gammas: String,
    /// K values for SpecTr with k-Seq and with OTM's optimal selection (and K = 4 for multi-round).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "2,4,8",
        allow_hyphen_values = true
    )]
    pub drafts: String,
    /// Draft length L of SpecTr and multi-round, and γ of mentored decoding.
    #[arg(
        long,
        value_name = "L",
        default_value = "4",
        allow_hyphen_values = true
    )]
    pub length: String,
    /// KL budgets D for mentored decoding.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "0.1,0.3,1",
        allow_hyphen_values = true
    )]
    pub kls: String,
    /// Load the pair from DIR instead of the bundled one.
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub models: Option<std::path::PathBuf>,
    /// CPU threads: for burn, and for the host forward pass's dense layers (at most 2 there).
    #[arg(
        long,
        value_name = "N",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub threads: String,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Decode with burn's own forward pass instead of the host one (the forward-cost table
    /// shows both either way).
    #[arg(long)]
    pub burn_forward: bool,
}

/// Forward costs in milliseconds (medians).
#[derive(Debug, Clone, Serialize)]
struct Costs {
    /// Target forward over n new positions after a 100-token cached prefix: (n, ms).
    target_positions_ms: Vec<(usize, f64)>,
    /// The same through burn's own forward pass, measured in the same run.
    target_positions_burn_forward_ms: Vec<(usize, f64)>,
    /// Draft forward, one new position in each of k sequences: (k, ms).
    draft_rows_ms: Vec<(usize, f64)>,
    /// Draft one-position cost / target one-position cost.
    cost_ratio: f64,
}

/// One method's totals.
#[derive(Debug, Clone, Serialize)]
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
}

#[derive(Serialize)]
struct Report {
    prompts: Vec<&'static str>,
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
    let tokens = parse::uint("--tokens", &args.tokens, 1, 1 << 20)?;
    let repeat = parse::uint("--repeat", &args.repeat, 1_u64, 1000)?;
    let temperature = parse::float(
        "--temperature",
        &args.temperature,
        0.0,
        specula_engine::options::limits::MAX_TEMPERATURE,
    )?;
    let gammas = parse::uint_list("--gammas", &args.gammas, 64)?;
    let ks = parse::uint_list("--drafts", &args.drafts, 64)?;
    let length = parse::uint("--length", &args.length, 1, 64)?;
    let kls = parse_kls(&args.kls)?;
    let threads = parse::uint("--threads", &args.threads, 1, 256)?;
    let mut pair = models::load(args.models.as_deref(), Backend::Cpu, threads)?;
    let prompts: Vec<Vec<u32>> = PROMPTS
        .iter()
        .map(|p| pair.encode(p))
        .collect::<Result<_, _>>()?;
    for p in &prompts {
        pair.check_length(p.len(), tokens, "--tokens")?;
    }
    let sampling = SamplingConfig {
        temperature,
        top_k: None,
        top_p: None,
    };
    let costs = measure_costs(&mut pair, &ks)?;
    pair.target.set_host_forward(!args.burn_forward);
    pair.draft.set_host_forward(!args.burn_forward);
    if !args.json {
        crate::emit(&costs_table(&costs))?;
    }
    let mut methods: Vec<(Method, String)> = vec![(Method::Autoregressive, "-".into())];
    for &g in &gammas {
        methods.push((
            Method::Speculative {
                gamma: g,
                policy: GammaPolicy::Fixed,
            },
            format!("gamma={g}"),
        ));
    }
    for &k in &ks {
        methods.push((
            Method::SpecTr {
                drafts: DraftShape::Iid { k, length },
                selection: Selection::KSeq,
            },
            format!("K={k} L={length} selection=kseq"),
        ));
    }
    methods.push((
        Method::MultiRound {
            drafts: DraftShape::Iid { k: 4, length },
        },
        format!("K=4 L={length}"),
    ));
    for &k in &ks {
        methods.push((
            Method::SpecTr {
                drafts: DraftShape::Iid { k, length },
                selection: Selection::Race,
            },
            format!("K={k} L={length} selection=race"),
        ));
    }
    for &d in &kls {
        methods.push((
            Method::Mentored {
                gamma: length,
                kl_budget: d,
                policy: GammaPolicy::Fixed,
            },
            format!("gamma={length} D={d}"),
        ));
    }
    // Warm-up: first calls allocate and fault in the weights.
    let warm = DecodeConfig {
        max_new_tokens: 20,
        ..DecodeConfig::new(Method::Autoregressive)
    };
    decode::run(&mut pair, warm, &prompts[0], |_| true)?;
    // Every method runs on each (prompt, seed) in turn, so slow spells of this shared
    // machine (its memory bandwidth varies from minute to minute) hit all methods alike
    // and the speedups compare like with like.
    let mut totals = vec![(Metrics::default(), 0.0_f64); methods.len()];
    let bar = progress::bar(
        (prompts.len() as u64) * repeat * methods.len() as u64,
        args.json,
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} decodes {msg}",
    );
    for (i, prompt) in prompts.iter().enumerate() {
        for r in 0..repeat {
            for ((method, _), (total, seconds)) in methods.iter().zip(&mut totals) {
                let config = DecodeConfig {
                    sampling,
                    max_new_tokens: tokens,
                    seed: r * 1000 + i as u64,
                    ..DecodeConfig::new(method.clone())
                };
                bar.set_message(method.name());
                // Every decode starts from empty caches: methods run on the same (prompt,
                // seed) in turn, and one whose text repeats the previous method's (mentored
                // decoding with a large D follows the draft's samples) would otherwise find
                // those positions cached and skip their forward passes.
                pair.draft.reset();
                pair.target.reset();
                let run = decode::run(&mut pair, config, prompt, |_| true)?;
                *seconds += run.wall.as_secs_f64();
                total.add(&run.metrics);
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    let mut rows: Vec<Row> = Vec::new();
    let mut ar_target_call = None;
    if !args.json {
        crate::emit(&format!("{}\n", header()))?;
    }
    for ((method, params), (total, seconds)) in methods.into_iter().zip(totals) {
        let per_call = |nanos: u64, calls: u64| (calls > 0).then(|| nanos as f64 / calls as f64);
        if matches!(method, Method::Autoregressive) {
            ar_target_call = per_call(total.timing.target_nanos, total.target_calls);
        }
        let rate = total.emitted_tokens as f64 / seconds.max(1e-9);
        let speedup = rows.first().map_or(1.0, |ar| rate / ar.tokens_per_second);
        let relative = |call: Option<f64>| match (call, ar_target_call) {
            (Some(x), Some(t)) if t > 0.0 => Some(x / t),
            _ => None,
        };
        let c = relative(per_call(total.timing.draft_nanos, total.draft_calls));
        let verify = relative(per_call(total.timing.target_nanos, total.target_calls));
        let be = total.block_efficiency();
        let calls_per_round = total.draft_calls as f64 / total.rounds.max(1) as f64;
        let theoretical_factor = be.unwrap_or(1.0) / (1.0 + calls_per_round * c.unwrap_or(0.0));
        let costed_factor =
            be.unwrap_or(1.0) / (verify.unwrap_or(1.0) + calls_per_round * c.unwrap_or(0.0));
        let alpha = match (&method, be) {
            (Method::Speculative { gamma, .. }, Some(be)) => {
                Some(invert_block_efficiency(be, *gamma))
            }
            _ => None,
        };
        let row = Row {
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
        };
        if !args.json {
            crate::emit(&format!("{}\n", line(&row)))?;
        }
        rows.push(row);
    }
    if args.json {
        let report = Report {
            prompts: PROMPTS.to_vec(),
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

fn parse_kls(raw: &str) -> Result<Vec<f64>, CliError> {
    raw.split(',')
        .map(|d| parse::float("--kls", d, 0.0, 1e6))
        .collect()
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

/// Timed calls per forward cost: the median of this many.
const COST_REPS: usize = 61;

/// The median of `times` (of odd length).
fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Median time of `f` over `reps` runs, in ms.
fn median_ms(reps: usize, mut f: impl FnMut() -> Result<(), CliError>) -> Result<f64, CliError> {
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(times))
}

fn measure_costs(pair: &mut models::Pair, ks: &[usize]) -> Result<Costs, CliError> {
    let prefix = pair.encode(&"ROMEO:\nI will not speak of it; ".repeat(4))?;
    let prefix = &prefix[..100.min(prefix.len())];
    let forward = |lm: &mut BurnLm, sequences: Vec<Vec<u32>>, queries: Vec<Query>| {
        lm.truncate(prefix.len());
        let request = ForwardRequest {
            role: Role::Target,
            committed_len: prefix.len(),
            sequences,
            queries,
        };
        lm.forward(&request)
            .map(|_| ())
            .map_err(|e| CliError::failure(e.to_string()))
    };
    // Median ms of the target's forward over each count of new positions, on the host
    // forward pass or burn's; the counts take turns, so the machine's slow spells hit all.
    let mut position_costs = |host: bool, counts: &[usize]| -> Result<_, CliError> {
        pair.target.set_host_forward(host);
        forward(
            &mut pair.target,
            vec![prefix.to_vec()],
            vec![Query {
                sequence: 0,
                prefix_len: prefix.len(),
            }],
        )?;
        let calls: Vec<(Vec<u32>, Vec<Query>)> = counts
            .iter()
            .map(|&n| {
                let mut seq = prefix.to_vec();
                seq.extend((0..n as u32).map(|i| (i * 5 + 1) % 60));
                let queries = (1..=n)
                    .map(|i| Query {
                        sequence: 0,
                        prefix_len: prefix.len() + i,
                    })
                    .collect();
                (seq, queries)
            })
            .collect();
        let mut times = vec![Vec::with_capacity(COST_REPS); counts.len()];
        for _ in 0..COST_REPS {
            for ((seq, queries), times) in calls.iter().zip(&mut times) {
                let t = Instant::now();
                forward(&mut pair.target, vec![seq.clone()], queries.clone())?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let ms = times.into_iter().map(median);
        Ok(counts.iter().copied().zip(ms).collect::<Vec<_>>())
    };
    let target_positions_ms = position_costs(true, &[1, 2, 3, 4, 5, 8])?;
    let target_positions_burn_forward_ms = position_costs(false, &[1, 5, 8])?;
    pair.target.set_host_forward(true);
    let mut draft_rows_ms = Vec::new();
    for k in std::iter::once(1).chain(ks.iter().copied()) {
        let sequences: Vec<Vec<u32>> = (0..k as u32)
            .map(|i| prefix.iter().copied().chain([(i * 7 + 2) % 60]).collect())
            .collect();
        let queries: Vec<Query> = (0..k)
            .map(|s| Query {
                sequence: s,
                prefix_len: prefix.len() + 1,
            })
            .collect();
        forward(
            &mut pair.draft,
            vec![prefix.to_vec()],
            vec![Query {
                sequence: 0,
                prefix_len: prefix.len(),
            }],
        )?;
        let ms = median_ms(COST_REPS, || {
            forward(&mut pair.draft, sequences.clone(), queries.clone())
        })?;
        draft_rows_ms.push((k, ms));
    }
    let cost_ratio = draft_rows_ms[0].1 / target_positions_ms[0].1;
    Ok(Costs {
        target_positions_ms,
        target_positions_burn_forward_ms,
        draft_rows_ms,
        cost_ratio,
    })
}

fn costs_table(c: &Costs) -> String {
    let mut s = format!(
        "forward cost after a 100-token cached prefix (median of {COST_REPS}; the target's \
         position counts take turns):\n"
    );
    let one = c.target_positions_ms[0].1;
    for &(n, ms) in &c.target_positions_ms {
        let _ = writeln!(
            s,
            "  target, {n} new position(s): {ms:7.3} ms  ({:.2}x one position)",
            ms / one
        );
    }
    let one_burn = c.target_positions_burn_forward_ms[0].1;
    for &(n, ms) in &c.target_positions_burn_forward_ms {
        let _ = writeln!(
            s,
            "  target, {n} new position(s), burn's forward: {ms:7.3} ms  ({:.2}x its one position)",
            ms / one_burn
        );
    }
    for &(k, ms) in &c.draft_rows_ms {
        let _ = writeln!(s, "  draft, {k} sequence(s) x 1 position: {ms:7.3} ms");
    }
    let _ = writeln!(
        s,
        "  c = draft / target (one position) = {:.3}\n",
        c.cost_ratio
    );
    s
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
