//! Options that name one of a few choices (`backend`, `draftBackend`, `size`).

use crate::error::{Result, WasmError};

/// The choice named `given` (`default` when absent) among `choices`; an unknown name is
/// [`WasmError::InvalidOption`] naming `option` and listing the choices.
pub(crate) fn one_of<T: Copy>(
    option: &str,
    given: Option<&str>,
    default: T,
    choices: &[(&str, T)],
) -> Result<T> {
    let Some(given) = given else {
        return Ok(default);
    };
    if let Some(&(_, value)) = choices.iter().find(|(name, _)| *name == given) {
        return Ok(value);
    }
    let names: Vec<String> = choices
        .iter()
        .map(|(name, _)| format!("{name:?}"))
        .collect();
    let list = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    };
    Err(WasmError::option_field(
        option,
        format!("unknown {option} {given:?}; use {list}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::one_of;

    #[test]
    fn names_pick_their_choice_absence_the_default_and_others_a_listed_error() {
        let choices = [("auto", 0), ("webgpu", 1), ("cpu", 2)];
        assert_eq!(one_of("backend", Some("cpu"), 0, &choices).unwrap(), 2);
        assert_eq!(one_of("backend", None, 0, &choices).unwrap(), 0);
        let err = one_of("backend", Some("metal"), 0, &choices).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"unknown backend "metal"; use "auto", "webgpu" or "cpu""#
        );
        let err = one_of("size", Some("big"), 0, &[("test", 0), ("full", 1)]).unwrap_err();
        assert!(
            err.to_string()
                .ends_with(r#"unknown size "big"; use "test" or "full""#)
        );
    }
}
