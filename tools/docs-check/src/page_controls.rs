//! The teaching page's controls (`www/index.html`) start at the defaults and stay within
//! the limits of the Rust constants ([`crate::rust_consts`]): each option's `value` (and its
//! `<output>`) is the default and its `max` at most the limit. The page sets them from the
//! package's `LIMITS` once it loads; these are what it shows before.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::Problem;
use crate::numbers::{compare, line_of, parse_number};
use crate::rust_consts::{Constants, Value};

/// The page whose controls [`check_controls`] reads, from the repository root.
pub const PAGE: &str = "www/index.html";

/// The page's controls: (element id, the constant of its limit, of its default). Controls
/// that start where the recorded run was made (temperature, seed, tokens) have no default
/// here.
pub const CONTROLS: &[(&str, Option<&str>, Option<&str>)] = &[
    ("gamma", Some("MAX_GAMMA"), Some("DEFAULT_GAMMA")),
    ("drafts", Some("MAX_DRAFTS"), Some("DEFAULT_DRAFTS")),
    ("epsilon", None, Some("DEFAULT_TYPICAL_EPSILON")),
    (
        "delta",
        Some("MAX_TYPICAL_DELTA"),
        Some("DEFAULT_TYPICAL_DELTA"),
    ),
    ("ngram", Some("MAX_NGRAM"), Some("DEFAULT_NGRAM")),
    ("temperature", Some("MAX_TEMPERATURE"), None),
    ("topk", Some("MAX_TOP_K"), None),
    ("seed", Some("MAX_SEED"), None),
    ("maxtokens", Some("MAX_TOKENS"), None),
    ("lab-runs", Some("MAX_LAB_RUNS"), Some("DEFAULT_LAB_RUNS")),
];

static INPUT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"<input\b[^>]*\bid="([^"]+)"[^>]*>"#).expect("regex"));
static OUTPUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"<output\b[^>]*\bid="([^"]+)-out"[^>]*>([^<]*)</output>"#).expect("regex")
});

fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..].split('"').next()
}

/// The problems of a page's controls: a `value` or `<output>` other than the default, a
/// `max` above the limit.
#[must_use]
pub fn check_controls(file: &Path, html: &str, constants: &Constants) -> Vec<Problem> {
    let mut problems = Vec::new();
    let control = |id: &str| CONTROLS.iter().find(|c| c.0 == id);
    for cap in INPUT.captures_iter(html) {
        let Some(&(id, max, default)) = control(&cap[1]) else {
            continue;
        };
        let tag = cap.get(0).expect("match");
        if let (Some(name), Some(value)) = (default, attribute(tag.as_str(), "value")) {
            let what = format!("the start of control `{id}`");
            problems.extend(compare(
                constants,
                file,
                html,
                tag.start(),
                value,
                name,
                &what,
            ));
        }
        if let (Some(name), Some(quoted)) = (max, attribute(tag.as_str(), "max")) {
            match (parse_number(quoted), constants.value(name)) {
                (Some(Value::Number(q)), Ok(Value::Number(limit))) if q <= limit => {}
                (_, limit) => problems.push(Problem {
                    file: file.to_path_buf(),
                    line: Some(line_of(html, tag.start())),
                    message: format!(
                        "control `{id}` goes to {quoted}, past `{name}` ({})",
                        limit.map_or_else(|why| why, |l| l.to_string())
                    ),
                }),
            }
        }
    }
    for cap in OUTPUT.captures_iter(html) {
        if let Some(&(id, _, Some(name))) = control(&cap[1]) {
            let shown = cap.get(2).expect("group");
            let what = format!("the start of `{id}`'s output");
            problems.extend(compare(
                constants,
                file,
                html,
                shown.start(),
                shown.as_str(),
                name,
                &what,
            ));
        }
    }
    problems
}
