//! On-policy distillation data from a real target: the target answers a fixed set of
//! instructions ([`prompts`]) by sampling at the temperature its draft will be judged at,
//! and every answer position keeps the target's most likely next tokens with their
//! log-probabilities ([`records`]). Training on the target's own answers (sequence-level
//! distillation) and on its distributions there (logit distillation) fits the draft to
//! what speculative decoding asks of it: agreeing with the target on the text the target
//! writes (DistillSpec, Zhou et al. 2023). Several instructions are answered side by side,
//! one row each, so a call reads the weights once for all of them.

pub mod prompts;
pub mod records;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use specula_gguf::BpeTokenizer;
use specula_model::{Error, ForwardPass, Result, RowsKv};

use records::{DataFile, Record};

/// One instruction being answered.
struct Row {
    instruction: u32,
    tokens: Vec<u32>,
    prompt_len: usize,
    top: Vec<Vec<(u32, f32)>>,
    rng: ChaCha8Rng,
}

/// Answers every instruction of `instructions` not yet in `file` with the forward pass
/// `pass`, up to `batch` at a time, appending each record as its answer ends (at the
/// end-of-sequence token or after the header's `max_new` tokens); `done` hears of each.
///
/// The chat header every prompt starts with is computed once into the pass's shared
/// cache; instructions whose prompts have the same length are answered side by side, one
/// row each, their keys and values kept per row, and a row leaves the batch when its
/// answer ends.
///
/// # Errors
/// [`Error::Training`] for a tokenizer or model failure, a pass that does not answer at
/// once, a bad batch size, or a record that cannot be written.
pub fn answer<P: ForwardPass>(
    pass: &P,
    tokenizer: &BpeTokenizer,
    instructions: &[String],
    file: &mut DataFile,
    batch: usize,
    mut done: impl FnMut(&Record),
) -> Result<()> {
    if batch == 0 {
        return Err(Error::Training(
            "the batch must hold at least one row".into(),
        ));
    }
    let header = file.header;
    let answered: Vec<u32> = file.records.iter().map(|r| r.instruction).collect();
    let mut todo: Vec<Row> = Vec::new();
    for i in 0..instructions.len() as u32 {
        if answered.contains(&i) {
            continue;
        }
        let text = prompts::chat(&instructions[i as usize]);
        let tokens = tokenizer
            .encode(&text)
            .map_err(|e| Error::Training(format!("instruction {i}: {e}")))?;
        let mut rng = ChaCha8Rng::seed_from_u64(header.seed);
        rng.set_stream(u64::from(i));
        todo.push(Row {
            instruction: i,
            prompt_len: tokens.len(),
            tokens,
            top: Vec::new(),
            rng,
        });
    }
    let Some(first) = todo.first() else {
        return Ok(());
    };
    // The chat header all prompts share, less one token so every row has a suffix.
    let all: Vec<Vec<u32>> = todo.iter().map(|r| r.tokens.clone()).collect();
    let shared_len = common_prefix(&all).min(first.prompt_len - 1);
    let mut shared = pass.new_shared();
    if shared_len > 0 {
        let (_, kv) = now(pass.forward(&first.tokens[..shared_len], 1, &shared, 0, None))?;
        if !pass.write(&mut shared, 0, kv) {
            return Err(Error::Training(
                "the chat header does not fit the cache".into(),
            ));
        }
    }
    // Equal prompt lengths side by side, in instruction order within each length.
    todo.sort_by_key(|r| (r.prompt_len, r.instruction));
    let mut queue = todo.into_iter().peekable();
    while let Some(row) = queue.next() {
        let len = row.prompt_len;
        let mut rows = vec![row];
        while rows.len() < batch && queue.peek().is_some_and(|r| r.prompt_len == len) {
            rows.extend(queue.next());
        }
        let stop = tokenizer.eos();
        answer_side_by_side(pass, (&shared, shared_len), stop, rows, file, &mut done)?;
    }
    Ok(())
}

/// Answers `rows` (prompts of one length) side by side until every answer has ended.
fn answer_side_by_side<P: ForwardPass>(
    pass: &P,
    (shared, shared_len): (&P::Shared, usize),
    stop: Option<u32>,
    mut rows: Vec<Row>,
    file: &mut DataFile,
    done: &mut impl FnMut(&Record),
) -> Result<()> {
    let header = file.header;
    let width = rows[0].prompt_len - shared_len;
    let mut tokens: Vec<u32> = rows
        .iter()
        .flat_map(|r| r.tokens[shared_len..].iter().copied())
        .collect();
    let mut branch: Option<P::Kv> = None;
    let mut n = width;
    while !rows.is_empty() {
        let (logits, kv) =
            now(pass.forward(&tokens, rows.len(), shared, shared_len, branch.as_ref()))?;
        let kv = match branch.take() {
            Some(old) => old
                .cat(kv)
                .ok_or_else(|| Error::Training("the rows' keys do not line up".into()))?,
            None => kv,
        };
        let rows_before = rows.len();
        let vocab = logits.len() / (rows_before * n);
        let mut keep = Vec::with_capacity(rows.len());
        tokens.clear();
        for (i, row) in rows.iter_mut().enumerate() {
            let at = (i * n + n - 1) * vocab;
            let last = &logits[at..at + vocab];
            row.top.push(top_log_probs(last, header.top_k as usize));
            let token = sample(last, header.temperature, &mut row.rng);
            row.tokens.push(token);
            let answered = row.tokens.len() - row.prompt_len;
            let ended = Some(token) == stop || answered >= header.max_new as usize;
            if !ended {
                keep.push(i);
                tokens.push(token);
            }
        }
        let mut kept = Vec::with_capacity(keep.len());
        for (i, row) in rows.into_iter().enumerate() {
            if keep.contains(&i) {
                kept.push(row);
                continue;
            }
            let record = Record {
                instruction: row.instruction,
                answer: row.tokens[row.prompt_len..].to_vec(),
                prompt: row.tokens[..row.prompt_len].to_vec(),
                top: row.top,
            };
            done(&record);
            file.append(record)?;
        }
        // Rows whose answer ended leave the batch, and their keys and values with them.
        let all_kept = kept.len() == rows_before;
        branch = match (kept.is_empty(), all_kept) {
            (true, _) => None,
            (false, true) => Some(kv),
            (false, false) => Some(kv.select(&keep)),
        };
        rows = kept;
        n = 1;
    }
    Ok(())
}

