//! The on-policy data file: a header, then one record per answered instruction, appended
//! as each answer ends, so a run killed at any point resumes after its last whole record.
//!
//! All numbers little-endian. Header: the magic `SPOD`, then u32 format version, u32
//! `top_k`, f32 temperature, u64 seed, u32 max new tokens. Record: u32 instruction index,
//! u32 prompt length, u32 answer length `n`, the prompt's and answer's tokens (u32 each),
//! then for each answer position the target's `top_k` most likely next tokens at
//! temperature 1, as (u32 token, f32 log-probability), most likely first. The answer's
//! token `j` was drawn (at the header's temperature) from the distribution whose top is
//! listed at position `j`.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use specula_model::{Error, Result};

const MAGIC: &[u8; 4] = b"SPOD";
const VERSION: u32 = 1;
const HEADER_LEN: u64 = 4 + 4 + 4 + 4 + 8 + 4;

/// How the answers were drawn and what is kept of each distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataHeader {
    /// Most likely tokens kept per answer position.
    pub top_k: u32,
    /// The temperature answers are sampled at.
    pub temperature: f32,
    /// Seeds the sampling (instruction `i` draws from stream `i`).
    pub seed: u64,
    /// The longest answer, in tokens.
    pub max_new: u32,
}

/// One answered instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Index of the instruction in its split.
    pub instruction: u32,
    /// The prompt's tokens (the chat form of the instruction).
    pub prompt: Vec<u32>,
    /// The answer's tokens.
    pub answer: Vec<u32>,
    /// Per answer position, `top_k` (token, log-probability) pairs, most likely first.
    pub top: Vec<Vec<(u32, f32)>>,
}

impl DataHeader {
    fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEADER_LEN as usize);
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&self.top_k.to_le_bytes());
        b.extend_from_slice(&self.temperature.to_le_bytes());
        b.extend_from_slice(&self.seed.to_le_bytes());
        b.extend_from_slice(&self.max_new.to_le_bytes());
        b
    }
}

impl Record {
    fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        let len = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes();
        b.extend_from_slice(&self.instruction.to_le_bytes());
        b.extend_from_slice(&len(self.prompt.len()));
        b.extend_from_slice(&len(self.answer.len()));
        for t in self.prompt.iter().chain(&self.answer) {
            b.extend_from_slice(&t.to_le_bytes());
        }
        for &(token, logp) in self.top.iter().flatten() {
            b.extend_from_slice(&token.to_le_bytes());
            b.extend_from_slice(&logp.to_le_bytes());
        }
        b
    }
}

/// A reader of little-endian numbers over a byte slice that says where it ran out.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn u32(&mut self) -> Option<u32> {
        let b = self.bytes.get(self.at..self.at + 4)?;
        self.at += 4;
        Some(u32::from_le_bytes(b.try_into().ok()?))
    }

    fn f32(&mut self) -> Option<f32> {
        self.u32().map(f32::from_bits)
    }

    fn u64(&mut self) -> Option<u64> {
        let b = self.bytes.get(self.at..self.at + 8)?;
        self.at += 8;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }

    fn record(&mut self, top_k: usize) -> Option<Record> {
        let instruction = self.u32()?;
        let (p, n) = (self.u32()? as usize, self.u32()? as usize);
        let tokens = (0..p + n).map(|_| self.u32()).collect::<Option<Vec<_>>>()?;
        let top = (0..n)
            .map(|_| {
                (0..top_k)
                    .map(|_| Some((self.u32()?, self.f32()?)))
                    .collect()
            })
            .collect::<Option<Vec<Vec<_>>>>()?;
        let (prompt, answer) = tokens.split_at(p);
        Some(Record {
            instruction,
            prompt: prompt.to_vec(),
            answer: answer.to_vec(),
            top,
        })
    }
}

