//! Parsing raw flag values of the model commands into checked numbers, each failure one
//! `error: …` line naming the flag.

use std::str::FromStr;

use specula_engine::options::RealRange;

use crate::error::CliError;

/// A whole number in `min..=max`.
///
/// # Errors
/// A usage error naming `flag`.
pub fn uint<T>(flag: &str, raw: &str, min: T, max: T) -> Result<T, CliError>
where
    T: FromStr + PartialOrd + Copy + std::fmt::Display,
{
    let raw = raw.trim();
    match raw.parse::<T>() {
        Ok(v) if v >= min && v <= max => Ok(v),
        _ => Err(CliError::usage(format!(
            "{flag} must be a whole number in {min}..={max}, got {raw:?}"
        ))),
    }
}

/// A finite number in `range`, as typed: text that only rounds into the range
/// (`1000000.0000000001` for at most 1e6) is refused ([`crate::number::within`]).
///
/// # Errors
/// A usage error naming `flag`.
pub fn float(flag: &str, raw: &str, range: RealRange) -> Result<f64, CliError> {
    let raw = raw.trim();
    match raw.parse::<f64>() {
        // `+ 0.0` reads `-0` as 0.
        Ok(v) if range.contains(v) && crate::number::within(raw, range) => Ok(v + 0.0),
        _ => {
            let open = if range.min_excluded { '(' } else { '[' };
            let (min, max) = (range.min, range.max);
            Err(CliError::usage(format!(
                "{flag} must be a number in {open}{min}, {max}], got {raw:?}"
            )))
        }
    }
}

/// A comma-separated list of whole numbers, each in `1..=max`.
///
/// # Errors
/// A usage error naming `flag` and the entry.
pub fn uint_list(flag: &str, raw: &str, max: usize) -> Result<Vec<usize>, CliError> {
    if raw.trim().is_empty() {
        return Err(CliError::usage(format!(
            "{flag} is empty: give comma-separated whole numbers, e.g. 2,2,1"
        )));
    }
    raw.split(',')
        .enumerate()
        .map(|(i, item)| {
            uint(flag, item, 1, max).map_err(|_| {
                CliError::usage(format!(
                    "{flag}: entry {i} ({:?}) must be a whole number in 1..={max}",
                    item.trim()
                ))
            })
        })
        .collect()
}

/// A comma-separated list of numbers, each kept as typed, for clap (`--tree 2,2,1`);
/// the engine checks their ranges.
///
/// # Errors
/// Which entry is not a number.
pub fn number_list(raw: &str) -> Result<crate::decode_args::NumberList, String> {
    raw.split(',')
        .enumerate()
        .map(|(i, item)| {
            crate::number::typed(item.trim())
                .map_err(|_| format!("entry {i} ({:?}) is not a number", item.trim()))
        })
        .collect::<Result<Vec<_>, String>>()
        .map(crate::decode_args::NumberList)
}

/// One of `choices` (exact match).
///
/// # Errors
/// A usage error listing the choices.
pub fn choice<'a>(flag: &str, raw: &str, choices: &[&'a str]) -> Result<&'a str, CliError> {
    choices
        .iter()
        .find(|c| **c == raw.trim())
        .copied()
        .ok_or_else(|| {
            CliError::usage(format!(
                "{flag} must be one of {}, got {:?}",
                choices.join(", "),
                raw.trim()
            ))
        })
}

/// The bytes of the regular file at `path`, at most `limit` of them. Anything else is
/// refused before it is opened for reading: a FIFO with no writer would block the open
/// forever, a device such as `/dev/zero` never ends, a directory is no file. A file
/// larger than `limit` is refused unread (and one that grows past it while being read,
/// after `limit + 1` bytes).
///
/// # Errors
/// What is wrong with the path, in words.
pub fn read_regular_file(path: &std::path::Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    let too_large = || format!("larger than the limit of {limit} bytes");
    if meta.len() > limit {
        return Err(too_large());
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_enforced() {
        assert_eq!(uint("--n", "3", 1_usize, 5).ok(), Some(3));
        assert!(uint("--n", "0", 1_usize, 5).is_err());
        assert!(uint("--n", "-1", 1_usize, 5).is_err());
        let unit = RealRange::closed(0.0, 1.0);
        assert!(float("--t", "nan", unit).is_err());
        assert!(float("--t", "1.00000000000000001", unit).is_err());
        assert!(float("--t", "-1e-400", unit).is_err());
        assert_eq!(float("--t", "10e-1", unit).ok(), Some(1.0));
        assert_eq!(float("--t", "-0", unit).map(f64::to_bits).ok(), Some(0));
        assert_eq!(uint_list("--tree", "2, 2,1", 8).ok(), Some(vec![2, 2, 1]));
        assert!(uint_list("--tree", "2,0", 8).is_err());
        assert_eq!(
            choice("--role", "draft", &["draft", "target"]).ok(),
            Some("draft")
        );
        assert!(choice("--role", "x", &["draft", "target"]).is_err());
    }

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let len = std::fs::metadata(&manifest).expect("the manifest").len();
        assert_eq!(
            read_regular_file(&manifest, len).map(|b| b.len() as u64),
            Ok(len)
        );
        assert!(read_regular_file(&manifest, len - 1).is_err());
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(
            read_regular_file(dir, u64::MAX),
            Err("not a regular file".to_owned())
        );
    }
}
