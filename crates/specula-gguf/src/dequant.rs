//! Tensor payloads to f32: the plain float types directly, ggml's 32-weight block
//! quantizations through `ggml-quants` (its block structs, built here from the file's
//! bytes without `unsafe`, and its `dequantize`), and the K-quants here, since
//! `ggml-quants` 0.1 leaves their `dequantize` unimplemented (it panics).

use ggml_quants::{Q4_0, Q4_1, Q8_0, Quantize};
use half::{bf16, f16};

use crate::error::{GgufError, Result};

/// The tensor types this crate reads, as ggml numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorKind {
    /// 32-bit floats.
    F32,
    /// 16-bit IEEE floats.
    F16,
    /// bfloat16.
    Bf16,
    /// 32 weights: an f16 scale, 32 signed bytes.
    Q8_0,
    /// 32 weights: an f16 scale, 32 nibbles centred on 8.
    Q4_0,
    /// 32 weights: an f16 scale and minimum, 32 nibbles.
    Q4_1,
    /// 256 weights in 8 sub-blocks with 6-bit scales and minima.
    Q4K,
    /// 256 weights of 6 bits in 16 sub-blocks with 8-bit scales.
    Q6K,
}

/// The supported types' names, for error messages.
pub const SUPPORTED_TYPES: &str = "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K, Q6_K";

impl TensorKind {
    /// The kind of ggml type number `id`, or `None` for a type this crate does not read.
    #[must_use]
    pub fn from_ggml(id: u32) -> Option<Self> {
        Some(match id {
            0 => Self::F32,
            1 => Self::F16,
            2 => Self::Q4_0,
            3 => Self::Q4_1,
            8 => Self::Q8_0,
            12 => Self::Q4K,
            14 => Self::Q6K,
            30 => Self::Bf16,
            _ => return None,
        })
    }

    /// Weights per block and bytes per block.
    #[must_use]
    pub fn block(self) -> (usize, usize) {
        match self {
            Self::F32 => (1, 4),
            Self::F16 | Self::Bf16 => (1, 2),
            Self::Q8_0 => (32, 34),
            Self::Q4_0 => (32, 18),
            Self::Q4_1 => (32, 20),
            Self::Q4K => (256, 144),
            Self::Q6K => (256, 210),
        }
    }

    /// The bytes `elements` weights take, or `None` when they are not whole blocks (or
    /// the count overflows).
    #[must_use]
    pub fn bytes_for(self, elements: u64) -> Option<u64> {
        let (per_block, bytes) = self.block();
        let per_block = per_block as u64;
        if !elements.is_multiple_of(per_block) {
            return None;
        }
        (elements / per_block).checked_mul(bytes as u64)
    }
}

fn half_at(bytes: &[u8], at: usize) -> f16 {
    f16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn array<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[at..at + N]);
    out
}

/// Dequantizes `data` (whole blocks of `kind`) into f32, in the file's element order.
///
/// # Errors
/// [`GgufError::Tensor`] naming `tensor` when `data` is not a whole number of blocks.
pub fn dequantize(tensor: &str, kind: TensorKind, data: &[u8]) -> Result<Vec<f32>> {
    let (per_block, block_bytes) = kind.block();
    if !data.len().is_multiple_of(block_bytes) {
        return Err(GgufError::tensor(
            tensor,
            format!(
                "{} bytes are not whole {block_bytes}-byte blocks",
                data.len()
            ),
        ));
    }
    let mut out = Vec::new();
    out.try_reserve_exact(data.len() / block_bytes * per_block)
        .map_err(|_| GgufError::tensor(tensor, "not enough memory to dequantize"))?;
    for b in data.chunks_exact(block_bytes) {
        match kind {
            TensorKind::F32 => out.push(f32::from_le_bytes(array(b, 0))),
            TensorKind::F16 => out.push(half_at(b, 0).to_f32()),
            TensorKind::Bf16 => out.push(bf16::from_le_bytes(array(b, 0)).to_f32()),
            TensorKind::Q8_0 => {
                let block = Q8_0 {
                    delta: half_at(b, 0),
                    quants: array::<32>(b, 2).map(|q| q as i8),
                };
                out.extend(Quantize::<f32, 32>::dequantize(&block));
            }
            TensorKind::Q4_0 => {
                let block = Q4_0 {
                    delta: half_at(b, 0),
                    quants: array(b, 2),
                };
                out.extend(Quantize::<f32, 32>::dequantize(&block));
            }
            TensorKind::Q4_1 => {
                let block = Q4_1 {
                    delta_min: delta_min(b),
                    quants: array(b, 4),
                };
                out.extend(Quantize::<f32, 32>::dequantize(&block));
            }
            TensorKind::Q4K => dequantize_q4_k(b, &mut out),
            TensorKind::Q6K => dequantize_q6_k(b, &mut out),
        }
    }
    Ok(out)
}