/// Reads `bytes` (a whole data file): its header and every whole record, and the length
/// of the whole records' part (a cut record after it is dropped).
///
/// # Errors
/// [`Error::Training`] for a file that is not this format, or another version.
pub fn parse(bytes: &[u8]) -> Result<(DataHeader, Vec<Record>, usize)> {
    let bad = |what: &str| Error::Training(format!("not an on-policy data file: {what}"));
    if bytes.get(..4) != Some(MAGIC) {
        return Err(bad("no SPOD magic"));
    }
    let mut c = Cursor { bytes, at: 4 };
    let header = (|| {
        if c.u32()? != VERSION {
            return None;
        }
        Some(DataHeader {
            top_k: c.u32()?,
            temperature: c.f32()?,
            seed: c.u64()?,
            max_new: c.u32()?,
        })
    })()
    .ok_or_else(|| bad("another version, or a cut header"))?;
    let mut records = Vec::new();
    let mut whole = c.at;
    while let Some(r) = c.record(header.top_k as usize) {
        records.push(r);
        whole = c.at;
    }
    Ok((header, records, whole))
}

/// An open data file, appended to record by record.
#[derive(Debug)]
pub struct DataFile {
    file: File,
    /// The header it was written with.
    pub header: DataHeader,
    /// The records already in it (on resume), in file order.
    pub records: Vec<Record>,
}

impl DataFile {
    /// Opens `path` to append to it: a new file gets `header`; an existing one must have
    /// been written with the same header, and a record cut by a killed run is dropped.
    ///
    /// # Errors
    /// [`Error::Training`] for another header or format; I/O errors as
    /// [`Error::Training`] naming the path.
    pub fn open(path: &Path, header: DataHeader) -> Result<Self> {
        let io = |e: std::io::Error| Error::Training(format!("{}: {e}", path.display()));
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        if bytes.is_empty() {
            file.write_all(&header.bytes()).map_err(io)?;
            return Ok(Self {
                file,
                header,
                records: Vec::new(),
            });
        }
        let (found, records, whole) = parse(&bytes)?;
        if found != header {
            return Err(Error::Training(format!(
                "{} was written with {found:?}, not {header:?}",
                path.display()
            )));
        }
        file.set_len(whole as u64).map_err(io)?;
        file.seek(SeekFrom::End(0)).map_err(io)?;
        Ok(Self {
            file,
            header,
            records,
        })
    }

    /// Appends `record` and flushes it to the file.
    ///
    /// # Errors
    /// I/O errors as [`Error::Training`].
    pub fn append(&mut self, record: Record) -> Result<()> {
        let io = |e: std::io::Error| Error::Training(format!("writing a record: {e}"));
        self.file.write_all(&record.bytes()).map_err(io)?;
        self.file.sync_data().map_err(io)?;
        self.records.push(record);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_a_cut_record_is_dropped_on_resume() {
        let dir = std::env::temp_dir().join(format!("specula-spod-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("data.bin");
        let _ = std::fs::remove_file(&path);
        let header = DataHeader {
            top_k: 2,
            temperature: 0.7,
            seed: 5,
            max_new: 8,
        };
        let record = |i: u32| Record {
            instruction: i,
            prompt: vec![1, 2, 3],
            answer: vec![4, i],
            top: vec![vec![(4, -0.1), (9, -2.5)], vec![(i, -0.3), (7, -1.5)]],
        };
        let mut file = DataFile::open(&path, header).unwrap();
        file.append(record(0)).unwrap();
        file.append(record(1)).unwrap();
        drop(file);
        // A run killed in the middle of its third record.
        let mut bytes = std::fs::read(&path).unwrap();
        let whole = bytes.len();
        bytes.extend_from_slice(&record(2).bytes()[..11]);
        std::fs::write(&path, &bytes).unwrap();
        let file = DataFile::open(&path, header).unwrap();
        assert_eq!(file.records, vec![record(0), record(1)]);
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, whole);
        let other = DataHeader { seed: 6, ..header };
        assert!(DataFile::open(&path, other).is_err());
        assert!(parse(b"GGUF....").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
