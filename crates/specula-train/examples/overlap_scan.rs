//! The acceptance rate a draft would get from the bundled target at temperature 1,
//! computed exactly: α = Σₓ min(target(x), draft(x)) averaged over every position of
//! non-overlapping windows of the validation split (no sampling), for draft logits
//! divided by a few temperatures τ (τ = 1 is the draft as it is). Beside it, the
//! one-position acceptance of SpecTr's k-Seq with K = 4 i.i.d. drafts at ρ*,
//! 1 − (1 − b(ρ*))⁴: whether hotter, more diverse drafts would help several drafts; and
//! the best acceptance any selection among 4 i.i.d. drafts can reach, OTM's α₄ (Lemma 3's
//! bound, which is attained; `otm_upper_bound`), to show how much k-Seq leaves.
//! `cargo run --release -p specula-train --example overlap_scan [-- DRAFT [WINDOWS]]`
//! DRAFT is `bundled` (the default) or a directory holding draft.json and draft.bpk (a
//! run's export/); WINDOWS limits the windows scored (default: all 435).

use specula_core::{Distribution, KSeq, SamplingConfig, otm_upper_bound, overlap};
use specula_model::{Backend, ModelBundle, ModelRole, bundled};
use specula_train::data::{Corpus, Split};

/// The softmax of `logits` at temperature `temperature`.
fn probs(logits: &[f32], temperature: f64) -> Result<Distribution, specula_core::Error> {
    let config = SamplingConfig {
        temperature,
        ..SamplingConfig::default()
    };
    Distribution::from_logits(logits, &config)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let device = Backend::Cpu.device()?;
    let draft = match args.first().map(String::as_str) {
        None | Some("bundled") => bundled::load(ModelRole::Draft, Backend::Cpu)?,
        Some(dir) => ModelBundle::load_dir(dir.as_ref(), ModelRole::Draft)?.build(&device)?,
    };
    let windows: usize = args.get(1).map_or(Ok(usize::MAX), |w| w.parse())?;
    let text = std::fs::read_to_string("data/tinyshakespeare.txt")?;
    let val = Corpus::from_text(&text)?.part(Split::Val).to_vec();
    let target = bundled::load(ModelRole::Target, Backend::Cpu)?;
    let vocab = target.config().vocab_size;
    let window = target.config().max_seq.min(draft.config().max_seq);
    let taus = [0.9, 0.95, 1.0, 1.05, 1.1, 1.2, 1.3];
    let mut sums = vec![0.0; taus.len()];
    let mut kseq_sums = vec![0.0; taus.len()];
    let mut otm_sums = vec![0.0; taus.len()];
    let mut count = 0_usize;
    for start in (0..val.len() - window).step_by(window).take(windows) {
        let input = &val[start..start + window];
        let target_logits = target.logits_uncached(input)?;
        let draft_logits = draft.logits_uncached(input)?;
        for (t, d) in target_logits.chunks(vocab).zip(draft_logits.chunks(vocab)) {
            let t = probs(t, 1.0)?;
            for (i, tau) in taus.iter().enumerate() {
                let d = probs(d, *tau)?;
                sums[i] += overlap(t.probs(), d.probs());
                kseq_sums[i] += KSeq::new(&t, &d, 4, None)?.plan().acceptance;
                otm_sums[i] += otm_upper_bound(&t, &d, 4)?;
            }
            count += 1;
        }
    }
    for (i, tau) in taus.iter().enumerate() {
        println!(
            "draft logits / {tau}: α = {:.4}, K = 4 acceptance: k-Seq {:.4}, optimal {:.4}, \
             over {count} positions",
            sums[i] / count as f64,
            kseq_sums[i] / count as f64,
            otm_sums[i] / count as f64
        );
    }
    Ok(())
}
