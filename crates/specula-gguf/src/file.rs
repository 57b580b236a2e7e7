//! A GGUF file held in memory: its metadata, and each tensor's type, shape and bytes,
//! every range checked against the file before anything is read.

use std::io::Cursor;

use gguf_rs_lib::format::metadata::MetadataValue;
use gguf_rs_lib::reader::{GGUFFileReader, GGUFReaderConfig};

use crate::dequant::{self, SUPPORTED_TYPES, TensorKind};
use crate::error::{GgufError, Result};

/// One tensor's descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorEntry {
    /// The tensor's name, such as `blk.0.attn_q.weight`.
    pub name: String,
    /// Its dimensions, fastest-varying first (ggml's `ne`): a weight of `out × in` is
    /// `[in, out]`, its rows of `in` values stored one after another.
    pub dims: Vec<u64>,
    /// ggml's type number.
    pub ggml_type: u32,
    /// Where its bytes start in the file.
    start: usize,
    /// How many bytes it takes.
    len: usize,
}

impl TensorEntry {
    /// The number of weights.
    #[must_use]
    pub fn elements(&self) -> u64 {
        self.dims.iter().product()
    }
}

/// A parsed GGUF file (version 3, little-endian).
#[derive(Debug)]
pub struct GgufFile {
    bytes: Vec<u8>,
    metadata: gguf_rs_lib::format::metadata::Metadata,
    tensors: Vec<TensorEntry>,
}

impl GgufFile {
    /// Parses `bytes`, checking the header, the metadata and that every tensor's bytes
    /// lie inside the file.
    ///
    /// # Errors
    /// [`GgufError::Container`] for bytes that are not a complete GGUF file.
    pub fn parse(bytes: Vec<u8>) -> Result<Self> {
        let container = |e: gguf_rs_lib::GGUFError| GgufError::Container(e.to_string());
        let (metadata, infos, data_offset) = {
            let reader = GGUFFileReader::with_config(
                Cursor::new(bytes.as_slice()),
                GGUFReaderConfig::default(),
            )
            .map_err(container)?;
            let offset = reader.tensor_data_offset();
            (
                reader.metadata().clone(),
                reader.tensor_infos().to_vec(),
                offset,
            )
        };
        let mut tensors = Vec::with_capacity(infos.len());
        for info in infos {
            let name = info.name().to_owned();
            let out_of_file = || GgufError::tensor(&name, "its data lies outside the file");
            let start = data_offset
                .checked_add(info.data_offset())
                .and_then(|s| usize::try_from(s).ok())
                .ok_or_else(out_of_file)?;
            let len = usize::try_from(info.expected_data_size()).map_err(|_| out_of_file())?;
            if start.checked_add(len).is_none_or(|end| end > bytes.len()) {
                return Err(out_of_file());
            }
            tensors.push(TensorEntry {
                name,
                dims: info.shape().dims().to_vec(),
                ggml_type: info.tensor_type() as u32,
                start,
                len,
            });
        }
        Ok(Self {
            bytes,
            metadata,
            tensors,
        })
    }

    /// Every tensor, in file order.
    #[must_use]
    pub fn tensors(&self) -> &[TensorEntry] {
        &self.tensors
    }

    /// The tensor called `name`, if the file has it.
    #[must_use]
    pub fn tensor(&self, name: &str) -> Option<&TensorEntry> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// The raw metadata value of `key`.
    #[must_use]
    pub fn value(&self, key: &str) -> Option<&MetadataValue> {
        self.metadata.get(key)
    }

    /// The string at `key`.
    ///
    /// # Errors
    /// [`GgufError::Metadata`] when it is missing or not a string.
    pub fn string(&self, key: &str) -> Result<&str> {
        match self.value(key) {
            Some(MetadataValue::String(s)) => Ok(s),
            Some(_) => Err(GgufError::metadata(key, "is not a string")),
            None => Err(GgufError::metadata(key, "is missing")),
        }
    }

    /// The non-negative integer at `key`, of any integer type.
    ///
    /// # Errors
    /// [`GgufError::Metadata`] when it is missing, negative or not an integer.
    pub fn unsigned(&self, key: &str) -> Result<u64> {
        let value = self
            .value(key)
            .ok_or_else(|| GgufError::metadata(key, "is missing"))?;
        match value {
            MetadataValue::F32(_) | MetadataValue::F64(_) => None,
            other => other.as_u64(),
        }
        .ok_or_else(|| GgufError::metadata(key, "is not a non-negative integer"))
    }

