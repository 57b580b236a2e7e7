//! Writes a Llama-family model as a GGUF file that this crate (and llama.cpp's loaders)
//! read back: the shape keys, a tokenizer's `tokenizer.ggml.*` keys, and every weight in
//! F32 or F16. A draft trained here is stored this way, so it loads beside its target
//! like any other GGUF model.

use crate::error::{GgufError, Result};
use crate::llama::{LlamaConfig, LlamaWeights, RopeStyle};
use crate::synthetic::encode::{encode_block, pad_to, put_str, put_u32, put_u64, put_value};
use crate::synthetic::{MatrixType, Value};
use crate::tokenizer::TokenizerSpec;

/// GGUF's default alignment of tensor data.
const ALIGN: u64 = 32;

/// A tensor to write: its name, dimensions (fastest first, as GGUF lists them), storage
/// and values (row-major `[out, in]` for a matrix).
struct Tensor<'a> {
    name: String,
    dims: Vec<u64>,
    ty: MatrixType,
    values: &'a [f32],
}

/// `config`'s model with `weights` and `tokenizer`, its matrices (and embedding and
/// head) stored as `matrices` (F32 or F16), norms and biases as F32.
///
/// The architecture key follows the rotary layout: `llama` for adjacent pairs, `qwen2`
/// for halves (the layouts this crate reads those architectures with).
///
/// # Errors
/// [`GgufError::UnsupportedTensorType`] for a storage type other than F32 or F16;
/// [`GgufError::Tensor`] when a weight's length does not match the shape;
/// [`GgufError::Metadata`] when the tokenizer's vocabulary differs from the embedding's.
pub fn llama_gguf(
    config: &LlamaConfig,
    weights: &LlamaWeights,
    tokenizer: &TokenizerSpec,
    matrices: MatrixType,
) -> Result<Vec<u8>> {
    if !matches!(matrices, MatrixType::F32 | MatrixType::F16) {
        return Err(GgufError::UnsupportedTensorType {
            tensor: "every matrix (writing)".into(),
            ty: format!("{matrices:?}"),
            supported: "F32, F16",
        });
    }
    let c = config;
    if tokenizer.tokens.len() != c.vocab_size {
        return Err(GgufError::metadata(
            "tokenizer.ggml.tokens",
            "does not have one token per embedding row",
        ));
    }
    let arch = match c.rope_style {
        RopeStyle::Adjacent => "llama",
        RopeStyle::Halves => "qwen2",
    };
    let tensors = plan(c, weights, matrices)?;
    let mut out = Vec::new();
    out.extend_from_slice(b"GGUF");
    put_u32(&mut out, 3);
    put_u64(&mut out, tensors.len() as u64);
    let keys = metadata(arch, c, tokenizer);
    put_u64(&mut out, keys.len() as u64);
    for (key, value) in &keys {
        put_str(&mut out, key);
        put_value(&mut out, value);
    }
    let mut offset = 0_u64;
    for t in &tensors {
        put_str(&mut out, &t.name);
        put_u32(&mut out, t.dims.len() as u32);
        for &dim in &t.dims {
            put_u64(&mut out, dim);
        }
        put_u32(&mut out, t.ty.ggml_type());
        put_u64(&mut out, offset);
        let bytes = t.values.len() as u64 * if t.ty == MatrixType::F16 { 2 } else { 4 };
        offset = (offset + bytes).next_multiple_of(ALIGN);
    }
    pad_to(&mut out, ALIGN);
    for t in &tensors {
        for &v in t.values {
            encode_block(&mut out, t.ty, &[v]);
        }
        pad_to(&mut out, ALIGN);
    }
    Ok(out)
}

