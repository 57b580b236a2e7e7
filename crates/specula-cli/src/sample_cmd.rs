//! `specula sample`: N independent continuations as JSON lines, for statistical checks
//! that every lossless method samples the autoregressive distribution.

use std::io::Write as _;

use clap::Args;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use specula_engine::lab;
use specula_engine::options::limits::{DEFAULT_SAMPLE_TOKENS, MAX_SEED};

use crate::decode_args::{DecodeArgs, DecodeSettings};
use crate::error::CliError;
use crate::number::{Typed, TypedFields};
use crate::{compare, decode, models, parse};

/// The most continuations `--samples` asks for. Each line is written as soon as it is
/// drawn, so a long run streams, and stops on a closed pipe or Ctrl-C.
pub const MAX_SAMPLES: u64 = 1_000_000;

/// Flags of `specula sample`.
#[derive(Debug, Clone, Args)]
pub struct SampleArgs {
    /// Decoding settings (--seed seeds a ChaCha8 stream that gives each sample its own
    /// decoder seed, printed in its line).
    #[command(flatten)]
    pub decode: DecodeArgs,
    /// Tokens per continuation, at most 65536 as for generate (left out, 8 per continuation).
    #[arg(
        long,
        value_name = "N",
        allow_hyphen_values = true,
        value_parser = crate::number::typed
    )]
    pub max_tokens: Option<Typed>,
    /// Number of continuations.
    #[arg(
        long,
        value_name = "N",
        default_value = "100",
        allow_hyphen_values = true
    )]
    pub samples: String,
    /// Instead of one line per continuation, count the first generated character over
    /// the runs and print one JSON object comparing the counts with its exact
    /// distribution (the target's for a lossless method, prompt lookup included;
    /// mentored decoding's, typical acceptance's or a speculative bug's closed form): `expected`, `counts`, `tv`, `chiSquare`, `pValue`,
    /// and `targetPValue` against the target itself. Give `--max-tokens` 2 or more: the
    /// engine drafts no more tokens than it may still emit, so with one token a run
    /// samples the target directly.
    #[arg(long)]
    pub compare: bool,
    /// With --compare: count the first (1) or the second (2) generated character. The
    /// second has a closed form for the lossless methods and for the cache-reset bug
    /// (docs/lab.md).
    #[arg(long, value_name = "P", allow_hyphen_values = true, value_parser = crate::number::typed)]
    pub position: Option<Typed>,
}

#[derive(Serialize)]
struct Line<'a> {
    tokens: &'a [u32],
    text: String,
    /// The decoder seed of this sample: `specula generate --seed` with it (and the same
    /// flags) gives the same continuation.
    seed: u64,
}

/// `sample`'s flags, checked.
#[derive(Debug, Clone)]
pub struct SampleSettings {
    /// Continuations.
    pub samples: u64,
    /// The decoding settings.
    pub settings: DecodeSettings,
    /// The generated position `--compare` counts (1 without it).
    pub position: usize,
}

/// Checks every flag, and the fit of `--compare` with `--max-tokens`, `--stop` and
/// `--position`, before any model loads.
///
/// # Errors
/// A usage error naming the first bad flag.
pub fn check(args: &SampleArgs) -> Result<SampleSettings, CliError> {
    let samples = parse::uint("--samples", &args.samples, 1_u64, MAX_SAMPLES)?;
    let max_tokens = args.max_tokens.clone().unwrap_or_else(|| Typed {
        text: DEFAULT_SAMPLE_TOKENS.to_string(),
        value: DEFAULT_SAMPLE_TOKENS as f64,
    });
    let settings = args.decode.clone().into_settings(Some(&max_tokens))?;
    let position = match (args.compare, &args.position) {
        (_, None) => 1,
        (true, Some(p)) => {
            let mut typed = TypedFields::default();
            let read = typed.whole("position", Some(p)).unwrap_or(f64::NAN);
            specula_engine::lab::check_position(read)
                .map_err(|e| CliError::option(&typed.quote(e), "--position"))?
        }
        (false, Some(_)) => {
            return Err(CliError::usage(
                "--position counts a character for --compare; give --compare too",
            ));
        }
    };
    if args.compare {
        // Every run must be able to reach the counted position and draft at the first:
        // with one token the engine drafts nothing, and a stop string would end runs in
        // ways no closed form here follows (the model's end token is accounted for).
        if settings.config.max_new_tokens() < lab::RUN_TOKENS.max(position) {
            return Err(CliError::usage(format!(
                "--max-tokens must be at least {} with --compare: with fewer tokens a run drafts \
                 nothing at the first position{}",
                lab::RUN_TOKENS.max(position),
                if position == 2 {
                    " and never reaches the second"
                } else {
                    ""
                }
            )));
        }
        if !settings.config.stop_tokens().is_empty() || !settings.config.stop_strings().is_empty() {
            return Err(CliError::usage(
                "--stop cannot be given with --compare: runs cut short by a stop string have no \
                 exact distribution here",
            ));
        }
    }
    Ok(SampleSettings {
        samples,
        settings,
        position,
    })
}

