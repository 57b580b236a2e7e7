//! The trained SmolLM2 draft is reproduced from its seed: starting from SmolLM2's own
//! embedding projection and the recipe recorded in `models/smollm2-draft.json`, the
//! first steps of training, on the batches recorded there (their records are
//! `models/smollm2-draft-first-steps.spod`, a slice of the on-policy data), give the
//! recorded losses. Needs SmolLM2 (`SPECULA_SMOLLM2_GGUF`, set by
//! `scripts/smollm2-reference.sh`); without it the test says so and passes, unless
//! `SPECULA_REQUIRE_REAL_MODELS` is set (the test command sets it).

use burn::tensor::Device;
use serde::Deserialize;
use specula_gguf::GgufModel;
use specula_train::draft::batches::batches;
use specula_train::draft::{DraftTrainConfig, DraftTrainer};
use specula_train::onpolicy::records::parse;

#[derive(Deserialize)]
struct FirstStep {
    instructions: Vec<u32>,
    loss: f64,
}

#[derive(Deserialize)]
struct Record {
    config: DraftTrainConfig,
    first_steps: Vec<FirstStep>,
}

#[test]
fn the_first_training_steps_give_the_recorded_losses() {
    let Ok(path) = std::env::var("SPECULA_SMOLLM2_GGUF") else {
        assert!(
            std::env::var_os("SPECULA_REQUIRE_REAL_MODELS").is_none(),
            "SPECULA_REQUIRE_REAL_MODELS is set but SPECULA_SMOLLM2_GGUF is not"
        );
        eprintln!("skipped: no SmolLM2 (eval \"$(bash scripts/smollm2-reference.sh)\")");
        return;
    };
    let models = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let record: Record = serde_json::from_str(
        &std::fs::read_to_string(models.join("smollm2-draft.json")).expect("the record"),
    )
    .expect("the record parses");
    let slice = std::fs::read(models.join("smollm2-draft-first-steps.spod")).expect("the slice");
    let (_, records, _) = parse(&slice).expect("the slice parses");
    let target = GgufModel::from_bytes(std::fs::read(path).expect("SmolLM2"), None).expect("loads");
    let mut trainer = DraftTrainer::start(
        record.config.clone(),
        &target.config,
        &target.weights,
        &records,
        &Device::flex(),
    )
    .expect("the run starts");
    // The slice holds whole batches of the full run, so grouping it again gives them back.
    let groups = batches(&records, record.config.batch_tokens);
    assert!(!record.first_steps.is_empty());
    for (i, step) in record.first_steps.iter().enumerate() {
        let batch = groups
            .iter()
            .find(|b| b.instructions == step.instructions)
            .unwrap_or_else(|| {
                panic!(
                    "step {i}'s batch {:?} is not in the slice",
                    step.instructions
                )
            });
        let loss = trainer.train_on(batch).expect("a step");
        eprintln!("step {i}: loss {loss} (recorded {})", step.loss);
        // Bit-exact on the machine that trained it; the margin allows another CPU's
        // order of summation, far below what a changed recipe or data would move.
        let margin = 1e-5 * step.loss.abs();
        assert!(
            (loss - step.loss).abs() <= margin,
            "step {i}: loss {loss} where {} was recorded",
            step.loss
        );
    }
}
