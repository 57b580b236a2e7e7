//! The declarations web/src/index.d.ts writes by hand for what Rust reads field by field
//! stay equal to Rust: `TheoryOptions` and `RetargetOptions` have exactly the names
//! `theory()` and `retarget()` accept, and `DecodeRequest` (what `decode()` hands a
//! model's `forward`) has exactly the fields of the engine's `ForwardRequest` and its
//! queries, in camelCase. A field added or renamed on one side only fails here.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;
use specula_engine::{ForwardRequest, Role};
use specula_wasm::{RETARGET_OPTION_NAMES, THEORY_OPTION_NAMES};

fn index_d_ts() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/src/index.d.ts");
    std::fs::read_to_string(&path).expect("web/src/index.d.ts")
}

/// The lines of `export interface NAME { … }`, without its braces.
fn interface(text: &str, name: &str) -> Vec<String> {
    let start = text
        .find(&format!("export interface {name} {{"))
        .unwrap_or_else(|| panic!("index.d.ts declares no interface {name}"));
    let body = &text[start..];
    let end = body.find("\n}").expect("the interface closes");
    body[..end].lines().skip(1).map(str::to_owned).collect()
}

/// The field names of an interface's body (`name:` or `name?:` at the start of a line).
fn fields(lines: &[String]) -> BTreeSet<String> {
    lines
        .iter()
        .filter_map(|line| {
            let line = line.trim();
            let name: String = line
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let rest = &line[name.len()..];
            (!name.is_empty() && (rest.starts_with(':') || rest.starts_with("?:"))).then_some(name)
        })
        .collect()
}

fn camel(key: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for ch in key.chars() {
        if ch == '_' {
            upper = true;
        } else if upper {
            out.push(ch.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .expect("an object")
        .keys()
        .map(|k| camel(k))
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

#[test]
fn theory_and_retarget_options_are_the_names_rust_accepts() {
    let text = index_d_ts();
    assert_eq!(
        fields(&interface(&text, "TheoryOptions")),
        set(&THEORY_OPTION_NAMES)
    );
    assert_eq!(
        fields(&interface(&text, "RetargetOptions")),
        set(&RETARGET_OPTION_NAMES)
    );
}

#[test]
fn decode_request_is_the_engines_forward_request() {
    let text = index_d_ts();
    let lines = interface(&text, "DecodeRequest");
    let request = ForwardRequest::last_positions(Role::Target, 1, vec![vec![1, 2]]);
    let json = serde_json::to_value(&request).expect("a request serialises");
    assert_eq!(fields(&lines), keys(&json));
    // The queries' fields, written inline: `queries: { sequence: number; prefixLen: number }[];`
    let queries = lines
        .iter()
        .find(|l| l.trim_start().starts_with("queries:"))
        .expect("DecodeRequest has queries");
    let inline: Vec<String> = queries
        .split(['{', '}', ';'])
        .skip(1)
        .map(str::to_owned)
        .collect();
    assert_eq!(fields(&inline), keys(&json["queries"][0]));
}

#[test]
fn the_reader_sees_a_field_added_on_one_side() {
    let text = index_d_ts().replace(
        "export interface TheoryOptions {",
        "export interface TheoryOptions {\n  extra?: number;",
    );
    assert_ne!(
        fields(&interface(&text, "TheoryOptions")),
        set(&THEORY_OPTION_NAMES)
    );
}
