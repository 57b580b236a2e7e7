//! Seeded random damage to a small synthetic file: single-byte mutations (most of them in
//! the header, metadata and tensor descriptors, where a byte changes how the rest is
//! read) and truncations. Loading must return `Ok` or `Err`, never panic.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use specula_gguf::synthetic::{MatrixType, SplitMix64, SyntheticLlama};
use specula_gguf::{GgufError, GgufModel};

const CASES: usize = 2_000;

/// A short name for an outcome, to tally them.
fn outcome(result: &Result<GgufModel, GgufError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(GgufError::Container(_)) => "container",
        Err(GgufError::UnsupportedArchitecture(_)) => "architecture",
        Err(GgufError::Metadata { .. }) => "metadata",
        Err(GgufError::UnsupportedTensorType { .. }) => "tensor type",
        Err(GgufError::Tensor { .. }) => "tensor",
        Err(GgufError::Tokenizer(_)) => "tokenizer",
        Err(GgufError::TooLarge { .. }) => "too large",
        Err(_) => "other",
    }
}

#[test]
fn random_damage_never_panics() {
    let spec = SyntheticLlama {
        d_model: 32,
        n_layers: 1,
        n_heads: 2,
        n_kv_heads: 1,
        d_ff: 64,
        matrix_type: MatrixType::Q4_1,
        untied_output: true,
        qkv_bias: true,
        ..SyntheticLlama::tiny()
    };
    let (good, layout) = spec.build_with_layout();
    assert!(GgufModel::from_bytes(good.clone(), None).is_ok());
    let mut rng = SplitMix64::new(0x5eed);
    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    let mut panics = Vec::new();
    let start = Instant::now();
    for case in 0..CASES {
        let mut bytes = good.clone();
        let what = if case % 5 == 4 {
            let len = rng.below(good.len() as u64) as usize;
            bytes.truncate(len);
            format!("truncated to {len} bytes")
        } else {
            // Three in four mutations land before the tensor data.
            let span = if rng.below(4) == 0 {
                good.len()
            } else {
                layout.data_start
            };
            let at = rng.below(span as u64) as usize;
            let new = rng.next_u64() as u8;
            let old = bytes[at];
            bytes[at] = new;
            format!("byte {at} 0x{old:02x} -> 0x{new:02x}")
        };
        match catch_unwind(AssertUnwindSafe(|| GgufModel::from_bytes(bytes, None))) {
            Ok(result) => *tally.entry(outcome(&result)).or_default() += 1,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                panics.push(format!("case {case}: {what}: {message}"));
            }
        }
    }
    eprintln!(
        "{CASES} cases on a {}-byte file (data at {}) in {:?}: {tally:?}",
        good.len(),
        layout.data_start,
        start.elapsed()
    );
    assert!(
        panics.is_empty(),
        "{} panics:\n{}",
        panics.len(),
        panics.join("\n")
    );
}
