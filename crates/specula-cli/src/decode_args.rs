//! Flags shared by `generate` and `sample`: the decoding method and sampling settings,
//! parsed into an engine [`Method`] and [`SamplingConfig`] with one-line errors.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use specula_core::Bug;
use specula_engine::{
    DraftShape, Error as EngineError, GammaPolicy, MAX_DRAFT_NODES, Method, SamplingConfig,
};
use specula_model::Backend;

use crate::error::CliError;
use crate::parse;

/// The longest draft `--gamma` accepts, and the deepest `--tree`.
pub const MAX_GAMMA: usize = 64;

/// The most draft nodes one round may create (`K × L` for i.i.d. drafts, the sum of the
/// level widths for a tree): the target verifies them all in one call whose attention is
/// quadratic in their number, so this keeps the largest round within about a second and
/// a few hundred megabytes with the bundled target (measured in docs/limits.md).
pub const MAX_ROUND_NODES: usize = 1024;

/// The methods `--method` accepts.
pub const METHODS: [&str; 6] = [
    "autoregressive",
    "speculative",
    "spectr",
    "multiround",
    "otm",
    "mentored",
];

/// Decoding flags, as typed.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The prompt text (characters of the corpus alphabet).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub prompt: String,
    /// autoregressive, speculative, spectr, multiround, otm or mentored. Of --gamma,
    /// --drafts, --tree and --kl, those the method does not use are ignored, with a note
    /// on stderr.
    #[arg(
        long,
        value_name = "METHOD",
        default_value = "speculative",
        allow_hyphen_values = true
    )]
    pub method: String,
    /// Draft length: γ for speculative/mentored, L for spectr/multiround/otm (default 4).
    #[arg(long, value_name = "G", allow_hyphen_values = true)]
    pub gamma: Option<String>,
    /// Number of draft sequences K for spectr/multiround/otm (default 4).
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    pub drafts: Option<String>,
    /// Prefix-tree branching for spectr/multiround/otm, e.g. 2,2,1 (K = product).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub tree: Option<String>,
    /// KL budget D (nats per position) for mentored (required there).
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub kl: Option<String>,
    /// Sampling temperature (0 = greedy).
    #[arg(
        long,
        value_name = "T",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub temperature: String,
    /// Keep only the N most likely tokens.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub top_k: Option<String>,
    /// Keep the smallest set of tokens with mass >= P.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub top_p: Option<String>,
    /// Seed of the decoder's random numbers.
    #[arg(
        long,
        value_name = "S",
        default_value = "0",
        allow_hyphen_values = true
    )]
    pub seed: String,
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
    /// follows the target. Only speculative, spectr, multiround and otm take one.
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub bug: Option<String>,
}

/// Checked decoding settings.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeSettings {
    /// The prompt text.
    pub prompt: String,
    /// The engine method.
    pub method: Method,
    /// Temperature, top-k, top-p.
    pub sampling: SamplingConfig,
    /// Decoder seed.
    pub seed: u64,
    /// Where the models run.
    pub backend: Backend,
    /// A directory of model files, or the bundled pair.
    pub models: Option<PathBuf>,
    /// CPU threads.
    pub threads: usize,
    /// One line for each flag given that the method does not use (and that was ignored).
    pub notes: Vec<String>,
    /// The deliberate mistake asked for with `--bug`, if any.
    pub bug: Option<Bug>,
}

impl DecodeSettings {
    /// Writes each of [`Self::notes`] to stderr as `note: …` (a closed stderr is not an
    /// error: the notes are advice).
    pub fn print_notes(&self) {
        let mut stderr = std::io::stderr().lock();
        for note in &self.notes {
            let _ = writeln!(stderr, "note: {note}");
        }
    }
}

