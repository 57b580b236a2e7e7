//! Files a loader must refuse, each with a typed error naming what is wrong: not GGUF at
//! all, cut short, of another family, with a tensor or key missing, misshapen or of an
//! unsupported type, with absurd counts, or too large for the memory given.

use std::time::{Duration, Instant};

use specula_gguf::synthetic::{BASE_VOCAB, Overrides, SplitMix64, SyntheticLlama, Value};
use specula_gguf::{GgufError, GgufFile, GgufModel, LlamaConfig};

fn load(bytes: Vec<u8>) -> Result<GgufModel, GgufError> {
    GgufModel::from_bytes(bytes, None)
}

fn refusal(bytes: Vec<u8>) -> GgufError {
    load(bytes).expect_err("a hostile file must be refused")
}

fn broken(overrides: Overrides) -> GgufError {
    refusal(
        SyntheticLlama {
            overrides,
            ..SyntheticLlama::tiny()
        }
        .build(),
    )
}

fn container(err: GgufError) -> String {
    match err {
        GgufError::Container(message) => message,
        other => panic!("expected a container error, got {other:?}"),
    }
}

fn metadata_key(err: &GgufError) -> &str {
    match err {
        GgufError::Metadata { key, .. } => key,
        other => panic!("expected a metadata error, got {other:?}"),
    }
}

fn tensor_name(err: &GgufError) -> &str {
    match err {
        GgufError::Tensor { tensor, .. } => tensor,
        other => panic!("expected a tensor error, got {other:?}"),
    }
}

/// The offset just after the first occurrence of `needle` in `bytes`.
fn after(bytes: &[u8], needle: &str) -> usize {
    bytes
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .expect("needle in file")
        + needle.len()
}

#[test]
fn a_valid_tiny_file_loads() {
    let model = load(SyntheticLlama::tiny().build()).expect("the synthetic file loads");
    assert_eq!(model.config.vocab_size, BASE_VOCAB);
    assert_eq!(model.tokenizer.vocab_size(), BASE_VOCAB);
}

#[test]
fn empty_and_foreign_bytes_are_not_gguf() {
    container(refusal(Vec::new()));
    let mut rng = SplitMix64::new(7);
    let noise: Vec<u8> = (0..4096).map(|_| rng.next_u64() as u8).collect();
    assert!(container(refusal(noise)).contains("magic"));
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0".to_vec();
    png.resize(256, 0);
    assert!(container(refusal(png)).contains("magic"));
    // GGUF's magic with another version.
    let mut v2 = SyntheticLlama::tiny().build();
    v2[4] = 2;
    assert!(container(refusal(v2)).contains("version"));
}

#[test]
fn truncated_files_are_container_errors() {
    let (bytes, layout) = SyntheticLlama::tiny().build_with_layout();
    let (_, last_start, last_len) = layout.tensors.last().cloned().expect("tensors");
    let (_, mid_start, mid_len) = layout.tensors[layout.tensors.len() / 2].clone();
    let cuts = [
        ("inside the header", 13),
        ("after the header", layout.metadata_start),
        ("inside the metadata", layout.metadata_start + 40),
        ("at the tensor descriptors", layout.tensor_infos_start),
        (
            "inside the tensor descriptors",
            layout.tensor_infos_start + 30,
        ),
        ("before the data", layout.data_start - 1),
        ("in the middle of the data", mid_start + mid_len / 2),
        ("one byte short", last_start + last_len - 1),
    ];
    for (what, at) in cuts {
        let err = refusal(bytes[..at].to_vec());
        assert!(
            matches!(err, GgufError::Container(_)),
            "cut {what} (at {at}): {err:?}"
        );
    }
}

#[test]
fn another_architecture_is_named() {
    let err = refusal(
        SyntheticLlama {
            architecture: "gptj".to_owned(),
            ..SyntheticLlama::tiny()
        }
        .build(),
    );
    assert_eq!(err, GgufError::UnsupportedArchitecture("gptj".to_owned()));
    assert!(err.to_string().contains("\"gptj\""), "{err}");
}

