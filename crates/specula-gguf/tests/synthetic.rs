//! Synthetic files round-trip: every supported matrix type loads, and the weights come
//! back as written (exactly for F32, F16 and BF16; within one quantization step for the
//! block types); the shape and the tokenizer are the ones the file states.

use half::{bf16, f16};
use specula_gguf::synthetic::{BASE_VOCAB, MatrixType, Overrides, SyntheticLlama};
use specula_gguf::{GgufError, GgufModel, RopeStyle};

/// A model with every optional tensor (untied head, q/k/v biases) in `matrix_type`.
fn full(matrix_type: MatrixType) -> SyntheticLlama {
    SyntheticLlama {
        matrix_type,
        untied_output: true,
        qkv_bias: true,
        seed: 42,
        ..SyntheticLlama::tiny()
    }
}

/// The loaded tensors by name, row-major `[out, in]` as the file stores them.
fn loaded(model: &GgufModel) -> Vec<(String, &[f32])> {
    let w = &model.weights;
    let mut out: Vec<(String, &[f32])> = vec![
        ("token_embd.weight".into(), &w.token_embd),
        ("output_norm.weight".into(), &w.output_norm),
    ];
    if let Some(head) = &w.output {
        out.push(("output.weight".into(), head));
    }
    for (i, l) in w.layers.iter().enumerate() {
        let mut layer: Vec<(&str, &[f32])> = vec![
            ("attn_norm.weight", &l.attn_norm),
            ("attn_q.weight", &l.wq),
            ("attn_k.weight", &l.wk),
            ("attn_v.weight", &l.wv),
            ("attn_output.weight", &l.wo),
            ("ffn_norm.weight", &l.ffn_norm),
            ("ffn_gate.weight", &l.w_gate),
            ("ffn_up.weight", &l.w_up),
            ("ffn_down.weight", &l.w_down),
        ];
        if let Some([q, k, v]) = &l.qkv_bias {
            layer.extend([
                ("attn_q.bias", &q[..]),
                ("attn_k.bias", &k[..]),
                ("attn_v.bias", &v[..]),
            ]);
        }
        out.extend(layer.into_iter().map(|(n, d)| (format!("blk.{i}.{n}"), d)));
    }
    out
}

/// How far a stored value may lie from the one written, for one 32-value block: half a
/// step for Q8_0 and Q4_1 (plus the f16 rounding of the scale and minimum), a whole step
/// for Q4_0, whose most negative code is unused for the largest magnitude.
fn block_tolerance(ty: MatrixType, block: &[f32]) -> f32 {
    let amax = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let (lo, hi) = block
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let half_rounding = amax * 2.0f32.powi(-10);
    match ty {
        MatrixType::Q8_0 => amax / 127.0 / 2.0 + half_rounding,
        MatrixType::Q4_0 => amax / 8.0 + half_rounding,
        MatrixType::Q4_1 => (hi - lo) / 15.0 / 2.0 + 2.0 * half_rounding,
        _ => 0.0,
    }
}

fn check_values(ty: MatrixType, name: &str, written: &[f32], stored: &[f32]) {
    assert_eq!(written.len(), stored.len(), "{name}");
    // Vectors (norms and biases) are always F32.
    let ty = if name.contains("norm") || name.ends_with(".bias") {
        MatrixType::F32
    } else {
        ty
    };
    for (at, (&w, &s)) in written.iter().zip(stored).enumerate() {
        let expected = match ty {
            MatrixType::F32 => w,
            MatrixType::F16 => f16::from_f32(w).to_f32(),
            MatrixType::Bf16 => bf16::from_f32(w).to_f32(),
            _ => {
                let block = &written[at / 32 * 32..][..32];
                let tolerance = block_tolerance(ty, block);
                assert!(
                    (w - s).abs() <= tolerance,
                    "{ty:?} {name}[{at}]: wrote {w}, read {s}, tolerance {tolerance}"
                );
                continue;
            }
        };
        assert_eq!(s.to_bits(), expected.to_bits(), "{ty:?} {name}[{at}]");
    }
}

