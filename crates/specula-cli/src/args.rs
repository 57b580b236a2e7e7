//! Command-line shape (clap derive) and the parsing of raw flag values into checked inputs.
//!
//! Value flags are taken as strings and parsed here rather than by clap, so every bad
//! value gets one `error: …` line that names the flag.

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde::Serialize;
use specula_core::{PlanBug, PlanMethod, PlanParams};

use crate::error::CliError;

/// The most drafts `--drafts` accepts (multi-round analysis is linear in k).
pub const MAX_DRAFTS: usize = 1_000_000;

/// Default number of drafts for the multi-draft methods.
pub const DEFAULT_DRAFTS: usize = 2;

/// Speculative decoding, analysed exactly.
#[derive(Debug, Parser)]
#[command(name = "specula", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Exact token-level analysis of one scheme on one pair of distributions.
    #[command(long_about = PLAN_LONG_ABOUT, after_long_help = PLAN_AFTER_HELP)]
    Plan(PlanArgs),
    /// Generate text with the bundled draft/target pair, streamed, then the metrics.
    Generate(crate::generate_cmd::GenerateArgs),
    /// Independent continuations as JSON lines, for distribution checks.
    Sample(crate::sample_cmd::SampleArgs),
    /// Every decoding method on fixed prompts, with speedups and forward costs.
    Bench(crate::bench_cmd::BenchArgs),
    /// Train the draft or target model on Tiny Shakespeare (resumable).
    Train(crate::train_cmd::TrainArgs),
}

const PLAN_LONG_ABOUT: &str = "\
Exact token-level analysis of one speculative sampling scheme on one pair of distributions.

Prints, per token, the target and draft probabilities, the exact output distribution of the
scheme (closed form, no sampling) and method-specific columns (acceptance probability of a
drafted token, residual distribution), then a summary: acceptance probability,
KL(target || output), TV(target, output) and the scheme's parameters (rho, alpha, beta, ...).";

const PLAN_AFTER_HELP: &str = "\
Methods and the flags they take:
  speculative   standard speculative sampling (k = 1)       no extra flags
  greedy        greedy verification (temperature 0)          no extra flags
  kseq          SpecTr k-Seq                                 [--drafts K] [--rho R]
  multiround    multi-round rejection (SpecInfer style)      [--drafts K]
  otm           optimal transport, exact LP (tiny V and k)   [--drafts K]
  race          ratio race, OTM's optimum at any V           [--drafts K]
  mentored      mentored decoding, lossy with KL <= D        --kl D (required)
kseq, otm and race are SpecTr's selection rules at one position (in generate, SpecTr
is --method spectr with --selection kseq or race). A flag given to a method that does
not take it is an error. --drafts defaults to 2.

The bug lab (speculative only):
  --bug NAME plants a deliberate mistake and reports the buggy sampler's exact output
  distribution (output) and its total variation from the target (tv): resample-from-target,
  argmax-draft, shared-uniform, unprocessed-target or filtered-draft (cache-reset acts only
  over a sequence: see `specula sample --bug`). With --bug, --target and --draft are the
  models' raw softmax and [--temperature T] [--top-k N] [--top-p P] process both as decoding
  does; the report's target and draft are the processed ones.

Input rules:
  --target and --draft are comma-separated lists of the same length, every entry a finite
  number >= 0, at most 1048576 entries. @FILE reads a list from a file and - from standard
  input (one of the two), with commas, spaces or newlines between entries. Without --normalize each list must sum to 1 within 1e-6; with --normalize
  any positive total is rescaled to 1. --drafts must be in 1..=1000000. --kl must be finite
  and >= 0. --rho must be finite and >= rho* (the smallest rho that keeps k-Seq exact).
  OTM solves a linear program with vocab^(k+1) variables and refuses larger problems.
  multiround refuses drafts x vocab above 2^27 (134217728).
  Negative numbers may be written as `--kl -1` or `--kl=-1` (both are refused).

Output:
  --json prints one JSON object: method, target, draft, vocab, normalized, acceptance,
  output, kl_target_output, tv_target_output, kl_target_draft, tv_target_draft, and per
  method: drafts (kseq, multiround, otm, race); rho, rho_star, overlap (kseq); accept_probs
  (speculative, greedy, kseq, race, mentored); residual (all but otm); kl_budget, alpha, beta,
  zero_target_accept, accepts_all (mentored); upper_bound (otm, race); bug (name,
  description, temperature, top_k, top_p) and tv (with --bug). Probabilities are token-indexed arrays.
  Non-finite numbers (e.g. KL(target || output) = inf for greedy) are written as null.
  greedy assumes the drafted token is the draft's argmax.

