//! From [`DecodeOptions`] as given to a checked [`DecodeConfig`]: defaults filled in,
//! every range and combination checked, in one place for every surface.

use specula_core::{Bug, SamplingConfig};

use super::DecodeOptions;
use super::error::OptionError;
use super::limits::{
    DEFAULT_DRAFTS, DEFAULT_GAMMA, DEFAULT_MAX_TOKENS, DEFAULT_NGRAM, DEFAULT_PARALLEL_DRAFT,
    DEFAULT_SEED, DEFAULT_TEMPERATURE, DEFAULT_TYPICAL_DELTA, DEFAULT_TYPICAL_EPSILON, KL_RANGE,
    MAX_DRAFTS, MAX_GAMMA, MAX_KL, MAX_NGRAM, MAX_ROUND_NODES, MAX_SEED, MAX_TEMPERATURE,
    MAX_TOKENS, MAX_TOP_K, MAX_TYPICAL_DELTA, TEMPERATURE_RANGE, TOP_P_RANGE, TYPICAL_DELTA_RANGE,
    TYPICAL_EPSILON_RANGE,
};
use super::method_name::MethodName;
use super::method_options::MethodOption;
use super::number::{whole, whole_usize};
use super::prompt::{stop_strings, stop_tokens, text_prompt, token_prompt};
use crate::config::node_count;
use crate::{DecodeConfig, DecodeConfigBuilder, DraftShape, GammaPolicy, Method, Selection};

/// Checked options: the prompt and the engine configuration (without the token text
/// table, which the models add).
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The prompt text.
    pub prompt: String,
    /// The engine configuration.
    pub config: DecodeConfig,
}

/// Checked options of `decode()`: the prompt's token ids and the engine configuration
/// (stop tokens in it, no stop strings).
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedTokens {
    /// The prompt's token ids, each below the vocabulary.
    pub prompt: Vec<u32>,
    /// The engine configuration.
    pub config: DecodeConfig,
}

/// Temperature, top-k and top-p, checked and with their defaults (decoding, and
/// planning with a bug).
///
/// # Errors
/// [`OptionError`] naming the first bad one.
pub fn sampling(
    temperature: Option<f64>,
    top_k: Option<f64>,
    top_p: Option<f64>,
) -> Result<SamplingConfig, OptionError> {
    let temperature = match temperature {
        Some(t) => TEMPERATURE_RANGE.check(
            "temperature",
            t,
            &format!("a number from 0 (greedy) to {MAX_TEMPERATURE:e}"),
        )?,
        None => DEFAULT_TEMPERATURE,
    };
    let top_k = top_k
        .map(|k| whole_usize("topK", k, 1, MAX_TOP_K, " (leave it out for no top-k)"))
        .transpose()?;
    let top_p = top_p
        .map(|p| TOP_P_RANGE.check("topP", p, "a number in (0, 1] (leave it out for no top-p)"))
        .transpose()?;
    Ok(SamplingConfig {
        temperature,
        top_k,
        top_p,
    })
}

impl DecodeOptions {
    /// Checks every option, fills in the defaults of [`limits`](super::limits) and builds
    /// the engine configuration.
    ///
    /// # Errors
    /// [`OptionError`] naming the first bad option: a value out of range, an option the
    /// method does not use, a missing prompt or KL budget, a typical `epsilon` outside
    /// `[0, 1]` or `delta` outside `[0, MAX_TYPICAL_DELTA]`, an `ngram` outside
    /// `1..=MAX_NGRAM`, a tree that disagrees with
    /// `gamma` or `drafts`, or a round of more than [`MAX_ROUND_NODES`] draft nodes.
    pub fn resolve(&self) -> Result<Resolved, OptionError> {
        let prompt = text_prompt(self.prompt.as_ref())?;
        let config = self
            .config()?
            .stop_strings(stop_strings(self.stop.as_ref())?);
        let config = build(config)?;
        Ok(Resolved { prompt, config })
    }

    /// As [`resolve`](Self::resolve), for `decode()` over models of `vocab` tokens: the
    /// prompt and the stop list are token ids, each below `vocab`.
    ///
    /// # Errors
    /// As [`resolve`](Self::resolve); the prompt must be a non-empty array of token ids
    /// and the stop list token ids, an id out of range named by its item (`prompt[3]`).
    pub fn resolve_tokens(&self, vocab: usize) -> Result<ResolvedTokens, OptionError> {
        let prompt = token_prompt(self.prompt.as_ref(), vocab)?;
        let config = self
            .config()?
            .stop_tokens(stop_tokens(self.stop.as_ref(), vocab)?);
        let config = build(config)?;
        Ok(ResolvedTokens { prompt, config })
    }

