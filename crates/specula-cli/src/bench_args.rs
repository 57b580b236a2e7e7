//! The flags of `specula bench` and their checks, every one made before a model loads:
//! each value's range, the lengths of the lists ([`MAX_LIST_VALUES`]), K × L, the
//! methods and the prompts file.

use clap::Args;
use specula_engine::options::MethodName;
use specula_engine::options::limits::{
    KL_RANGE, MAX_GAMMA, MAX_NGRAM, MAX_ROUND_NODES, TEMPERATURE_RANGE,
};

use crate::bench_cmd::{GGUF_PROMPTS, MAX_BENCH_DRAFTS, MAX_LIST_VALUES, PROMPTS};
use crate::error::CliError;
use crate::{bench_inputs, models, parse};

/// Flags of `specula bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Tokens generated per prompt. bench does not slide the context window, so the
    /// longest prompt plus N must fit the models' positions (256 for the bundled pair);
    /// the refusal says the most N can be.
    #[arg(
        long,
        value_name = "N",
        default_value = "200",
        allow_hyphen_values = true
    )]
    pub tokens: String,
    /// Runs per prompt (seeds 0..R).
    #[arg(
        long,
        value_name = "R",
        default_value = "2",
        allow_hyphen_values = true
    )]
    pub repeat: String,
    /// Sampling temperature.
    #[arg(
        long,
        value_name = "T",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub temperature: String,
    /// γ values for speculative decoding.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "1,2,3,4,6",
        allow_hyphen_values = true
    )]
    pub gammas: String,
    /// K values for SpecTr with k-Seq and with OTM's optimal selection (and K = 4 for multi-round).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "2,4,8",
        allow_hyphen_values = true
    )]
    pub drafts: String,
    /// γ of every method but the speculative rows (those take --gammas): the draft length L
    /// of SpecTr and multi-round, and γ of mentored, typical and prompt lookup, as the
    /// option `gamma` means in generate.
    #[arg(
        long,
        value_name = "G",
        default_value = "4",
        allow_hyphen_values = true
    )]
    pub gamma: String,
    /// KL budgets D for mentored decoding.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "0.1,0.3,1",
        allow_hyphen_values = true
    )]
    pub kls: String,
    /// n-gram lengths for prompt lookup (lookup: drafts copied from the context, no
    /// draft model), each at most 16.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "3",
        allow_hyphen_values = true
    )]
    pub ngrams: String,
    /// Run only these methods, comma-separated: autoregressive, speculative, spectr,
    /// multiround, mentored, typical, lookup (default: every one). Autoregressive decoding
    /// always runs, as the speed-ups are relative to it.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub methods: Option<String>,
    /// Decode these prompts instead of the fixed ones: a JSON array of 1 to 64 non-empty
    /// strings (chat text with newlines and special tokens such as <|im_start|> as it is),
    /// at most 1 MiB. Each prompt plus --tokens must fit the models' positions.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub prompts: Option<std::path::PathBuf>,
    /// Load the pair from DIR instead of the bundled one.
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub models: Option<std::path::PathBuf>,
    /// A Llama-family GGUF file as the target (with --draft) instead of the bundled pair.
    #[arg(
        long,
        value_name = "FILE.gguf",
        allow_hyphen_values = true,
        conflicts_with = "models"
    )]
    pub target: Option<std::path::PathBuf>,
    /// The draft's GGUF file (same tokenizer as --target).
    #[arg(
        long,
        value_name = "FILE.gguf",
        allow_hyphen_values = true,
        requires = "target"
    )]
    pub draft: Option<std::path::PathBuf>,
    /// CPU threads: for burn, and for the host forward pass's dense layers (at most 2 there).
    #[arg(
        long,
        value_name = "N",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub threads: String,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Decode with both models on burn's own forward pass (`specula_model::BurnLm`) instead
    /// of the host one (the forward-cost table shows both either way).
    #[arg(long)]
    pub burn_forward: bool,
    /// Also decode each speculative γ with parallel drafting (the next round drafted while
    /// the target verifies), the draft and target models on two threads.
    #[arg(long)]
    pub parallel_draft: bool,
}