    /// The number (integer or float) at `key`.
    ///
    /// # Errors
    /// [`GgufError::Metadata`] when it is missing or not a number.
    pub fn number(&self, key: &str) -> Result<f64> {
        let value = self
            .value(key)
            .ok_or_else(|| GgufError::metadata(key, "is missing"))?;
        value
            .as_f64()
            .or_else(|| value.as_i64().map(|v| v as f64))
            .or_else(|| value.as_u64().map(|v| v as f64))
            .ok_or_else(|| GgufError::metadata(key, "is not a number"))
    }

    /// The boolean at `key`, or `default` when the file does not set it.
    ///
    /// # Errors
    /// [`GgufError::Metadata`] when it is present but not a boolean.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool> {
        match self.value(key) {
            None => Ok(default),
            Some(MetadataValue::Bool(b)) => Ok(*b),
            Some(_) => Err(GgufError::metadata(key, "is not a boolean")),
        }
    }

    /// The array of strings at `key`.
    ///
    /// # Errors
    /// [`GgufError::Metadata`] when it is missing or not an array of strings.
    pub fn strings(&self, key: &str) -> Result<Vec<String>> {
        self.array(key)?
            .iter()
            .map(|v| match v {
                MetadataValue::String(s) => Ok(s.clone()),
                _ => Err(GgufError::metadata(
                    key,
                    "holds something other than strings",
                )),
            })
            .collect()
    }

    /// The array of integers at `key`.
    ///
    /// # Errors
    /// [`GgufError::Metadata`] when it is missing or not an array of integers.
    pub fn integers(&self, key: &str) -> Result<Vec<i64>> {
        self.array(key)?
            .iter()
            .map(|v| {
                v.as_i64()
                    .or_else(|| v.as_u64().and_then(|u| i64::try_from(u).ok()))
                    .ok_or_else(|| GgufError::metadata(key, "holds something other than integers"))
            })
            .collect()
    }

    fn array(&self, key: &str) -> Result<&[MetadataValue]> {
        match self.value(key) {
            Some(MetadataValue::Array(a)) => Ok(&a.values),
            Some(_) => Err(GgufError::metadata(key, "is not an array")),
            None => Err(GgufError::metadata(key, "is missing")),
        }
    }

    /// The kind of `tensor`'s type, refusing the types this crate does not read.
    ///
    /// # Errors
    /// [`GgufError::UnsupportedTensorType`] naming the tensor and its type.
    pub fn kind(tensor: &TensorEntry) -> Result<TensorKind> {
        TensorKind::from_ggml(tensor.ggml_type).ok_or_else(|| GgufError::UnsupportedTensorType {
            tensor: tensor.name.clone(),
            ty: type_name(tensor.ggml_type),
            supported: SUPPORTED_TYPES,
        })
    }

    /// The tensor `name` dequantized to f32, checked to have dimensions `dims` (fastest
    /// first).
    ///
    /// # Errors
    /// [`GgufError::Tensor`] when it is missing or has other dimensions;
    /// [`GgufError::UnsupportedTensorType`] for a type this crate does not read.
    pub fn f32_tensor(&self, name: &str, dims: &[u64]) -> Result<Vec<f32>> {
        let tensor = self
            .tensor(name)
            .ok_or_else(|| GgufError::tensor(name, "is missing"))?;
        if tensor.dims != dims {
            return Err(GgufError::tensor(
                name,
                format!("has dimensions {:?}; the model needs {dims:?}", tensor.dims),
            ));
        }
        let kind = Self::kind(tensor)?;
        if kind.bytes_for(tensor.elements()) != Some(tensor.len as u64) {
            return Err(GgufError::tensor(name, "its size does not match its type"));
        }
        dequant::dequantize(
            name,
            kind,
            &self.bytes[tensor.start..tensor.start + tensor.len],
        )
    }
}

/// ggml's name of type number `id`.
fn type_name(id: u32) -> String {
    const NAMES: [&str; 31] = [
        "F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K",
        "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL",
        "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16",
    ];
    NAMES
        .get(id as usize)
        .map_or_else(|| format!("type {id}"), |n| (*n).to_owned())
}
