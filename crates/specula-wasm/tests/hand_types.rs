//! What web/src/index.d.ts writes by hand stays equal to Rust: the narrowings of the
//! generated options types (`GenerateOptions`, `PlanOptions`, decode()'s `DecodeOptions`)
//! re-declare only names the engine's options have, and `DecodeRequest` (what `decode()`
//! hands a model's `forward`) has exactly the fields of the engine's `ForwardRequest` and
//! its queries, in camelCase. Every other type the file declares by hand is listed here
//! as the package's own (JavaScript objects no Rust type describes), so a new one fails
//! until it is generated or checked. A field added or renamed on one side only fails.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;
use specula_engine::options::{DECODE_OPTION_NAMES, PLAN_OPTION_NAMES};
use specula_engine::{ForwardRequest, Role};

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

/// `export type NAME = Omit<BASE, "a" | "b"> & { … };`: the names omitted and the
/// fields declared in the braces.
fn narrowing(text: &str, name: &str, base: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let head = format!("export type {name} = Omit<{base}, ");
    let start = text
        .find(&head)
        .unwrap_or_else(|| panic!("index.d.ts declares no {head}…"));
    let rest = &text[start + head.len()..];
    let close = rest.find('>').expect("Omit closes");
    let omitted = rest[..close]
        .split('|')
        .map(|n| n.trim().trim_matches('"').to_owned())
        .collect();
    let body = &rest[close..];
    let end = body.find("\n};").expect("the type closes");
    let lines: Vec<String> = body[..end].lines().skip(1).map(str::to_owned).collect();
    (omitted, fields(&lines))
}

#[test]
fn the_narrowings_redeclare_only_the_engines_names() {
    let text = index_d_ts();
    // generate(): the engine's options, with `signal` (kept on the calling side).
    let (omitted, declared) = narrowing(&text, "GenerateOptions", "EngineDecodeOptions");
    assert!(omitted.is_subset(&set(&DECODE_OPTION_NAMES)), "{omitted:?}");
    let mut want = omitted.clone();
    want.insert("signal".into());
    assert_eq!(declared, want);
    // plan(): the engine's plan options.
    let (omitted, declared) = narrowing(&text, "PlanOptions", "EnginePlanOptions");
    assert!(omitted.is_subset(&set(&PLAN_OPTION_NAMES)), "{omitted:?}");
    assert_eq!(declared, omitted);
    // decode(): generate()'s, with the two models (web/src/decode.js takes them out).
    let (omitted, declared) = narrowing(&text, "DecodeOptions", "GenerateOptions");
    assert!(omitted.is_subset(&set(&DECODE_OPTION_NAMES)), "{omitted:?}");
    let mut want = omitted.clone();
    want.extend(["target".to_owned(), "draft".to_owned()]);
    assert_eq!(declared, want);
}

/// Every type index.d.ts declares by hand: checked above, or the package's own.
#[test]
fn every_hand_written_type_is_checked_or_the_packages_own() {
    let checked = [
        "GenerateOptions",
        "PlanOptions",
        "DecodeOptions",
        "DecodeRequest",
    ];
    // Aliases of generated types, and JavaScript the package defines: the error class,
    // decode()'s model interfaces and cachedModel()'s runtime.
    let own = [
        "MethodConfig",
        "Backend",
        "Method",
        "BugName",
        "PlanBugName",
        "Round",
        "Logits",
        "DecodeModel",
        "BundledModel",
        "CachedRuntime",
    ];
    let text = index_d_ts();
    for line in text.lines() {
        let Some(rest) = line
            .strip_prefix("export interface ")
            .or_else(|| line.strip_prefix("export type "))
        else {
            continue;
        };
        if rest.starts_with('{') {
            continue; // a re-export
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        assert!(
            checked.contains(&name.as_str()) || own.contains(&name.as_str()),
            "index.d.ts declares {name} by hand: generate it from Rust (tests/generated.rs) or check it here"
        );
    }
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
        "export type PlanOptions = Omit<EnginePlanOptions, ",
        "export type PlanOptions = Omit<EnginePlanOptions, \"extra\" | ",
    );
    let (omitted, _) = narrowing(&text, "PlanOptions", "EnginePlanOptions");
    assert!(!omitted.is_subset(&set(&PLAN_OPTION_NAMES)));
    let text = index_d_ts().replace(
        "export interface DecodeRequest {",
        "export interface DecodeRequest {\n  extra?: number;",
    );
    let request = ForwardRequest::last_positions(Role::Target, 1, vec![vec![1]]);
    let json = serde_json::to_value(&request).expect("a request serialises");
    assert_ne!(fields(&interface(&text, "DecodeRequest")), keys(&json));
}
