//! The TypeScript declarations of what `decode()` hands JavaScript,
//! `web/src/types/decode.d.ts`, generated from [`DecodeRound`] and [`DecodeSummary`] with
//! ts-rs as `specula-wasm`'s test generates the rest of `web/src/types/` (which this
//! crate cannot build: that test builds burn). The engine types they contain come from
//! those files. Also checks that the engine types `decode()` extended (the options'
//! prompt and stop list, the error codes) are declared in `options.d.ts` as ts-rs
//! declares them today, so this crate's changes to them are checked without burn too.
//!
//! `SPECULA_BLESS=1 cargo test -p specula-decode generated` rewrites `decode.d.ts` when it
//! differs and still fails, naming it (a blessed run passes only when nothing drifted; it is
//! refused in CI).

use std::path::PathBuf;

use ts_rs::{Config, TS};

use crate::{DecodeRound, DecodeSummary};

const HEADER: &str = "// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-decode\n\
                      // generated` (ts-rs): do not edit. What each field means is documented on the Rust type.\n\
                      // One round of decode() and its summary, made of the engine types generate()'s rounds use.\n";

fn config() -> Config {
    // u64 counters are plain numbers in JavaScript, as in the other generated files.
    Config::new().with_large_int("number")
}

fn types_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/src/types")
}

fn decode_d_ts() -> String {
    let cfg = &config();
    format!(
        "{HEADER}import type {{ FinishReason, RoundTrace, TokenCounts }} from \"./rounds\";\n\
         import type {{ Metrics, MetricsSummary }} from \"./summary\";\n\
         \nexport {}\n\nexport {}\n",
        DecodeRound::decl(cfg),
        DecodeSummary::decl(cfg)
    )
}

#[test]
fn decode_d_ts_is_generated_from_the_rust_types() {
    let want = decode_d_ts();
    let path = types_dir().join("decode.d.ts");
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have == want {
        return;
    }
    // Blessing rewrites a file that differs and still fails, so a blessed run passes only
    // when nothing drifted; CI never blesses.
    let bless = std::env::var_os("SPECULA_BLESS").is_some();
    assert!(
        !(bless && std::env::var_os("CI").is_some()),
        "SPECULA_BLESS is set in CI: generated files are never rewritten there"
    );
    if bless {
        std::fs::write(&path, &want).expect("write web/src/types/decode.d.ts");
        panic!(
            "web/src/types/decode.d.ts was regenerated: review the diff, then rerun without \
             SPECULA_BLESS"
        );
    }
    panic!(
        "web/src/types/decode.d.ts differs from what the Rust types generate; regenerate it \
         with SPECULA_BLESS=1 cargo test -p specula-decode generated\n--- want:\n{want}"
    );
}

#[test]
fn options_d_ts_declares_the_engine_types_as_ts_rs_does() {
    let cfg = &config();
    let have = std::fs::read_to_string(types_dir().join("options.d.ts")).unwrap_or_default();
    for decl in [
        specula_engine::options::DecodeOptions::decl(cfg),
        specula_engine::ErrorCode::decl(cfg),
    ] {
        assert!(
            have.contains(&format!("\nexport {decl}\n")),
            "web/src/types/options.d.ts lacks this declaration; regenerate it with \
             SPECULA_BLESS=1 cargo test -p specula-wasm --test generated\n--- want:\n{decl}"
        );
    }
}
