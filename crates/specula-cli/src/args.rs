//! Command-line shape (clap derive) and the parsing of raw flag values into checked inputs.
//!
//! Value flags are taken as strings and parsed here rather than by clap, so every bad
//! value gets one `error: …` line that names the flag.

use clap::{Args, Parser, Subcommand};
use specula_core::PlanInput;
use specula_engine::options::limits::{
    PLAN_KL_RANGE, TEMPERATURE_RANGE, TOP_P_RANGE, TYPICAL_DELTA_RANGE, TYPICAL_EPSILON_RANGE,
};
use specula_engine::options::{OptionError, PlanOptions};

use crate::error::CliError;
use crate::number::{self, Typed, TypedFields, TypedList};

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
Methods (decoding's names, as in generate) and the flags they take:
  speculative   standard speculative sampling (k = 1)       no extra flags
  spectr        SpecTr: one of k i.i.d. drafts selected by   [--selection RULE] [--drafts K]
                  kseq     k-Seq (the default)               [--rho R]
                  race     ratio race, OTM's optimum at any V
                  otm      optimal transport, exact LP (tiny V and k; plans only)
  multiround    multi-round rejection (SpecInfer style)      [--drafts K]
  mentored      mentored decoding, lossy with KL <= D        --kl D (required)
  typical       typical acceptance (Medusa), lossy           [--epsilon E] [--delta D]
Every method takes [--temperature T] [--top-k N] [--top-p P], which process both lists as
decoding processes the models' logits (--target and --draft are then the models' raw
softmax; the report's target and draft are the processed ones). --temperature 0 is greedy
verification, as in generate: it is planned as --method speculative (at temperature 0
every method verifies greedily), without --bug, --top-k or --top-p. A flag given to a
method that does not take it is an error. --drafts defaults to 4. The former names are
refused, naming the new spelling: kseq, race and otm are --method spectr --selection
kseq, race or otm; greedy is --method speculative --temperature 0.

The bug lab (speculative only):
  --bug NAME plants a deliberate mistake and reports the buggy sampler's exact output
  distribution (output) and its total variation from the target (tv): resample-from-target,
  argmax-draft, shared-uniform, unprocessed-target or filtered-draft (cache-reset acts only
  over a sequence: see `specula sample --bug`). The bug decides which processed or raw
  form of the two lists each part of the sampler uses.

Input rules:
  --target and --draft are lists of the same length, every entry a finite number >= 0, at
  most 1048576 entries, with commas, spaces or newlines between entries (an empty entry,
  as in 0.5,,0.5 or 0.5,0.5, is refused). @FILE reads a list from a regular file (at most
  64 MiB) and - from standard input (one of the two), split the same way. Surrounding
  white space is ignored in every name and number. Without --normalize each list must sum to 1 within 1e-6, and a sum
  off by more than rounding is rescaled to 1 with a note; with --normalize any positive
  total is rescaled to 1. --drafts must be in 1..=1000000. --kl must be finite and >= 0.
  --rho must be finite and >= rho* (the smallest rho that keeps k-Seq exact); a --rho
  below rho* by a relative 1e-12 or less is taken as rho*, with a note. --epsilon must be
  in [0, 1] and --delta in [0, 1e6].
  OTM solves a linear program with vocab^(k+1) variables and refuses larger problems.
  multiround refuses drafts x vocab above 2^27 (134217728).
  Negative numbers may be written as `--kl -1` or `--kl=-1` (both are refused).

Output:
  --json prints one JSON object: method, selection (spectr), temperature, topK and topP (when
  given), target, draft, vocab, normalized, notes (what the tolerances changed: kind rescaled
  or rhoRaised, field, given, used, message), acceptance, output, klTargetOutput,
  tvTargetOutput, klTargetDraft, tvTargetDraft, and per scheme: drafts (spectr, multiround);
  rho, rhoStar, overlap (spectr kseq); acceptProbs (all but spectr otm and multiround);
  residual (all but spectr otm); klBudget, alpha, beta, zeroTargetAccept, acceptsAll
  (mentored); threshold, entropy (typical); upperBound (spectr race and otm); bug (name,
  description) and tv (with --bug). Probabilities are token-indexed arrays. Non-finite
  numbers (e.g. KL(target || draft) = inf at temperature 0 when the two argmaxes differ)
  are written as null. At temperature 0 the draft proposes its argmax.

Exit status: 0 on success, 2 for invalid input or usage (one `error: ...` line on stderr),
1 when the analysis itself fails or the output cannot be written.

Example:
  specula plan --method spectr --drafts 3 --target 0.1,0.2,0.3,0.4 --draft 0.5,0.3,0.15,0.05";

/// Flags of `specula plan`, as typed by the user. Clap reads each value's type; the
/// ranges, defaults and the fit of each flag with the method are the engine's one
/// [`PlanOptions`] (as for npm's `plan()`).
#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    /// The token-level scheme to analyse, by decoding's name: speculative, spectr,
    /// multiround, mentored or typical.
    #[arg(long, value_name = "METHOD", allow_hyphen_values = true)]
    pub method: String,

    /// SpecTr's selection rule: kseq (the default), race or otm (spectr only).
    #[arg(long, value_name = "RULE", allow_hyphen_values = true)]
    pub selection: Option<String>,

    /// Target probabilities separated by commas, spaces or newlines (e.g.
    /// 0.1,0.2,0.3,0.4), or @FILE, or - for standard input (split the same way).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub target: String,

    /// Draft probabilities, as many as --target's (or @FILE, or -).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub draft: String,

    /// Number of i.i.d. drafts k (spectr and multiround only; default 4).
    #[arg(long, value_name = "K", allow_hyphen_values = true, value_parser = number::typed)]
    pub drafts: Option<Typed>,

    /// KL budget D in nats: KL(target || output) <= D (mentored only; required there).
    #[arg(long, value_name = "D", allow_hyphen_values = true, value_parser = number::typed)]
    pub kl: Option<Typed>,

    /// Override k-Seq's rho; must be >= rho* (spectr with selection kseq only; default
    /// rho*).
    #[arg(long, value_name = "R", allow_hyphen_values = true, value_parser = number::typed)]
    pub rho: Option<Typed>,

    /// Typical acceptance's ceiling on its threshold, in [0, 1] (typical only; default
    /// 0.09).
    #[arg(long, value_name = "EPS", allow_hyphen_values = true, value_parser = number::typed)]
    pub epsilon: Option<Typed>,

    /// Typical acceptance's scale of exp(-H(target)) (typical only; default 0.3).
    #[arg(long, value_name = "DELTA", allow_hyphen_values = true, value_parser = number::typed)]
    pub delta: Option<Typed>,

    /// Rescale --target and --draft to sum to 1 instead of refusing them.
    #[arg(long)]
    pub normalize: bool,

    /// Plant a deliberate mistake (speculative only): resample-from-target, argmax-draft,
    /// shared-uniform, unprocessed-target or filtered-draft.
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub bug: Option<String>,

    /// The sampling temperature applied to both distributions (default 1); 0 is greedy
    /// verification (speculative only).
    #[arg(long, value_name = "T", allow_hyphen_values = true, value_parser = number::typed)]
    pub temperature: Option<Typed>,

    /// Keep the N most likely tokens of both distributions.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = number::typed)]
    pub top_k: Option<Typed>,

    /// Keep the smallest set of tokens with mass >= P in both distributions.
    #[arg(long, value_name = "P", allow_hyphen_values = true, value_parser = number::typed)]
    pub top_p: Option<Typed>,

    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// A `plan` request, every option checked.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRequest {
    /// What the core analyses.
    pub input: PlanInput,
    /// JSON output.
    pub json: bool,
    /// What the numbers were typed as, for the refusals of the math.
    pub typed: TypedFields,
}

