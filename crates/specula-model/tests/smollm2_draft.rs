//! The trained draft of SmolLM2-135M-Instruct (`models/smollm2-draft.gguf`, trained by
//! `scripts/train-smollm2-draft.sh`; MODELS.md): the file is the one recorded, has the
//! recorded shape and the target's tokenizer, loads beside the real target, and drafting
//! with it keeps speculative sampling exact.
//!
//! Exactness is the two-token test of `common::joint` (top-k 8 at temperature 1), on the
//! chat form of a held-out instruction, where the trained draft's tokens are accepted
//! about half the time. [`RUNS`] is sized to the power of the near miss: a run of 1,800
//! gave resample-from-target a statistic of 260 on 43 degrees of freedom (shared-uniform,
//! which `smollm2_exact.rs` already covers, 205), so λ ≈ 217 there and ≈ 145 at 1,200
//! runs, where the pooled test has about 39 degrees of freedom and a critical value near
//! 97 at p = 1e-6: the near miss's expected statistic lies 3.4 standard deviations above
//! it. At 600 runs (λ ≈ 40) it did not reach it.

use burn::tensor::Device;
use serde::Deserialize;
use specula_core::Bug::ResampleFromTarget;
use specula_engine::{GammaPolicy, Method};
use specula_gguf::GgufModel;
use specula_model::{LlamaLm, sha256_hex};

mod common;

use common::joint::{Pair, assert_samples_target};

/// The held-out instruction "Write a haiku about bridges." in SmolLM2's chat form (the
/// one `specula_train::onpolicy::prompts::chat` builds; this crate cannot depend on that
/// one).
const PROMPT: &str = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, \
    trained by Hugging Face<|im_end|>\n<|im_start|>user\nWrite a haiku about bridges.\
    <|im_end|>\n<|im_start|>assistant\n";
/// Seeded runs of each case, near misses included.
const RUNS: u64 = 1200;

/// What `models/smollm2-draft.json` records of the file.
#[derive(Deserialize)]
struct Record {
    sha256: String,
    bytes: u64,
    parameters: usize,
    d_model: usize,
    n_layers: usize,
}

fn models_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models")
}

fn record() -> Record {
    let text =
        std::fs::read_to_string(models_dir().join("smollm2-draft.json")).expect("the record");
    serde_json::from_str(&text).expect("the record parses")
}

fn draft_file() -> (Vec<u8>, GgufModel) {
    let bytes = std::fs::read(models_dir().join("smollm2-draft.gguf")).expect("the draft file");
    let model = GgufModel::from_bytes(bytes.clone(), None).expect("the draft parses");
    (bytes, model)
}

#[test]
fn the_draft_file_is_the_recorded_one_and_fits_its_limits() {
    let record = record();
    let (bytes, draft) = draft_file();
    assert_eq!(sha256_hex(&bytes), record.sha256, "the draft file changed");
    assert_eq!(bytes.len() as u64, record.bytes);
    assert!(bytes.len() <= 16_000_000, "{} bytes", bytes.len());
    let c = &draft.config;
    assert_eq!(
        (c.d_model, c.n_layers, c.vocab_size),
        (record.d_model, record.n_layers, 49_152)
    );
    let w = &draft.weights;
    let parameters = w.token_embd.len()
        + w.output_norm.len()
        + w.output.as_ref().map_or(0, Vec::len)
        + w.layers
            .iter()
            .map(|l| {
                [
                    &l.attn_norm,
                    &l.wq,
                    &l.wk,
                    &l.wv,
                    &l.wo,
                    &l.ffn_norm,
                    &l.w_gate,
                    &l.w_up,
                    &l.w_down,
                ]
                .iter()
                .map(|v| v.len())
                .sum::<usize>()
            })
            .sum::<usize>();
    assert_eq!(parameters, record.parameters);
    assert!(parameters <= 12_000_000, "{parameters} parameters");
}

#[test]
fn the_draft_shares_the_targets_tokenizer_and_loads_beside_it() {
    let Some(f) = common::fixtures() else { return };
    let (_, draft) = draft_file();
    for text in [PROMPT, "Bridges span the river, quietly."] {
        assert_eq!(
            draft.tokenizer.encode(text).expect("the draft encodes"),
            f.model.tokenizer.encode(text).expect("the target encodes"),
        );
    }
    let device = Device::flex();
    let target = LlamaLm::load(&f.model, &device).expect("the target builds");
    let draft = LlamaLm::load(&draft, &device).expect("the draft builds");
    use specula_engine::LanguageModel;
    assert_eq!(draft.vocab_size(), target.vocab_size());
}

fn pair() -> Option<Pair> {
    let f = common::fixtures()?;
    let (_, draft) = draft_file();
    Some(Pair::load(&f.model, &draft, PROMPT))
}

/// λ at 1,200 runs: resample-from-target ≈ 145 (the file's comment).
#[test]
fn speculative_sampling_with_the_trained_draft_samples_smollm2() {
    let Some(pair) = pair() else { return };
    let method = Method::Speculative {
        gamma: 2,
        policy: GammaPolicy::Fixed,
    };
    let acceptance = assert_samples_target(pair, &method, &[ResampleFromTarget], RUNS);
    eprintln!("acceptance {acceptance:.3}");
}
