//! What the SmolLM2 test files share: the model and the reference fixtures, from the
//! paths that `scripts/smollm2-reference.sh` prints (the test command runs it). Without
//! them the tests say so and pass, unless `SPECULA_REQUIRE_REAL_MODELS` is set (the test
//! command sets it, so CI can never skip them silently).

// Each test binary compiles its own copy of this module and reads only some of it.
#![allow(dead_code)]

pub mod joint;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;
use specula_engine::{ForwardRequest, LanguageModel, Role};
use specula_gguf::GgufModel;
use specula_model::LlamaLm;

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

/// What `scripts/reference/llama_forward.py` writes beside `logits.f32`.
#[derive(Deserialize)]
pub struct Reference {
    /// Entries per row of logits.
    pub vocab: usize,
    /// The prompts' token ids.
    pub prompts: Vec<Vec<u32>>,
    /// Each prompt's greedy continuation.
    pub greedy: Vec<Vec<u32>>,
    /// The gap between the top two logits at each greedy step.
    pub top2_gap: Vec<Vec<f32>>,
}

/// The reference in `dir` and its logits at every position of every prompt, row-major.
pub fn read_reference(dir: &Path) -> (Reference, Vec<f32>) {
    let json = std::fs::read_to_string(dir.join("logits.json")).expect("logits.json");
    let reference: Reference = serde_json::from_str(&json).expect("logits.json parses");
    let bytes = std::fs::read(dir.join("logits.f32")).expect("logits.f32");
    let logits = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    (reference, logits)
}

/// The largest difference between two sets of logits of one length.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// The index of the largest entry (the first of equals).
pub fn argmax(row: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    best as u32
}

/// Walks each prompt's reference greedy continuation through `lm`'s cache, one token a
/// call, asserting that its argmax picks the reference's token, up to the first step whose
/// top two logits lie within `2 · tolerance` (past it either token is a correct greedy
/// choice and the continuations may part). Returns the steps compared.
pub fn check_greedy(lm: &mut LlamaLm, reference: &Reference, tolerance: f32) -> usize {
    let mut compared = 0;
    for ((prompt, greedy), gaps) in reference
        .prompts
        .iter()
        .zip(&reference.greedy)
        .zip(&reference.top2_gap)
    {
        lm.reset();
        let mut tokens = prompt.clone();
        for (&expected, &gap) in greedy.iter().zip(gaps) {
            if gap < 2.0 * tolerance {
                break;
            }
            let request =
                ForwardRequest::last_positions(Role::Target, tokens.len(), vec![tokens.clone()]);
            let logits = lm.forward(&request).expect("a cached step").logits;
            assert_eq!(argmax(&logits), expected, "after {tokens:?}");
            tokens.push(expected);
            compared += 1;
        }
    }
    compared
}