#[test]
fn an_unsupported_tensor_type_names_the_tensor_and_type() {
    let tensor = "blk.1.ffn_up.weight";
    let err = broken(Overrides {
        tensor_types: vec![(tensor.to_owned(), 6)],
        ..Overrides::default()
    });
    match &err {
        GgufError::UnsupportedTensorType { tensor: t, ty, .. } => {
            assert_eq!((t.as_str(), ty.as_str()), (tensor, "Q5_0"));
        }
        other => panic!("expected an unsupported type, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains(tensor) && message.contains("Q5_0"),
        "{message}"
    );
}

#[test]
fn a_type_number_ggml_does_not_know_is_a_container_error() {
    let err = broken(Overrides {
        tensor_types: vec![("blk.0.attn_q.weight".to_owned(), 999)],
        ..Overrides::default()
    });
    assert!(container(err).contains("999"));
}

#[test]
fn missing_tensors_are_named() {
    for tensor in [
        "token_embd.weight",
        "blk.1.attn_k.weight",
        "blk.0.ffn_norm.weight",
        "output_norm.weight",
    ] {
        let err = broken(Overrides {
            drop_tensors: vec![tensor.to_owned()],
            ..Overrides::default()
        });
        assert_eq!(tensor_name(&err), tensor, "{err}");
        assert!(err.to_string().contains("missing"), "{err}");
    }
}

#[test]
fn a_misshapen_tensor_is_named_with_its_dimensions() {
    let tensor = "blk.0.attn_q.weight";
    let err = broken(Overrides {
        tensor_dims: vec![(tensor.to_owned(), vec![64, 32])],
        ..Overrides::default()
    });
    assert_eq!(tensor_name(&err), tensor);
    assert!(err.to_string().contains("[64, 32]"), "{err}");
    // A matrix stored as a vector, and an embedding of the wrong width.
    let err = broken(Overrides {
        tensor_dims: vec![("blk.1.ffn_down.weight".to_owned(), vec![128 * 64])],
        ..Overrides::default()
    });
    assert_eq!(tensor_name(&err), "blk.1.ffn_down.weight");
    let err = broken(Overrides {
        tensor_dims: vec![("token_embd.weight".to_owned(), vec![32, BASE_VOCAB as u64])],
        ..Overrides::default()
    });
    assert_eq!(tensor_name(&err), "token_embd.weight");
}

#[test]
fn missing_and_mistyped_keys_are_named() {
    for key in [
        "general.architecture",
        "llama.block_count",
        "llama.embedding_length",
        "llama.attention.layer_norm_rms_epsilon",
        "tokenizer.ggml.model",
        "tokenizer.ggml.tokens",
    ] {
        let err = broken(Overrides {
            drop_keys: vec![key.to_owned()],
            ..Overrides::default()
        });
        assert_eq!(metadata_key(&err), key, "{err}");
        assert!(err.to_string().contains(key), "{err}");
    }
    for (key, value) in [
        ("llama.embedding_length", Value::String("64".to_owned())),
        ("llama.block_count", Value::U32(0)),
        ("llama.feed_forward_length", Value::F32(128.0)),
        ("llama.attention.layer_norm_rms_epsilon", Value::F32(-1.0)),
        ("llama.rope.freq_base", Value::F32(f32::NAN)),
        ("tokenizer.ggml.tokens", Value::I32s(vec![1, 2])),
        ("tokenizer.ggml.bos_token_id", Value::I32(-1)),
    ] {
        let err = broken(Overrides {
            set_keys: vec![(key.to_owned(), value.clone())],
            ..Overrides::default()
        });
        assert_eq!(metadata_key(&err), key, "{value:?}: {err}");
    }
}

#[test]
fn head_counts_that_do_not_divide_are_refused() {
    let with = |n_heads, n_kv_heads| {
        refusal(
            SyntheticLlama {
                n_heads,
                n_kv_heads,
                ..SyntheticLlama::tiny()
            }
            .build(),
        )
    };
    let err = with(3, 3);
    assert_eq!(metadata_key(&err), "llama.attention.head_count");
    assert!(err.to_string().contains("64"), "{err}");
    let err = with(4, 3);
    assert_eq!(metadata_key(&err), "llama.attention.head_count_kv");
    // 64 wide in 64 heads: heads of one dimension cannot be rotated in pairs.
    assert_eq!(
        metadata_key(&with(64, 64)),
        "llama.attention.head_count",
        "odd head width"
    );
}

/// Each absurd count is refused quickly, and so without allocating for it.
fn quickly(bytes: Vec<u8>) -> GgufError {
    let start = Instant::now();
    let err = refusal(bytes);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "took {:?}",
        start.elapsed()
    );
    err
}

