//! The prose checks of numbers: the constants read from the Rust sources are the compiled
//! ones, and a quoted default or limit that disagrees with its constant is a problem.

use std::path::{Path, PathBuf};

use specula_docs_check::numbers::{check_prose, parse_number};
use specula_docs_check::page_controls::check_controls;
use specula_docs_check::rust_consts::{Constants, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn constants() -> Constants {
    let root = root();
    let files = specula_docs_check::tracked_files(&root).expect("git ls-files");
    Constants::read(&root, &files)
}

/// The lines of the problems `check_prose` finds in `text`.
fn problem_lines(text: &str) -> Vec<usize> {
    check_prose(Path::new("x.md"), text, &constants())
        .iter()
        .filter_map(|p| p.line)
        .collect()
}

/// `maxGamma` → `MAX_GAMMA`.
fn constant_name(field: &str) -> String {
    let mut name = String::new();
    for c in field.chars() {
        if c.is_ascii_uppercase() {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

#[test]
fn every_limit_read_from_the_sources_is_the_compiled_one() {
    let constants = constants();
    let limits = serde_json::to_value(specula_engine::options::limits::LIMITS).expect("json");
    let fields = limits.as_object().expect("an object");
    assert!(fields.len() >= 20);
    for (field, compiled) in fields {
        let compiled = match compiled {
            serde_json::Value::Bool(b) => Value::Bool(*b),
            other => Value::Number(other.as_f64().expect("a number")),
        };
        let name = constant_name(field);
        assert_eq!(constants.value(&name), Ok(compiled), "{name}");
    }
}

#[test]
fn numbers_read_as_the_docs_write_them() {
    for (text, value) in [
        ("1024", 1024.0),
        ("1,024", 1024.0),
        ("65_536", 65_536.0),
        ("0.09", 0.09),
        ("1e6", 1e6),
        ("10^6", 1e6),
        ("2^20", 1_048_576.0),
        ("2^53 − 1", 9_007_199_254_740_991.0),
        ("2^53 - 1", 9_007_199_254_740_991.0),
        ("2⁵³ − 1", 9_007_199_254_740_991.0),
    ] {
        assert_eq!(parse_number(text), Some(Value::Number(value)), "{text}");
    }
    assert_eq!(parse_number("`false`"), Some(Value::Bool(false)));
}

#[test]
fn quotes_that_agree_pass() {
    let text = "Options: `gamma` (1–64, default 4; not for autoregressive), `drafts` \
                (spectr/multiround: 1–1024,\ndefault 4, and `drafts × gamma` at most 1024 draft\n\
                nodes per round), `tree` (1–64 depths, at most 1024 leaves and 1024 nodes, and \
                `gamma`/`drafts` equal to its depth), `parallelDraft` (speculative with a fixed \
                γ, default `false`), `seed` (0 to 2^53 − 1, default 0), `stop` (at most 64 \
                strings of 1–1024\ncharacters).\n\n\
                `gamma` (times K at most 1024 draft\nnodes per round)\n\n\
                --delta <DELTA>  scale, in [0, 1e6] (default 0.3)\n\
                --drafts defaults to 4.\n\n\
                | `gamma` | 1–64 (4) | `MAX_GAMMA`, `DEFAULT_GAMMA` |\n\
                | bytes | 64 MiB | `MAX_LIST_BYTES` |\n\n\
                `--gammas` are at most 64 (`MAX_GAMMA`), `--drafts` entries at most 64 \
                (`MAX_BENCH_DRAFTS`), and at most the 1,024 draft nodes per round of decoding \
                (`MAX_ROUND_NODES`).\n\n\
                | γ = 1–6 | 73–86 % |\n\n\
                --gammas <LIST>  γ values for speculative decoding [default: 1,2,3,4,6]\n";
    assert_eq!(problem_lines(text), Vec::<usize>::new());
}

#[test]
fn a_quote_that_disagrees_fails_on_its_line() {
    let text = "`gamma` (1–64, default 5)\n\
                `drafts` (1–512, default 4)\n\
                ε (typical acceptance, by default 0.1)\n\
                --max-tokens <N>  Characters (default 64, at most 65535)\n\
                `stop` (at most 64 strings of 1–1000 characters)\n\
                `parallelDraft` (default `true`)\n\
                | `ngram` | 1–8 (3) | `MAX_NGRAM`, `DEFAULT_NGRAM` |\n\
                | `drafts` | 1–1,024 | `MAX_NO_SUCH` |\n\
                at most 32 (`MAX_GAMMA`)\n\
                `seed` (0 to 2^32 − 1)\n";
    assert_eq!(problem_lines(text), (1..=10).collect::<Vec<_>>());
}

#[test]
fn the_page_controls_start_at_the_defaults_within_the_limits() {
    let constants = constants();
    let good = r#"<output id="gamma-out" for="gamma">4</output>
<input id="gamma" type="range" min="1" max="16" step="1" value="4" />
<input id="lab-runs" type="number" min="1" step="1" value="1000" />
<input id="speed" type="range" min="0" max="6" value="2" />"#;
    assert!(check_controls(Path::new("p.html"), good, &constants).is_empty());
    let bad = r#"<output id="gamma-out" for="gamma">5</output>
<input id="gamma" type="range" min="1" max="65" step="1" value="4" />
<input id="ngram" type="range" min="1" max="16" step="1" value="2" />"#;
    let lines: Vec<usize> = check_controls(Path::new("p.html"), bad, &constants)
        .iter()
        .filter_map(|p| p.line)
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines.contains(&1) && lines.contains(&2) && lines.contains(&3));
}