    /// Every option but the prompt and the stop list, checked, as the settings of a
    /// configuration ([`build`] gives the engine the last word).
    fn config(&self) -> Result<DecodeConfigBuilder, OptionError> {
        let name: MethodName = self.method.as_deref().unwrap_or("speculative").parse()?;
        self.refuse_unused(name)?;
        let gamma = self
            .gamma
            .map(|g| whole_usize("gamma", g, 1, MAX_GAMMA, " (draft tokens per round)"))
            .transpose()?;
        let drafts = self
            .drafts
            .map(|k| whole_usize("drafts", k, 1, MAX_DRAFTS, " (draft sequences per round)"))
            .transpose()?;
        let kl = self
            .kl
            .map(|d| {
                KL_RANGE.check(
                    "kl",
                    d,
                    &format!("a KL budget D from 0 (lossless) to {MAX_KL:e} nats"),
                )
            })
            .transpose()?;
        let epsilon = self
            .epsilon
            .map(|e| {
                TYPICAL_EPSILON_RANGE.check(
                    "epsilon",
                    e,
                    "a probability from 0 to 1 (the ceiling of typical acceptance's threshold)",
                )
            })
            .transpose()?;
        let delta = self
            .delta
            .map(|d| {
                TYPICAL_DELTA_RANGE.check(
                    "delta",
                    d,
                    &format!("a number from 0 to {MAX_TYPICAL_DELTA:e} (the scale of exp(-H))"),
                )
            })
            .transpose()?;
        let ngram = self
            .ngram
            .map(|n| whole_usize("ngram", n, 1, MAX_NGRAM, " (the longest suffix looked up)"))
            .transpose()?;
        let policy = if self.dynamic_gamma == Some(true) {
            GammaPolicy::Heuristic {
                max_gamma: MAX_GAMMA,
            }
        } else {
            GammaPolicy::Fixed
        };
        let gamma_or_default = gamma.unwrap_or(DEFAULT_GAMMA);
        let method = match name {
            MethodName::Autoregressive => Method::Autoregressive,
            MethodName::Speculative => Method::Speculative {
                gamma: gamma_or_default,
                policy,
            },
            MethodName::Mentored => Method::Mentored {
                gamma: gamma_or_default,
                kl_budget: kl.ok_or_else(|| {
                    OptionError::missing(
                        "kl",
                        "method \"mentored\" needs a KL budget D >= 0 in nats (0 is lossless)",
                    )
                })?,
                policy,
            },
            MethodName::Typical => Method::Typical {
                gamma: gamma_or_default,
                epsilon: epsilon.unwrap_or(DEFAULT_TYPICAL_EPSILON),
                delta: delta.unwrap_or(DEFAULT_TYPICAL_DELTA),
                policy,
            },
            MethodName::Lookup => Method::Lookup {
                gamma: gamma_or_default,
                ngram: ngram.unwrap_or(DEFAULT_NGRAM),
            },
            MethodName::Spectr | MethodName::Multiround => {
                let drafts = match &self.tree {
                    Some(tree) => tree_shape(tree, gamma, drafts)?,
                    None => iid_shape(drafts.unwrap_or(DEFAULT_DRAFTS), gamma_or_default)?,
                };
                match name {
                    MethodName::Spectr => Method::SpecTr {
                        drafts,
                        selection: self
                            .selection
                            .as_deref()
                            .map(parse_selection)
                            .transpose()?
                            .unwrap_or_default(),
                    },
                    _ => Method::MultiRound { drafts },
                }
            }
        };
        let sampling = sampling(self.temperature, self.top_k, self.top_p)?;
        let seed = self
            .seed
            .map(|s| whole("seed", s, 0, MAX_SEED, " (2^53 - 1)"))
            .transpose()?
            .unwrap_or(DEFAULT_SEED);
        let max_new_tokens = self
            .max_tokens
            .map(|n| whole_usize("maxTokens", n, 1, MAX_TOKENS, " (tokens to generate)"))
            .transpose()?
            .unwrap_or(DEFAULT_MAX_TOKENS);
        let bug = self.bug.as_deref().map(parse_bug).transpose()?;
        Ok(DecodeConfig::builder(method)
            .sampling(sampling)
            .max_new_tokens(max_new_tokens)
            .seed(seed)
            .record_distributions(self.record_distributions.unwrap_or(false))
            .bug(bug)
            .parallel_draft(self.parallel_draft.unwrap_or(DEFAULT_PARALLEL_DRAFT)))
    }

