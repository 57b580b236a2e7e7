//! Small Llama-family GGUF files made up for tests and benchmarks: a seeded random model
//! of any shape (up to a SmolLM2-sized stand-in), a tiny GPT-2 byte-level vocabulary, and
//! [`Overrides`] that break one thing at a time for the tests of hostile files.
//!
//! The bytes are written directly as GGUF v3 rather than through `gguf-rs-lib`'s builder,
//! which validates what it writes and so cannot produce the broken files tests need.

pub(crate) mod encode;

use gguf_rs_lib::format::types::GGUFTensorType;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;

pub use encode::SplitMix64;
use encode::{encode_block, fnv1a, pad_to, put_str, put_u32, put_u64, put_value};

/// Control tokens at ids 0, 1 and 2, as in SmolLM2's vocabulary.
pub const SPECIAL_TOKENS: [&str; 3] = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"];

/// The merges of the base vocabulary, each `"a b"`, highest priority first; each merged
/// token follows the 256 byte symbols in this order.
pub const MERGES: [&str; 8] = ["Ġ t", "h e", "Ġt he", "i n", "Ġ a", "e r", "o n", "Ġ s"];

/// Tokens in the base vocabulary: the specials, the 256 byte symbols and the merges.
pub const BASE_VOCAB: usize = SPECIAL_TOKENS.len() + 256 + MERGES.len();

/// Byte offset of the header's tensor count (a u64); the metadata count follows at 16.
pub const TENSOR_COUNT_OFFSET: usize = 8;

/// The storage type of the matrices (and the token embedding and output head); norms and
/// biases are always F32, as llama.cpp writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatrixType {
    /// 32-bit floats.
    F32,
    /// IEEE half floats.
    F16,
    /// bfloat16.
    Bf16,
    /// ggml's Q8_0 blocks, quantized by `ggml-quants`.
    Q8_0,
    /// ggml's Q4_0 blocks.
    Q4_0,
    /// ggml's Q4_1 blocks.
    Q4_1,
}

impl MatrixType {
    /// Every type, for tests that try them all.
    pub const ALL: [Self; 6] = [
        Self::F32,
        Self::F16,
        Self::Bf16,
        Self::Q8_0,
        Self::Q4_0,
        Self::Q4_1,
    ];

    /// ggml's number for the type.
    #[must_use]
    pub fn ggml_type(self) -> u32 {
        match self {
            Self::F32 => 0,
            Self::F16 => 1,
            Self::Q4_0 => 2,
            Self::Q4_1 => 3,
            Self::Q8_0 => 8,
            Self::Bf16 => 30,
        }
    }

    fn from_ggml(id: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.ggml_type() == id)
    }

    /// Weights per block and bytes per block.
    fn block(self) -> (usize, usize) {
        match self {
            Self::F32 => (1, 4),
            Self::F16 | Self::Bf16 => (1, 2),
            Self::Q8_0 => (32, 34),
            Self::Q4_0 => (32, 18),
            Self::Q4_1 => (32, 20),
        }
    }
}

/// A metadata value, for [`Overrides::set_keys`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// GGUF type 4.
    U32(u32),
    /// GGUF type 5.
    I32(i32),
    /// GGUF type 10.
    U64(u64),
    /// GGUF type 6.
    F32(f32),
    /// GGUF type 7.
    Bool(bool),
    /// GGUF type 8.
    String(String),
    /// An array of strings.
    Strings(Vec<String>),
    /// An array of i32.
    I32s(Vec<i32>),
}

/// Departures from a well-formed file, each applied after the file's own keys and
/// tensors are laid out. Tensor data is generated for the overridden type and dimensions,
/// so the container stays consistent and only the model is wrong.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// Keys set to these values (replacing the file's own, or added at the end).
    pub set_keys: Vec<(String, Value)>,
    /// Keys left out.
    pub drop_keys: Vec<String>,
    /// Tensors left out.
    pub drop_tensors: Vec<String>,
    /// Tensors stored under another ggml type number; one this module cannot encode
    /// (such as 6, Q5_0) is written as zero bytes of that type's size.
    pub tensor_types: Vec<(String, u32)>,
    /// Tensors given other dimensions (fastest first).
    pub tensor_dims: Vec<(String, Vec<u64>)>,
}

