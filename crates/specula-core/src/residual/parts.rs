//! What a residual subtracts from what, for pictures: every residual is
//! `norm(max(0, base − sub))` for some `base` and `sub` over the vocabulary
//! (docs/design.md). A teaching page draws the two; computing them here keeps each
//! scheme's formula in one place.

use serde::Serialize;

use super::Residual;

/// The two sides of a residual: it is `norm(max(0, base − sub))`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ResidualParts {
    /// What is subtracted from: the target, `target/β` (mentored) or the residual after
    /// the earlier rejections (multi-round).
    pub base: Vec<f64>,
    /// What is subtracted: the draft, k-Seq's accepted share, the race's selection
    /// distribution `r`, or nothing (zeros) when the residual is the target.
    pub sub: Vec<f64>,
    /// `Σ max(0, base − sub)`, all that is left over: the residual is the left-overs
    /// divided by it, so that it sums to 1.
    pub left_over: f64,
}

impl Residual {
    /// This residual's `base` and `sub` for the pair (`target`, `draft`), both over the
    /// same vocabulary. The race needs its selection distribution `r` (its plan's); `None`
    /// without it, or when the lengths differ.
    #[must_use]
    pub fn parts(
        &self,
        target: &[f64],
        draft: &[f64],
        race_selection: Option<&[f64]>,
    ) -> Option<ResidualParts> {
        if target.len() != draft.len() {
            return None;
        }
        let (base, sub) = match *self {
            Self::TargetMinusDraft => (target.to_vec(), draft.to_vec()),
            Self::Target => (target.to_vec(), vec![0.0; target.len()]),
            Self::KSeq {
                rho,
                acceptance,
                overlap,
            } => {
                // The share of each token that k-Seq's tests accept, scaled to the
                // acceptance probability (docs/design.md, k-Seq's residual).
                let scale = if overlap > 0.0 {
                    acceptance / overlap
                } else {
                    0.0
                };
                let sub = target
                    .iter()
                    .zip(draft)
                    .map(|(&t, &d)| d.min(t / rho) * scale)
                    .collect();
                (target.to_vec(), sub)
            }
            Self::MultiRound { rounds } => {
                let mut base = target.to_vec();
                for _ in 1..rounds {
                    base = normalized_excess(&base, draft);
                }
                (base, draft.to_vec())
            }
            Self::Mentored { beta } => (target.iter().map(|t| t / beta).collect(), draft.to_vec()),
            Self::Race { .. } => {
                let r = race_selection.filter(|r| r.len() == target.len())?;
                (target.to_vec(), r.to_vec())
            }
        };
        let left_over = base.iter().zip(&sub).map(|(b, s)| (b - s).max(0.0)).sum();
        Some(ResidualParts {
            base,
            sub,
            left_over,
        })
    }
}

/// `norm(max(0, base − sub))`, or `base` itself when nothing is left.
fn normalized_excess(base: &[f64], sub: &[f64]) -> Vec<f64> {
    let excess: Vec<f64> = base
        .iter()
        .zip(sub)
        .map(|(b, s)| (b - s).max(0.0))
        .collect();
    let mass: f64 = excess.iter().sum();
    if mass > super::RESIDUAL_EPSILON {
        excess.iter().map(|x| x / mass).collect()
    } else {
        base.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Distribution, KSeq, MultiRound};

    /// `norm(max(0, base − sub))` of the parts is the scheme's residual distribution.
    fn assert_parts_give(parts: &super::ResidualParts, residual: &[f64]) {
        let excess: Vec<f64> = parts
            .base
            .iter()
            .zip(&parts.sub)
            .map(|(b, s)| (b - s).max(0.0))
            .collect();
        let mass: f64 = excess.iter().sum();
        assert!(
            (parts.left_over - mass).abs() < 1e-12,
            "{} vs {mass}",
            parts.left_over
        );
        for (x, r) in excess.iter().zip(residual) {
            assert!((x / mass - r).abs() < 1e-12, "{excess:?} vs {residual:?}");
        }
    }

    #[test]
    fn parts_reproduce_each_residual() {
        let target = Distribution::from_probs(vec![0.1, 0.2, 0.3, 0.4]).unwrap();
        let draft = Distribution::from_probs(vec![0.5, 0.3, 0.15, 0.05]).unwrap();
        let kseq = KSeq::new(&target, &draft, 3, None).unwrap();
        let parts = kseq
            .residual()
            .parts(target.probs(), draft.probs(), None)
            .unwrap();
        assert_parts_give(&parts, kseq.residual_distribution().probs());
        for k in 1..=3 {
            let multi = MultiRound::new(&target, &draft, k).unwrap();
            let parts = multi
                .residual()
                .parts(target.probs(), draft.probs(), None)
                .unwrap();
            assert_parts_give(&parts, multi.residual_distribution().probs());
        }
    }
}