Exit status: 0 on success, 2 for invalid input or usage (one `error: ...` line on stderr),
1 when the analysis itself fails or the output cannot be written.

Example:
  specula plan --method kseq --drafts 3 --target 0.1,0.2,0.3,0.4 --draft 0.5,0.3,0.15,0.05";

/// Flags of `specula plan`, as typed by the user.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The token-level scheme to analyse.
    #[arg(long, value_enum)]
    pub method: Method,

    /// Target probabilities, comma-separated (e.g. 0.1,0.2,0.3,0.4), or @FILE, or - for
    /// standard input (entries separated by commas, spaces or newlines).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub target: String,

    /// Draft probabilities, comma-separated, same length as --target (or @FILE, or -).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub draft: String,

    /// Number of i.i.d. drafts k (kseq, multiround, otm, race only; default 2).
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    pub drafts: Option<String>,

    /// KL budget D in nats: KL(target || output) <= D (mentored only; required there).
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub kl: Option<String>,

    /// Override k-Seq's rho; must be >= rho* (kseq only; default rho*).
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub rho: Option<String>,

    /// Rescale --target and --draft to sum to 1 instead of refusing them.
    #[arg(long)]
    pub normalize: bool,

    /// Plant a deliberate mistake (speculative only): resample-from-target, argmax-draft,
    /// shared-uniform, unprocessed-target or filtered-draft.
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub bug: Option<String>,

    /// With --bug: the sampling temperature applied to both distributions (default 1).
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub temperature: Option<f64>,

    /// With --bug: keep the N most likely tokens of both distributions.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub top_k: Option<f64>,

    /// With --bug: keep the smallest set of tokens with mass >= P in both distributions.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub top_p: Option<f64>,

    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// A token-level scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Standard speculative sampling.
    Speculative,
    /// Greedy verification.
    Greedy,
    /// SpecTr k-Seq.
    Kseq,
    /// Multi-round rejection sampling.
    Multiround,
    /// Optimal transport with membership cost (exact LP).
    Otm,
    /// The ratio race (OTM's optimum for i.i.d. drafts, any vocabulary).
    Race,
    /// Mentored decoding (lossy, bounded KL).
    Mentored,
}

impl Method {
    /// The core's name for this scheme, which builds the report.
    #[must_use]
    pub fn core(self) -> PlanMethod {
        match self {
            Self::Speculative => PlanMethod::Speculative,
            Self::Greedy => PlanMethod::Greedy,
            Self::Kseq => PlanMethod::Kseq,
            Self::Multiround => PlanMethod::Multiround,
            Self::Otm => PlanMethod::Otm,
            Self::Race => PlanMethod::Race,
            Self::Mentored => PlanMethod::Mentored,
        }
    }

    /// The name used on the command line and in JSON.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.core().name()
    }
}

/// A `plan` request with every flag parsed; distributions are built later.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRequest {
    /// The scheme.
    pub method: Method,
    /// Raw target entries.
    pub target: Vec<f64>,
    /// Raw draft entries.
    pub draft: Vec<f64>,
    /// Whether to rescale the inputs.
    pub normalize: bool,
    /// Method parameters.
    pub params: PlanParams,
    /// The bug planted, with its sampling settings.
    pub bug: Option<PlanBug>,
    /// JSON output.
    pub json: bool,
}

impl PlanArgs {
    /// Parses and checks every flag value and their fit with the method.
    ///
    /// # Errors
    /// A [`CliError`] naming the first bad flag.
    pub fn into_request(self) -> Result<PlanRequest, CliError> {
        let method = self.method;
        if self.target.trim() == "-" && self.draft.trim() == "-" {
            return Err(CliError::usage(
                "--target and --draft cannot both be read from standard input (-); \
                 give one as @FILE",
            ));
        }
        let target = parse_list("--target", &self.target)?;
        let draft = parse_list("--draft", &self.draft)?;
        if target.len() != draft.len() {
            return Err(CliError::usage(format!(
                "--target has {} entries but --draft has {}; both must cover the same vocabulary",
                target.len(),
                draft.len()
            )));
        }
        reject_if_given(
            method,
            "--drafts",
            self.drafts.as_ref(),
            method.core().takes_drafts(),
        )?;
        reject_if_given(method, "--rho", self.rho.as_ref(), method == Method::Kseq)?;
        reject_if_given(method, "--kl", self.kl.as_ref(), method == Method::Mentored)?;
        let bug = self.plan_bug(method)?;
        let k = self
            .drafts
            .as_deref()
            .map(parse_drafts)
            .transpose()?
            .unwrap_or(DEFAULT_DRAFTS);
        let params = match method {
            Method::Speculative | Method::Greedy => PlanParams::None,
            Method::Kseq => PlanParams::KSeq {
                k,
                rho: self.rho.as_deref().map(parse_rho).transpose()?,
            },
            Method::Multiround | Method::Otm | Method::Race => PlanParams::Drafts(k),
            Method::Mentored => match self.kl.as_deref() {
                Some(raw) => PlanParams::Kl(parse_kl(raw)?),
                None => {
                    return Err(CliError::usage(
                        "--method mentored needs a KL budget: add --kl D (D >= 0, in nats)",
                    ));
                }
            },
        };
        Ok(PlanRequest {
            method,
            target,
            draft,
            normalize: self.normalize,
            params,
            bug,
            json: self.json,
        })
    }