impl PlanRequest {
    /// A refusal of the engine as the CLI says it: the flag's name and the number as typed.
    #[must_use]
    pub fn error(&self, error: OptionError) -> CliError {
        quoted_error(&self.typed, error)
    }
}

impl PlanArgs {
    /// Reads the two lists and checks every flag through the engine's [`PlanOptions`].
    ///
    /// # Errors
    /// A [`CliError`] naming the first bad flag.
    pub fn into_request(self) -> Result<PlanRequest, CliError> {
        if self.target.trim() == "-" && self.draft.trim() == "-" {
            return Err(CliError::usage(
                "--target and --draft cannot both be read from standard input (-); \
                 give one as @FILE",
            ));
        }
        let mut typed = TypedFields::default();
        let target = parse_list("--target", &self.target, &mut typed)?;
        let draft = parse_list("--draft", &self.draft, &mut typed)?;
        // rho's bound, rho*, comes from the distributions (with a tolerance): the value
        // is checked, and quoted as typed.
        let rho = self.rho.as_ref().map(|t| t.value);
        typed.add("rho", self.rho.as_ref(), rho.unwrap_or(f64::NAN));
        let options = PlanOptions {
            method: Some(self.method.trim().to_owned()),
            selection: self.selection.map(|s| s.trim().to_owned()),
            target: Some(target),
            draft: Some(draft),
            drafts: typed.whole("drafts", self.drafts.as_ref()),
            kl: typed.real("kl", self.kl.as_ref(), PLAN_KL_RANGE),
            rho,
            epsilon: typed.real("epsilon", self.epsilon.as_ref(), TYPICAL_EPSILON_RANGE),
            delta: typed.real("delta", self.delta.as_ref(), TYPICAL_DELTA_RANGE),
            normalize: Some(self.normalize),
            bug: self.bug.map(|s| s.trim().to_owned()),
            temperature: typed.real("temperature", self.temperature.as_ref(), TEMPERATURE_RANGE),
            top_k: typed.whole("topK", self.top_k.as_ref()),
            top_p: typed.real("topP", self.top_p.as_ref(), TOP_P_RANGE),
        };
        let input = options.resolve().map_err(|e| quoted_error(&typed, e))?;
        Ok(PlanRequest {
            input,
            json: self.json,
            typed,
        })
    }
}

