//! The Qwen2 path (q/k/v biases, rotary embedding over split halves, an untied head) on
//! burn's CPU backend against the independent Python reference, over a synthetic Qwen2
//! file with random weights (no real Qwen2 file can be had here): logits at every
//! position of two prompts and the greedy continuation. The fixtures come from
//! `scripts/smollm2-reference.sh` (`SPECULA_QWEN2_REF`), under the same policy as
//! smollm2.rs: skipped without them unless `SPECULA_REQUIRE_REAL_MODELS` is set.

use burn::tensor::Device;
use specula_gguf::{GgufModel, RopeStyle};
use specula_model::LlamaLm;

use common::{check_greedy, max_abs_diff, read_reference};

mod common;

/// The reference and burn sum in other orders; random weights give logits of a few units.
const TOLERANCE: f32 = 1e-4;

#[test]
fn a_qwen2_file_scores_as_the_reference_does() {
    let Ok(dir) = std::env::var("SPECULA_QWEN2_REF") else {
        assert!(
            std::env::var_os("SPECULA_REQUIRE_REAL_MODELS").is_none(),
            "SPECULA_REQUIRE_REAL_MODELS is set but SPECULA_QWEN2_REF is not \
             (eval \"$(bash scripts/smollm2-reference.sh)\")"
        );
        eprintln!("skipped: no Qwen2 reference (eval \"$(bash scripts/smollm2-reference.sh)\")");
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let model = GgufModel::from_bytes(std::fs::read(dir.join("model.gguf")).expect("file"), None)
        .expect("the Qwen2 file loads");
    let c = &model.config;
    assert!(c.qkv_bias && !c.tied_output && c.rope_style == RopeStyle::Halves);
    let (reference, expected) = read_reference(&dir);
    assert_eq!(reference.vocab, c.vocab_size);
    let mut lm = LlamaLm::load(&model, &Device::flex()).expect("the pass builds");
    let mut offset = 0;
    for prompt in &reference.prompts {
        let n = prompt.len() * reference.vocab;
        let ours = lm.logits_uncached(prompt).expect("a forward pass");
        let diff = max_abs_diff(&ours, &expected[offset..offset + n]);
        assert!(diff < TOLERANCE, "logits differ by {diff} over {prompt:?}");
        offset += n;
    }
    let compared = check_greedy(&mut lm, &reference, TOLERANCE);
    assert!(compared >= 12, "only {compared} greedy steps compared");
}