/// Runs `specula sample`.
///
/// # Errors
/// Usage errors for bad flags or prompts; failures for model or output errors.
pub fn run(args: SampleArgs) -> Result<(), CliError> {
    let SampleSettings {
        samples,
        settings,
        position,
    } = check(&args)?;
    let mut pair = models::load_source(&settings.models, settings.backend, settings.threads)?;
    let prompt = pair.encode(&settings.prompt)?;
    pair.note_cropped_prompt(prompt.len());
    // Each sample's seed is drawn from one stream, not `seed + i`, so that runs with
    // nearby --seed values do not share samples.
    let mut seeds = ChaCha8Rng::seed_from_u64(settings.config.seed());
    let alphabet = match &pair.tokenizer {
        models::PairTokenizer::Chars(t) => t.alphabet().iter().collect::<String>(),
        models::PairTokenizer::Bpe(_) => String::new(),
    };
    let exact = if args.compare {
        // What the models read of the prompt, as decode::run crops it.
        let context = specula_engine::window_start(&prompt, pair.window()).to_vec();
        Some(compare::exact(
            &mut pair,
            &settings.config,
            &context,
            position,
        )?)
    } else {
        None
    };
    let mut counts = vec![0_u64; pair.tokenizer.vocab_size()];
    let mut unreached = 0_u64;
    let (token_text, stop_tokens) = (
        pair.tokenizer.token_texts(),
        pair.stop_tokens(&settings.config),
    );
    let mut stdout = std::io::stdout().lock();
    for _ in 0..samples {
        // 53 bits, so that the seed is one every surface accepts (`MAX_SEED`).
        let seed = seeds.next_u64() & MAX_SEED;
        let config = settings
            .config
            .clone()
            .with_seed(seed)
            .with_token_text(token_text.clone())
            .with_stop_tokens(stop_tokens.clone());
        let run = decode::run(&mut pair, config, &prompt, |_| true)?;
        if exact.is_some() {
            match run.tokens.get(position - 1) {
                Some(&token) => counts[token as usize] += 1,
                None => unreached += 1,
            }
            continue;
        }
        let line = Line {
            tokens: &run.tokens,
            text: pair.decode(&run.tokens),
            seed,
        };
        let json = serde_json::to_string(&line)
            .map_err(|e| CliError::failure(format!("cannot serialise a sample: {e}")))?;
        // One write per line, so a reader that goes away (`| head -1`) stops the run at
        // the next sample instead of after all of them.
        match writeln!(stdout, "{json}").and_then(|()| stdout.flush()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(CliError::failure(format!("cannot write the output: {e}"))),
        }
    }
    if let Some(exact) = exact {
        let counted = samples - unreached;
        let report = compare::compare(counted, unreached, exact, alphabet, &token_text, counts)?;
        let json = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::failure(format!("cannot serialise the comparison: {e}")))?;
        writeln!(stdout, "{json}")
            .map_err(|e| CliError::failure(format!("cannot write the output: {e}")))?;
    }
    Ok(())
}