/// An option error with the number as typed and the flag's name.
fn quoted_error(typed: &TypedFields, error: OptionError) -> CliError {
    crate::decode_args::option_error(&typed.quote(error))
}

/// The largest file (or standard input) `--target @FILE` / `--target -` reads: enough
/// for the core's most entries ([`specula_core::report::MAX_PLAN_VOCAB`]) of 60
/// characters.
pub const MAX_LIST_BYTES: u64 = 64 << 20;

/// Parses a list of numbers, given on the command line or read from `@FILE` or `-`
/// (standard input), split alike wherever it comes from ([`TypedList::items`]): commas,
/// spaces or newlines between entries, and no empty entry between two commas. The
/// values' ranges (finite, >= 0, how many, their sum) are the engine's checks, as for
/// npm's `plan()`, with each entry held to >= 0 as typed (`-1e-400` is refused, not read
/// as 0: [`number::list_entry`]); the list's text goes to `typed`, so that their
/// refusals quote an entry as typed.
///
/// # Errors
/// An empty list, an empty entry, an entry that is not a number, or a file that cannot
/// be read; each names the flag, and the file a list came from.
pub fn parse_list(flag: &str, raw: &str, typed: &mut TypedFields) -> Result<Vec<f64>, CliError> {
    let (text, source) = list_source(flag, raw)?;
    let field = if flag == "--target" {
        "target"
    } else {
        "draft"
    };
    // Where the list came from, for a message about it: "" on the command line.
    let from = source.map(|name| format!(" in {name}")).unwrap_or_default();
    let refuse = |field: String, expected: &str, got: String| {
        let error = OptionError::invalid(field, expected, got);
        crate::decode_args::option_error(&error)
    };
    if text.trim().is_empty() {
        return Err(refuse(
            field.to_owned(),
            "probabilities separated by commas, spaces or newlines, e.g. 0.25,0.75",
            format!("an empty list{from}"),
        ));
    }
    let list = TypedList { field, text };
    let values = list
        .items()
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let got = if item.is_empty() {
                format!("an empty entry{from} (a stray comma?)")
            } else {
                format!("{item:?}{from}")
            };
            number::list_entry(item)
                .ok_or_else(|| refuse(format!("{field}[{index}]"), "a number", got))
        })
        .collect::<Result<Vec<f64>, CliError>>()?;
    typed.list(list);
    Ok(values)
}

/// The text of a list flag: the value itself, or the contents of `@FILE` or of standard
/// input for `-`, with the name of where it came from. Surrounding white space is ignored
/// before `@` or around `-`; the file name after `@` is taken as typed.
fn list_source(flag: &str, raw: &str) -> Result<(String, Option<String>), CliError> {
    use std::io::Read;
    let (bytes, name) = if raw.trim() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_LIST_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::usage(format!("{flag}: cannot read standard input: {e}")))?;
        if bytes.len() as u64 > MAX_LIST_BYTES {
            return Err(CliError::usage(format!(
                "{flag}: standard input is larger than the limit of {MAX_LIST_BYTES} bytes"
            )));
        }
        (bytes, "standard input".to_owned())
    } else if let Some(path) = raw.trim_start().strip_prefix('@') {
        if path.is_empty() {
            return Err(CliError::usage(format!(
                "{flag} @ needs the file's name after the @ (@FILE reads the list from FILE)"
            )));
        }
        let bytes = crate::parse::read_regular_file(std::path::Path::new(path), MAX_LIST_BYTES)
            .map_err(|e| CliError::usage(format!("{flag}: cannot read {path}: {e}")))?;
        (bytes, path.to_owned())
    } else {
        return Ok((raw.to_owned(), None));
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::usage(format!("{flag}: {name} is not UTF-8 text")))?;
    Ok((text, Some(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_with_spaces() {
        assert_eq!(
            parse_list("--target", " 0.5, 0.5 ", &mut TypedFields::default()).ok(),
            Some(vec![0.5, 0.5])
        );
    }

    #[test]
    fn bad_lists_are_refused() {
        assert!(parse_list("--target", "", &mut TypedFields::default()).is_err());
        assert!(parse_list("--target", "0.5,,0.5", &mut TypedFields::default()).is_err());
        assert!(parse_list("--target", "0.5,x", &mut TypedFields::default()).is_err());
    }
}
