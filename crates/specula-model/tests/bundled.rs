//! The committed weights: checksums, size and shapes (their pinned greedy continuations
//! are `specula-host`'s tests, on both forward passes).

use specula_model::{ModelConfig, ModelRole, bundled, sha256_hex};

#[test]
fn checksums_match_the_committed_files_and_the_size_budget() {
    let sums = include_str!("../weights/SHA256SUMS");
    let mut total = 0;
    for role in [ModelRole::Draft, ModelRole::Target] {
        let (meta, weights) = bundled::files(role);
        total += meta.len() + weights.len();
        for (bytes, ext) in [(meta, "json"), (weights, "bpk")] {
            let line = format!("{}  {}.{ext}", sha256_hex(bytes), role.name());
            assert!(sums.lines().any(|l| l == line), "SHA256SUMS lacks {line:?}");
        }
        let bundle = bundled::bundle(role).unwrap();
        assert_eq!(bundle.meta.role, role);
    }
    // The budget, 24 MB in decimal megabytes (not MiB).
    assert!(total <= 24_000_000, "{total} bytes of weights");
}

/// `ModelConfig::for_role` is documented as the bundled shapes, and `specula train` and the
/// wasm crate's untrained "full" pairs build from it: the committed weights must agree.
#[test]
fn committed_shapes_are_the_roles_default_shapes() {
    for role in [ModelRole::Draft, ModelRole::Target] {
        let bundle = bundled::bundle(role).unwrap();
        let vocab = bundle.meta.tokenizer.vocab_size();
        assert_eq!(
            bundle.meta.config,
            ModelConfig::for_role(role, vocab),
            "{role:?}"
        );
    }
}
