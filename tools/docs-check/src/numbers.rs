//! Numbers the docs quote for a default or limit agree with the constant that defines it
//! in Rust ([`crate::rust_consts`]). Two forms are read:
//!
//! - **An option and its numbers**: after a mention of a decoding option ([`OPTIONS`]: its
//!   name in a code span, `` `gamma` ``, its flag, `--gamma`, or its symbol, γ), up to the
//!   next mention or the end of the sentence, `default N` / `defaults to N` must be the
//!   option's default and `at most N`, `up to N`, the upper end of `A–N` / `A to N` and of
//!   `[A, N]` its limit; a unit after the number can name another constant (`at most 1024
//!   draft nodes` is `MAX_ROUND_NODES`, `64 strings` of `stop` is `MAX_STOP_STRINGS`).
//!   After a symbol only `default N` and `at most N` count (a table's `γ = 1–6` is a
//!   measurement); a flag that is no option's (`--threads`) ends a clause; a list
//!   (`[default: 1,2,3,4,6]`) is not one value.
//! - **A named constant**: in a Markdown table row, each backticked constant
//!   (`` `MAX_GAMMA` ``) must have its value among the numbers of the cells before it; in
//!   prose, `N (`` `MAX_GAMMA` ``)` must be its value.
//!
//! The page's controls are checked by [`crate::page_controls`].
//!
//! Numbers are read as the docs write them: `1024`, `1,024`, `65_536`, `0.09`, `1e6`,
//! `10^6`, `2^20`, `2⁵³ − 1`, `false`.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::Problem;
use crate::rust_consts::{Constants, Value};

/// A decoding option the docs quote numbers for.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    /// Its names in code spans (`` `gamma` ``, `` `--gamma` ``) and as bare flags.
    pub names: &'static [&'static str],
    /// Its symbols in prose (γ).
    pub symbols: &'static [&'static str],
    /// The constant of its limit, if it has one.
    pub max: Option<&'static str>,
    /// The constant of its default, if it has one.
    pub default: Option<&'static str>,
    /// Words after a number that make it another constant's (`64 strings`).
    pub units: &'static [(&'static str, &'static str)],
}

const NODES: (&str, &str) = ("draft nodes", "MAX_ROUND_NODES");

/// Every option whose numbers are checked, with the constants of
/// `crates/specula-engine/src/options/limits.rs`.
pub const OPTIONS: &[Opt] = &[
    Opt {
        names: &["gamma", "--gamma"],
        symbols: &["γ"],
        max: Some("MAX_GAMMA"),
        default: Some("DEFAULT_GAMMA"),
        units: &[NODES],
    },
    Opt {
        names: &["drafts", "--drafts"],
        symbols: &[],
        max: Some("MAX_DRAFTS"),
        default: Some("DEFAULT_DRAFTS"),
        units: &[NODES],
    },
    Opt {
        names: &["tree", "--tree"],
        symbols: &[],
        max: None,
        default: None,
        units: &[
            NODES,
            ("depths", "MAX_GAMMA"),
            ("leaves", "MAX_DRAFTS"),
            ("nodes", "MAX_ROUND_NODES"),
        ],
    },
    Opt {
        names: &["epsilon", "--epsilon"],
        symbols: &["ε"],
        max: None,
        default: Some("DEFAULT_TYPICAL_EPSILON"),
        units: &[],
    },
    Opt {
        names: &["delta", "--delta"],
        symbols: &["δ"],
        max: Some("MAX_TYPICAL_DELTA"),
        default: Some("DEFAULT_TYPICAL_DELTA"),
        units: &[],
    },
    Opt {
        names: &["ngram", "--ngram"],
        symbols: &[],
        max: Some("MAX_NGRAM"),
        default: Some("DEFAULT_NGRAM"),
        units: &[],
    },
    Opt {
        names: &["maxTokens", "--max-tokens"],
        symbols: &[],
        max: Some("MAX_TOKENS"),
        default: Some("DEFAULT_MAX_TOKENS"),
        // `sample`'s own default (`specula sample --help`, docs/limits.md).
        units: &[("per continuation", "DEFAULT_SAMPLE_TOKENS")],
    },
    Opt {
        names: &["temperature", "--temperature"],
        symbols: &[],
        max: Some("MAX_TEMPERATURE"),
        default: Some("DEFAULT_TEMPERATURE"),
        units: &[],
    },
    Opt {
        names: &["topK", "--top-k"],
        symbols: &[],
        max: Some("MAX_TOP_K"),
        default: None,
        units: &[],
    },
    Opt {
        names: &["kl", "--kl"],
        symbols: &[],
        max: Some("MAX_KL"),
        default: None,
        units: &[],
    },
    Opt {
        names: &["seed", "--seed"],
        symbols: &[],
        max: Some("MAX_SEED"),
        default: Some("DEFAULT_SEED"),
        units: &[],
    },
    Opt {
        names: &["stop", "--stop"],
        symbols: &[],
        max: Some("MAX_STOP_STRINGS"),
        default: None,
        units: &[
            ("strings", "MAX_STOP_STRINGS"),
            ("characters", "MAX_STOP_CHARS"),
        ],
    },
    Opt {
        names: &["runs"],
        symbols: &[],
        max: Some("MAX_LAB_RUNS"),
        default: Some("DEFAULT_LAB_RUNS"),
        units: &[],
    },
    Opt {
        names: &["parallelDraft", "--parallel-draft"],
        symbols: &[],
        max: None,
        default: Some("DEFAULT_PARALLEL_DRAFT"),
        units: &[],
    },
];