/// The shape, vocabulary and storage of a synthetic Llama-family file.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticLlama {
    /// `general.architecture`; also the prefix of the shape keys.
    pub architecture: String,
    /// `{arch}.embedding_length`.
    pub d_model: usize,
    /// `{arch}.block_count`.
    pub n_layers: usize,
    /// `{arch}.attention.head_count`.
    pub n_heads: usize,
    /// `{arch}.attention.head_count_kv`.
    pub n_kv_heads: usize,
    /// `{arch}.feed_forward_length`.
    pub d_ff: usize,
    /// `{arch}.context_length`.
    pub context: u32,
    /// `{arch}.rope.freq_base`.
    pub rope_base: f32,
    /// `{arch}.attention.layer_norm_rms_epsilon`.
    pub rms_eps: f32,
    /// The storage type of the matrices.
    pub matrix_type: MatrixType,
    /// Tokens in the vocabulary: the [`BASE_VOCAB`] tokens, then `<extra_N>` tokens
    /// (type 5, unused) up to this size. Smaller values mean [`BASE_VOCAB`].
    pub vocab_size: usize,
    /// Whether the file has its own `output.weight` rather than reusing the embedding.
    pub untied_output: bool,
    /// Whether the attention projections have biases (`blk.N.attn_{q,k,v}.bias`).
    pub qkv_bias: bool,
    /// `tokenizer.chat_template`, if any.
    pub chat_template: Option<String>,
    /// `general.alignment`; written only when it is not GGUF's default of 32.
    pub alignment: u32,
    /// Seeds the weights: each tensor's values depend only on the seed and its name.
    pub seed: u64,
    /// What to break.
    pub overrides: Overrides,
}

impl Default for SyntheticLlama {
    fn default() -> Self {
        Self::tiny()
    }
}

/// Where the parts of a written file lie, for tests that cut or patch it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Offset of the first metadata entry (just after the 24-byte header).
    pub metadata_start: usize,
    /// Offset of the first tensor descriptor.
    pub tensor_infos_start: usize,
    /// Offset of the (aligned) tensor data section.
    pub data_start: usize,
    /// Each tensor's name, absolute offset and length in bytes, in file order.
    pub tensors: Vec<(String, usize, usize)>,
}

/// A tensor as it will be written.
struct Planned {
    name: String,
    dims: Vec<u64>,
    ggml_type: u32,
    len: usize,
}

impl SyntheticLlama {
    /// A tiny model: width 64, 2 layers, 4 query and 2 key/value heads, feed-forward 128,
    /// context 256, the base vocabulary, F32, tied output.
    #[must_use]
    pub fn tiny() -> Self {
        Self {
            architecture: "llama".to_owned(),
            d_model: 64,
            n_layers: 2,
            n_heads: 4,
            n_kv_heads: 2,
            d_ff: 128,
            context: 256,
            rope_base: 10_000.0,
            rms_eps: 1e-5,
            matrix_type: MatrixType::F32,
            vocab_size: BASE_VOCAB,
            untied_output: false,
            qkv_bias: false,
            chat_template: None,
            alignment: 32,
            seed: 0,
            overrides: Overrides::default(),
        }
    }

    /// SmolLM2-135M's shape (576 wide, 30 layers, 9/3 heads, 1536, 49,152 tokens), Q8_0.
    #[must_use]
    pub fn smollm2_135m() -> Self {
        Self {
            d_model: 576,
            n_layers: 30,
            n_heads: 9,
            n_kv_heads: 3,
            d_ff: 1536,
            ..Self::smollm2_360m()
        }
    }