    /// `--bug` and its sampling flags: the bug for standard speculative sampling, the
    /// sampling flags only with a bug.
    fn plan_bug(&self, method: Method) -> Result<Option<PlanBug>, CliError> {
        let Some(raw) = self.bug.as_deref() else {
            for (flag, value) in [
                ("--temperature", &self.temperature),
                ("--top-k", &self.top_k),
                ("--top-p", &self.top_p),
            ] {
                if value.is_some() {
                    return Err(CliError::usage(format!(
                        "{flag} applies only with --bug (it processes the distributions the \
                         buggy sampler uses); without one, give the processed distributions"
                    )));
                }
            }
            return Ok(None);
        };
        let bug = crate::parse::bug(raw)?;
        if method != Method::Speculative {
            return Err(CliError::usage(format!(
                "--bug applies to --method speculative in plan, not {} (use `specula sample \
                 --bug` for the other methods)",
                method.name()
            )));
        }
        if bug == specula_core::Bug::CacheReset {
            return Err(CliError::usage(
                "--bug cache-reset acts only over a sequence; see it with `specula sample \
                 --method speculative --bug cache-reset`",
            ));
        }
        let sampling = crate::parse::sampling(self.temperature, self.top_k, self.top_p)?;
        Ok(Some(PlanBug { bug, sampling }))
    }
}

/// Refuses a flag that the method does not take.
fn reject_if_given(
    method: Method,
    flag: &str,
    value: Option<&String>,
    allowed: bool,
) -> Result<(), CliError> {
    if value.is_none() || allowed {
        return Ok(());
    }
    let takers = match flag {
        "--drafts" => "kseq, multiround, otm and race",
        "--rho" => "kseq",
        _ => "mentored",
    };
    Err(CliError::usage(format!(
        "{flag} does not apply to --method {}; it is only for {takers}",
        method.name()
    )))
}

/// The most entries `--target` or `--draft` may have (the vocabulary of a plan): the
/// core's limit, shared with npm's `plan()`.
pub const MAX_VOCAB: usize = specula_core::report::MAX_PLAN_VOCAB;

/// The largest file (or standard input) `--target @FILE` / `--target -` reads: enough
/// for [`MAX_VOCAB`] entries of 60 characters.
pub const MAX_LIST_BYTES: u64 = 64 << 20;

