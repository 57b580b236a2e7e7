//! The one-position acceptance of a selection among K i.i.d. drafts, computed exactly over
//! the validation split (bundled pair, T = 1, no sampling): SpecTr's k-Seq, the ratio
//! race with its weights fitted (`specula_core::Race`, what SpecTr with `--selection race` runs), and
//! the optimum over every selection rule (OTM's α_K, `otm_upper_bound`). Also how many
//! fitting steps the race took, how far short of the optimum it stopped at worst, and how
//! long a plan took.
//! `cargo run --release -p specula-train --example race_scan [-- WINDOWS]`

use std::time::Instant;

use specula_core::{Distribution, KSeq, Race, SamplingConfig, otm_upper_bound};
use specula_model::{Backend, ModelRole, bundled};
use specula_train::data::{Corpus, Split};

fn probs(logits: &[f32]) -> Result<Distribution, specula_core::Error> {
    Distribution::from_logits(logits, &SamplingConfig::default())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let windows: usize = std::env::args()
        .nth(1)
        .map_or(Ok(usize::MAX), |w| w.parse())?;
    let text = std::fs::read_to_string("data/tinyshakespeare.txt")?;
    let val = Corpus::from_text(&text)?.part(Split::Val).to_vec();
    let target = bundled::load(ModelRole::Target, Backend::Cpu)?;
    let draft = bundled::load(ModelRole::Draft, Backend::Cpu)?;
    let vocab = target.config().vocab_size;
    let window = target.config().max_seq.min(draft.config().max_seq);
    for k in [2, 4, 8] {
        let (mut kseq, mut race, mut optimum) = (0.0, 0.0, 0.0);
        let mut steps = Vec::new();
        let mut shortfall = 0.0_f64;
        let mut seconds = 0.0;
        for start in (0..val.len() - window).step_by(window).take(windows) {
            let input = &val[start..start + window];
            let target_logits = target.logits_uncached(input)?;
            let draft_logits = draft.logits_uncached(input)?;
            for (t, d) in target_logits.chunks(vocab).zip(draft_logits.chunks(vocab)) {
                let (t, d) = (probs(t)?, probs(d)?);
                kseq += KSeq::new(&t, &d, k, None)?.plan().acceptance;
                optimum += otm_upper_bound(&t, &d, k)?;
                let clock = Instant::now();
                let plan = Race::new(&t, &d, k)?.into_plan();
                seconds += clock.elapsed().as_secs_f64();
                shortfall = shortfall.max(plan.optimum - plan.acceptance);
                race += plan.acceptance;
                steps.push(plan.steps);
            }
        }
        let n = steps.len() as f64;
        steps.sort_unstable();
        println!(
            "K = {k}: k-Seq {:.4}, ratio race {:.4}, optimum {:.4} over {} positions; \
             fitting steps mean {:.1}, median {}, 99th percentile {}, most {}; largest shortfall from the \
             optimum {shortfall:.1e}; {:.1} µs per plan",
            kseq / n,
            race / n,
            optimum / n,
            steps.len(),
            steps.iter().sum::<usize>() as f64 / n,
            steps[steps.len() / 2],
            steps[steps.len() * 99 / 100],
            steps[steps.len() - 1],
            seconds / n * 1e6
        );
    }
    Ok(())
}
