//! Which options each decoding method takes, in one table ([`METHOD_OPTIONS`]): the
//! options' resolution refuses the others by it, the engine's configuration checks a
//! planted bug by it, and the bindings hand it to JavaScript (`METHOD_OPTIONS` of the npm
//! package, generated into `web/src/limits.js`), where the page enables its controls by it.

use serde::Serialize;

use super::method_name::MethodName;

/// An option that only some methods take (the others refuse it, naming it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum MethodOption {
    /// `gamma`: draft tokens per round (L for the multi-draft methods).
    Gamma,
    /// `selection`: SpecTr's selection rule.
    Selection,
    /// `drafts`: K, the draft sequences per round.
    Drafts,
    /// `tree`: a prefix tree of drafts instead of K i.i.d. sequences.
    Tree,
    /// `dynamicGamma`: γ adapts between rounds.
    DynamicGamma,
    /// `parallelDraft`: draft the next round while the target verifies this one.
    ParallelDraft,
    /// `kl`: mentored decoding's KL budget D.
    Kl,
    /// `epsilon`: typical acceptance's ceiling ε.
    Epsilon,
    /// `delta`: typical acceptance's scale δ.
    Delta,
    /// `ngram`: the longest context suffix prompt lookup searches for.
    Ngram,
    /// `bug`: a deliberate mistake planted for teaching.
    Bug,
}

use MethodOption::{
    Bug, Delta, Drafts, DynamicGamma, Epsilon, Gamma, Kl, Ngram, ParallelDraft, Selection, Tree,
};

/// The one table: each method and the method-specific options it takes.
pub const METHOD_OPTIONS: [(MethodName, &[MethodOption]); 7] = [
    (MethodName::Autoregressive, &[]),
    (
        MethodName::Speculative,
        &[Gamma, DynamicGamma, ParallelDraft, Bug],
    ),
    (MethodName::Spectr, &[Gamma, Selection, Drafts, Tree, Bug]),
    (MethodName::Multiround, &[Gamma, Drafts, Tree, Bug]),
    (MethodName::Mentored, &[Gamma, DynamicGamma, Kl]),
    (MethodName::Typical, &[Gamma, DynamicGamma, Epsilon, Delta]),
    (MethodName::Lookup, &[Gamma, Ngram]),
];

impl MethodOption {
    /// Every method-specific option, in documentation order.
    pub const ALL: [Self; 11] = [
        Gamma,
        Selection,
        Drafts,
        Tree,
        DynamicGamma,
        ParallelDraft,
        Kl,
        Epsilon,
        Delta,
        Ngram,
        Bug,
    ];

    /// The option's name, as the options spell it (`"dynamicGamma"`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Gamma => "gamma",
            Selection => "selection",
            Drafts => "drafts",
            Tree => "tree",
            DynamicGamma => "dynamicGamma",
            ParallelDraft => "parallelDraft",
            Kl => "kl",
            Epsilon => "epsilon",
            Delta => "delta",
            Ngram => "ngram",
            Bug => "bug",
        }
    }

    /// The methods that take the option, in documentation order.
    pub fn takers(self) -> impl Iterator<Item = MethodName> {
        MethodName::ALL.into_iter().filter(move |m| m.takes(self))
    }

    /// Who takes the option, as a refusal names them: `method "kl"`, `methods "spectr"
    /// and "multiround"`, or for the options a kind of method takes, the kind and its
    /// members (`the drafting methods (every method but "autoregressive")`).
    #[must_use]
    pub fn users(self) -> String {
        let takers: Vec<MethodName> = self.takers().collect();
        let others: Vec<MethodName> = MethodName::ALL
            .into_iter()
            .filter(|m| !takers.contains(m))
            .collect();
        let kind = match self {
            Gamma => Some("the drafting methods"),
            Bug => Some("the lossless drafting methods"),
            _ => None,
        };
        match kind {
            Some(kind) if others.len() < takers.len() => {
                format!("{kind} (every method but {})", quoted_list(&others))
            }
            Some(kind) => format!("{kind} ({})", quoted_list(&takers)),
            None if takers.len() == 1 => format!("method {}", quoted_list(&takers)),
            None => format!("methods {}", quoted_list(&takers)),
        }
    }
}

/// `"a"`, `"a" and "b"`, `"a", "b" and "c"`.
fn quoted_list(methods: &[MethodName]) -> String {
    let quoted: Vec<String> = methods
        .iter()
        .map(|m| format!("{:?}", m.as_str()))
        .collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

impl MethodName {
    /// The method-specific options the method takes ([`METHOD_OPTIONS`]).
    #[must_use]
    pub fn options(self) -> &'static [MethodOption] {
        METHOD_OPTIONS
            .iter()
            .find(|(m, _)| *m == self)
            .map_or(&[], |(_, options)| options)
    }

    /// Whether the method takes `option` ([`METHOD_OPTIONS`]).
    #[must_use]
    pub fn takes(self, option: MethodOption) -> bool {
        self.options().contains(&option)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_every_method_once_in_documentation_order() {
        let methods: Vec<MethodName> = METHOD_OPTIONS.iter().map(|(m, _)| *m).collect();
        assert_eq!(methods, MethodName::ALL);
    }

    #[test]
    fn every_option_has_a_taker_and_an_option_name() {
        for option in MethodOption::ALL {
            assert!(option.takers().next().is_some(), "{option:?}");
            assert!(
                super::super::DECODE_OPTION_NAMES.contains(&option.name()),
                "{option:?}"
            );
        }
    }

    #[test]
    fn refusals_name_who_takes_the_option() {
        assert_eq!(
            Gamma.users(),
            "the drafting methods (every method but \"autoregressive\")"
        );
        assert_eq!(
            Bug.users(),
            "the lossless drafting methods (\"speculative\", \"spectr\" and \"multiround\")"
        );
        assert_eq!(Drafts.users(), "methods \"spectr\" and \"multiround\"");
        assert_eq!(
            DynamicGamma.users(),
            "methods \"speculative\", \"mentored\" and \"typical\""
        );
        assert_eq!(Kl.users(), "method \"mentored\"");
    }
}
