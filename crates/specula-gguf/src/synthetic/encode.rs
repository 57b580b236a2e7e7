//! The bytes of a synthetic file: GGUF's little-endian scalars, strings and metadata
//! values, ggml's blocks, and the seeded generator behind the weights.

use ggml_quants::{Q4_0, Q4_1, Q8_0, Quantize};
use half::{bf16, f16};

use super::{MatrixType, Value};

/// Appends one block of `ty` (one value for the float types, 32 for the quantized).
pub(crate) fn encode_block(out: &mut Vec<u8>, ty: MatrixType, block: &[f32]) {
    let whole = |b: &[f32]| -> [f32; 32] {
        let mut a = [0.0; 32];
        a.copy_from_slice(b);
        a
    };
    match ty {
        MatrixType::F32 => out.extend_from_slice(&block[0].to_le_bytes()),
        MatrixType::F16 => out.extend_from_slice(&f16::from_f32(block[0]).to_le_bytes()),
        MatrixType::Bf16 => out.extend_from_slice(&bf16::from_f32(block[0]).to_le_bytes()),
        MatrixType::Q8_0 => {
            let q: Q8_0 = Quantize::<f32, 32>::quantize(&whole(block));
            out.extend_from_slice(&q.delta.to_le_bytes());
            out.extend(q.quants.map(|v| v as u8));
        }
        MatrixType::Q4_0 => {
            let q: Q4_0 = Quantize::<f32, 32>::quantize(&whole(block));
            out.extend_from_slice(&q.delta.to_le_bytes());
            out.extend_from_slice(&q.quants);
        }
        MatrixType::Q4_1 => {
            let q: Q4_1 = Quantize::<f32, 32>::quantize(&whole(block));
            out.extend_from_slice(&q.delta_min.delta.to_le_bytes());
            out.extend_from_slice(&q.delta_min.min.to_le_bytes());
            out.extend_from_slice(&q.quants);
        }
    }
}

pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

pub(crate) fn pad_to(out: &mut Vec<u8>, align: u64) {
    out.resize((out.len() as u64).next_multiple_of(align) as usize, 0);
}

/// A metadata value: its GGUF type number, then its encoding.
pub(crate) fn put_value(out: &mut Vec<u8>, value: &Value) {
    let (ty, body): (u32, Vec<u8>) = match value {
        Value::U32(v) => (4, v.to_le_bytes().to_vec()),
        Value::I32(v) => (5, v.to_le_bytes().to_vec()),
        Value::U64(v) => (10, v.to_le_bytes().to_vec()),
        Value::F32(v) => (6, v.to_le_bytes().to_vec()),
        Value::Bool(v) => (7, vec![u8::from(*v)]),
        Value::String(s) => {
            let mut b = Vec::new();
            put_str(&mut b, s);
            (8, b)
        }
        Value::Strings(list) => {
            let mut b = Vec::new();
            put_u32(&mut b, 8);
            put_u64(&mut b, list.len() as u64);
            list.iter().for_each(|s| put_str(&mut b, s));
            (9, b)
        }
        Value::I32s(list) => {
            let mut b = Vec::new();
            put_u32(&mut b, 5);
            put_u64(&mut b, list.len() as u64);
            list.iter()
                .for_each(|v| b.extend_from_slice(&v.to_le_bytes()));
            (9, b)
        }
    };
    put_u32(out, ty);
    out.extend_from_slice(&body);
}

/// 64-bit FNV-1a, to give each tensor its own random stream.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// SplitMix64, a small seeded generator: enough for test weights and byte mutations,
/// and the same on every platform.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator started from `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A float uniform in [-1, 1).
    pub fn uniform(&mut self) -> f32 {
        // 24 bits: every value is exact in f32.
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}