/// The scale and minimum of sub-block `j` of a Q4_K block: 6 bits each, packed into
/// 12 bytes (the top two bits of the last four sub-blocks' pairs sit in the first
/// eight bytes' high bits).
fn q4_k_scale_min(j: usize, q: &[u8]) -> (f32, f32) {
    let (scale, min) = if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        (
            (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4),
            (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
        )
    };
    (f32::from(scale), f32::from(min))
}

/// One Q4_K block (144 bytes: d, dmin, 12 bytes of scales, 128 of nibbles): each
/// 64 weights take the low then the high nibbles of 32 bytes, each half with its own
/// scale and minimum.
fn dequantize_q4_k(b: &[u8], out: &mut Vec<f32>) {
    let (d, dmin) = (half_at(b, 0).to_f32(), half_at(b, 2).to_f32());
    let (scales, qs) = (&b[4..16], &b[16..144]);
    for (chunk, q) in qs.chunks_exact(32).enumerate() {
        let (s1, m1) = q4_k_scale_min(2 * chunk, scales);
        let (s2, m2) = q4_k_scale_min(2 * chunk + 1, scales);
        out.extend(q.iter().map(|&x| d * s1 * f32::from(x & 0xF) - dmin * m1));
        out.extend(q.iter().map(|&x| d * s2 * f32::from(x >> 4) - dmin * m2));
    }
}

/// One Q6_K block (210 bytes: 128 of low nibbles, 64 of high bit pairs, 16 signed
/// scales, d): each half of 128 weights is four runs of 32, built from 4 + 2 bits and
/// centred on 32.
fn dequantize_q6_k(b: &[u8], out: &mut Vec<f32>) {
    let d = half_at(b, 208).to_f32();
    let (ql, qh, scales) = (&b[..128], &b[128..192], &b[192..208]);
    for half in 0..2 {
        let (ql, qh) = (
            &ql[64 * half..64 * half + 64],
            &qh[32 * half..32 * half + 32],
        );
        let sc = &scales[8 * half..8 * half + 8];
        let mut y = [0f32; 128];
        for l in 0..32 {
            let is = l / 16;
            let q = |low: u8, shift: u8| {
                f32::from(((low & 0xF) | (((qh[l] >> shift) & 3) << 4)) as i8 - 32)
            };
            let scale = |k: usize| d * f32::from(sc[is + k] as i8);
            y[l] = scale(0) * q(ql[l], 0);
            y[l + 32] = scale(2) * q(ql[l + 32], 2);
            y[l + 64] = scale(4) * q(ql[l] >> 4, 4);
            y[l + 96] = scale(6) * q(ql[l + 32] >> 4, 6);
        }
        out.extend(y);
    }
}

fn delta_min(b: &[u8]) -> ggml_quants::DeltaMin {
    ggml_quants::DeltaMin {
        delta: half_at(b, 0),
        min: half_at(b, 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q8_0_is_scale_times_signed_byte() {
        let mut block = vec![0u8; 34];
        block[..2].copy_from_slice(&f16::from_f32(0.5).to_le_bytes());
        block[2] = 4;
        block[3] = (-6i8) as u8;
        let values = dequantize("t", TensorKind::Q8_0, &block).unwrap();
        assert_eq!(values.len(), 32);
        assert_eq!(&values[..3], &[2.0, -3.0, 0.0]);
    }

    #[test]
    fn q4_1_is_scale_times_nibble_plus_minimum() {
        let mut block = vec![0u8; 20];
        block[..2].copy_from_slice(&f16::from_f32(2.0).to_le_bytes());
        block[2..4].copy_from_slice(&f16::from_f32(-1.0).to_le_bytes());
        // Low nibbles are the first 16 weights, high nibbles the last 16 (ggml's order).
        block[4] = 0x3_1;
        let values = dequantize("t", TensorKind::Q4_1, &block).unwrap();
        assert_eq!(values[0], 1.0);
        assert_eq!(values[16], 5.0);
        assert_eq!(values[1], -1.0);
    }

    #[test]
    fn partial_blocks_are_refused_with_the_tensor_name() {
        let err = dequantize("blk.0.attn_q.weight", TensorKind::Q4_1, &[0; 21]).unwrap_err();
        assert!(err.to_string().contains("blk.0.attn_q.weight"), "{err}");
    }
}
