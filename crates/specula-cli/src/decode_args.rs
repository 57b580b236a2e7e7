//! Flags shared by `generate` and `sample`: the decoding options as flags. Clap reads
//! each value's type; the ranges, defaults and the rule for a flag the method does not
//! use are the engine's one options parser (`specula_engine::options`), as for the npm
//! package and the page.

use std::path::PathBuf;

pub use crate::models::ModelSource;

use clap::Args;
use specula_engine::DecodeConfig;
use specula_engine::options::limits::{
    KL_RANGE, TEMPERATURE_RANGE, TOP_P_RANGE, TYPICAL_DELTA_RANGE, TYPICAL_EPSILON_RANGE,
};
use specula_engine::options::{DecodeOptions, MethodName, OptionError};
use specula_model::Backend;

use crate::error::CliError;
use crate::number::{self, Typed, TypedFields};
use crate::parse;

/// Decoding flags, as typed.
#[derive(Debug, Clone, Args)]
pub struct DecodeArgs {
    /// The prompt text (characters of the corpus alphabet).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub prompt: String,
    /// autoregressive, speculative (the default), spectr, multiround, mentored, typical
    /// (Medusa's typical acceptance, lossy) or lookup (prompt lookup: n-gram drafts from
    /// the context, no draft model). A flag the method does not use (--selection,
    /// --gamma, --drafts, --tree, --kl, --epsilon, --delta, --ngram, --dynamic-gamma,
    /// --parallel-draft, --bug) is refused.
    #[arg(long, value_name = "METHOD", allow_hyphen_values = true, value_parser = method_name)]
    pub method: Option<MethodName>,
    /// SpecTr's selection at each depth: kseq (k-Seq, the default) or race (the ratio
    /// race, which reaches the optimal selection's acceptance). spectr only.
    #[arg(long, value_name = "RULE", allow_hyphen_values = true)]
    pub selection: Option<String>,
    /// Draft length: γ for speculative/mentored/typical, the most tokens lookup proposes,
    /// L for spectr/multiround (default 4, at most 64).
    #[arg(long, value_name = "G", allow_hyphen_values = true, value_parser = number::typed)]
    pub gamma: Option<Typed>,
    /// Number of draft sequences K for spectr/multiround (default 4; K × L at most
    /// 1024).
    #[arg(long, value_name = "K", allow_hyphen_values = true, value_parser = number::typed)]
    pub drafts: Option<Typed>,
    /// Prefix-tree branching for spectr/multiround, e.g. 2,2,1 (K = product).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = parse::number_list)]
    pub tree: Option<NumberList>,
    /// Adapt γ between rounds (speculative, mentored and typical): +2 after a round that
    /// accepted every draft, −1 otherwise.
    #[arg(long)]
    pub dynamic_gamma: bool,
    /// Draft the next round while the target verifies this one (speculative with a fixed
    /// γ): the same distribution, other tokens for a seed. Here the two models still run
    /// one after the other; `specula bench --parallel-draft` runs them on two threads.
    #[arg(long)]
    pub parallel_draft: bool,
    /// KL budget D (nats per position) for mentored (required there).
    #[arg(long, value_name = "D", allow_hyphen_values = true, value_parser = number::typed)]
    pub kl: Option<Typed>,
    /// Typical acceptance's ceiling on its threshold, in [0, 1] (typical only; default
    /// 0.09).
    #[arg(long, value_name = "EPS", allow_hyphen_values = true, value_parser = number::typed)]
    pub epsilon: Option<Typed>,
    /// Typical acceptance's scale of exp(-H(target)) in its threshold, 0 to 1e6 (typical
    /// only; default 0.3).
    #[arg(long, value_name = "DELTA", allow_hyphen_values = true, value_parser = number::typed)]
    pub delta: Option<Typed>,
    /// The longest context suffix prompt lookup searches for, then shorter ones down to
    /// 1 (lookup only; default 3, at most 16).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = number::typed)]
    pub ngram: Option<Typed>,
    /// Sampling temperature (0 = greedy; default 1).
    #[arg(long, value_name = "T", allow_hyphen_values = true, value_parser = number::typed)]
    pub temperature: Option<Typed>,
    /// Keep only the N most likely tokens.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = number::typed)]
    pub top_k: Option<Typed>,
    /// Keep the smallest set of tokens with mass >= P.
    #[arg(long, value_name = "P", allow_hyphen_values = true, value_parser = number::typed)]
    pub top_p: Option<Typed>,
    /// Seed of the decoder's random numbers (0 to 2^53 - 1; default 0).
    #[arg(long, value_name = "S", allow_hyphen_values = true, value_parser = number::typed)]
    pub seed: Option<Typed>,
    /// Stop once the text contains STR (repeat the flag for several).
    #[arg(long, value_name = "STR", allow_hyphen_values = true)]
    pub stop: Vec<String>,
    /// cpu or wgpu (wgpu needs `cargo build -p specula-cli --features wgpu`).
    #[arg(
        long,
        value_name = "BACKEND",
        default_value = "cpu",
        allow_hyphen_values = true
    )]
    pub backend: String,
    /// Load draft.{json,bpk} and target.{json,bpk} from DIR instead of the bundled pair.
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub models: Option<PathBuf>,
    /// A Llama-family GGUF file as the target model (SmolLM2, Qwen2, ...) instead of the
    /// bundled pair; see docs/real-models.md.
    #[arg(
        long,
        value_name = "FILE.gguf",
        allow_hyphen_values = true,
        conflicts_with = "models"
    )]
    pub target: Option<PathBuf>,
    /// The draft model's GGUF file (same tokenizer as --target); lookup needs none.
    #[arg(
        long,
        value_name = "FILE.gguf",
        allow_hyphen_values = true,
        requires = "target"
    )]
    pub draft: Option<PathBuf>,
    /// CPU threads: for burn, and for the host forward pass's dense layers (at most 2 there).
    #[arg(
        long,
        value_name = "N",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub threads: String,
    /// Plant a deliberate mistake in the decoder, for teaching and for checking that
    /// statistical tests catch it: resample-from-target, argmax-draft, shared-uniform,
    /// unprocessed-target, filtered-draft or cache-reset. The output then no longer
    /// follows the target. Only speculative, spectr and multiround take one (lookup has
    /// no draft model to plant one in).
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub bug: Option<String>,
}