impl DecodeArgs {
    /// Parses every flag and checks that it fits the method. Flags the method does not
    /// use are dropped, each with a line in [`DecodeSettings::notes`].
    ///
    /// # Errors
    /// A usage error naming the first bad flag.
    pub fn into_settings(mut self) -> Result<DecodeSettings, CliError> {
        if self.prompt.is_empty() {
            return Err(CliError::usage(
                "--prompt is empty: give at least one character",
            ));
        }
        let name = parse::choice("--method", &self.method, &METHODS)?;
        let multi = matches!(name, "spectr" | "multiround" | "otm");
        let drafting = name != "autoregressive";
        // A flag the method does not use is ignored with a note, so that one command
        // line can be reused across methods (`--method $m --gamma 4 --drafts 4 ...`).
        let mut notes = Vec::new();
        let mut unused = |flag: &str, value: &mut Option<String>, used: bool, takers: &str| {
            if !used && value.take().is_some() {
                notes.push(format!(
                    "{flag} does not apply to --method {name} and is ignored; it is only \
                     for {takers}"
                ));
            }
        };
        unused(
            "--gamma",
            &mut self.gamma,
            drafting,
            "the drafting methods (speculative, spectr, multiround, otm, mentored)",
        );
        unused(
            "--drafts",
            &mut self.drafts,
            multi,
            "spectr, multiround and otm",
        );
        unused(
            "--tree",
            &mut self.tree,
            multi,
            "spectr, multiround and otm",
        );
        unused("--kl", &mut self.kl, name == "mentored", "mentored");
        let gamma = self
            .gamma
            .as_deref()
            .map(|g| parse::uint("--gamma", g, 1, MAX_GAMMA))
            .transpose()?;
        let method = match name {
            "autoregressive" => Method::Autoregressive,
            "speculative" => Method::Speculative {
                gamma: gamma.unwrap_or(4),
                policy: GammaPolicy::Fixed,
            },
            "mentored" => {
                let raw = self.kl.as_deref().ok_or_else(|| {
                    CliError::usage(
                        "--method mentored needs a KL budget: add --kl D (D >= 0, in nats)",
                    )
                })?;
                Method::Mentored {
                    gamma: gamma.unwrap_or(4),
                    kl_budget: parse::float("--kl", raw, 0.0, 1e6)?,
                    policy: GammaPolicy::Fixed,
                }
            }
            _ => {
                let drafts = draft_shape(self.drafts.as_deref(), self.tree.as_deref(), gamma)?;
                match name {
                    "spectr" => Method::SpecTr { drafts },
                    "otm" => Method::Otm { drafts },
                    _ => Method::MultiRound { drafts },
                }
            }
        };
        let sampling = parse::sampling(
            &self.temperature,
            self.top_k.as_deref(),
            self.top_p.as_deref(),
        )?;
        let backend = match parse::choice("--backend", &self.backend, &["cpu", "wgpu"])? {
            "cpu" => Backend::Cpu,
            _ => Backend::Wgpu,
        };
        let bug = self
            .bug
            .as_deref()
            .map(|raw| parse_bug(raw, name))
            .transpose()?;
        Ok(DecodeSettings {
            prompt: self.prompt,
            method,
            sampling,
            seed: parse::uint("--seed", &self.seed, 0, u64::MAX)?,
            backend,
            models: self.models,
            threads: parse::uint("--threads", &self.threads, 1, 256)?,
            notes,
            bug,
        })
    }
}

/// `--bug NAME` for `--method method`: a bug of [`Bug::ALL`], for a lossless drafting
/// method.
fn parse_bug(raw: &str, method: &str) -> Result<Bug, CliError> {
    let bug = parse::bug(raw)?;
    if matches!(method, "autoregressive" | "mentored") {
        return Err(CliError::usage(format!(
            "--bug applies to --method speculative, spectr, multiround or otm, not {method}"
        )));
    }
    Ok(bug)
}

/// K i.i.d. drafts of length L, or a tree from `--tree` (whose depth is L).
fn draft_shape(
    drafts: Option<&str>,
    tree: Option<&str>,
    gamma: Option<usize>,
) -> Result<DraftShape, CliError> {
    let k = drafts
        .map(|k| parse::uint("--drafts", k, 1, 4096))
        .transpose()?;
    let Some(raw) = tree else {
        return checked(DraftShape::Iid {
            k: k.unwrap_or(4),
            length: gamma.unwrap_or(4),
        });
    };
    let branching = parse::uint_list("--tree", raw, 4096)?;
    if branching.len() > MAX_GAMMA {
        return Err(CliError::usage(format!(
            "--tree has {} levels; the limit is {MAX_GAMMA}, the same as for --gamma",
            branching.len()
        )));
    }
    if gamma.is_some_and(|g| g != branching.len()) {
        return Err(CliError::usage(format!(
            "--gamma ({}) must equal the depth of --tree ({}), or be left out",
            gamma.unwrap_or(0),
            branching.len()
        )));
    }
    let product = branching.iter().try_fold(1_usize, |a, &b| a.checked_mul(b));
    let product = match product {
        Some(p) if p <= MAX_DRAFT_NODES => p,
        _ => {
            return Err(CliError::usage(format!(
                "--tree has more than {MAX_DRAFT_NODES} leaves"
            )));
        }
    };
    if k.is_some_and(|k| k != product) {
        return Err(CliError::usage(format!(
            "--drafts ({}) must equal the product of --tree ({product}), or be left out",
            k.unwrap_or(0)
        )));
    }
    checked(DraftShape::Tree {
        k: product,
        branching,
    })
}

/// The engine's own check of a draft shape, then [`MAX_ROUND_NODES`], before any model
/// is loaded, with the flags that set it named.
fn checked(shape: DraftShape) -> Result<DraftShape, CliError> {
    match shape.validate() {
        Ok(()) => {
            let nodes = shape
                .branching()
                .iter()
                .scan(1_u128, |width, &b| {
                    *width = width.saturating_mul(b as u128);
                    Some(*width)
                })
                .fold(0_u128, u128::saturating_add);
            if nodes > MAX_ROUND_NODES as u128 {
                return Err(CliError::usage(format!(
                    "--drafts and --gamma (or --tree) make {nodes} draft nodes per round; \
                     the limit is {MAX_ROUND_NODES} (e.g. --drafts 64 --gamma 16)"
                )));
            }
            Ok(shape)
        }
        Err(EngineError::TooManyDraftNodes { nodes, limit }) => Err(CliError::usage(format!(
            "--drafts and --gamma (or --tree) make {nodes} draft nodes per round; one \
             target call takes at most {limit}"
        ))),
        Err(other) => Err(CliError::usage(format!("--drafts/--gamma/--tree: {other}"))),
    }
}
