//! The commands the docs tell readers to run: every `specula …`, `cargo … -p …`,
//! `bash scripts/…` (or `node`, `python3`, or the script alone) in a shell code block or an
//! inline code span of a Markdown file. This module finds them and checks what it can
//! without building anything: each script is a tracked file, each `-p` names a package of
//! the workspace and each `--example` an example of it. Whether a `specula` command's
//! subcommand, flags and values exist is checked against the built CLI by
//! `crates/specula-cli/tests/doc_commands.rs`, which reads the commands from here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use crate::Problem;
use crate::shell::simple_commands;

/// What a documented command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// The `specula` CLI, with these arguments (from `specula ARGS` or `cargo run -p
    /// specula-cli -- ARGS`; elided words, `...` and `…`, left out).
    Specula(Vec<String>),
    /// A script of the repository, by its path from the root (`bash scripts/demo.sh`).
    Script(String),
    /// `cargo` with a package (`-p NAME`) and, where given, an example of it.
    Cargo {
        /// The package `-p` names.
        package: String,
        /// The example `--example` names.
        example: Option<String>,
    },
}

/// One command of the docs and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocCommand {
    /// The Markdown file, relative to the repository root.
    pub file: PathBuf,
    /// The 1-based line the command starts on.
    pub line: usize,
    /// What it runs.
    pub kind: Kind,
    /// Whether it is a line of a code block, written to be run as it stands; an inline code
    /// span may be a fragment (`specula sample --compare`).
    pub in_block: bool,
}

/// Whether the docs' commands of `file` are read: every Markdown file but the changelog,
/// whose entries name the flags of their day.
#[must_use]
pub fn is_command_source(file: &Path) -> bool {
    file.extension().is_some_and(|ext| ext == "md") && file != Path::new("CHANGELOG.md")
}

/// Words that stand for left-out arguments in prose (`specula generate ... --json`).
fn is_elision(word: &str) -> bool {
    word == "..." || word == "…"
}

/// The commands of one simple command's `words`.
fn classify(words: &[String]) -> Vec<Kind> {
    let Some(program) = words.first() else {
        return Vec::new();
    };
    let args = &words[1..];
    // A file under scripts/ (`scripts/` alone names the folder, not a command).
    let script = |path: &str| {
        (path.starts_with("scripts/") && !path.ends_with('/')).then(|| Kind::Script(path.into()))
    };
    match program.as_str() {
        "specula" => specula(args).into_iter().collect(),
        p if p.ends_with("/specula") => specula(args).into_iter().collect(),
        "bash" | "sh" | "node" | "python3" => args
            .iter()
            .find(|a| !a.starts_with('-'))
            .and_then(|a| script(a))
            .into_iter()
            .collect(),
        "cargo" => cargo(args),
        p => script(p).into_iter().collect(),
    }
}

fn specula(args: &[String]) -> Option<Kind> {
    if args.first().is_none_or(|a| is_elision(a)) {
        return None; // `specula`, the name; `specula … --json`: any subcommand
    }
    Some(Kind::Specula(
        args.iter().filter(|a| !is_elision(a)).cloned().collect(),
    ))
}

fn cargo(args: &[String]) -> Vec<Kind> {
    let (own, rest) = match args.iter().position(|a| a == "--") {
        Some(at) => (&args[..at], Some(&args[at + 1..])),
        None => (args, None),
    };
    let value = |names: &[&str]| {
        own.iter().enumerate().find_map(|(i, a)| {
            names.iter().find_map(|name| {
                if a == name {
                    own.get(i + 1).cloned()
                } else {
                    a.strip_prefix(&format!("{name}=")).map(String::from)
                }
            })
        })
    };
    let Some(package) = value(&["-p", "--package"]) else {
        return Vec::new();
    };
    let mut kinds = Vec::new();
    if package == "specula-cli" && own.first().is_some_and(|a| a == "run") {
        kinds.extend(rest.and_then(specula));
    }
    kinds.push(Kind::Cargo {
        package,
        example: value(&["--example"]),
    });
    kinds
}