/// `bench`'s flags, checked.
#[derive(Debug, Clone)]
pub struct BenchSettings {
    /// Tokens generated per prompt.
    pub tokens: usize,
    /// Runs per prompt.
    pub repeat: u64,
    /// Sampling temperature.
    pub temperature: f64,
    /// γ values of speculative decoding.
    pub gammas: Vec<usize>,
    /// K values of SpecTr.
    pub ks: Vec<usize>,
    /// The draft length L.
    pub length: usize,
    /// KL budgets of mentored decoding.
    pub kls: Vec<f64>,
    /// n-gram lengths of prompt lookup.
    pub ngrams: Vec<usize>,
    /// CPU threads.
    pub threads: usize,
    /// The methods run, autoregressive decoding first.
    pub methods: Vec<MethodName>,
    /// Which models to load.
    pub source: models::ModelSource,
    /// The prompts for those models: `--prompts`'s, or the fixed ones.
    pub prompt_texts: Vec<String>,
}

/// Checks every flag, before any model loads.
///
/// # Errors
/// A usage error naming the first bad flag.
pub fn check(args: &BenchArgs) -> Result<BenchSettings, CliError> {
    let tokens = parse::uint("--tokens", &args.tokens, 1, 1 << 20)?;
    let repeat = parse::uint("--repeat", &args.repeat, 1_u64, 1000)?;
    let temperature = parse::float("--temperature", &args.temperature, TEMPERATURE_RANGE)?;
    let gammas = uint_list("--gammas", &args.gammas, MAX_GAMMA)?;
    let ks = uint_list("--drafts", &args.drafts, MAX_BENCH_DRAFTS)?;
    let length = parse::uint("--gamma", &args.gamma, 1, MAX_GAMMA)?;
    check_round_nodes(&ks, length)?;
    let kls = parse_kls(&args.kls)?;
    let ngrams = uint_list("--ngrams", &args.ngrams, MAX_NGRAM)?;
    let threads = parse::uint("--threads", &args.threads, 1, 256)?;
    let methods = bench_inputs::methods(args.methods.as_deref())?;
    if args.parallel_draft && !methods.contains(&MethodName::Speculative) {
        return Err(CliError::usage(
            "--parallel-draft decodes each speculative γ again; --methods leaves speculative \
             out",
        ));
    }
    let (source, fixed_prompts) = match (args.target.clone(), args.draft.clone()) {
        (Some(target), Some(draft)) => (
            models::ModelSource::Gguf {
                target,
                draft: Some(draft),
            },
            GGUF_PROMPTS,
        ),
        (Some(_), None) => {
            return Err(CliError::usage(
                "--draft: bench runs the drafting methods; give a draft model with the \
                 target's tokenizer",
            ));
        }
        (None, _) => (models::ModelSource::Bundled(args.models.clone()), PROMPTS),
    };
    let prompt_texts = match &args.prompts {
        Some(path) => bench_inputs::read_prompts(path)?,
        None => fixed_prompts.map(str::to_owned).to_vec(),
    };
    Ok(BenchSettings {
        tokens,
        repeat,
        temperature,
        gammas,
        ks,
        length,
        kls,
        ngrams,
        threads,
        methods,
        source,
        prompt_texts,
    })
}

fn parse_kls(raw: &str) -> Result<Vec<f64>, CliError> {
    check_list_len("--kls", raw)?;
    raw.split(',')
        .map(|d| parse::float("--kls", d, KL_RANGE))
        .collect()
}

/// [`parse::uint_list`], at most [`MAX_LIST_VALUES`] values.
fn uint_list(flag: &str, raw: &str, max: usize) -> Result<Vec<usize>, CliError> {
    check_list_len(flag, raw)?;
    parse::uint_list(flag, raw, max)
}

/// Refuses a list of more than [`MAX_LIST_VALUES`] values, counted before any is parsed.
fn check_list_len(flag: &str, raw: &str) -> Result<(), CliError> {
    let values = raw.split(',').count();
    if values > MAX_LIST_VALUES {
        return Err(CliError::usage(format!(
            "{flag} must have at most {MAX_LIST_VALUES} values (each is a row of the \
             report), got {values}"
        )));
    }
    Ok(())
}

/// Refuses a K × L above the engine's draft nodes per round: here, before the models
/// load, rather than from the decoder halfway through the run. Multi-round's K = 4 is
/// within it for every L.
fn check_round_nodes(ks: &[usize], length: usize) -> Result<(), CliError> {
    match ks.iter().find(|&&k| k * length > MAX_ROUND_NODES) {
        Some(k) => Err(CliError::usage(format!(
            "--drafts must be at most {MAX_ROUND_NODES} draft nodes per round with --gamma \
             (K × L), got {k} × {length} = {}",
            k * length
        ))),
        None => Ok(()),
    }
}
