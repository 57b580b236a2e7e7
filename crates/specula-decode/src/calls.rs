//! A [`ForwardRequest`] as calls of the simple model interface, `logits(tokens, count)`:
//! the logits of the last `count` positions of one token sequence. The engine asks for
//! rows by (sequence, prefix length); a model without `forward` answers one call per
//! sequence that has queries, and [`Calls::to_query_order`] puts the rows where the
//! engine wants them.

use specula_engine::ForwardRequest;

/// One `logits(tokens, count)` call: the first `len` tokens of a sequence, and the
/// logits of its last `count` positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// Index into the request's sequences.
    pub sequence: usize,
    /// Tokens passed: the sequence's first `len`.
    pub len: usize,
    /// Rows of logits wanted: row `i` follows the first `len - count + i + 1` tokens.
    pub count: usize,
}

/// The calls answering one request, and where each query's row lies in their answers
/// laid end to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calls {
    /// The calls, in sequence order; a sequence no query reads gets none (identical
    /// i.i.d. drafts share their rows with the first such draft).
    pub calls: Vec<Call>,
    /// For each query, its row in the concatenated answers of `calls`.
    rows: Vec<usize>,
}

impl Calls {
    /// One call per sequence with queries, covering its shortest to its longest queried
    /// prefix (the engine's queries of one sequence are consecutive, so nothing is wasted;
    /// a gap would only cost unread rows).
    #[must_use]
    pub fn of(request: &ForwardRequest) -> Self {
        let mut span: Vec<Option<(usize, usize)>> = vec![None; request.sequences.len()];
        for q in &request.queries {
            if let Some(slot) = span.get_mut(q.sequence) {
                let (lo, hi) = slot.get_or_insert((q.prefix_len, q.prefix_len));
                *lo = (*lo).min(q.prefix_len);
                *hi = (*hi).max(q.prefix_len);
            }
        }
        let mut calls = Vec::new();
        // Per sequence: (first row of its call, its shortest queried prefix).
        let mut first_row: Vec<Option<(usize, usize)>> = vec![None; span.len()];
        let mut rows_so_far = 0;
        for (sequence, span) in span.iter().enumerate() {
            if let Some(&(lo, hi)) = span.as_ref() {
                let count = hi - lo + 1;
                calls.push(Call {
                    sequence,
                    len: hi,
                    count,
                });
                first_row[sequence] = Some((rows_so_far, lo));
                rows_so_far += count;
            }
        }
        let rows = request
            .queries
            .iter()
            .map(|q| {
                first_row
                    .get(q.sequence)
                    .copied()
                    .flatten()
                    .map_or(0, |(first, lo)| first + q.prefix_len - lo)
            })
            .collect();
        Self { calls, rows }
    }

    /// Rows in all the calls' answers together.
    #[must_use]
    pub fn total_rows(&self) -> usize {
        self.calls.iter().map(|c| c.count).sum()
    }

    /// The calls' answers (`total_rows × vocab` logits, calls in order) as the engine's
    /// response: one row per query, in query order. `None` when `answers` is not
    /// `total_rows × vocab` long.
    #[must_use]
    pub fn to_query_order(&self, answers: &[f32], vocab: usize) -> Option<Vec<f32>> {
        if Some(answers.len()) != self.total_rows().checked_mul(vocab) {
            return None;
        }
        let mut logits = Vec::with_capacity(self.rows.len() * vocab);
        for &row in &self.rows {
            logits.extend_from_slice(answers.get(row * vocab..(row + 1) * vocab)?);
        }
        Some(logits)
    }
}

#[cfg(test)]
mod tests {
    use specula_engine::{Query, Role};

    use super::*;

    fn request(sequences: Vec<Vec<u32>>, queries: &[(usize, usize)]) -> ForwardRequest {
        ForwardRequest {
            role: Role::Target,
            committed_len: 2,
            sequences,
            queries: queries
                .iter()
                .map(|&(sequence, prefix_len)| Query {
                    sequence,
                    prefix_len,
                })
                .collect(),
        }
    }

    #[test]
    fn one_sequence_is_one_call_over_its_queried_positions() {
        // Speculative decoding's target request: γ + 1 = 3 positions after 2 tokens.
        let r = request(vec![vec![1, 2, 3, 4]], &[(0, 2), (0, 3), (0, 4)]);
        let calls = Calls::of(&r);
        let want = Call {
            sequence: 0,
            len: 4,
            count: 3,
        };
        assert_eq!(calls.calls, vec![want]);
        let answers: Vec<f32> = (0..6).map(|x| x as f32).collect();
        assert_eq!(calls.to_query_order(&answers, 2), Some(answers.clone()));
        assert_eq!(calls.to_query_order(&answers[1..], 2), None);
    }

    #[test]
    fn rows_of_several_sequences_come_back_in_query_order() {
        // A tree: sequence 1 shares the root with sequence 0 and owns only its tail, and
        // the queries interleave the sequences; sequence 2 (a duplicate) has none.
        let r = request(
            vec![vec![7, 8, 1, 1], vec![7, 8, 2, 5], vec![7, 8, 1, 1]],
            &[(0, 2), (0, 3), (1, 3), (0, 4), (1, 4)],
        );
        let calls = Calls::of(&r);
        assert_eq!(
            calls.calls,
            vec![
                Call {
                    sequence: 0,
                    len: 4,
                    count: 3
                },
                Call {
                    sequence: 1,
                    len: 4,
                    count: 2
                },
            ]
        );
        // Rows labelled by call: 10, 11, 12 for sequence 0; 20, 21 for sequence 1.
        let answers = [10.0, 11.0, 12.0, 20.0, 21.0];
        assert_eq!(
            calls.to_query_order(&answers, 1),
            Some(vec![10.0, 11.0, 20.0, 12.0, 21.0])
        );
    }

    #[test]
    fn a_gap_between_queries_costs_only_unread_rows() {
        let r = request(vec![vec![1, 2, 3, 4, 5]], &[(0, 5), (0, 2)]);
        let calls = Calls::of(&r);
        assert_eq!(calls.total_rows(), 4);
        assert_eq!(
            calls.to_query_order(&[2.0, 3.0, 4.0, 5.0], 1),
            Some(vec![5.0, 2.0])
        );
    }
}
