//! What a plan changed in its input without being asked, said in the report
//! ([`PlanReport::notes`]) rather than done silently: a probability vector whose sum is
//! within [`NORMALIZATION_TOLERANCE`] of 1 but off by more than rounding is rescaled to
//! sum to 1, and a k-Seq ρ below ρ* by a relative [`RHO_TOLERANCE`] or less is raised to ρ*.
//!
//! [`PlanReport::notes`]: super::PlanReport::notes

use serde::Serialize;

use crate::{NORMALIZATION_TOLERANCE, RHO_TOLERANCE};

/// What kind of change a [`PlanNote`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum PlanNoteKind {
    /// A distribution's entries were divided by their sum, which was not 1 but within
    /// the tolerance (without `normalize`).
    Rescaled,
    /// k-Seq's ρ was below ρ* by no more than the tolerance and ρ* was used.
    RhoRaised,
}

/// One change the plan made to its input: which option, the value as given, the value
/// used, and a sentence saying so.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlanNote {
    /// The change.
    pub kind: PlanNoteKind,
    /// The option it is about: `target`, `draft` or `rho`.
    pub field: &'static str,
    /// The value as given: the sum of the entries, or ρ.
    pub given: f64,
    /// The value used instead: 1 (the sum after rescaling), or ρ*.
    pub used: f64,
    /// What was changed and why, in one sentence naming the options as npm's `plan()`
    /// does (`specula plan` names its flags).
    pub message: String,
}

impl PlanNote {
    /// The note on a distribution given as probabilities whose entries sum to `sum`, if
    /// rescaling it to 1 changes it by more than the rounding of `len` entries (`len`
    /// machine epsilons): `0.1,0.2,0.3,0.4` sums to 1 up to rounding and has no note,
    /// `0.5,0.4999995` has one.
    #[must_use]
    pub fn rescaled(field: &'static str, sum: f64, len: usize) -> Option<Self> {
        let rounding = len as f64 * f64::EPSILON;
        ((sum - 1.0).abs() > rounding).then(|| Self::new(PlanNoteKind::Rescaled, field, sum, 1.0))
    }

    /// The note on a ρ override below ρ* that was taken as ρ*, if it was below.
    #[must_use]
    pub fn rho_raised(rho: f64, rho_star: f64) -> Option<Self> {
        (rho < rho_star).then(|| Self::new(PlanNoteKind::RhoRaised, "rho", rho, rho_star))
    }

    fn new(kind: PlanNoteKind, field: &'static str, given: f64, used: f64) -> Self {
        let mut note = Self {
            kind,
            field,
            given,
            used,
            message: String::new(),
        };
        note.message = note.describe(str::to_owned);
        note
    }

    /// The note's sentence with each option named by `name` (given `target`, `draft`,
    /// `normalize` or `rho`; the CLI passes a function giving `--target` and so on).
    #[must_use]
    pub fn describe(&self, name: impl Fn(&str) -> String) -> String {
        match self.kind {
            PlanNoteKind::Rescaled => format!(
                "{} sums to {}, not 1: its entries were divided by that sum (a sum within \
                 {NORMALIZATION_TOLERANCE:e} of 1 is taken as rounding; {} rescales any \
                 positive sum)",
                name(self.field),
                self.given,
                name("normalize"),
            ),
            PlanNoteKind::RhoRaised => format!(
                "{} {} is below rho* = {} by a relative {:.1e}, within the {RHO_TOLERANCE:e} \
                 taken as rounding: rho* was used",
                name(self.field),
                self.given,
                self.used,
                (self.used - self.given) / self.used,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_has_no_note_and_more_has_one() {
        let sum: f64 = [0.1, 0.2, 0.3, 0.4].iter().sum();
        assert!(PlanNote::rescaled("target", sum, 4).is_none());
        assert!(PlanNote::rescaled("target", 1.0, 1).is_none());
        let note = PlanNote::rescaled("draft", 0.9999995, 2).expect("a note");
        assert_eq!((note.kind, note.field), (PlanNoteKind::Rescaled, "draft"));
        assert_eq!((note.given, note.used), (0.9999995, 1.0));
        assert!(
            note.message.starts_with("draft sums to 0.9999995, not 1"),
            "{note:?}"
        );
        let flags = note.describe(|n| format!("--{n}"));
        assert!(flags.contains("--draft sums") && flags.contains("--normalize rescales"));
    }

    #[test]
    fn a_raised_rho_is_noted_with_its_gap() {
        assert!(PlanNote::rho_raised(2.0, 2.0).is_none());
        assert!(PlanNote::rho_raised(2.5, 2.0).is_none());
        let note = PlanNote::rho_raised(2.0 - 1e-12, 2.0).expect("a note");
        assert_eq!((note.kind, note.used), (PlanNoteKind::RhoRaised, 2.0));
        assert!(
            note.message.contains("by a relative 5.0e-13"),
            "{}",
            note.message
        );
    }
}