    /// The pair the wasm and package tests record (specula-wasm's tests/fixtures/gguf.json),
    /// `(draft, target)`: the target is [`tiny`](Self::tiny) with its own output head (a
    /// tied head on random weights repeats one token) and seed 4, whose greedy path has no
    /// near tie; the draft is the same weights stored as Q4_1, close but not equal, so
    /// drafts are both accepted and rejected.
    #[must_use]
    pub fn reference_pair() -> (Self, Self) {
        let target = Self {
            seed: 4,
            untied_output: true,
            ..Self::tiny()
        };
        let draft = Self {
            matrix_type: MatrixType::Q4_1,
            ..target.clone()
        };
        (draft, target)
    }

    /// SmolLM2-360M's shape (960 wide, 32 layers, 15/5 heads, 2560, 49,152 tokens,
    /// context 8192, RoPE base 100,000), Q8_0, with random weights.
    #[must_use]
    pub fn smollm2_360m() -> Self {
        Self {
            d_model: 960,
            n_layers: 32,
            n_heads: 15,
            n_kv_heads: 5,
            d_ff: 2560,
            context: 8192,
            rope_base: 100_000.0,
            matrix_type: MatrixType::Q8_0,
            vocab_size: 49_152,
            ..Self::tiny()
        }
    }

    /// SmolLM2-1.7B's shape (2048 wide, 24 layers, 32 heads with 32 key/value heads, 8192,
    /// 49,152 tokens, context 8192, RoPE base 130,000), Q8_0, with random weights.
    #[must_use]
    pub fn smollm2_1_7b() -> Self {
        Self {
            d_model: 2048,
            n_layers: 24,
            n_heads: 32,
            n_kv_heads: 32,
            d_ff: 8192,
            rope_base: 130_000.0,
            ..Self::smollm2_360m()
        }
    }

    /// Width of the keys (and values) of all key/value heads.
    #[must_use]
    pub fn kv_dim(&self) -> usize {
        self.d_model
            .checked_div(self.n_heads)
            .map_or(0, |h| h * self.n_kv_heads)
    }

    /// The vocabulary, a token's id being its index.
    #[must_use]
    pub fn tokens(&self) -> Vec<String> {
        let mut alphabet: Vec<char> = ByteLevel::alphabet().into_iter().collect();
        alphabet.sort_unstable();
        let mut tokens: Vec<String> = SPECIAL_TOKENS.iter().map(|s| (*s).to_owned()).collect();
        tokens.extend(alphabet.iter().map(char::to_string));
        tokens.extend(MERGES.iter().map(|m| m.replace(' ', "")));
        let base = tokens.len();
        tokens.extend((base..self.vocab_size).map(|i| format!("<extra_{i}>")));
        tokens
    }

    /// `tokenizer.ggml.token_type` for [`SyntheticLlama::tokens`]: 3 (control) for the
    /// specials, 1 (normal) for bytes and merges, 5 (unused) for the padding.
    #[must_use]
    pub fn token_types(&self) -> Vec<i32> {
        let n = self.tokens().len();
        (0..n)
            .map(|i| match i {
                _ if i < SPECIAL_TOKENS.len() => 3,
                _ if i < BASE_VOCAB => 1,
                _ => 5,
            })
            .collect()
    }

