//! The decoding methods by name, as every surface spells them.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::error::OptionError;
use super::method_options::MethodOption;

/// A decoding method's name (`--method`, `method:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum MethodName {
    /// One target call per token, no draft model.
    Autoregressive,
    /// Standard speculative sampling.
    Speculative,
    /// SpecTr (k-Seq or the ratio race, by the `selection` option).
    Spectr,
    /// Multi-round rejection over SpecTr's draft sets.
    Multiround,
    /// Mentored decoding (lossy, KL-bounded).
    Mentored,
    /// Typical acceptance (Medusa; lossy).
    Typical,
    /// Prompt lookup: n-gram drafts copied from the context, no draft model (lossless).
    Lookup,
}

impl MethodName {
    /// Every method, in documentation order.
    pub const ALL: [Self; 7] = [
        Self::Autoregressive,
        Self::Speculative,
        Self::Spectr,
        Self::Multiround,
        Self::Mentored,
        Self::Typical,
        Self::Lookup,
    ];

    /// The method's name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Autoregressive => "autoregressive",
            Self::Speculative => "speculative",
            Self::Spectr => "spectr",
            Self::Multiround => "multiround",
            Self::Mentored => "mentored",
            Self::Typical => "typical",
            Self::Lookup => "lookup",
        }
    }

    /// Whether the method drafts several sequences per round (and so takes `drafts` and
    /// `tree`; [`METHOD_OPTIONS`](super::METHOD_OPTIONS)).
    #[must_use]
    pub fn multi_draft(self) -> bool {
        self.takes(MethodOption::Drafts)
    }

    /// Whether the method drafts tokens (and so takes `gamma`): every method but
    /// autoregressive decoding.
    #[must_use]
    pub fn drafts(self) -> bool {
        self.takes(MethodOption::Gamma)
    }

    /// Whether the method uses a draft model: every drafting method but prompt lookup,
    /// which copies its drafts from the context.
    #[must_use]
    pub fn needs_draft_model(self) -> bool {
        self.drafts() && self != Self::Lookup
    }

    /// Whether γ is one sequence's length that can adapt (`dynamicGamma`).
    #[must_use]
    pub fn single_draft(self) -> bool {
        self.takes(MethodOption::DynamicGamma)
    }

    /// Whether a deliberate bug can be planted (the lossless methods with a draft model).
    #[must_use]
    pub fn takes_bug(self) -> bool {
        self.takes(MethodOption::Bug)
    }

    /// Every name, comma-separated (for messages and help).
    #[must_use]
    pub fn list() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }
}

impl fmt::Display for MethodName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MethodName {
    type Err = OptionError;

    fn from_str(s: &str) -> Result<Self, OptionError> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                let shown: String = s.chars().take(40).collect();
                // The name earlier versions gave SpecTr with the ratio race.
                let hint = if s == "otm" {
                    " (the optimal selection is method \"spectr\" with selection \"race\")"
                } else {
                    ""
                };
                OptionError::invalid(
                    "method",
                    format!("one of {}{hint}", Self::list()),
                    format!("{shown:?}"),
                )
            })
    }
}

impl From<&crate::Method> for MethodName {
    fn from(method: &crate::Method) -> Self {
        use crate::Method as M;
        match method {
            M::Autoregressive => Self::Autoregressive,
            M::Speculative { .. } => Self::Speculative,
            M::SpecTr { .. } => Self::Spectr,
            M::MultiRound { .. } => Self::Multiround,
            M::Mentored { .. } => Self::Mentored,
            M::Typical { .. } => Self::Typical,
            M::Lookup { .. } => Self::Lookup,
        }
    }
}
