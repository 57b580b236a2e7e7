//! Tensor payloads to f32: the plain float types directly, ggml's block quantizations
//! through `ggml-quants` (its block structs, built here from the file's bytes without
//! `unsafe`, and its `dequantize`).

use ggml_quants::{Q4_0, Q4_1, Q4K, Q6K, Q8_0, Quantize};
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
            TensorKind::Q4K => {
                let block = Q4K {
                    delta_min: delta_min(b),
                    scales: array(b, 4),
                    qs: array(b, 16),
                };
                out.extend(Quantize::<f32, 256>::dequantize(&block));
            }
            TensorKind::Q6K => {
                let block = Q6K {
                    ql: array(b, 0),
                    qh: array(b, 128),
                    scales: array(b, 192),
                    delta: half_at(b, 208),
                };
                out.extend(Quantize::<f32, 256>::dequantize(&block));
            }
        }
    }
    Ok(out)
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