    /// The names and dimensions (fastest first) of the tensors of a well-formed file, in
    /// file order, before [`Overrides`].
    #[must_use]
    pub fn tensor_shapes(&self) -> Vec<(String, Vec<u64>)> {
        let (d, kv, ff) = (self.d_model as u64, self.kv_dim() as u64, self.d_ff as u64);
        let vocab = self.tokens().len() as u64;
        let mut out = vec![("token_embd.weight".to_owned(), vec![d, vocab])];
        for i in 0..self.n_layers {
            let mut add = |name: &str, dims: Vec<u64>| out.push((format!("blk.{i}.{name}"), dims));
            add("attn_norm.weight", vec![d]);
            add("attn_q.weight", vec![d, d]);
            add("attn_k.weight", vec![d, kv]);
            add("attn_v.weight", vec![d, kv]);
            if self.qkv_bias {
                add("attn_q.bias", vec![d]);
                add("attn_k.bias", vec![kv]);
                add("attn_v.bias", vec![kv]);
            }
            add("attn_output.weight", vec![d, d]);
            add("ffn_norm.weight", vec![d]);
            add("ffn_gate.weight", vec![d, ff]);
            add("ffn_up.weight", vec![d, ff]);
            add("ffn_down.weight", vec![ff, d]);
        }
        out.push(("output_norm.weight".to_owned(), vec![d]));
        if self.untied_output {
            out.push(("output.weight".to_owned(), vec![d, vocab]));
        }
        out
    }

    /// The f32 values written for tensor `name` (with its overridden dimensions), before
    /// any rounding to the storage type; `None` for a tensor the file does not have.
    #[must_use]
    pub fn values(&self, name: &str) -> Option<Vec<f32>> {
        let planned = self.plan().into_iter().find(|t| t.name == name)?;
        let count = planned.dims.iter().product::<u64>() as usize;
        Some(self.generate(&planned.name, &planned.dims, count))
    }

    /// The file's bytes.
    #[must_use]
    pub fn build(&self) -> Vec<u8> {
        self.build_with_layout().0
    }

    /// The file's bytes and where its parts lie.
    #[must_use]
    pub fn build_with_layout(&self) -> (Vec<u8>, Layout) {
        let keys = self.metadata();
        let tensors = self.plan();
        let align = u64::from(self.alignment.max(1));
        let mut out = Vec::new();
        out.extend_from_slice(b"GGUF");
        put_u32(&mut out, 3);
        put_u64(&mut out, tensors.len() as u64);
        put_u64(&mut out, keys.len() as u64);
        let metadata_start = out.len();
        for (key, value) in &keys {
            put_str(&mut out, key);
            put_value(&mut out, value);
        }
        let tensor_infos_start = out.len();
        let mut offset = 0u64;
        let mut offsets = Vec::with_capacity(tensors.len());
        for t in &tensors {
            put_str(&mut out, &t.name);
            put_u32(&mut out, t.dims.len() as u32);
            for &dim in &t.dims {
                put_u64(&mut out, dim);
            }
            put_u32(&mut out, t.ggml_type);
            put_u64(&mut out, offset);
            offsets.push(offset);
            offset = (offset + t.len as u64).next_multiple_of(align);
        }
        pad_to(&mut out, align);
        let data_start = out.len();
        let mut spans = Vec::with_capacity(tensors.len());
        for (t, &at) in tensors.iter().zip(&offsets) {
            out.resize(data_start + at as usize, 0);
            let start = out.len();
            self.write_data(&mut out, t);
            spans.push((t.name.clone(), start, out.len() - start));
        }
        pad_to(&mut out, align);
        let layout = Layout {
            metadata_start,
            tensor_infos_start,
            data_start,
            tensors: spans,
        };
        (out, layout)
    }

