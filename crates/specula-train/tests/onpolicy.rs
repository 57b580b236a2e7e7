//! The on-policy data of a (synthetic) GGUF target: every record's kept distributions are
//! the target's own at that prefix (burn's uncached forward, the definition), answers end
//! where they must, the draws do not depend on how many rows ran side by side, and a
//! finished file resumes to nothing.

use burn::tensor::Device;
use specula_gguf::GgufModel;
use specula_gguf::synthetic::SyntheticLlama;
use specula_host::HostLlamaPass;
use specula_model::LlamaLm;
use specula_train::onpolicy::answer;
use specula_train::onpolicy::prompts::{Split, instructions};
use specula_train::onpolicy::records::{DataFile, DataHeader, Record};

const HEADER: DataHeader = DataHeader {
    top_k: 5,
    temperature: 0.7,
    seed: 3,
    max_new: 10,
};

fn run(file: &GgufModel, list: &[String], batch: usize, path: &std::path::Path) -> Vec<Record> {
    let pass = HostLlamaPass::new(file).expect("the host pass");
    let mut data = DataFile::open(path, HEADER).expect("the data file");
    let (before, mut heard) = (data.records.len(), 0);
    answer(&pass, &file.tokenizer, list, &mut data, batch, |_| {
        heard += 1
    })
    .expect("answers");
    assert_eq!(before + heard, data.records.len());
    let mut records = data.records;
    records.sort_by_key(|r| r.instruction);
    records
}

#[test]
fn records_hold_the_targets_own_distributions_whatever_the_batch() {
    let (_, spec) = SyntheticLlama::reference_pair();
    let file = GgufModel::from_bytes(spec.build(), None).expect("the synthetic file");
    let list: Vec<String> = instructions(Split::Train).into_iter().take(5).collect();
    let dir = std::env::temp_dir().join(format!("specula-onpolicy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let side_by_side = run(&file, &list, 3, &dir.join("three.bin"));
    let alone = run(&file, &list, 1, &dir.join("one.bin"));
    assert_eq!(side_by_side.len(), list.len());
    assert_eq!(
        side_by_side, alone,
        "rows side by side draw what rows alone draw"
    );
    // A finished file has nothing left to answer.
    assert_eq!(run(&file, &list, 3, &dir.join("three.bin")), side_by_side);

    let reference = LlamaLm::load(&file, &Device::flex()).expect("burn's pass");
    let vocab = file.config.vocab_size;
    let eos = file.tokenizer.eos();
    for r in &side_by_side {
        assert!(!r.answer.is_empty() && r.answer.len() <= HEADER.max_new as usize);
        let ended = r.answer.len() == HEADER.max_new as usize || r.answer.last().copied() == eos;
        assert!(ended, "instruction {} stopped early", r.instruction);
        assert_eq!(r.top.len(), r.answer.len());
        let mut tokens = r.prompt.clone();
        for (j, top) in r.top.iter().enumerate() {
            let all = reference.logits_uncached(&tokens).expect("burn's forward");
            let logits = &all[(tokens.len() - 1) * vocab..];
            let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let log_z = f64::from(max)
                + logits
                    .iter()
                    .map(|&l| f64::from(l - max).exp())
                    .sum::<f64>()
                    .ln();
            let mut order: Vec<usize> = (0..vocab).collect();
            order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
            assert_eq!(top.len(), HEADER.top_k as usize);
            for (k, &(token, logp)) in top.iter().enumerate() {
                let want = f64::from(logits[token as usize]) - log_z;
                assert!(
                    (f64::from(logp) - want).abs() < 1e-3,
                    "position {j}: {logp} vs {want}"
                );
                // The k-th kept token is as likely as the k-th most likely one.
                let kth = f64::from(logits[order[k]]) - log_z;
                assert!((want - kth).abs() < 1e-3, "position {j}, rank {k}");
            }
            tokens.push(r.answer[j]);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