#[test]
fn absurd_counts_are_refused_without_allocating() {
    let (good, layout) = SyntheticLlama::tiny().build_with_layout();
    let patched = |at: usize, value: u64| {
        let mut bytes = good.clone();
        bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
        bytes
    };
    let huge = 1u64 << 60;
    let tensors = specula_gguf::synthetic::TENSOR_COUNT_OFFSET;
    container(quickly(patched(tensors, huge)));
    container(quickly(patched(tensors + 8, huge)));
    container(quickly(patched(tensors + 8, u64::MAX)));
    // The first key's length.
    container(quickly(patched(layout.metadata_start, huge)));
    // The vocabulary's element count: after the key, its type (array) and element type.
    let count = after(&good, "tokenizer.ggml.tokens") + 8;
    container(quickly(patched(count, huge)));
    // A tensor's first dimension: after its name and its dimension count.
    let dim = after(&good[layout.tensor_infos_start..], "blk.0.attn_q.weight") + 4;
    let err = quickly(patched(layout.tensor_infos_start + dim, huge));
    assert!(matches!(err, GgufError::Container(_)), "{err:?}");
    // Its dimension count.
    let err = quickly({
        let mut bytes = good.clone();
        let at = layout.tensor_infos_start + dim - 4;
        bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        bytes
    });
    assert!(matches!(err, GgufError::Container(_)), "{err:?}");
}

#[test]
fn alignment_must_be_a_multiple_of_eight() {
    for alignment in [0, 7, 12] {
        let err = broken(Overrides {
            set_keys: vec![("general.alignment".to_owned(), Value::U32(alignment))],
            ..Overrides::default()
        });
        assert!(container(err).contains("alignment"), "{alignment}");
    }
}

#[test]
fn a_vocabulary_that_differs_from_the_embedding_is_a_tokenizer_error() {
    let rows = BASE_VOCAB as u64 + 1;
    let err = broken(Overrides {
        tensor_dims: vec![("token_embd.weight".to_owned(), vec![64, rows])],
        ..Overrides::default()
    });
    let GgufError::Tokenizer(message) = &err else {
        panic!("expected a tokenizer error, got {err:?}");
    };
    assert!(
        message.contains("token_embd.weight")
            && message.contains(&rows.to_string())
            && message.contains(&BASE_VOCAB.to_string()),
        "{message}"
    );
}

#[test]
fn broken_tokenizer_keys_are_tokenizer_errors() {
    let cases = [
        ("tokenizer.ggml.model", Value::String("llama".to_owned())),
        ("tokenizer.ggml.pre", Value::String("gptj".to_owned())),
        ("tokenizer.ggml.bos_token_id", Value::U32(BASE_VOCAB as u32)),
        (
            "tokenizer.ggml.merges",
            Value::Strings(vec!["x y".to_owned()]),
        ),
        ("tokenizer.ggml.token_type", Value::I32s(vec![1; 3])),
    ];
    for (key, value) in cases {
        let err = broken(Overrides {
            set_keys: vec![(key.to_owned(), value)],
            ..Overrides::default()
        });
        assert!(matches!(err, GgufError::Tokenizer(_)), "{key}: {err:?}");
    }
}

#[test]
fn empty_and_repeated_tokens_do_not_panic() {
    let spec = SyntheticLlama::tiny();
    for (at, text) in [(0, ""), (1, ""), (BASE_VOCAB - 1, ""), (2, "<|endoftext|>")] {
        let mut tokens = spec.tokens();
        tokens[at] = text.to_owned();
        let result = load(
            SyntheticLlama {
                overrides: Overrides {
                    set_keys: vec![("tokenizer.ggml.tokens".to_owned(), Value::Strings(tokens))],
                    ..Overrides::default()
                },
                ..spec.clone()
            }
            .build(),
        );
        if let Err(err) = result {
            assert!(
                matches!(err, GgufError::Tokenizer(_)),
                "{at} {text:?}: {err:?}"
            );
        }
    }
}

#[test]
fn too_large_reports_what_the_model_needs_before_dequantizing() {
    let bytes = SyntheticLlama::tiny().build();
    let config = LlamaConfig::from_file(&GgufFile::parse(bytes.clone()).unwrap()).unwrap();
    let needed = config.load_peak_bytes();
    let err = GgufModel::from_bytes(bytes.clone(), Some(needed - 1)).unwrap_err();
    assert_eq!(
        err,
        GgufError::TooLarge {
            needed,
            available: needed - 1
        }
    );
    assert!(err.to_string().contains(&needed.to_string()), "{err}");
    assert!(GgufModel::from_bytes(bytes, Some(needed)).is_ok());

    // The check comes before any tensor is read: a file whose every matrix is of an
    // unsupported type is still refused as too large, not for its types.
    let spec = SyntheticLlama::tiny();
    let unreadable = SyntheticLlama {
        overrides: Overrides {
            tensor_types: spec
                .tensor_shapes()
                .into_iter()
                .map(|(n, _)| (n, 6))
                .collect(),
            ..Overrides::default()
        },
        ..spec
    };
    let err = GgufModel::from_bytes(unreadable.build(), Some(1)).unwrap_err();
    assert!(
        matches!(err, GgufError::TooLarge { needed: n, .. } if n == needed),
        "{err:?}"
    );
}