/// A number as the docs write it (see the module's documentation).
const NUM: &str = r"(?:(?:\d+\^\d+|2[⁰¹²³⁴⁵⁶⁷⁸⁹]+)(?:\s*[−-]\s*1\b)?|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:_\d+)*(?:\.\d+)?(?:[eE][+-]?\d+)?)";

/// The value of a number written as the module's documentation lists (or `true`/`false`).
#[must_use]
pub fn parse_number(text: &str) -> Option<Value> {
    let text = text.trim().trim_matches('`');
    match text {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    let (base, minus_one) = match text.rsplit_once(['−', '-']) {
        Some((base, one))
            if one.trim() == "1"
                && base.contains(['^', '⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹']) =>
        {
            (base.trim(), true)
        }
        _ => (text, false),
    };
    let value = if let Some((b, e)) = base.split_once('^') {
        b.parse::<f64>().ok()?.powf(e.parse::<f64>().ok()?)
    } else if let Some(exp) = base
        .strip_prefix('2')
        .filter(|e| !e.is_empty() && e.chars().all(|c| "⁰¹²³⁴⁵⁶⁷⁸⁹".contains(c)))
    {
        let digits: String = exp
            .chars()
            .map(|c| {
                char::from(b'0' + "⁰¹²³⁴⁵⁶⁷⁸⁹".chars().position(|s| s == c).unwrap_or(0) as u8)
            })
            .collect();
        2f64.powf(digits.parse::<f64>().ok()?)
    } else {
        base.replace([',', '_'], "").parse::<f64>().ok()?
    };
    Some(Value::Number(if minus_one { value - 1.0 } else { value }))
}

static MENTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"`(--[a-z][a-z-]*|[A-Za-z][A-Za-z]*)`|(--[a-z][a-z-]*)|([γεδ])").expect("regex")
});

/// The options mentioned in `text`, in order: (start, end, the option). A flag that is not
/// an option's (`--threads`) is a mention of none: it ends a clause and starts none.
fn mentions(text: &str) -> Vec<(usize, usize, Option<&'static Opt>)> {
    let mut found = Vec::new();
    for cap in MENTION.captures_iter(text) {
        let whole = cap.get(0).expect("match");
        let (name, bare_flag) = match (cap.get(1), cap.get(2), cap.get(3)) {
            (Some(n), _, _) => (n.as_str(), false),
            (_, Some(f), _) => (f.as_str(), true),
            (_, _, Some(s)) => (s.as_str(), false),
            _ => continue,
        };
        // A bare flag inside a word (`a--b`) is not one.
        if bare_flag
            && text[..whole.start()]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '-')
        {
            continue;
        }
        let opt = OPTIONS
            .iter()
            .find(|o| o.names.contains(&name) || o.symbols.contains(&name));
        if opt.is_some() || name.starts_with("--") {
            found.push((whole.start(), whole.end(), opt));
        }
    }
    found
}

static DEFAULT_FORM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\bdefaults?(?:\s+(?:to|is|of))?[:,]?\s+`?({NUM}|true|false)\b`?"
    ))
    .expect("regex")
});

static MAX_FORMS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\b(?:at most|up to|no more than)\s+(?:the\s+)?({NUM})|{NUM}\s*(?:–|\bto\b)\s*({NUM})|\[\s*{NUM}\s*,\s*({NUM})\s*\]"
    ))
    .expect("regex")
});

pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The constant a number quoted for `opt` stands for: a unit after it names one, else the
/// option's own (`fallback`).
fn constant_for(opt: &Opt, after: &str, fallback: Option<&'static str>) -> Option<&'static str> {
    // The next words, a line break read as a space (`1024 draft\nnodes`).
    let after = after
        .trim_start_matches(['`', ' ', '\n'])
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    opt.units
        .iter()
        .chain(std::iter::once(&NODES))
        .find(|(unit, _)| after.starts_with(unit))
        .map(|&(_, name)| name)
        .or(fallback)
}

/// Compares a quoted number with a constant; a problem when they disagree.
pub(crate) fn compare(
    constants: &Constants,
    file: &Path,
    text: &str,
    at: usize,
    quoted: &str,
    name: &str,
    what: &str,
) -> Option<Problem> {
    let problem = |message: String| Problem {
        file: file.to_path_buf(),
        line: Some(line_of(text, at)),
        message,
    };
    let Some(value) = parse_number(quoted) else {
        return Some(problem(format!(
            "cannot read the number `{quoted}` ({what})"
        )));
    };
    match constants.value(name) {
        Ok(defined) if defined.same(value) => None,
        Ok(defined) => Some(problem(format!(
            "quotes {} for {what}, but `{name}` is {defined}",
            quoted.trim()
        ))),
        Err(why) => Some(problem(format!(
            "quotes {} for {what}, but {why}",
            quoted.trim()
        ))),
    }
}

/// The most bytes one clause runs: a guard against an unclosed parenthesis.
const CLAUSE_MAX: usize = 400;

/// The clauses of the options mentioned in `text`: (start, end, option, whether the
/// mention is a symbol). A clause runs from its mention to the next mention, the end of its
/// sentence or table cell, or the close of a parenthesis around the mention; a mention inside a parenthesis opened within another
/// option's clause (`parallelDraft` (… a fixed γ, default `false`)) is part of that clause,
/// not one of its own.
fn clauses(text: &str) -> Vec<(usize, usize, &'static Opt, bool)> {
    let mentions = mentions(text);
    let mut out = Vec::new();
    let mut next = 0;
    while next < mentions.len() {
        let (at, start, opt) = mentions[next];
        next += 1;
        let Some(opt) = opt else {
            continue;
        };
        let by_symbol = !text[at..start].contains(['`', '-']);
        let mut depth = 0i32;
        let mut end = text.len();
        let mut iter = text[start..].char_indices().peekable();
        while let Some((i, c)) = iter.next() {
            let at = start + i;
            if i >= CLAUSE_MAX {
                end = at;
                break;
            }
            if mentions.get(next).is_some_and(|m| m.0 == at) {
                if depth > 0 {
                    next += 1; // inside this clause's parenthesis
                    continue;
                }
                end = at;
                break;
            }
            let sentence_end =
                matches!(c, '.' | '!' | '?') && iter.peek().is_none_or(|&(_, n)| n.is_whitespace());
            let blank_line = c == '\n'
                && text[at + 1..]
                    .trim_start_matches([' ', '\t'])
                    .starts_with('\n');
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                _ => {}
            }
            if depth < 0 || (depth == 0 && (sentence_end || c == '|')) || blank_line {
                end = at;
                break;
            }
        }
        // Mentions swallowed by this clause do not start their own.
        while mentions.get(next).is_some_and(|m| m.0 < end) {
            next += 1;
        }
        out.push((start, end, opt, by_symbol));
    }
    out
}

/// A number followed by the constant it quotes, `64 (`MAX_GAMMA`)` or `16 values
/// (`MAX_LIST_VALUES`, …)`: the text after the number, then the constant's name.
static NAMES_ITS_CONSTANT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^(?:\s+[a-z][a-z \n]{{0,40}}?)?\s*\(`({CONSTANT})`[,)]"
    ))
    .expect("regex")
});

/// The problems of the option clauses of one text.
fn check_options(file: &Path, text: &str, constants: &Constants) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (from, to, opt, by_symbol) in clauses(text) {
        let clause = &text[from..to];
        let name = opt.names[0];
        let mut check = |m: regex::Match<'_>, fallback, what: &str| {
            let after = &clause[m.end()..];
            if NAMES_ITS_CONSTANT.is_match(after) {
                return; // checked against the constant it names (check_named)
            }
            if after.starts_with(',') && after[1..].starts_with(|c: char| c.is_ascii_digit()) {
                return; // a list (`[default: 1,2,3,4,6]` of bench's sweep), not one value
            }
            if let Some(constant) = constant_for(opt, after, fallback) {
                let what = format!("{what} `{name}`");
                problems.extend(compare(
                    constants,
                    file,
                    text,
                    from + m.start(),
                    m.as_str(),
                    constant,
                    &what,
                ));
            }
        };
        for cap in DEFAULT_FORM.captures_iter(clause) {
            check(cap.get(1).expect("group"), opt.default, "the default of");
        }
        for cap in MAX_FORMS.captures_iter(clause) {
            // After a symbol (γ = 1–6 in a table of measurements) only `at most N` quotes
            // a limit; after a name or flag a range does too.
            let Some(m) = (1..=3)
                .filter(|&g| g == 1 || !by_symbol)
                .find_map(|g| cap.get(g))
            else {
                continue;
            };
            check(m, opt.max, "a limit of");
        }
    }
    problems
}

