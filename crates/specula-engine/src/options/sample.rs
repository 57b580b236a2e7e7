//! The lab's settings beside the decoding options (npm `sample(options, settings)`, the
//! CLI's `sample`), defined once: [`SampleSettings`] holds them as given and
//! [`SampleSettings::resolve`] checks them against [`limits`](super::limits). `signal`
//! and `onProgress` are the package's on the calling side (an `AbortSignal` and a
//! function never reach the module); they are named here so that every surface lists the
//! same settings.

use super::limits::{DEFAULT_LAB_RUNS, MAX_LAB_RUNS};
use super::{FromRaw, OptionError, Raw, object_entries, show_number, whole};

/// The names of the settings, as JavaScript spells them.
pub const SAMPLE_SETTING_NAMES: [&str; 4] = ["runs", "position", "signal", "onProgress"];

/// The settings the package keeps on the calling side (it never sends them to the module).
pub const CALLER_SIDE_SAMPLE_SETTINGS: [&str; 2] = ["signal", "onProgress"];

/// The lab's settings as given (types checked, ranges not yet).
// No Serialize: `signal` and `onProgress` exist only for the declaration.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename_all = "camelCase"))]
pub struct SampleSettings {
    /// How many runs (default [`DEFAULT_LAB_RUNS`], at most [`MAX_LAB_RUNS`]).
    #[cfg_attr(feature = "ts", ts(optional))]
    pub runs: Option<f64>,
    /// The generated token counted: 1 (default) or 2.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub position: Option<f64>,
    /// Stops the runs, like `abort()` (the package's, on the calling side).
    #[cfg_attr(feature = "ts", ts(optional, type = "AbortSignal"))]
    pub signal: Option<()>,
    /// Called with the running result as the counts grow, about ten times a second (the
    /// package's, on the calling side).
    #[cfg_attr(feature = "ts", ts(optional, type = "(result: SampleResult) => void"))]
    pub on_progress: Option<()>,
}

/// The lab's settings, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRun {
    /// The generated position counted, 1 or 2.
    pub position: usize,
    /// How many runs, 1 to [`MAX_LAB_RUNS`].
    pub runs: u64,
}

impl SampleSettings {
    /// Reads the settings the module is sent: every name one of [`SAMPLE_SETTING_NAMES`]
    /// and every value a number (null means "not given").
    ///
    /// # Errors
    /// [`OptionError`] naming the first unknown setting, a value of a wrong type, or a
    /// setting of the calling side ([`CALLER_SIDE_SAMPLE_SETTINGS`]) that reached it.
    pub fn from_raw(raw: Raw) -> Result<Self, OptionError> {
        let mut o = Self::default();
        for (key, value) in object_entries(raw, "an object such as { runs, position }")? {
            match key.as_str() {
                "runs" => o.runs = f64::take(&key, value)?,
                "position" => o.position = f64::take(&key, value)?,
                _ if CALLER_SIDE_SAMPLE_SETTINGS.contains(&key.as_str()) => {
                    return Err(OptionError::invalid(
                        key,
                        "kept by the calling side (the npm package), never sent to the module",
                        value.describe(),
                    ));
                }
                _ => return Err(OptionError::unknown(key, &SAMPLE_SETTING_NAMES)),
            }
        }
        Ok(o)
    }

    /// Checks the settings, filling in the defaults.
    ///
    /// # Errors
    /// [`OptionError`] naming `position` (not 1 or 2) or `runs` (not a whole number from
    /// 1 to [`MAX_LAB_RUNS`]).
    pub fn resolve(&self) -> Result<SampleRun, OptionError> {
        let position = check_position(self.position.unwrap_or(1.0))?;
        let runs = match self.runs {
            Some(r) => whole("runs", r, 1, MAX_LAB_RUNS, "")?,
            None => DEFAULT_LAB_RUNS,
        };
        Ok(SampleRun { position, runs })
    }
}

/// Checks `position` (1 or 2).
///
/// # Errors
/// [`OptionError`] for `position`.
pub fn check_position(position: f64) -> Result<usize, OptionError> {
    if position == 1.0 || position == 2.0 {
        Ok(position as usize)
    } else {
        Err(position_error(show_number(position)))
    }
}

/// The refusal of a position that is not 1 or 2, quoting `got`.
#[must_use]
pub fn position_error(got: String) -> OptionError {
    OptionError::invalid(
        "position",
        "1 or 2 (the first or second generated token)",
        got,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(json: &str) -> Result<SampleRun, OptionError> {
        SampleSettings::from_raw(serde_json::from_str(json).expect("JSON"))?.resolve()
    }

    #[test]
    fn the_settings_are_read_and_checked_here() {
        assert_eq!(
            settings("{}"),
            Ok(SampleRun {
                position: 1,
                runs: DEFAULT_LAB_RUNS
            })
        );
        assert_eq!(
            settings(r#"{ "runs": 5, "position": 2 }"#),
            Ok(SampleRun {
                position: 2,
                runs: 5
            })
        );
        for (json, field) in [
            (r#"{ "runs": 0 }"#, "runs"),
            (r#"{ "runs": 1000001 }"#, "runs"),
            (r#"{ "runs": "5" }"#, "runs"),
            (r#"{ "position": 3 }"#, "position"),
            (r#"{ "runz": 3 }"#, "runz"),
            (r#"{ "signal": {} }"#, "signal"),
            ("7", "options"),
        ] {
            assert_eq!(settings(json).unwrap_err().field, field, "{json}");
        }
        let unknown = settings(r#"{ "runz": 3 }"#).unwrap_err();
        assert!(
            unknown
                .to_string()
                .ends_with("runs, position, signal, onProgress")
        );
    }
}