#[test]
fn every_matrix_type_round_trips() {
    for ty in MatrixType::ALL {
        let spec = full(ty);
        let model = GgufModel::from_bytes(spec.build(), None)
            .unwrap_or_else(|e| panic!("{ty:?} does not load: {e}"));
        let tensors = loaded(&model);
        assert_eq!(tensors.len(), spec.tensor_shapes().len(), "{ty:?}");
        for (name, stored) in tensors {
            let written = spec.values(&name).expect("the file has it");
            check_values(ty, &name, &written, stored);
        }
    }
}

#[test]
fn the_shape_is_the_one_written() {
    let spec = SyntheticLlama {
        rope_base: 50_000.0,
        rms_eps: 1e-6,
        context: 8192,
        ..full(MatrixType::Q8_0)
    };
    let config = GgufModel::from_bytes(spec.build(), None).unwrap().config;
    assert_eq!(
        (
            config.vocab_size,
            config.d_model,
            config.n_layers,
            config.d_ff
        ),
        (BASE_VOCAB, 64, 2, 128)
    );
    assert_eq!(
        (config.n_heads, config.n_kv_heads, config.head_dim),
        (4, 2, 16)
    );
    assert_eq!((config.rope_base, config.rms_eps), (50_000.0, 1e-6));
    assert_eq!(config.rope_style, RopeStyle::Adjacent);
    assert_eq!(config.max_seq, specula_gguf::llama::MAX_CONTEXT);
    assert!(!config.tied_output && config.qkv_bias);
    let tied = GgufModel::from_bytes(SyntheticLlama::tiny().build(), None).unwrap();
    assert!(tied.config.tied_output && tied.weights.output.is_none());
    assert_eq!(tied.config.max_seq, 256);
    let qwen = SyntheticLlama {
        architecture: "qwen2".to_owned(),
        ..full(MatrixType::F16)
    };
    let qwen = GgufModel::from_bytes(qwen.build(), None).unwrap();
    assert_eq!(qwen.config.rope_style, RopeStyle::Halves);
}

#[test]
fn a_wider_alignment_and_padded_vocabulary_load() {
    let spec = SyntheticLlama {
        alignment: 64,
        vocab_size: 300,
        matrix_type: MatrixType::Q4_1,
        ..SyntheticLlama::tiny()
    };
    let (bytes, layout) = spec.build_with_layout();
    assert!(layout.tensors.iter().all(|(_, at, _)| at % 64 == 0));
    let model = GgufModel::from_bytes(bytes, None).unwrap();
    assert_eq!(model.config.vocab_size, 300);
    assert_eq!(
        model.tokenizer.token_text(299).as_deref(),
        Some("<extra_299>")
    );
}

#[test]
fn the_tokenizer_is_the_small_byte_level_vocabulary() {
    let model = GgufModel::from_bytes(SyntheticLlama::tiny().build(), None).unwrap();
    let tok = &model.tokenizer;
    assert_eq!(
        (tok.bos(), tok.eos(), tok.add_bos()),
        (Some(1), Some(2), false)
    );
    let ids = tok.encode("<|im_start|>the cat<|im_end|>").unwrap();
    assert_eq!(ids.first(), Some(&1));
    assert_eq!(ids.last(), Some(&2));
    let text = "the 123 héllo\n";
    assert_eq!(tok.decode(&tok.encode(text).unwrap()).unwrap(), text);
    // " the" is one merged token.
    let the = tok.encode(" the").unwrap();
    assert_eq!(the.len(), 1);
    assert_eq!(tok.token_text(the[0]).as_deref(), Some(" the"));
}

#[test]
fn different_vocabularies_are_told_apart() {
    let tokenizer =
        |spec: SyntheticLlama| GgufModel::from_bytes(spec.build(), None).unwrap().tokenizer;
    let base = tokenizer(SyntheticLlama::tiny());
    let reseeded = tokenizer(SyntheticLlama {
        seed: 9,
        matrix_type: MatrixType::Q8_0,
        ..SyntheticLlama::tiny()
    });
    let padded = tokenizer(SyntheticLlama {
        vocab_size: BASE_VOCAB + 5,
        ..SyntheticLlama::tiny()
    });
    assert!(base.same_vocabulary(&reseeded));
    assert!(!base.same_vocabulary(&padded));
    assert_ne!(base.fingerprint(), padded.fingerprint());
}