/// Parses a list of numbers: comma-separated on the command line (surrounding spaces
/// allowed), or read from `@FILE` or `-` (standard input), where commas, spaces and
/// newlines all separate entries. Entries must be finite and `>= 0` (the message quotes
/// the entry as given); `-0` is read as 0. The sum is left to `Distribution`.
///
/// # Errors
/// An empty list, an empty entry, an unparsable, negative or non-finite number, more
/// than [`MAX_VOCAB`] entries, or a file that cannot be read.
pub fn parse_list(flag: &str, raw: &str) -> Result<Vec<f64>, CliError> {
    let (text, from_file) = list_source(flag, raw)?;
    if text.trim().is_empty() {
        return Err(CliError::usage(format!(
            "{flag} is empty: give comma-separated probabilities, e.g. 0.25,0.75"
        )));
    }
    let items: Vec<&str> = if from_file {
        text.split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .collect()
    } else {
        text.split(',').collect()
    };
    if items.len() > MAX_VOCAB {
        return Err(CliError::usage(format!(
            "{flag} has {} entries; the limit is {MAX_VOCAB}",
            items.len()
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let item = item.trim();
            if item.is_empty() {
                return Err(CliError::usage(format!(
                    "{flag}: entry {index} is empty (stray comma?)"
                )));
            }
            let value = item.parse::<f64>().map_err(|_| {
                CliError::usage(format!("{flag}: entry {index} ({item:?}) is not a number"))
            })?;
            if value.is_nan() {
                return Err(CliError::usage(format!(
                    "{flag}: entry {index} is NaN ({item})"
                )));
            }
            if value.is_infinite() {
                return Err(CliError::usage(format!(
                    "{flag}: entry {index} is infinite ({item}); entries must be finite"
                )));
            }
            if value < 0.0 {
                return Err(CliError::usage(format!(
                    "{flag}: entry {index} is negative ({item}); probabilities must be >= 0"
                )));
            }
            // `-0` is 0: adding +0 drops the sign, so no `-0.0` reaches the output.
            Ok(value + 0.0)
        })
        .collect()
}

/// The text of a list flag: the value itself, or the contents of `@FILE` or of standard
/// input for `-` (the flag says `true` for those).
fn list_source(flag: &str, raw: &str) -> Result<(String, bool), CliError> {
    use std::io::Read;
    let (reader, name): (Box<dyn Read>, String) = if raw.trim() == "-" {
        (
            Box::new(std::io::stdin().lock()),
            "standard input".to_owned(),
        )
    } else if let Some(path) = raw.strip_prefix('@') {
        let file = std::fs::File::open(path)
            .map_err(|e| CliError::usage(format!("{flag}: cannot read {path}: {e}")))?;
        (Box::new(file), path.to_owned())
    } else {
        return Ok((raw.to_owned(), false));
    };
    let mut bytes = Vec::new();
    reader
        .take(MAX_LIST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::usage(format!("{flag}: cannot read {name}: {e}")))?;
    if bytes.len() as u64 > MAX_LIST_BYTES {
        return Err(CliError::usage(format!(
            "{flag}: {name} is larger than the limit of {MAX_LIST_BYTES} bytes"
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::usage(format!("{flag}: {name} is not UTF-8 text")))?;
    Ok((text, true))
}

/// Parses `--drafts`: an integer in `1..=MAX_DRAFTS`.
fn parse_drafts(raw: &str) -> Result<usize, CliError> {
    let raw = raw.trim();
    match raw.parse::<u64>() {
        Ok(0) => Err(CliError::usage("--drafts must be at least 1, got 0")),
        Ok(k) if k <= MAX_DRAFTS as u64 => Ok(k as usize),
        Ok(k) => Err(CliError::usage(format!(
            "--drafts must be at most {MAX_DRAFTS}, got {k}"
        ))),
        Err(_) => Err(CliError::usage(format!(
            "--drafts must be a whole number >= 1, got {raw:?}"
        ))),
    }
}

/// Parses `--kl`: finite and `>= 0`.
fn parse_kl(raw: &str) -> Result<f64, CliError> {
    let value = parse_number("--kl", raw)?;
    if value.is_finite() && value >= 0.0 {
        Ok(value + 0.0)
    } else {
        Err(CliError::usage(format!(
            "--kl must be a finite number >= 0 (nats), got {raw}"
        )))
    }
}

/// Parses `--rho`: a finite number (ρ* is checked once the distributions are known).
fn parse_rho(raw: &str) -> Result<f64, CliError> {
    let value = parse_number("--rho", raw)?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(CliError::usage(format!(
            "--rho must be a finite number >= rho* (at least 1), got {raw}"
        )))
    }
}

/// Parses one number.
fn parse_number(flag: &str, raw: &str) -> Result<f64, CliError> {
    let raw = raw.trim();
    raw.parse::<f64>()
        .map_err(|_| CliError::usage(format!("{flag} must be a number, got {raw:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_with_spaces() {
        assert_eq!(
            parse_list("--target", " 0.5, 0.5 ").ok(),
            Some(vec![0.5, 0.5])
        );
    }

    #[test]
    fn bad_lists_are_refused() {
        assert!(parse_list("--target", "").is_err());
        assert!(parse_list("--target", "0.5,,0.5").is_err());
        assert!(parse_list("--target", "0.5,x").is_err());
    }

    #[test]
    fn drafts_range() {
        assert!(parse_drafts("0").is_err());
        assert!(parse_drafts("-1").is_err());
        assert_eq!(parse_drafts("3").ok(), Some(3));
        assert!(parse_drafts("1000001").is_err());
    }

    #[test]
    fn kl_range() {
        assert!(parse_kl("-0.1").is_err());
        assert!(parse_kl("NaN").is_err());
        assert!(parse_kl("inf").is_err());
        assert_eq!(parse_kl("0").ok(), Some(0.0));
    }
}
