//! What the SmolLM2 test files share: the model and the reference fixtures, from the
//! paths that `scripts/smollm2-reference.sh` prints (the test command runs it). Without
//! them the tests say so and pass, unless `SPECULA_REQUIRE_REAL_MODELS` is set (the test
//! command sets it, so CI can never skip them silently).

// Each test binary compiles its own copy of this module and reads only some of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use specula_gguf::GgufModel;

/// SmolLM2-135M-Instruct and the directory of the Python reference's outputs.
pub struct Fixtures {
    pub model: GgufModel,
    pub dir: PathBuf,
}

/// The fixtures, loaded once per test binary; `None` (after saying so) when the
/// variables are not set, a panic when they are required.
pub fn fixtures() -> Option<&'static Fixtures> {
    static FIXTURES: OnceLock<Option<Fixtures>> = OnceLock::new();
    FIXTURES
        .get_or_init(|| {
            let (Ok(gguf), Ok(dir)) = (
                std::env::var("SPECULA_SMOLLM2_GGUF"),
                std::env::var("SPECULA_SMOLLM2_REF"),
            ) else {
                assert!(
                    std::env::var_os("SPECULA_REQUIRE_REAL_MODELS").is_none(),
                    "SPECULA_REQUIRE_REAL_MODELS is set but the SmolLM2 fixtures are not \
                     (eval \"$(bash scripts/smollm2-reference.sh)\")"
                );
                eprintln!(
                    "skipped: no SmolLM2 fixtures (eval \"$(bash scripts/smollm2-reference.sh)\")"
                );
                return None;
            };
            let bytes = std::fs::read(&gguf).expect("the SmolLM2 file");
            let model = GgufModel::from_bytes(bytes, None).expect("SmolLM2 loads");
            Some(Fixtures {
                model,
                dir: PathBuf::from(dir),
            })
        })
        .as_ref()
}