fn metadata(arch: &str, c: &LlamaConfig, tokenizer: &TokenizerSpec) -> Vec<(String, Value)> {
    let size = |v: usize| Value::U32(u32::try_from(v).unwrap_or(u32::MAX));
    let mut keys = vec![(
        "general.architecture".to_owned(),
        Value::String(arch.into()),
    )];
    let shape = [
        ("context_length", size(c.max_seq)),
        ("embedding_length", size(c.d_model)),
        ("block_count", size(c.n_layers)),
        ("feed_forward_length", size(c.d_ff)),
        ("attention.head_count", size(c.n_heads)),
        ("attention.head_count_kv", size(c.n_kv_heads)),
        ("rope.freq_base", Value::F32(c.rope_base)),
        ("attention.layer_norm_rms_epsilon", Value::F32(c.rms_eps)),
    ];
    keys.extend(shape.into_iter().map(|(k, v)| (format!("{arch}.{k}"), v)));
    let t = tokenizer;
    let mut tok = vec![
        ("model", Value::String(t.model.clone())),
        ("tokens", Value::Strings(t.tokens.clone())),
        ("add_bos_token", Value::Bool(t.add_bos)),
    ];
    if let Some(pre) = &t.pre {
        tok.push(("pre", Value::String(pre.clone())));
    }
    if !t.token_types.is_empty() {
        tok.push(("token_type", Value::I32s(t.token_types.clone())));
    }
    if !t.merges.is_empty() {
        tok.push(("merges", Value::Strings(t.merges.clone())));
    }
    if let Some(bos) = t.bos {
        tok.push(("bos_token_id", Value::U32(bos)));
    }
    if let Some(eos) = t.eos {
        tok.push(("eos_token_id", Value::U32(eos)));
    }
    keys.extend(
        tok.into_iter()
            .map(|(k, v)| (format!("tokenizer.ggml.{k}"), v)),
    );
    if let Some(template) = &t.chat_template {
        keys.push((
            "tokenizer.chat_template".into(),
            Value::String(template.clone()),
        ));
    }
    keys
}

/// Every tensor in the order llama.cpp's converters write them, checked against the shape.
fn plan<'a>(c: &LlamaConfig, w: &'a LlamaWeights, ty: MatrixType) -> Result<Vec<Tensor<'a>>> {
    let (d, kv, ff, vocab) = (
        c.d_model as u64,
        c.kv_dim() as u64,
        c.d_ff as u64,
        c.vocab_size as u64,
    );
    let mut out = Vec::new();
    let mut add = |name: String, dims: Vec<u64>, ty: MatrixType, values: &'a [f32]| {
        if values.len() as u64 != dims.iter().product::<u64>() {
            return Err(GgufError::Tensor {
                tensor: name,
                problem: "does not fit the model's shape".into(),
            });
        }
        out.push(Tensor {
            name,
            dims,
            ty,
            values,
        });
        Ok(())
    };
    add(
        "token_embd.weight".into(),
        vec![d, vocab],
        ty,
        &w.token_embd,
    )?;
    if w.layers.len() != c.n_layers {
        return Err(GgufError::Tensor {
            tensor: "blk".into(),
            problem: format!("{} blocks for a shape of {}", w.layers.len(), c.n_layers),
        });
    }
    for (i, l) in w.layers.iter().enumerate() {
        let name = |part: &str| format!("blk.{i}.{part}");
        add(
            name("attn_norm.weight"),
            vec![d],
            MatrixType::F32,
            &l.attn_norm,
        )?;
        add(name("attn_q.weight"), vec![d, d], ty, &l.wq)?;
        add(name("attn_k.weight"), vec![d, kv], ty, &l.wk)?;
        add(name("attn_v.weight"), vec![d, kv], ty, &l.wv)?;
        if let Some([q, k, v]) = &l.qkv_bias {
            add(name("attn_q.bias"), vec![d], MatrixType::F32, q)?;
            add(name("attn_k.bias"), vec![kv], MatrixType::F32, k)?;
            add(name("attn_v.bias"), vec![kv], MatrixType::F32, v)?;
        }
        add(name("attn_output.weight"), vec![d, d], ty, &l.wo)?;
        add(
            name("ffn_norm.weight"),
            vec![d],
            MatrixType::F32,
            &l.ffn_norm,
        )?;
        add(name("ffn_gate.weight"), vec![d, ff], ty, &l.w_gate)?;
        add(name("ffn_up.weight"), vec![d, ff], ty, &l.w_up)?;
        add(name("ffn_down.weight"), vec![ff, d], ty, &l.w_down)?;
    }
    add(
        "output_norm.weight".into(),
        vec![d],
        MatrixType::F32,
        &w.output_norm,
    )?;
    if let Some(head) = &w.output {
        add("output.weight".into(), vec![d, vocab], ty, head)?;
    }
    Ok(out)
}
