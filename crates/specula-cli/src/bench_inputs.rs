//! What `specula bench` runs when its flags choose: the prompts of `--prompts FILE` (a
//! JSON array of strings, read with [`parse::read_regular_file`]), their tokens and how
//! the tables list them, and the methods of `--methods LIST` (the names of
//! [`MethodName`]). Each refusal is a usage error naming its flag.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;
use specula_engine::options::{MethodName, OptionError};

use crate::bench_cmd::{MAX_BENCH_PROMPTS, MAX_PROMPTS_BYTES};
use crate::error::CliError;
use crate::{models, parse};

/// The prompts in the file at `path`: a JSON array of 1 to [`MAX_BENCH_PROMPTS`]
/// non-empty strings, the file a regular one of at most [`MAX_PROMPTS_BYTES`].
///
/// # Errors
/// A usage error naming `--prompts` and the file, saying what is wrong with it.
pub fn read_prompts(path: &Path) -> Result<Vec<String>, CliError> {
    let name = path.display();
    let refuse = |why: String| CliError::usage(format!("--prompts: {why}"));
    let bytes = parse::read_regular_file(path, MAX_PROMPTS_BYTES)
        .map_err(|e| refuse(format!("cannot read {name}: {e}")))?;
    let value: Value =
        serde_json::from_slice(&bytes).map_err(|e| refuse(format!("{name} is not JSON: {e}")))?;
    let Value::Array(items) = value else {
        return Err(refuse(format!(
            "{name} must hold a JSON array of prompts (strings), e.g. [\"ROMEO:\\n\"]; it \
             holds {}",
            kind(&value)
        )));
    };
    if items.is_empty() {
        return Err(refuse(format!(
            "{name} holds an empty array: give at least one prompt"
        )));
    }
    if items.len() > MAX_BENCH_PROMPTS {
        return Err(refuse(format!(
            "{name} holds {} prompts; at most {MAX_BENCH_PROMPTS} are decoded in one run",
            items.len()
        )));
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(text) if text.is_empty() => {
                Err(refuse(format!("prompt {i} in {name} is empty")))
            }
            Value::String(text) => Ok(text),
            other => Err(refuse(format!(
                "entry {i} in {name} must be a string (a prompt); it is {}",
                kind(&other)
            ))),
        })
        .collect()
}

/// What a JSON value is, in words.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The methods `--methods` names (comma-separated, white space around each ignored, a
/// name given twice run once), autoregressive decoding first: every speed-up is relative
/// to it, so it always runs. Without the flag, every method.
///
/// # Errors
/// A usage error naming `--methods`: an empty list or entry, or a name that is no
/// method's (the message lists the methods).
pub fn methods(raw: Option<&str>) -> Result<Vec<MethodName>, CliError> {
    let Some(raw) = raw else {
        return Ok(MethodName::ALL.to_vec());
    };
    if raw.trim().is_empty() {
        return Err(CliError::usage(format!(
            "--methods is empty: give comma-separated method names, e.g. speculative; the \
             methods are {}",
            MethodName::list()
        )));
    }
    let mut chosen = vec![MethodName::Autoregressive];
    for (i, item) in raw.split(',').enumerate() {
        let name = item.trim();
        if name.is_empty() {
            return Err(CliError::usage(format!(
                "--methods: entry {i} is empty (a stray comma?); the methods are {}",
                MethodName::list()
            )));
        }
        let method: MethodName = name
            .parse()
            .map_err(|e: OptionError| CliError::usage(e.message_for("--methods")))?;
        if !chosen.contains(&method) {
            chosen.push(method);
        }
    }
    Ok(chosen)
}

/// The tokens of each prompt, each checked to fit the models' positions with `tokens`
/// new ones; `given` when the prompts are `--prompts`'s, whose refusals name that flag.
///
/// # Errors
/// A usage error for a prompt the tokenizer cannot encode or the positions cannot hold.
pub fn encode_prompts(
    pair: &models::Pair,
    texts: &[String],
    tokens: usize,
    given: bool,
) -> Result<Vec<Vec<u32>>, CliError> {
    let window = pair.window();
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let prompt = if given {
                pair.tokenizer
                    .encode(text)
                    .map_err(|e| CliError::usage(format!("--prompts: prompt {i}: {e}")))?
            } else {
                pair.encode(text)?
            };
            if given && prompt.len() >= window {
                return Err(CliError::usage(format!(
                    "--prompts: prompt {i} is {} {} long, and the models read {window} \
                     positions: it leaves none for --tokens",
                    prompt.len(),
                    pair.tokenizer.unit()
                )));
            }
            pair.check_length(prompt.len(), tokens, "--tokens")?;
            Ok(prompt)
        })
        .collect()
}

/// The prompts as the tables list them, one a line, quoted with their escapes (`\n`).
pub fn prompts_list(texts: &[String]) -> String {
    let mut list = format!("prompts ({}):\n", texts.len());
    for text in texts {
        let _ = writeln!(list, "  {text:?}");
    }
    list.push('\n');
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_always_include_autoregressive_once() {
        assert_eq!(methods(None).ok(), Some(MethodName::ALL.to_vec()));
        assert_eq!(
            methods(Some(" speculative ,autoregressive,speculative")).ok(),
            Some(vec![MethodName::Autoregressive, MethodName::Speculative])
        );
        assert!(methods(Some("")).is_err());
        assert!(methods(Some("speculative,")).is_err());
        let unknown = methods(Some("greedy")).unwrap_err().to_string();
        assert!(unknown.contains(&MethodName::list()), "{unknown}");
    }

    /// A flag's help text, its words one space apart.
    fn help(flag: &str) -> String {
        use clap::CommandFactory;
        let cli = crate::args::Cli::command();
        let bench = cli.find_subcommand("bench").expect("bench");
        let help = bench
            .get_arguments()
            .find(|a| a.get_id() == flag)
            .and_then(|a| a.get_help())
            .unwrap_or_else(|| panic!("--{flag} has no help"))
            .to_string();
        help.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The help texts spell the names and limits out; they must be the names `--methods`
    /// reads and the limits `--prompts` holds to.
    #[test]
    fn the_help_texts_quote_the_names_and_limits() {
        let methods = help("methods");
        assert!(methods.contains(&MethodName::list()), "{methods}");
        let prompts = help("prompts");
        assert!(
            prompts.contains(&format!("1 to {MAX_BENCH_PROMPTS} non-empty strings")),
            "{prompts}"
        );
        assert_eq!(MAX_PROMPTS_BYTES % (1 << 20), 0);
        assert!(
            prompts.contains(&format!("at most {} MiB", MAX_PROMPTS_BYTES >> 20)),
            "{prompts}"
        );
    }
}
