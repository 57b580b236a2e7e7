//! `specula generate`: one continuation of a prompt, streamed, then the metrics.

use std::io::Write;

use clap::Args;
use serde::Serialize;
use specula_engine::{DecodeConfig, DraftShape, FinishReason, Method};
use specula_host::TextStream;

use crate::decode_args::{DecodeArgs, DecodeSettings};
use crate::error::CliError;
use crate::report::{self, VllmMetrics};
use crate::{decode, models};

/// Flags of `specula generate`.
#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    /// Decoding settings.
    #[command(flatten)]
    pub decode: DecodeArgs,
    /// Characters to generate (default 64, at most 65536; past the models' 256 positions
    /// the context slides: both models continue from the last 128 characters).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = crate::number::typed)]
    pub max_tokens: Option<crate::number::Typed>,
    /// Print one JSON object (text, tokens, metrics) instead of streaming.
    #[arg(long)]
    pub json: bool,
    /// Stream JSON lines: one `{"round", "tokens", "text"}` per decoding round as it is
    /// generated, then the object of --json on one line. A reader that goes away (`|
    /// head -1`) stops the run at the next round.
    #[arg(long)]
    pub json_lines: bool,
}

/// One round's tokens, a line of `--json-lines`.
#[derive(Serialize)]
struct RoundLine<'a> {
    /// 1 for the first round.
    round: u64,
    tokens: &'a [u32],
    /// The round's text; a character whose bytes are not all generated yet waits for
    /// the round that completes it.
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Output<'a> {
    prompt: &'a str,
    method: &'static str,
    text: String,
    tokens: Vec<u32>,
    finish: FinishReason,
    wall_seconds: f64,
    metrics: VllmMetrics,
}

/// Checks every flag, before any model loads.
///
/// # Errors
/// A usage error naming the first bad flag.
pub fn check(args: &GenerateArgs) -> Result<DecodeSettings, CliError> {
    args.decode.clone().into_settings(args.max_tokens.as_ref())
}

/// Runs `specula generate`.
///
/// # Errors
/// Usage errors for bad flags or prompts; failures for model or output errors.
pub fn run(args: GenerateArgs) -> Result<(), CliError> {
    let settings = check(&args)?;
    let mut pair = models::load_source(&settings.models, settings.backend, settings.threads)?;
    let prompt = pair.encode(&settings.prompt)?;
    pair.note_cropped_prompt(prompt.len());
    let stop_tokens = pair.stop_tokens(&settings.config);
    let config = settings
        .config
        .with_token_text(pair.tokenizer.token_texts())
        .with_stop_tokens(stop_tokens);
    let method = config.method().name();
    let label = describe(config.method());
    if args.json_lines {
        return json_lines(&mut pair, config, &prompt, &settings.prompt, method);
    }
    if args.json {
        let run = decode::run(&mut pair, config, &prompt, |_| true)?;
        let mut json = serde_json::to_string_pretty(&output(&pair, &settings.prompt, method, &run))
            .map_err(|e| CliError::failure(format!("cannot serialise the output: {e}")))?;
        json.push('\n');
        return crate::emit(&json);
    }
    let tokenizer = pair.tokenizer.clone();
    let mut stdout = std::io::stdout();
    // A closed stdout (`| head -c 20`) stops the run: there is no one left to read it.
    let mut write = |text: &str| match write!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(CliError::failure(format!("cannot write the output: {e}"))),
    };
    if !write(&settings.prompt)? {
        return Ok(());
    }
    let mut failed = None;
    let mut stream = TextStream::default();
    let run = decode::run(&mut pair, config, &prompt, |new| {
        let fresh = stream.push(&tokenizer, new, false).unwrap_or_default();
        match write(&fresh) {
            Ok(go_on) => go_on,
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    if run.stopped {
        return Ok(());
    }
    // A tail held back for a character the run never completed, as `--json` gives it.
    let tail = stream.push(&tokenizer, &[], true).unwrap_or_default();
    if !write(&tail)? {
        return Ok(());
    }
    let metrics = VllmMetrics::from(&run.metrics);
    crate::emit(&format!(
        "\n\n--- {label}: {:.3} s wall, {:.1} tokens/s\n{}",
        run.wall.as_secs_f64(),
        run.tokens.len() as f64 / run.wall.as_secs_f64().max(1e-9),
        report::text(&metrics)
    ))
}

/// The object `--json` prints for `run`.
fn output<'a>(
    pair: &models::Pair,
    prompt: &'a str,
    method: &'static str,
    run: &decode::Run,
) -> Output<'a> {
    Output {
        prompt,
        method,
        text: pair.decode(&run.tokens),
        tokens: run.tokens.clone(),
        finish: run.finish.clone(),
        wall_seconds: run.wall.as_secs_f64(),
        metrics: VllmMetrics::from(&run.metrics),
    }
}

/// `generate --json-lines`: a line per round as it is generated, then the summary
/// object on one line. `--json` alone prints nothing until the end, so a reader that
/// stops early (`| head -1`) could not stop a long run; here each line is written (and
/// flushed) as its round ends, and a closed pipe ends the run.
fn json_lines(
    pair: &mut models::Pair,
    config: DecodeConfig,
    prompt: &[u32],
    prompt_text: &str,
    method: &'static str,
) -> Result<(), CliError> {
    let tokenizer = pair.tokenizer.clone();
    let mut stdout = std::io::stdout().lock();
    let mut write_line = |json: Result<String, serde_json::Error>| -> Result<bool, CliError> {
        let json =
            json.map_err(|e| CliError::failure(format!("cannot serialise the output: {e}")))?;
        match writeln!(stdout, "{json}").and_then(|()| stdout.flush()) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
            Err(e) => Err(CliError::failure(format!("cannot write the output: {e}"))),
        }
    };
    let mut failed = None;
    let mut stream = TextStream::default();
    let mut round = 0;
    let run = decode::run(pair, config, prompt, |new| {
        round += 1;
        let line = RoundLine {
            round,
            tokens: new,
            text: stream.push(&tokenizer, new, false).unwrap_or_default(),
        };
        write_line(serde_json::to_string(&line)).unwrap_or_else(|e| {
            failed = Some(e);
            false
        })
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    if run.stopped {
        return Ok(());
    }
    let summary = output(pair, prompt_text, method, &run);
    write_line(serde_json::to_string(&summary)).map(|_| ())
}

/// The method as the summary line names it: the scheme, then its draft set and selection
/// rule where it has them (`spectr (tree 2,2,1, kseq)`).
fn describe(method: &Method) -> String {
    let shape = |drafts: &DraftShape| match drafts {
        DraftShape::Iid { k, length } => format!("K={k} L={length}"),
        DraftShape::Tree { branching, .. } => {
            let widths: Vec<String> = branching.iter().map(ToString::to_string).collect();
            format!("tree {}", widths.join(","))
        }
    };
    match method {
        Method::SpecTr { drafts, selection } => {
            format!("spectr ({}, {})", shape(drafts), selection.name())
        }
        Method::MultiRound { drafts } => format!("multiround ({})", shape(drafts)),
        other => other.name().to_owned(),
    }
}
