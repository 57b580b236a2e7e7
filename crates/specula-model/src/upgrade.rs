//! Upgrading a model directory written before the current description format: format 1
//! had no digest of the description itself ([`ModelMeta::sha256`]). The weights are
//! checked against the digest the old description records before anything is written, so
//! an upgrade never seals a file it cannot vouch for.

use std::path::Path;

use serde_json::Value;

use crate::config::ModelRole;
use crate::error::{Error, Result};
use crate::weights::{
    FORMAT_VERSION, MAX_META_BYTES, ModelBundle, ModelMeta, read_limited, sha256_hex,
};

/// What [`upgrade_dir`] did with one role's description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upgrade {
    /// `ROLE.json` is not in the directory.
    Absent,
    /// Already in the current format (and checked whole).
    Current,
    /// Rewritten from format 1 to the current format (and checked whole).
    Upgraded,
}

/// Upgrades `DIR/ROLE.json` from format 1 to [`FORMAT_VERSION`] in place, then loads the
/// directory's `role` as every user does ([`ModelBundle::load_dir`]).
///
/// # Errors
/// [`Error::Io`] and [`Error::File`] for unreadable or malformed files, a description of
/// an unknown format, weights that do not match the digest it records
/// ([`Error::Checksum`]), and [`ModelBundle::load_dir`]'s errors.
pub fn upgrade_dir(dir: &Path, role: ModelRole) -> Result<Upgrade> {
    let meta_path = dir.join(format!("{}.json", role.name()));
    let weights_path = dir.join(format!("{}.bpk", role.name()));
    if !meta_path.exists() {
        return Ok(Upgrade::Absent);
    }
    let in_file = |path: &Path, e: Error| Error::File {
        path: path.display().to_string(),
        source: Box::new(e),
    };
    let bytes = read_limited(&meta_path, MAX_META_BYTES)?;
    let mut value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| in_file(&meta_path, Error::Description(e.to_string())))?;
    match value.get("format").and_then(Value::as_u64) {
        Some(1) => {}
        Some(v) if v == u64::from(FORMAT_VERSION) => {
            ModelBundle::load_dir(dir, role)?;
            return Ok(Upgrade::Current);
        }
        other => {
            return Err(in_file(
                &meta_path,
                Error::Description(format!("format {other:?} is not one this version knows")),
            ));
        }
    }
    let weights = std::fs::read(&weights_path).map_err(|e| Error::io(&weights_path, e))?;
    let recorded = value
        .get("weights_sha256")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let actual = sha256_hex(&weights);
    if !recorded.eq_ignore_ascii_case(&actual) {
        return Err(in_file(
            &weights_path,
            Error::Checksum {
                name: format!("{} weights", role.name()),
                expected: recorded,
                actual,
            },
        ));
    }
    value["format"] = Value::from(FORMAT_VERSION);
    value["sha256"] = Value::from("");
    let mut meta: ModelMeta = serde_json::from_value(value)
        .map_err(|e| in_file(&meta_path, Error::Description(e.to_string())))?;
    meta.config.validate().map_err(|e| in_file(&meta_path, e))?;
    meta.seal();
    ModelBundle { meta, weights }.save_dir(dir)?;
    ModelBundle::load_dir(dir, role)?;
    Ok(Upgrade::Upgraded)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch copy of the bundled `role` with its description turned back into format 1.
    fn format_1_dir(name: &str, role: ModelRole) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("specula-upgrade-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (meta, weights) = crate::bundled::files(role);
        let mut value: Value = serde_json::from_slice(meta).unwrap();
        value["format"] = Value::from(1);
        value.as_object_mut().unwrap().remove("sha256");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{}.json", role.name())), value.to_string()).unwrap();
        std::fs::write(dir.join(format!("{}.bpk", role.name())), weights).unwrap();
        dir
    }

    #[test]
    fn a_format_1_directory_is_refused_then_upgraded_to_the_bundled_description() {
        let dir = format_1_dir("ok", ModelRole::Draft);
        let refused = ModelBundle::load_dir(&dir, ModelRole::Draft)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("format 1 predates"), "{refused}");
        assert_eq!(
            upgrade_dir(&dir, ModelRole::Draft).unwrap(),
            Upgrade::Upgraded
        );
        let loaded = ModelBundle::load_dir(&dir, ModelRole::Draft).unwrap();
        // Sealing the old fields gives exactly the committed format-2 description.
        assert_eq!(
            loaded.meta,
            crate::bundled::bundle(ModelRole::Draft).unwrap().meta
        );
        assert_eq!(
            upgrade_dir(&dir, ModelRole::Draft).unwrap(),
            Upgrade::Current
        );
        assert_eq!(
            upgrade_dir(&dir, ModelRole::Target).unwrap(),
            Upgrade::Absent
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_upgrade_refuses_weights_that_do_not_match_the_old_digest() {
        let dir = format_1_dir("tampered", ModelRole::Draft);
        let path = dir.join("draft.bpk");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[1000] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        let refused = upgrade_dir(&dir, ModelRole::Draft).unwrap_err().to_string();
        assert!(
            refused.contains("checksum mismatch for draft weights"),
            "{refused}"
        );
        // Nothing was written.
        let meta: Value =
            serde_json::from_slice(&std::fs::read(dir.join("draft.json")).unwrap()).unwrap();
        assert_eq!(meta["format"], 1);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
