//! On-policy records as training batches: each answered instruction is one sequence (the
//! prompt, then the answer but its last token), scored at the positions that predict an
//! answer token against the target's top-k there. Sequences of similar length share a
//! batch, so little is padding.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::onpolicy::records::Record;

/// One batch, laid out for burn: `rows × len` tokens, and per position `top_k` target
/// tokens with their log-probabilities at temperature 1 (zero weight where nothing is
/// scored: the prompt and the padding).
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// The instruction each row answers.
    pub instructions: Vec<u32>,
    /// Sequences.
    pub rows: usize,
    /// Positions per sequence (the longest; shorter ones are padded at the end).
    pub len: usize,
    /// Target tokens kept per position.
    pub top_k: usize,
    /// `rows × len` input tokens.
    pub tokens: Vec<i64>,
    /// `rows × len × top_k` target tokens (0 where not scored).
    pub top_tokens: Vec<i64>,
    /// `rows × len × top_k` log-probabilities (0 where not scored).
    pub top_logp: Vec<f32>,
    /// `rows × len`: 1 where the position predicts an answer token.
    pub scored: Vec<f32>,
}

impl Batch {
    /// Positions that predict an answer token.
    #[must_use]
    pub fn scored_positions(&self) -> usize {
        self.scored.iter().filter(|&&s| s > 0.0).count()
    }
}

/// Records grouped into batches of at most `max_tokens` positions (padding included; a
/// sequence longer than that is a batch of its own), in a fixed order.
#[must_use]
pub fn batches(records: &[Record], max_tokens: usize) -> Vec<Batch> {
    let mut order: Vec<&Record> = records.iter().filter(|r| !r.answer.is_empty()).collect();
    // Longest first, ties by instruction, so the grouping never depends on file order.
    order.sort_by_key(|r| (std::cmp::Reverse(input_len(r)), r.instruction));
    let mut out = Vec::new();
    let mut group: Vec<&Record> = Vec::new();
    for r in order {
        let len = group.first().map_or(input_len(r), |g| input_len(g));
        if !group.is_empty() && (group.len() + 1) * len > max_tokens {
            out.push(batch(&group));
            group.clear();
        }
        group.push(r);
    }
    if !group.is_empty() {
        out.push(batch(&group));
    }
    out
}

/// The order of `count` batches in epoch `epoch` of a run seeded with `seed`.
#[must_use]
pub fn epoch_order(count: usize, seed: u64, epoch: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..count).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ epoch.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    order.shuffle(&mut rng);
    order
}

/// Input positions of a record: its prompt and its answer but the last token.
fn input_len(r: &Record) -> usize {
    r.prompt.len() + r.answer.len() - 1
}

fn batch(group: &[&Record]) -> Batch {
    let len = group.iter().map(|r| input_len(r)).max().unwrap_or(0);
    let top_k = group
        .iter()
        .flat_map(|r| r.top.iter().map(Vec::len))
        .max()
        .unwrap_or(0);
    let rows = group.len();
    let mut b = Batch {
        instructions: group.iter().map(|r| r.instruction).collect(),
        rows,
        len,
        top_k,
        tokens: vec![0; rows * len],
        top_tokens: vec![0; rows * len * top_k],
        top_logp: vec![0.0; rows * len * top_k],
        scored: vec![0.0; rows * len],
    };
    for (row, r) in group.iter().enumerate() {
        let inputs = r.prompt.iter().chain(&r.answer[..r.answer.len() - 1]);
        for (pos, &t) in inputs.enumerate() {
            b.tokens[row * len + pos] = i64::from(t);
        }
        // Position prompt_len - 1 + j predicts answer token j.
        for (j, top) in r.top.iter().enumerate() {
            let pos = row * len + r.prompt.len() - 1 + j;
            b.scored[pos] = 1.0;
            for (i, &(token, logp)) in top.iter().enumerate() {
                b.top_tokens[pos * top_k + i] = i64::from(token);
                b.top_logp[pos * top_k + i] = logp;
            }
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(instruction: u32, prompt: usize, answer: usize) -> Record {
        Record {
            instruction,
            prompt: (0..prompt as u32).map(|t| t + 100).collect(),
            answer: (0..answer as u32).map(|t| t + 200).collect(),
            top: (0..answer as u32)
                .map(|j| vec![(j + 200, -0.1), (7, -2.5)])
                .collect(),
        }
    }

    #[test]
    fn each_answer_token_is_scored_where_it_is_predicted() {
        let records = [record(0, 3, 4), record(1, 2, 2), record(2, 5, 1)];
        let all = batches(&records, 12);
        let scored: usize = all.iter().map(Batch::scored_positions).sum();
        assert_eq!(scored, 4 + 2 + 1);
        for b in &all {
            assert!(b.rows * b.len <= 12 || b.rows == 1);
            for row in 0..b.rows {
                for pos in 0..b.len {
                    let at = row * b.len + pos;
                    if b.scored[at] > 0.0 {
                        // The top list's first token is the answer token at this step,
                        // which is the next input (or the record's last token).
                        let next = b.top_tokens[at * b.top_k];
                        let following = b.tokens.get(at + 1).copied();
                        assert!(
                            pos + 1 == b.len || following == Some(next) || following == Some(0)
                        );
                        assert!((200..210).contains(&next));
                    }
                }
            }
        }
    }

    #[test]
    fn the_epoch_order_is_a_seeded_permutation() {
        let a = epoch_order(20, 3, 1);
        assert_eq!(a, epoch_order(20, 3, 1));
        assert_ne!(a, epoch_order(20, 3, 2));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..20).collect::<Vec<_>>());
    }
}
