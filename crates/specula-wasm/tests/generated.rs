//! The JavaScript files generated from Rust definitions stay equal to what the Rust
//! code generates today:
//! - `web/src/limits.js`, every default and limit of the options
//!   (`specula_engine::options::limits`), which the npm package exports and the page's
//!   controls read;
//! - `web/src/types.d.ts`, the TypeScript declarations (ts-rs, from the serde attributes)
//!   of everything that crosses to JavaScript: the options and their error, rounds and
//!   traces, metrics, the summary.
//!
//! `SPECULA_BLESS=1 cargo test -p specula-wasm --test generated` rewrites them (refused
//! in CI, so a drift always fails there).

use std::path::PathBuf;

use specula_engine::options::limits::LIMITS;
use ts_rs::{Config, TS};

/// The declarations, every type once, in an order a reader can follow.
fn types_d_ts() -> String {
    // u64 counters (nanoseconds, seeds) are plain numbers in JavaScript.
    let cfg = Config::new().with_large_int("number");
    let decls = [
        specula_engine::options::DecodeOptions::decl(&cfg),
        specula_engine::options::MethodName::decl(&cfg),
        specula_engine::options::OptionError::decl(&cfg),
        specula_engine::options::Problem::decl(&cfg),
        specula_engine::options::limits::Limits::decl(&cfg),
        specula_engine::DecodeConfig::decl(&cfg),
        specula_engine::Method::decl(&cfg),
        specula_engine::DraftShape::decl(&cfg),
        specula_engine::GammaPolicy::decl(&cfg),
        specula_core::SamplingConfig::decl(&cfg),
        specula_core::Bug::decl(&cfg),
        specula_wasm::RoundReport::decl(&cfg),
        specula_engine::RoundTrace::decl(&cfg),
        specula_engine::DraftNode::decl(&cfg),
        specula_engine::DepthStep::decl(&cfg),
        specula_engine::BonusStep::decl(&cfg),
        specula_engine::TokenSource::decl(&cfg),
        specula_engine::TokenCounts::decl(&cfg),
        specula_engine::Timing::decl(&cfg),
        specula_engine::FinishReason::decl(&cfg),
        specula_core::TokenOutcome::decl(&cfg),
        specula_core::DraftTest::decl(&cfg),
        specula_core::ResidualDraw::decl(&cfg),
        specula_core::Residual::decl(&cfg),
        specula_core::KSeqPlan::decl(&cfg),
        specula_core::RacePlan::decl(&cfg),
        specula_core::MentoredPlan::decl(&cfg),
        specula_wasm::Summary::decl(&cfg),
        specula_engine::Metrics::decl(&cfg),
        specula_engine::MetricsSummary::decl(&cfg),
        specula_wasm::BackendInfo::decl(&cfg),
        specula_wasm::BackendChoice::decl(&cfg),
        specula_wasm::TheoryCurves::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-wasm --test\n\
         // generated` (ts-rs): do not edit. What each field means is documented on the Rust type.\n",
    );
    for decl in decls {
        out.push('\n');
        out.push_str("export ");
        out.push_str(&decl);
        out.push('\n');
    }
    out
}

fn limits_js() -> String {
    let json = serde_json::to_string_pretty(&LIMITS).expect("limits serialise");
    format!(
        "// Generated from specula_engine::options::limits (crates/specula-engine/src/options/limits.rs)\n\
         // by `SPECULA_BLESS=1 cargo test -p specula-wasm --test generated`: do not edit.\n\
         \n\
         /** Every default and limit of the generate() options, as the engine checks them. */\n\
         export const LIMITS = Object.freeze({json});\n"
    )
}

/// `want` is in `web/src/<name>`, or with `SPECULA_BLESS` set is written there.
fn check_generated(name: &str, want: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../web/src")
        .join(name);
    if std::env::var_os("SPECULA_BLESS").is_some() {
        std::fs::write(&path, want).unwrap_or_else(|e| panic!("write web/src/{name}: {e}"));
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "web/src/{name} differs from what the Rust definitions generate; regenerate it with \
         SPECULA_BLESS=1 cargo test -p specula-wasm --test generated\n--- want:\n{want}"
    );
}

#[test]
fn limits_js_is_generated_from_the_engine() {
    check_generated("limits.js", &limits_js());
}

#[test]
fn types_d_ts_is_generated_from_the_rust_types() {
    let types = types_d_ts();
    // Every key JavaScript sees is camelCase: a snake_case field means a type crossing
    // to JavaScript lacks `#[serde(rename_all = "camelCase")]`.
    for line in types
        .lines()
        .filter(|l| !l.trim_start().starts_with("//") && !l.trim_start().starts_with('*'))
    {
        for word in line.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            let field = line.contains(&format!("{word}:")) || line.contains(&format!("{word}?:"));
            assert!(
                !(field && word.contains('_')),
                "snake_case key {word} in: {line}"
            );
        }
    }
    check_generated("types.d.ts", &types);
}