/// The commands of one logical line (continuations joined) that starts on `line`.
fn commands_of_line(
    file: &Path,
    line: usize,
    text: &str,
    in_block: bool,
    out: &mut Vec<DocCommand>,
) {
    let text = text.trim_start().strip_prefix("$ ").unwrap_or(text);
    for words in simple_commands(text) {
        for kind in classify(&words) {
            out.push(DocCommand {
                file: file.to_path_buf(),
                line,
                kind,
                in_block,
            });
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Whether a fenced block's info string names a shell.
fn is_shell(info: &str) -> bool {
    matches!(
        info.split_whitespace().next().unwrap_or(""),
        "" | "sh" | "bash" | "shell" | "console" | "zsh"
    )
}

/// Every command in the shell code blocks and inline code spans of one Markdown text.
#[must_use]
pub fn extract(file: &Path, text: &str) -> Vec<DocCommand> {
    let mut out = Vec::new();
    let mut block: Option<(usize, String)> = None;
    for (event, range) in Parser::new_ext(text, Options::all()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let shell = match &kind {
                    CodeBlockKind::Fenced(info) => is_shell(info),
                    CodeBlockKind::Indented => true,
                };
                // The first line of a fenced block is its fence.
                let first = line_of(text, range.start)
                    + usize::from(matches!(kind, CodeBlockKind::Fenced(_)));
                block = shell.then(|| (first, String::new()));
            }
            Event::Text(t) => {
                if let Some((_, body)) = block.as_mut() {
                    body.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((first, body)) = block.take() {
                    let mut pending: Option<(usize, String)> = None;
                    for (i, raw) in body.lines().enumerate() {
                        let (start, mut joined) =
                            pending.take().unwrap_or((first + i, String::new()));
                        match raw.strip_suffix('\\') {
                            Some(head) => {
                                joined.push_str(head);
                                joined.push(' ');
                                pending = Some((start, joined));
                            }
                            None => {
                                joined.push_str(raw);
                                commands_of_line(file, start, &joined, true, &mut out);
                            }
                        }
                    }
                    if let Some((start, joined)) = pending {
                        commands_of_line(file, start, &joined, true, &mut out);
                    }
                }
            }
            Event::Code(code) if block.is_none() => {
                commands_of_line(file, line_of(text, range.start), &code, false, &mut out);
            }
            _ => {}
        }
    }
    out
}

/// Every command of the repository's docs ([`is_command_source`]), in file order.
///
/// # Errors
/// When the tracked files cannot be listed.
pub fn repository_commands(root: &Path) -> std::io::Result<Vec<DocCommand>> {
    let mut out = Vec::new();
    for file in crate::tracked_files(root)? {
        if is_command_source(&file)
            && let Ok(text) = std::fs::read_to_string(root.join(&file))
        {
            out.extend(extract(&file, &text));
        }
    }
    Ok(out)
}

/// The workspace's packages by name, each with its folder, from the tracked `Cargo.toml`
/// files that have a `[package]`.
fn packages(root: &Path, files: &[PathBuf]) -> HashMap<String, PathBuf> {
    let mut found = HashMap::new();
    for file in files.iter().filter(|f| f.ends_with("Cargo.toml")) {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        let mut in_package = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                in_package = line == "[package]";
            } else if in_package
                && let Some(value) = line.strip_prefix("name").map(str::trim_start)
                && let Some(value) = value.strip_prefix('=')
            {
                let name = value.trim().trim_matches('"');
                let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
                found.insert(name.to_string(), dir);
            }
        }
    }
    found
}

/// The problems of the docs' `commands` that need no build: a script that is not a tracked
/// file, a package that is not in the workspace, an example its package does not have.
#[must_use]
pub fn check_commands(root: &Path, files: &[PathBuf], commands: &[DocCommand]) -> Vec<Problem> {
    let packages = packages(root, files);
    let tracked = |path: &Path| files.iter().any(|f| f == path);
    let mut problems = Vec::new();
    for command in commands {
        let message = match &command.kind {
            Kind::Specula(_) => None,
            Kind::Script(path) => (!tracked(Path::new(path)))
                .then(|| format!("the command runs `{path}`, which is not a tracked file")),
            Kind::Cargo { package, example } => match packages.get(package) {
                None => Some(format!(
                    "the command names the package `{package}`, which is not in the workspace"
                )),
                Some(dir) => example.as_ref().and_then(|example| {
                    let single = dir.join("examples").join(format!("{example}.rs"));
                    let folder = dir.join("examples").join(example).join("main.rs");
                    (!tracked(&single) && !tracked(&folder)).then(|| {
                        format!("the command names the example `{example}`, which `{package}` does not have")
                    })
                }),
            },
        };
        problems.extend(message.map(|message| Problem {
            file: command.file.clone(),
            line: Some(command.line),
            message,
        }));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(usize, Kind)> {
        extract(Path::new("x.md"), text)
            .into_iter()
            .map(|c| (c.line, c.kind))
            .collect()
    }

    fn specula(args: &[&str]) -> Kind {
        Kind::Specula(args.iter().map(|&a| a.to_string()).collect())
    }

    #[test]
    fn shell_blocks_with_continuations() {
        let text = "# T\n\n```sh\nbash scripts/demo.sh   # serve\n\
                    cargo run --release -p specula-cli -- plan --method spectr \\\n    --drafts 4\n\
                    M=$(bash scripts/fetch.sh | tail -n 1)\n```\n";
        let cli = Kind::Cargo {
            package: "specula-cli".into(),
            example: None,
        };
        assert_eq!(
            kinds(text),
            [
                (4, Kind::Script("scripts/demo.sh".into())),
                (5, specula(&["plan", "--method", "spectr", "--drafts", "4"])),
                (5, cli),
                (7, Kind::Script("scripts/fetch.sh".into())),
            ]
        );
    }

    #[test]
    fn inline_spans_and_other_blocks() {
        let text = "Run `specula bench --parallel-draft` or `specula … --json` (`specula`), \
                    `specula generate ... --backend wgpu|cpu` and\n`cargo run -p specula-engine \
                    --example parallel_draft`.\n\n```rust\nspecula plan\n```\n\n```js\nimport x from \"specula\";\n```\n";
        assert_eq!(
            kinds(text),
            [
                (1, specula(&["bench", "--parallel-draft"])),
                (1, specula(&["generate", "--backend", "wgpu"])),
                (
                    2,
                    Kind::Cargo {
                        package: "specula-engine".into(),
                        example: Some("parallel_draft".into())
                    }
                ),
            ]
        );
    }

    #[test]
    fn missing_scripts_packages_and_examples_are_problems() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let files = crate::tracked_files(&root).expect("git ls-files");
        let text = "```sh\nbash scripts/test.sh\nbash scripts/no-such.sh\n\
                    cargo run -p specula-engine --example parallel_draft\n\
                    cargo run -p specula-engine --example no_such\ncargo build -p no-such\n```\n";
        let commands = extract(Path::new("x.md"), text);
        let lines: Vec<usize> = check_commands(&root, &files, &commands)
            .iter()
            .filter_map(|p| p.line)
            .collect();
        assert_eq!(lines, [3, 5, 6]);
    }
}
