//! `specula generate`: one continuation of a prompt, streamed, then the metrics.

use std::io::Write;

use clap::Args;
use serde::Serialize;
use specula_engine::{DecodeConfig, FinishReason};

use crate::decode_args::DecodeArgs;
use crate::error::CliError;
use crate::report::{self, VllmMetrics};
use crate::{decode, models, parse};

/// Flags of `specula generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Decoding settings.
    #[command(flatten)]
    pub decode: DecodeArgs,
    /// Characters to generate.
    #[arg(
        long,
        value_name = "N",
        default_value = "200",
        allow_hyphen_values = true
    )]
    pub max_tokens: String,
    /// Print one JSON object (text, tokens, metrics) instead of streaming.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Output<'a> {
    prompt: &'a str,
    method: &'static str,
    text: String,
    tokens: Vec<u32>,
    finish: FinishReason,
    wall_seconds: f64,
    metrics: VllmMetrics,
}

/// Runs `specula generate`.
///
/// # Errors
/// Usage errors for bad flags or prompts; failures for model or output errors.
pub fn run(args: GenerateArgs) -> Result<(), CliError> {
    let max_tokens = parse::uint("--max-tokens", &args.max_tokens, 1, 1 << 20)?;
    let settings = args.decode.into_settings()?;
    settings.print_notes();
    let mut pair = models::load(
        settings.models.as_deref(),
        settings.backend,
        settings.threads,
    )?;
    let prompt = pair.encode(&settings.prompt)?;
    pair.check_length(prompt.len(), max_tokens, "--max-tokens")?;
    let config = DecodeConfig {
        sampling: settings.sampling,
        max_new_tokens: max_tokens,
        seed: settings.seed,
        ..DecodeConfig::new(settings.method.clone())
    };
    let method = settings.method.name();
    if args.json {
        let run = decode::run(&mut pair, config, &prompt, |_| {})?;
        let out = Output {
            prompt: &settings.prompt,
            method,
            text: pair.decode(&run.tokens),
            tokens: run.tokens.clone(),
            finish: run.finish.clone(),
            wall_seconds: run.wall.as_secs_f64(),
            metrics: VllmMetrics::from(&run.metrics),
        };
        let mut json = serde_json::to_string_pretty(&out)
            .map_err(|e| CliError::failure(format!("cannot serialise the output: {e}")))?;
        json.push('\n');
        return crate::emit(&json);
    }
    let tokenizer = pair.tokenizer.clone();
    let mut stdout = std::io::stdout();
    let _ = write!(stdout, "{}", settings.prompt);
    let _ = stdout.flush();
    let run = decode::run(&mut pair, config, &prompt, |new| {
        // A closed stdout ends the stream, not the run; the metrics still get computed.
        let _ = write!(stdout, "{}", tokenizer.decode(new).unwrap_or_default());
        let _ = stdout.flush();
    })?;
    let metrics = VllmMetrics::from(&run.metrics);
    crate::emit(&format!(
        "\n\n--- {method}: {:.3} s wall, {:.1} tokens/s\n{}",
        run.wall.as_secs_f64(),
        run.tokens.len() as f64 / run.wall.as_secs_f64().max(1e-9),
        report::text(&metrics)
    ))
}