/// The value of a future that is ready at once (the host pass's), else an error.
fn now<T>(future: impl Future<Output = Result<T>>) -> Result<T> {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => result,
        Poll::Pending => Err(Error::Training(
            "the forward pass did not answer at once (a GPU pass?)".into(),
        )),
    }
}

/// The length of the prefix all `sequences` share.
fn common_prefix(sequences: &[Vec<u32>]) -> usize {
    let first = &sequences[0];
    sequences[1..].iter().fold(first.len(), |len, s| {
        first[..len]
            .iter()
            .zip(s)
            .take_while(|(a, b)| a == b)
            .count()
    })
}

/// The `k` most likely tokens under `logits` at temperature 1, with their
/// log-probabilities, most likely first (ties by token id).
fn top_log_probs(logits: &[f32], k: usize) -> Vec<(u32, f32)> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let log_z = f64::from(max)
        + logits
            .iter()
            .map(|&l| f64::from(l - max).exp())
            .sum::<f64>()
            .ln();
    let mut ids: Vec<u32> = (0..logits.len() as u32).collect();
    let order = |a: &u32, b: &u32| {
        logits[*b as usize]
            .total_cmp(&logits[*a as usize])
            .then(a.cmp(b))
    };
    let k = k.min(ids.len());
    if k < ids.len() {
        ids.select_nth_unstable_by(k, order);
        ids.truncate(k);
    }
    ids.sort_unstable_by(order);
    ids.into_iter()
        .map(|t| (t, (f64::from(logits[t as usize]) - log_z) as f32))
        .collect()
}

/// A token drawn from softmax(`logits` / `temperature`) with one uniform of `rng`.
fn sample(logits: &[f32], temperature: f32, rng: &mut ChaCha8Rng) -> u32 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let t = f64::from(temperature);
    let weights: Vec<f64> = logits
        .iter()
        .map(|&l| (f64::from(l - max) / t).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mut u = rng.random::<f64>() * total;
    for (i, w) in weights.iter().enumerate() {
        if u < *w {
            return i as u32;
        }
        u -= w;
    }
    // Round-off left `u` past the last weight: the last token with any.
    weights.iter().rposition(|&w| w > 0.0).unwrap_or(0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_tokens_come_in_order_with_their_log_probabilities() {
        let logits = [0.0, 2.0, 1.0, 2.0, -1.0];
        let top = top_log_probs(&logits, 3);
        let z: f64 = logits.iter().map(|&l| f64::from(l).exp()).sum();
        let ids: Vec<u32> = top.iter().map(|t| t.0).collect();
        assert_eq!(ids, [1, 3, 2]);
        for (t, lp) in top {
            let want = (f64::from(logits[t as usize]).exp() / z).ln();
            assert!((f64::from(lp) - want).abs() < 1e-6);
        }
        assert_eq!(top_log_probs(&logits, 9).len(), 5);
    }

    #[test]
    fn samples_follow_the_tempered_distribution() {
        // Chi-square of 20,000 draws at T = 0.5 against softmax(logits / 0.5).
        let logits = [0.0_f32, 0.5, 1.0, -0.5];
        let t = 0.5;
        let w: Vec<f64> = logits.iter().map(|&l| (f64::from(l) / t).exp()).collect();
        let z: f64 = w.iter().sum();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let n = 20_000;
        let mut counts = [0_u32; 4];
        for _ in 0..n {
            counts[sample(&logits, t as f32, &mut rng) as usize] += 1;
        }
        let chi2: f64 = counts
            .iter()
            .zip(&w)
            .map(|(&c, &wi)| {
                let e = f64::from(n) * wi / z;
                (f64::from(c) - e).powi(2) / e
            })
            .sum();
        // 3 degrees of freedom: P(χ² > 16.27) = 0.001.
        assert!(chi2 < 16.27, "chi-square {chi2}, counts {counts:?}");
        // Power: the same draws against the untempered softmax are rejected.
        let w1: Vec<f64> = logits.iter().map(|&l| f64::from(l).exp()).collect();
        let z1: f64 = w1.iter().sum();
        let chi2_wrong: f64 = counts
            .iter()
            .zip(&w1)
            .map(|(&c, &wi)| {
                let e = f64::from(n) * wi / z1;
                (f64::from(c) - e).powi(2) / e
            })
            .sum();
        assert!(chi2_wrong > 16.27, "chi-square against T = 1: {chi2_wrong}");
    }

    #[test]
    fn the_common_prefix_is_what_every_row_shares() {
        assert_eq!(
            common_prefix(&[vec![1, 2, 3], vec![1, 2, 4], vec![1, 2]]),
            2
        );
        assert_eq!(common_prefix(&[vec![5, 6]]), 2);
        assert_eq!(common_prefix(&[vec![1], vec![2]]), 0);
    }
}