    /// Refuses every option given that `name` does not take
    /// ([`METHOD_OPTIONS`](super::METHOD_OPTIONS)).
    fn refuse_unused(&self, name: MethodName) -> Result<(), OptionError> {
        for option in MethodOption::ALL {
            let given = match option {
                MethodOption::Gamma => self.gamma.is_some(),
                MethodOption::Selection => self.selection.is_some(),
                MethodOption::Drafts => self.drafts.is_some(),
                MethodOption::Tree => self.tree.is_some(),
                MethodOption::DynamicGamma => self.dynamic_gamma.is_some(),
                MethodOption::ParallelDraft => self.parallel_draft.is_some(),
                MethodOption::Kl => self.kl.is_some(),
                MethodOption::Epsilon => self.epsilon.is_some(),
                MethodOption::Delta => self.delta.is_some(),
                MethodOption::Ngram => self.ngram.is_some(),
                MethodOption::Bug => self.bug.is_some(),
            };
            if given && !name.takes(option) {
                let mut users = option.users();
                if option == MethodOption::Bug && name == MethodName::Lookup {
                    users.push_str(": \"lookup\" draws no draft to plant one in");
                }
                return Err(OptionError::unused(option.name(), name.as_str(), &users));
            }
            if option == MethodOption::ParallelDraft
                && self.parallel_draft == Some(true)
                && self.dynamic_gamma == Some(true)
            {
                return Err(OptionError::invalid(
                    "parallelDraft",
                    "false or left out with dynamicGamma (the next round's drafts are drawn before this round's outcome sets gamma)",
                    "true",
                ));
            }
        }
        Ok(())
    }
}

/// The configuration from checked settings. Everything the engine checks is checked
/// before with the option named; this is the engine's own word on whatever is left.
fn build(settings: DecodeConfigBuilder) -> Result<DecodeConfig, OptionError> {
    settings
        .build()
        .map_err(|e| OptionError::invalid("method", "settings the engine accepts", e.to_string()))
}

/// K i.i.d. drafts of length L, within [`MAX_ROUND_NODES`].
fn iid_shape(k: usize, length: usize) -> Result<DraftShape, OptionError> {
    let nodes = k.saturating_mul(length);
    if nodes > MAX_ROUND_NODES {
        return Err(OptionError::invalid(
            "drafts",
            format!("at most {MAX_ROUND_NODES} draft nodes per round with gamma (drafts × gamma)"),
            format!("{k} × {length} = {nodes}"),
        ));
    }
    Ok(DraftShape::Iid { k, length })
}

/// A prefix tree from its branching per depth; `gamma` and `drafts`, when also given,
/// must agree with it (depth and leaves), so no setting is silently ignored.
fn tree_shape(
    tree: &[f64],
    gamma: Option<usize>,
    drafts: Option<usize>,
) -> Result<DraftShape, OptionError> {
    if tree.is_empty() || tree.len() > MAX_GAMMA {
        return Err(OptionError::invalid(
            "tree",
            format!("the branching at each depth, 1 to {MAX_GAMMA} depths"),
            format!("{} depths", tree.len()),
        ));
    }
    let branching = tree
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            whole_usize(
                &format!("tree[{i}]"),
                b,
                1,
                MAX_DRAFTS,
                " (children per node)",
            )
        })
        .collect::<Result<Vec<usize>, _>>()?;
    let leaves = branching.iter().fold(1_usize, |a, &b| a.saturating_mul(b));
    let shown = || format!("{branching:?}");
    if leaves > MAX_DRAFTS {
        return Err(OptionError::invalid(
            "tree",
            format!("a tree of at most {MAX_DRAFTS} leaves (draft sequences)"),
            format!("{} with {leaves} leaves", shown()),
        ));
    }
    let nodes = node_count(&branching);
    if nodes > MAX_ROUND_NODES as u128 {
        return Err(OptionError::invalid(
            "tree",
            format!("a tree of at most {MAX_ROUND_NODES} draft nodes per round"),
            format!("{} with {nodes} nodes", shown()),
        ));
    }
    if let Some(g) = gamma.filter(|&g| g != branching.len()) {
        return Err(OptionError::invalid(
            "gamma",
            format!(
                "the depth of tree {} ({}), or left out",
                shown(),
                branching.len()
            ),
            g.to_string(),
        ));
    }
    if let Some(k) = drafts.filter(|&k| k != leaves) {
        return Err(OptionError::invalid(
            "drafts",
            format!(
                "the number of leaves of tree {} ({leaves}), or left out",
                shown()
            ),
            k.to_string(),
        ));
    }
    Ok(DraftShape::Tree {
        k: leaves,
        branching,
    })
}

fn parse_selection(name: &str) -> Result<Selection, OptionError> {
    Selection::ALL
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            let shown: String = name.chars().take(40).collect();
            // The exact linear program is a plan's selection only.
            let hint = if name == "otm" {
                "; \"otm\", the exact linear program, is for plans only, and the race reaches \
             its acceptance"
            } else {
                ""
            };
            OptionError::invalid(
                "selection",
                format!(
                    "\"kseq\" (k-Seq, the default) or \"race\" (the ratio race: the optimal \
                 selection's acceptance{hint})"
                ),
                format!("{shown:?}"),
            )
        })
}

fn parse_bug(name: &str) -> Result<Bug, OptionError> {
    Bug::from_name(name).ok_or_else(|| {
        let shown: String = name.chars().take(40).collect();
        OptionError::invalid(
            "bug",
            format!("one of {}", Bug::ALL.map(Bug::name).join(", ")),
            format!("{shown:?}"),
        )
    })
}
