//! The hostile values the random command lines draw from, shared by the in-process fuzzer
//! (`src/argv_fuzz.rs`) and the few command lines run through the binary
//! (`tests/hostile_fuzz.rs`): numbers that round, overflow or are no numbers, names with
//! white space or of nothing, lists with empty entries, and files that are not regular
//! files (a FIFO with no writer, a directory, `/dev/zero`).
#![allow(dead_code)]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// Numbers, and what only looks like one.
pub const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "2",
    "3.0",
    "4",
    "-1",
    "64",
    "65",
    "0.5",
    "1.5",
    "1e6",
    "1000001",
    "1048577",
    "1e309",
    "-1e309",
    "1e-400",
    "-1e-400",
    "1000000.00000000001",
    "1.00000000000000001",
    "5e-324",
    "NaN",
    "inf",
    "-inf",
    "4.0000000000000001",
    "18446744073709551616",
    "9007199254740993",
    "2^64",
    "0x10",
    "",
    " ",
    " 3 ",
    "abc",
];

/// Names of methods, roles, backends and bugs, good and bad.
pub const NAMES: &[&str] = &[
    "speculative",
    "spectr",
    "multiround",
    "mentored",
    "typical",
    "lookup",
    "autoregressive",
    "greedy",
    "kseq",
    "otm",
    "race",
    "draft",
    "target",
    "cpu",
    "wgpu",
    "argmax-draft",
    "shared-uniform",
    "cache-reset",
    "bundled",
    " lookup",
    "beam",
    "",
];

/// Lists as `plan`, `--tree` and `bench` take them, good and bad.
pub const LISTS: &[&str] = &[
    "0.5,0.5",
    "0.25,0.75",
    "1,3",
    "0.1,0.2,0.3,0.4",
    "0.5 0.5",
    "2,2,1",
    "1",
    ",,,",
    "0.5,,0.5",
    "0.5,0.5,",
    "NaN,1",
    "-0.5,1.5",
    "1e309,0",
    "@",
    "@/dev/zero",
    "@/dev/null",
    "@/nonexistent/list",
];

/// Paths that are not regular files, or not there; with [`special_files`]'s.
pub const PATHS: &[&str] = &[
    "/dev/zero",
    "/dev/null",
    "/nonexistent/file",
    "/",
    "Cargo.toml",
];

/// A FIFO with no writer and a directory, made once in `dir`: opening the FIFO for
/// reading would block forever.
pub fn special_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir.join("a-directory")).expect("a directory");
    let fifo = dir.join("fifo");
    if !fifo.exists() {
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success(), "mkfifo {}", fifo.display());
    }
    vec![fifo, dir.join("a-directory")]
}

/// An argument that is not UTF-8: `text` with a stray byte.
pub fn not_utf8(text: &str) -> OsString {
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0xff);
    OsString::from_vec(bytes)
}