/// A comma-separated list of numbers (`--tree 2,2,1`), each as typed.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberList(pub Vec<Typed>);

/// Checked decoding settings.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeSettings {
    /// The prompt text.
    pub prompt: String,
    /// The engine configuration (the token texts for stop strings are the models').
    pub config: DecodeConfig,
    /// Where the models run.
    pub backend: Backend,
    /// Which models to load.
    pub models: ModelSource,
    /// CPU threads.
    pub threads: usize,
}

impl DecodeArgs {
    /// The options as the engine reads them, and what their numbers were typed as;
    /// `max_tokens` is the command's own flag.
    #[must_use]
    pub fn options(&self, max_tokens: Option<&Typed>) -> (DecodeOptions, TypedFields) {
        let mut typed = TypedFields::default();
        let tree = self.tree.as_ref().map(|list| {
            let entries = list.0.iter().enumerate();
            let read = entries.map(|(i, t)| typed.whole(&format!("tree[{i}]"), Some(t)));
            read.map(|v| v.unwrap_or(f64::NAN)).collect()
        });
        let options = DecodeOptions {
            prompt: Some(self.prompt.clone().into()),
            method: self.method.map(|m| m.as_str().to_owned()),
            selection: self.selection.as_deref().map(|s| s.trim().to_owned()),
            gamma: typed.whole("gamma", self.gamma.as_ref()),
            drafts: typed.whole("drafts", self.drafts.as_ref()),
            tree,
            dynamic_gamma: self.dynamic_gamma.then_some(true),
            parallel_draft: self.parallel_draft.then_some(true),
            kl: typed.real("kl", self.kl.as_ref(), KL_RANGE),
            epsilon: typed.real("epsilon", self.epsilon.as_ref(), TYPICAL_EPSILON_RANGE),
            delta: typed.real("delta", self.delta.as_ref(), TYPICAL_DELTA_RANGE),
            ngram: typed.whole("ngram", self.ngram.as_ref()),
            temperature: typed.real("temperature", self.temperature.as_ref(), TEMPERATURE_RANGE),
            top_k: typed.whole("topK", self.top_k.as_ref()),
            top_p: typed.real("topP", self.top_p.as_ref(), TOP_P_RANGE),
            seed: typed.whole("seed", self.seed.as_ref()),
            max_tokens: typed.whole("maxTokens", max_tokens),
            stop: (!self.stop.is_empty()).then(|| self.stop.clone().into()),
            record_distributions: None,
            bug: self.bug.as_deref().map(|s| s.trim().to_owned()),
        };
        (options, typed)
    }

