//! The stages of a transformer's forward pass that a stage profile times, listed once
//! for every surface (the host pass's profile, `specula bench`, the npm package's
//! `stageTimes()`), and the totals such a profile keeps.

use std::time::Duration;

use serde::Serialize;

/// One stage of a forward pass. Per block: the norms, the fused query/key/value
/// projection, attention, the output projection, the MLP's input projection(s) with
/// their activation and its output projection; around the blocks the embedding, the
/// final norm and the LM head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ForwardStage {
    /// The token (and position) embeddings of the new positions, and starting the helper
    /// thread when the pass runs on two.
    Embed,
    /// Every norm: before attention and before the MLP in each block, and the final one.
    Norms,
    /// The fused query/key/value projection, rotary positions (Llama) and copying the
    /// new keys and values out for the cache.
    Qkv,
    /// Attention of the new positions over the cached and the new ones.
    Attention,
    /// Attention's output projection and its residual add.
    AttnOut,
    /// The MLP's input projection(s) with the activation (GELU, or SwiGLU's gate).
    MlpIn,
    /// The MLP's output projection and its residual add.
    MlpOut,
    /// The LM head: the logits.
    Head,
}

impl ForwardStage {
    /// How many stages there are.
    pub const COUNT: usize = 8;

    /// Every stage, in the order a forward pass runs them.
    pub const ALL: [Self; Self::COUNT] = [
        Self::Embed,
        Self::Norms,
        Self::Qkv,
        Self::Attention,
        Self::AttnOut,
        Self::MlpIn,
        Self::MlpOut,
        Self::Head,
    ];

    /// The stage's name as JSON and JavaScript spell it (camelCase).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Embed => "embed",
            Self::Norms => "norms",
            Self::Qkv => "qkv",
            Self::Attention => "attention",
            Self::AttnOut => "attnOut",
            Self::MlpIn => "mlpIn",
            Self::MlpOut => "mlpOut",
            Self::Head => "head",
        }
    }

    /// The stage's place in [`ALL`](Self::ALL) and in [`StageTimes::stages`].
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// What a stage profile has added up since it was turned on or reset: how many forward
/// passes and new positions (rows × positions per pass) ran, their whole time and each
/// stage's. The stages never add up to more than the whole: what lies between them
/// (waiting for a helper thread at the end, the profile's own bookkeeping) is in
/// `total` only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// Forward passes timed.
    pub passes: u64,
    /// New positions those passes ran, over every row.
    pub positions: u64,
    /// The passes' whole time.
    pub total: Duration,
    /// Each stage's time, indexed by [`ForwardStage::index`].
    pub stages: [Duration; ForwardStage::COUNT],
}

impl StageTimes {
    /// The time of `stage`.
    #[must_use]
    pub fn stage(&self, stage: ForwardStage) -> Duration {
        self.stages[stage.index()]
    }

    /// The time of every stage together (at most [`total`](Self::total)).
    #[must_use]
    pub fn stage_sum(&self) -> Duration {
        self.stages.iter().sum()
    }

    /// Adds `other`'s counts and times to these (saturating).
    pub fn add(&mut self, other: &Self) {
        self.passes = self.passes.saturating_add(other.passes);
        self.positions = self.positions.saturating_add(other.positions);
        self.total = self.total.saturating_add(other.total);
        for (mine, theirs) in self.stages.iter_mut().zip(other.stages) {
            *mine = mine.saturating_add(theirs);
        }
    }

    /// `(stage, milliseconds)` for every stage, in [`ForwardStage::ALL`]'s order.
    pub fn stage_ms(&self) -> impl Iterator<Item = (ForwardStage, f64)> + '_ {
        ForwardStage::ALL
            .into_iter()
            .map(|s| (s, self.stage(s).as_secs_f64() * 1e3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serialised_names_in_order() {
        for (i, stage) in ForwardStage::ALL.into_iter().enumerate() {
            assert_eq!(stage.index(), i);
            let json = serde_json::to_string(&stage).unwrap();
            assert_eq!(json, format!("\"{}\"", stage.name()));
        }
    }

    #[test]
    fn times_add_up() {
        let mut a = StageTimes::default();
        let mut one = StageTimes {
            passes: 1,
            positions: 5,
            total: Duration::from_millis(10),
            ..StageTimes::default()
        };
        one.stages[ForwardStage::Qkv.index()] = Duration::from_millis(3);
        one.stages[ForwardStage::Head.index()] = Duration::from_millis(4);
        a.add(&one);
        a.add(&one);
        assert_eq!((a.passes, a.positions), (2, 10));
        assert_eq!(a.total, Duration::from_millis(20));
        assert_eq!(a.stage_sum(), Duration::from_millis(14));
        assert_eq!(a.stage(ForwardStage::Head), Duration::from_millis(8));
        let ms: Vec<f64> = a.stage_ms().map(|(_, ms)| ms).collect();
        assert_eq!(ms.len(), ForwardStage::COUNT);
        assert!((ms[ForwardStage::Qkv.index()] - 6.0).abs() < 1e-9);
    }
}
