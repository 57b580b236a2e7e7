//! Prompt lookup (n-gram drafting): draft tokens copied from the context itself, with no
//! draft model.
//!
//! The proposal is the continuation of the most recent earlier occurrence of the
//! context's last `n` tokens, trying `n = ngram` first and shorter suffixes down to 1.
//! It is a deterministic function of the context, so as a draft it is a point mass at
//! each proposed token: the standard speculative test then accepts a proposed `x̂` with
//! probability `target(x̂)` and, on a rejection, draws from the target with `x̂` removed
//! and renormalised. Every emitted token follows the target (docs/design.md).

/// The tokens prompt lookup proposes after `context`: at most `max` tokens following the
/// most recent earlier occurrence of the context's last `n` tokens, for the largest
/// `n ≤ ngram` that occurs earlier; empty when none does (or `max` is 0).
///
/// The search is linear in the context for each `n`: `O(ngram · context)` per round.
#[must_use]
pub fn propose(context: &[u32], ngram: usize, max: usize) -> Vec<u32> {
    if max == 0 {
        return Vec::new();
    }
    let len = context.len();
    for n in (1..=ngram.min(len.saturating_sub(1))).rev() {
        let suffix = &context[len - n..];
        // Starts of earlier occurrences, most recent first; the occurrence must end
        // before the context does, so it has at least one token after it.
        let found = (0..len - n).rev().find(|&start| {
            context
                .get(start..start + n)
                .is_some_and(|window| window == suffix)
        });
        if let Some(start) = found {
            let from = start + n;
            let to = from.saturating_add(max).min(len);
            return context.get(from..to).unwrap_or_default().to_vec();
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::propose;

    #[test]
    fn the_longest_suffix_that_occurred_before_gives_the_proposal() {
        // "a b c d a b" → the last 2 tokens "a b" occurred at 0, followed by "c d a b".
        let context = [0, 1, 2, 3, 0, 1];
        assert_eq!(propose(&context, 3, 3), vec![2, 3, 0]);
        assert_eq!(propose(&context, 3, 10), vec![2, 3, 0, 1]);
        assert_eq!(propose(&context, 1, 2), vec![2, 3]);
        assert_eq!(propose(&context, 3, 0), Vec::<u32>::new());
    }

    #[test]
    fn the_most_recent_occurrence_wins() {
        // "1" occurs at 0 (then 2) and at 2 (then 3): the later one is used.
        assert_eq!(propose(&[1, 2, 1, 3, 1], 1, 1), vec![3]);
    }

    #[test]
    fn longer_ngrams_are_tried_first() {
        // Last 2 = "5 1": occurred at 1 (followed by 4); the unigram "1" is more recent
        // at 4 (followed by 2), but the bigram wins.
        assert_eq!(propose(&[0, 5, 1, 4, 1, 2, 5, 1], 2, 1), vec![4]);
    }

    #[test]
    fn no_earlier_occurrence_proposes_nothing() {
        assert!(propose(&[0, 1, 2, 3], 3, 4).is_empty());
        assert!(propose(&[7], 3, 4).is_empty());
        assert!(propose(&[], 3, 4).is_empty());
    }

    #[test]
    fn an_overlapping_occurrence_repeats_a_run() {
        // "a a a": the last 2 "a a" occurred at 0, followed by the last "a".
        assert_eq!(propose(&[9, 9, 9], 2, 4), vec![9]);
    }
}
