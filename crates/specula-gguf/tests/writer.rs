//! `writer::llama_gguf` writes what this crate reads back: the same shape, tokenizer and
//! weights (exactly in F32, to half precision in F16), for both rotary layouts, with and
//! without biases and an untied head, and SmolLM2 itself where it has been fetched; bad
//! requests are typed errors.

use specula_gguf::model::tokenizer_spec;
use specula_gguf::synthetic::{MatrixType, SyntheticLlama};
use specula_gguf::writer::llama_gguf;
use specula_gguf::{GgufError, GgufFile, GgufModel, LlamaWeights};

fn read(bytes: Vec<u8>) -> (GgufModel, specula_gguf::TokenizerSpec) {
    let spec = tokenizer_spec(&GgufFile::parse(bytes.clone()).expect("a GGUF container"))
        .expect("a tokenizer");
    (
        GgufModel::from_bytes(bytes, None).expect("the file loads"),
        spec,
    )
}

/// Every weight of `a` and `b`, side by side, with its name.
fn pairs<'a>(a: &'a LlamaWeights, b: &'a LlamaWeights) -> Vec<(String, &'a [f32], &'a [f32])> {
    let mut out = vec![
        ("token_embd".into(), &a.token_embd[..], &b.token_embd[..]),
        ("output_norm".into(), &a.output_norm[..], &b.output_norm[..]),
    ];
    if let (Some(x), Some(y)) = (&a.output, &b.output) {
        out.push(("output".into(), &x[..], &y[..]));
    }
    for (i, (x, y)) in a.layers.iter().zip(&b.layers).enumerate() {
        let parts: [(&str, &[f32], &[f32]); 9] = [
            ("attn_norm", &x.attn_norm, &y.attn_norm),
            ("q", &x.wq, &y.wq),
            ("k", &x.wk, &y.wk),
            ("v", &x.wv, &y.wv),
            ("o", &x.wo, &y.wo),
            ("ffn_norm", &x.ffn_norm, &y.ffn_norm),
            ("gate", &x.w_gate, &y.w_gate),
            ("up", &x.w_up, &y.w_up),
            ("down", &x.w_down, &y.w_down),
        ];
        out.extend(
            parts
                .into_iter()
                .map(|(n, p, q)| (format!("blk.{i}.{n}"), p, q)),
        );
        if let (Some(p), Some(q)) = (&x.qkv_bias, &y.qkv_bias) {
            for (j, (p, q)) in p.iter().zip(q).enumerate() {
                out.push((format!("blk.{i}.bias{j}"), &p[..], &q[..]));
            }
        }
    }
    out
}

fn round_trip(bytes: Vec<u8>) {
    let (model, spec) = read(bytes);
    for ty in [MatrixType::F32, MatrixType::F16] {
        let written = llama_gguf(&model.config, &model.weights, &spec, ty).expect("written");
        let (back, back_spec) = read(written);
        assert_eq!(back.config, model.config);
        assert_eq!(back_spec, spec);
        assert!(back.tokenizer.same_vocabulary(&model.tokenizer));
        assert_eq!(
            back.weights.layers[0].qkv_bias.is_some(),
            model.weights.layers[0].qkv_bias.is_some()
        );
        assert_eq!(
            back.weights.output.is_some(),
            model.weights.output.is_some()
        );
        for (name, a, b) in pairs(&model.weights, &back.weights) {
            assert_eq!(a.len(), b.len(), "{name}");
            let norm_or_bias = name.contains("norm") || name.contains("bias");
            for (x, y) in a.iter().zip(b) {
                // Norms and biases stay F32; F16 keeps 11 significant bits.
                let tol = if ty == MatrixType::F32 || norm_or_bias {
                    0.0
                } else {
                    x.abs() * 1e-3 + 1e-7
                };
                assert!((x - y).abs() <= tol, "{name} ({ty:?}): {x} vs {y}");
            }
        }
    }
}

#[test]
fn written_files_read_back_as_the_same_model() {
    round_trip(SyntheticLlama::tiny().build());
    round_trip(
        SyntheticLlama {
            architecture: "qwen2".into(),
            qkv_bias: true,
            untied_output: true,
            chat_template: Some("{{ messages }}".into()),
            ..SyntheticLlama::tiny()
        }
        .build(),
    );
}

#[test]
fn bad_requests_are_typed_errors() {
    let (model, spec) = read(SyntheticLlama::tiny().build());
    let err = llama_gguf(&model.config, &model.weights, &spec, MatrixType::Q8_0).unwrap_err();
    assert!(
        matches!(err, GgufError::UnsupportedTensorType { .. }),
        "{err}"
    );
    let mut cut = model.weights.clone();
    cut.layers[1].w_up.pop();
    let err = llama_gguf(&model.config, &cut, &spec, MatrixType::F32).unwrap_err();
    assert!(err.to_string().contains("blk.1.ffn_up.weight"), "{err}");
    let mut fewer = spec.clone();
    fewer.tokens.pop();
    let err = llama_gguf(&model.config, &model.weights, &fewer, MatrixType::F32).unwrap_err();
    assert!(err.to_string().contains("tokenizer.ggml.tokens"), "{err}");
}

#[test]
fn smollm2_reads_back_from_its_written_file() {
    let Ok(path) = std::env::var("SPECULA_SMOLLM2_GGUF") else {
        assert!(
            std::env::var_os("SPECULA_REQUIRE_REAL_MODELS").is_none(),
            "SPECULA_REQUIRE_REAL_MODELS is set but SPECULA_SMOLLM2_GGUF is not"
        );
        eprintln!("skipped: no SmolLM2 file (eval \"$(bash scripts/smollm2-reference.sh)\")");
        return;
    };
    let (model, spec) = read(std::fs::read(path).expect("the file"));
    let written =
        llama_gguf(&model.config, &model.weights, &spec, MatrixType::F32).expect("written");
    let (back, _) = read(written);
    assert_eq!(back.config, model.config);
    assert!(back.tokenizer.same_vocabulary(&model.tokenizer));
    let text = "<|im_start|>user\nHello, world!<|im_end|>";
    assert_eq!(
        back.tokenizer.encode(text).ok(),
        model.tokenizer.encode(text).ok()
    );
    for (name, a, b) in pairs(&model.weights, &back.weights) {
        assert!(a == b, "{name} differs");
    }
}
