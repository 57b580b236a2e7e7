//! The per-position forward costs that `specula bench` prints before its table: the
//! target over n new positions, the draft over k rows, and their ratio c; and where the
//! target's host forward pass spends those calls, stage by stage.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use specula_engine::{
    ForwardRequest, ForwardStage, LanguageModel, Query, Role, StageTimes, StdClock,
};
use specula_host::DeviceLm;

use crate::error::CliError;
use crate::models;

/// Forward costs in milliseconds (medians).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Costs {
    /// Target forward over n new positions after a 100-token cached prefix: (n, ms).
    target_positions_ms: Vec<(usize, f64)>,
    /// The same through burn's own forward pass, measured in the same run.
    target_positions_burn_forward_ms: Vec<(usize, f64)>,
    /// Draft forward, one new position in each of k sequences: (k, ms).
    draft_rows_ms: Vec<(usize, f64)>,
    /// Draft one-position cost / target one-position cost.
    cost_ratio: f64,
    /// The target's host pass stage by stage, for each count of new positions; empty
    /// when the target runs on burn's pass (which has no stage profile).
    target_stages: Vec<StageRow>,
}

/// Where one count of new positions spends a target call: means over calls timed with
/// the host pass's stage profile on, in their own turns after the median-timed ones.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StageRow {
    /// New positions per call.
    positions: usize,
    /// A call's wall time (ms), the request's work around the forward pass included.
    call_ms: f64,
    /// The forward pass's time (ms) as the profile measured it: at most `callMs`.
    pass_ms: f64,
    /// Each stage's ms per call ([`ForwardStage`]'s names); they add up to at most
    /// `passMs`, the rest being the profile's clock reads and joining the helper thread.
    stages_ms: BTreeMap<ForwardStage, f64>,
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

/// The text whose first 100 tokens are the cached prefix of the cost table.
fn prefix_text(pair: &models::Pair) -> String {
    match pair.tokenizer {
        models::PairTokenizer::Chars(_) => "ROMEO:\nI will not speak of it; ".repeat(4),
        models::PairTokenizer::Bpe(_) => "The old lighthouse keeper climbed the stairs \
            every evening, counting the steps and listening to the sea below. "
            .repeat(8),
    }
}

pub(crate) fn measure_costs(pair: &mut models::Pair, ks: &[usize]) -> Result<Costs, CliError> {
    let prefix = pair.encode(&prefix_text(pair))?;
    let prefix = &prefix[..100.min(prefix.len())];
    let forward = |lm: &mut DeviceLm, sequences: Vec<Vec<u32>>, queries: Vec<Query>| {
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
    let position_costs = |target: &mut DeviceLm, counts: &[usize]| -> Result<_, CliError> {
        forward(
            target,
            vec![prefix.to_vec()],
            vec![Query {
                sequence: 0,
                prefix_len: prefix.len(),
            }],
        )?;
        let calls = position_calls(prefix, counts);
        let mut times = vec![Vec::with_capacity(COST_REPS); counts.len()];
        for _ in 0..COST_REPS {
            for ((seq, queries), times) in calls.iter().zip(&mut times) {
                let t = Instant::now();
                forward(target, vec![seq.clone()], queries.clone())?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let ms = times.into_iter().map(median);
        Ok(counts.iter().copied().zip(ms).collect::<Vec<_>>())
    };
    const COUNTS: [usize; 6] = [1, 2, 3, 4, 5, 8];
    let target_positions_ms = position_costs(&mut pair.target, &COUNTS)?;
    // The same calls with the stage profile on, after the timed ones so that its clock
    // reads stay out of the costs above.
    let target_stages = match pair.target.stage_profile_mut() {
        Some(profile) => {
            profile.enable(Arc::new(StdClock::new()));
            let calls = position_calls(prefix, &COUNTS);
            let mut sums = vec![(StageTimes::default(), 0.0); COUNTS.len()];
            for _ in 0..COST_REPS {
                for ((seq, queries), (times, call_ms)) in calls.iter().zip(&mut sums) {
                    if let Some(profile) = pair.target.stage_profile_mut() {
                        profile.reset();
                    }
                    let t = Instant::now();
                    forward(&mut pair.target, vec![seq.clone()], queries.clone())?;
                    *call_ms += t.elapsed().as_secs_f64() * 1e3;
                    if let Some(profile) = pair.target.stage_profile() {
                        times.add(&profile.times());
                    }
                }
            }
            if let Some(profile) = pair.target.stage_profile_mut() {
                profile.disable();
            }
            COUNTS
                .iter()
                .zip(sums)
                .map(|(&positions, (times, call_ms))| stage_row(positions, &times, call_ms))
                .collect()
        }
        None => Vec::new(),
    };
    // A GGUF target runs on burn's pass already: there is no second pass to compare.
    let target_positions_burn_forward_ms = if pair.target_bundle.is_some() {
        position_costs(&mut pair.burn_target()?, &[1, 5, 8])?
    } else {
        Vec::new()
    };
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
        target_stages,
    })
}

/// The target calls of the cost table: for each count n, the prefix and n new tokens,
/// with a query for each new position.
fn position_calls(prefix: &[u32], counts: &[usize]) -> Vec<(Vec<u32>, Vec<Query>)> {
    counts
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
        .collect()
}

/// The means per call of `COST_REPS` profiled calls of `positions` new positions, which
/// took `call_ms` in all.
fn stage_row(positions: usize, times: &StageTimes, call_ms: f64) -> StageRow {
    let per_call = |ms: f64| ms / COST_REPS as f64;
    StageRow {
        positions,
        call_ms: per_call(call_ms),
        pass_ms: per_call(times.total.as_secs_f64() * 1e3),
        stages_ms: times.stage_ms().map(|(s, ms)| (s, per_call(ms))).collect(),
    }
}

/// The stage table's lines: a header, then a line per count of new positions.
fn stages_table(s: &mut String, rows: &[StageRow]) {
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        s,
        "  target's host pass by stage, ms per call (mean of {COST_REPS} profiled calls):\n    {:>3} {:>9} {:>9}",
        "n", "call", "pass"
    );
    for stage in ForwardStage::ALL {
        let _ = write!(s, " {:>9}", stage.name());
    }
    s.push('\n');
    for row in rows {
        let _ = write!(
            s,
            "    {:>3} {:>9.3} {:>9.3}",
            row.positions, row.call_ms, row.pass_ms
        );
        for ms in row.stages_ms.values() {
            let _ = write!(s, " {ms:>9.3}");
        }
        s.push('\n');
    }
}

pub(crate) fn costs_table(c: &Costs) -> String {
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
    stages_table(&mut s, &c.target_stages);
    let one_burn = c
        .target_positions_burn_forward_ms
        .first()
        .map_or(1.0, |r| r.1);
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