/// A name that reads as a limit's or default's constant.
const CONSTANT: &str = r"(?:MAX|DEFAULT|MIN)_[A-Z0-9_]+|[A-Z][A-Z0-9]*_MAX_[A-Z0-9_]+";

static NAMED_IN_PROSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"({NUM})(?:\s+[a-z][a-z \n]{{0,40}}?)?\s*\(`({CONSTANT})`[,)]"
    ))
    .expect("regex")
});
/// A number of a table cell, with a binary unit.
static CELL_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"({NUM})(?:\s*([KMG]iB)\b)?")).expect("regex"));
static NAMED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"`({CONSTANT})`")).expect("regex"));

/// The problems of named constants: table rows and `N (`CONST`)`.
fn check_named(file: &Path, text: &str, constants: &Constants) -> Vec<Problem> {
    let mut problems = Vec::new();
    for cap in NAMED_IN_PROSE.captures_iter(text) {
        let (number, name) = (cap.get(1).expect("group"), &cap[2]);
        let what = format!("`{name}`");
        problems.extend(compare(
            constants,
            file,
            text,
            number.start(),
            number.as_str(),
            name,
            &what,
        ));
    }
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let row = line.trim_start();
        if row.starts_with('|') {
            for cap in NAMED.captures_iter(line) {
                let name = &cap[1];
                let before = &line[..cap.get(0).expect("match").start()];
                let cell_start = before.rfind('|').unwrap_or(0);
                // Numbers of the earlier cells, code spans of other constants left out.
                let earlier = NAMED.replace_all(&before[..cell_start], "");
                let found = CELL_NUMBER
                    .captures_iter(&earlier)
                    .filter_map(|cap| {
                        let scale = match cap.get(2).map(|u| u.as_str()) {
                            Some("KiB") => 1024.0,
                            Some("MiB") => 1024.0 * 1024.0,
                            Some("GiB") => 1024.0 * 1024.0 * 1024.0,
                            _ => 1.0,
                        };
                        match parse_number(&cap[1])? {
                            Value::Number(n) => Some(Value::Number(n * scale)),
                            other => Some(other),
                        }
                    })
                    .collect::<Vec<_>>();
                let problem = |message: String| Problem {
                    file: file.to_path_buf(),
                    line: Some(line_of(text, offset)),
                    message,
                };
                match constants.value(name) {
                    Ok(value) if found.iter().any(|v| v.same(value)) => {}
                    Ok(value) => problems.push(problem(format!(
                        "the row names `{name}`, which is {value}, but its cells before give no such number"
                    ))),
                    Err(why) => problems.push(problem(format!("the row names a constant: {why}"))),
                }
            }
        }
        offset += line.len();
    }
    problems
}

/// The problems of one prose text (Markdown, a page's script, a help text): its option
/// clauses and named constants.
#[must_use]
pub fn check_prose(file: &Path, text: &str, constants: &Constants) -> Vec<Problem> {
    let mut problems = check_options(file, text, constants);
    problems.extend(check_named(file, text, constants));
    problems.sort_by_key(|p| p.line);
    problems
}

/// Whether `file`'s prose is checked: the Markdown docs (not the changelog, whose entries
/// quote the numbers of their day), the page, its scripts, the package's sources and
/// examples, and the crates' sources (their doc comments and help texts).
#[must_use]
pub fn is_prose_source(file: &Path) -> bool {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let under = |dir: &str| file.starts_with(dir);
    match ext {
        "md" => file != Path::new("CHANGELOG.md"),
        "js" | "mjs" | "ts" => under("www/js") || under("web/src") || under("web/examples"),
        "rs" => {
            under("crates")
                && file
                    .components()
                    .nth(2)
                    .is_some_and(|c| c.as_os_str() == "src")
        }
        _ => false,
    }
}