#[test]
fn values_follow_the_seed_and_not_the_file_order() {
    let spec = SyntheticLlama::tiny();
    let name = "blk.1.ffn_up.weight";
    let dropped = SyntheticLlama {
        overrides: Overrides {
            drop_tensors: vec!["blk.0.attn_q.weight".to_owned()],
            ..Overrides::default()
        },
        ..spec.clone()
    };
    assert_eq!(spec.values(name), dropped.values(name));
    assert_eq!(dropped.values("blk.0.attn_q.weight"), None);
    let reseeded = SyntheticLlama {
        seed: 1,
        ..spec.clone()
    };
    assert_ne!(spec.values(name), reseeded.values(name));
    assert_eq!(spec.build(), spec.build());
}

#[test]
fn a_smollm2_shaped_layer_loads() {
    // One block of SmolLM2-360M's width (15 heads of 64, 5 key/value heads) in Q8_0.
    let spec = SyntheticLlama {
        n_layers: 1,
        vocab_size: BASE_VOCAB,
        ..SyntheticLlama::smollm2_360m()
    };
    let model = GgufModel::from_bytes(spec.build(), None).unwrap();
    let c = model.config;
    assert_eq!(
        (c.d_model, c.head_dim, c.kv_dim(), c.d_ff),
        (960, 64, 320, 2560)
    );
    assert_eq!(c.rope_base, 100_000.0);
    let full = SyntheticLlama::smollm2_360m();
    assert_eq!(full.tensor_shapes().len(), 1 + 32 * 9 + 1);
    assert_eq!(full.tokens().len(), 49_152);
}

#[test]
fn unsupported_tensor_types_other_than_k_quants_are_errors_not_panics() {
    // Width 256 so that every block size divides the rows: the type is all that is wrong.
    let spec = SyntheticLlama {
        d_model: 256,
        d_ff: 256,
        n_layers: 1,
        ..SyntheticLlama::tiny()
    };
    let tensor = "blk.0.ffn_up.weight";
    for ty in (0..=45).filter(|ty| ![12, 14].contains(ty)) {
        let file = SyntheticLlama {
            overrides: Overrides {
                tensor_types: vec![(tensor.to_owned(), ty)],
                ..Overrides::default()
            },
            ..spec.clone()
        };
        let outcome = std::panic::catch_unwind(|| GgufModel::from_bytes(file.build(), None));
        match outcome {
            Err(_) => panic!("type {ty} panics"),
            Ok(Ok(_)) => assert!(MatrixType::ALL.iter().any(|t| t.ggml_type() == ty)),
            Ok(Err(GgufError::UnsupportedTensorType { tensor: t, .. })) => assert_eq!(t, tensor),
            Ok(Err(GgufError::Container(_))) => {}
            Ok(Err(other)) => panic!("type {ty}: {other:?}"),
        }
    }
}

/// Q4_K and Q6_K tensors load (their decoders are specula-gguf's own: `ggml-quants`
/// 0.1.0 leaves them as `todo!()`, which panicked here before).
#[test]
fn k_quant_tensors_load_without_panicking() {
    let spec = SyntheticLlama {
        d_model: 256,
        d_ff: 256,
        n_layers: 1,
        ..SyntheticLlama::tiny()
    };
    for ty in [12, 14] {
        let file = SyntheticLlama {
            overrides: Overrides {
                tensor_types: vec![("blk.0.ffn_up.weight".to_owned(), ty)],
                ..Overrides::default()
            },
            ..spec.clone()
        };
        // Zero blocks: every scale is zero, so every weight is too.
        let model = GgufModel::from_bytes(file.build(), None).expect("loads");
        assert!(model.weights.layers[0].w_up.iter().all(|&w| w == 0.0));
    }
}