    fn metadata(&self) -> Vec<(String, Value)> {
        let arch = &self.architecture;
        let size = |v: usize| Value::U32(u32::try_from(v).unwrap_or(u32::MAX));
        let mut keys = vec![(
            "general.architecture".to_owned(),
            Value::String(arch.clone()),
        )];
        if self.alignment != 32 {
            keys.push(("general.alignment".to_owned(), Value::U32(self.alignment)));
        }
        let tokens = self.tokens();
        let eos = Value::U32(2);
        let shape = [
            ("context_length", Value::U32(self.context)),
            ("embedding_length", size(self.d_model)),
            ("block_count", size(self.n_layers)),
            ("feed_forward_length", size(self.d_ff)),
            ("attention.head_count", size(self.n_heads)),
            ("attention.head_count_kv", size(self.n_kv_heads)),
            ("rope.freq_base", Value::F32(self.rope_base)),
            ("attention.layer_norm_rms_epsilon", Value::F32(self.rms_eps)),
        ];
        keys.extend(shape.into_iter().map(|(k, v)| (format!("{arch}.{k}"), v)));
        let tokenizer = [
            ("model", Value::String("gpt2".to_owned())),
            ("pre", Value::String("smollm".to_owned())),
            ("tokens", Value::Strings(tokens)),
            ("token_type", Value::I32s(self.token_types())),
            (
                "merges",
                Value::Strings(MERGES.iter().map(|m| (*m).to_owned()).collect()),
            ),
            ("bos_token_id", Value::U32(1)),
            ("eos_token_id", eos),
            ("add_bos_token", Value::Bool(false)),
        ];
        keys.extend(
            tokenizer
                .into_iter()
                .map(|(k, v)| (format!("tokenizer.ggml.{k}"), v)),
        );
        if let Some(template) = &self.chat_template {
            keys.push((
                "tokenizer.chat_template".to_owned(),
                Value::String(template.clone()),
            ));
        }
        let o = &self.overrides;
        keys.retain(|(k, _)| !o.drop_keys.contains(k));
        for (key, value) in &o.set_keys {
            match keys.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value.clone(),
                None => keys.push((key.clone(), value.clone())),
            }
        }
        keys
    }

    fn plan(&self) -> Vec<Planned> {
        let o = &self.overrides;
        self.tensor_shapes()
            .into_iter()
            .filter(|(name, _)| !o.drop_tensors.contains(name))
            .map(|(name, dims)| {
                let dims = lookup(&o.tensor_dims, &name).cloned().unwrap_or(dims);
                let default_type = if dims.len() == 1 {
                    MatrixType::F32
                } else {
                    self.matrix_type
                };
                let ggml_type = lookup(&o.tensor_types, &name)
                    .copied()
                    .unwrap_or(default_type.ggml_type());
                let count = dims.iter().product::<u64>();
                let len = match MatrixType::from_ggml(ggml_type) {
                    Some(t) => {
                        let (per, bytes) = t.block();
                        (count as usize).div_ceil(per) * bytes
                    }
                    None => GGUFTensorType::from_u32(ggml_type)
                        .ok()
                        .and_then(|t| t.checked_calculate_size(count))
                        .map_or(0, |n| n as usize),
                };
                Planned {
                    name,
                    dims,
                    ggml_type,
                    len,
                }
            })
            .collect()
    }

    /// `count` values for tensor `name`: norms near 1, the rest uniform in ±1/√(fan-in).
    fn generate(&self, name: &str, dims: &[u64], count: usize) -> Vec<f32> {
        let mut rng = SplitMix64::new(self.seed ^ fnv1a(name.as_bytes()));
        let (centre, scale) = if name.contains("norm") {
            (1.0, 0.1)
        } else if name.ends_with(".bias") {
            (0.0, 0.1)
        } else {
            (
                0.0,
                1.0 / (dims.first().copied().unwrap_or(1).max(1) as f32).sqrt(),
            )
        };
        (0..count).map(|_| centre + scale * rng.uniform()).collect()
    }

    fn write_data(&self, out: &mut Vec<u8>, t: &Planned) {
        let Some(ty) = MatrixType::from_ggml(t.ggml_type) else {
            out.resize(out.len() + t.len, 0);
            return;
        };
        let (per_block, _) = ty.block();
        let count = (t.dims.iter().product::<u64>() as usize).next_multiple_of(per_block);
        let values = self.generate(&t.name, &t.dims, count);
        out.reserve(t.len);
        for block in values.chunks_exact(per_block) {
            encode_block(out, ty, block);
        }
    }
}

fn lookup<'a, T>(list: &'a [(String, T)], name: &str) -> Option<&'a T> {
    list.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}
