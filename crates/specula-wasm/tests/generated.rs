//! The JavaScript files generated from Rust definitions stay equal to what the Rust
//! code generates today: `web/src/limits.js`, every default and limit of the options
//! (`specula_engine::options::limits`), which the npm package exports and the page's
//! controls read. `SPECULA_BLESS=1 cargo test -p specula-wasm --test generated`
//! rewrites it (refused in CI, so a drift always fails there).

use std::path::PathBuf;

use specula_engine::options::limits::LIMITS;

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

#[test]
fn limits_js_is_generated_from_the_engine() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/src/limits.js");
    let want = limits_js();
    if std::env::var_os("SPECULA_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write web/src/limits.js");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "web/src/limits.js differs from the engine's limits; regenerate it with \
         SPECULA_BLESS=1 cargo test -p specula-wasm --test generated\n--- want:\n{want}"
    );
}