    /// Checks every flag with the engine's options parser. `max_tokens` is the
    /// command's `--max-tokens`.
    ///
    /// # Errors
    /// A usage error naming the first bad flag.
    pub fn into_settings(self, max_tokens: Option<&Typed>) -> Result<DecodeSettings, CliError> {
        let (options, typed) = self.options(max_tokens);
        let resolved = options
            .resolve()
            .map_err(|e| option_error(&typed.quote(e)))?;
        let backend = match parse::choice("--backend", &self.backend, &["cpu", "wgpu"])? {
            "cpu" => Backend::Cpu,
            _ => Backend::Wgpu,
        };
        let models = match (self.target, self.draft) {
            (Some(_), None) if resolved.config.method().needs_draft() => {
                return Err(CliError::usage(format!(
                    "--draft: {} needs a draft model (FILE.gguf with the target's \
                     tokenizer); only lookup and autoregressive run without one",
                    resolved.config.method().name()
                )));
            }
            (Some(target), draft) => ModelSource::Gguf { target, draft },
            (None, _) => ModelSource::Bundled(self.models),
        };
        Ok(DecodeSettings {
            prompt: resolved.prompt,
            config: resolved.config,
            backend,
            models,
            threads: parse::uint("--threads", &self.threads, 1, 256)?,
        })
    }
}

/// `--method`, surrounding white space ignored as in every name and number.
fn method_name(raw: &str) -> Result<MethodName, OptionError> {
    raw.trim().parse()
}

/// An option error as the CLI says it: the option named by its flag.
#[must_use]
pub fn option_error(e: &OptionError) -> CliError {
    CliError::option(e, &flag_name(&e.field))
}

/// The flag of an option (`topK` → `--top-k`, `tree[1]` → `--tree entry 1`).
pub(crate) fn flag_name(field: &str) -> String {
    let (base, index) = match field.split_once('[') {
        Some((base, rest)) => (base, Some(rest.trim_end_matches(']'))),
        None => (field, None),
    };
    let mut flag = String::from("--");
    for ch in base.chars() {
        if ch.is_ascii_uppercase() {
            flag.push('-');
            flag.push(ch.to_ascii_lowercase());
        } else {
            flag.push(ch);
        }
    }
    match index {
        Some(i) => format!("{flag} entry {i}"),
        None => flag,
    }
}

#[cfg(test)]
mod tests {
    use super::flag_name;

    #[test]
    fn fields_are_shown_as_flags() {
        assert_eq!(flag_name("topK"), "--top-k");
        assert_eq!(flag_name("dynamicGamma"), "--dynamic-gamma");
        assert_eq!(flag_name("tree[1]"), "--tree entry 1");
        assert_eq!(flag_name("stop[0]"), "--stop entry 0");
        assert_eq!(flag_name("maxTokens"), "--max-tokens");
    }
}
