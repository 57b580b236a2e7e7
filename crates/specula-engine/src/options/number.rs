//! Numbers in option values: printed as JavaScript prints them (so a message quotes what
//! the caller typed on every surface) and checked against a range.

use super::error::OptionError;

/// A number as JavaScript's `String(x)` prints it (`NaN`, `Infinity`, `3`, `0.5`,
/// `5e-324`, `1e+21`; `-0` as `0`).
#[must_use]
pub fn show_number(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        String::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else if x == 0.0 {
        "0".into()
    } else if x.abs() >= 1e21 || x.abs() < 1e-6 {
        // Where JavaScript switches to exponents, with its "e+" for positive ones.
        let e = format!("{x:e}");
        if e.contains("e-") {
            e
        } else {
            e.replacen('e', "e+", 1)
        }
    } else {
        format!("{x}")
    }
}

/// A whole number in `min..=max`; `what` follows the range in the message (e.g.
/// `" (draft tokens per round)"`).
///
/// # Errors
/// [`OptionError`] naming `field` and quoting `value`.
pub fn whole(field: &str, value: f64, min: u64, max: u64, what: &str) -> Result<u64, OptionError> {
    // Both bounds are at most 2⁵³ here, so the comparisons in f64 are exact.
    if value.is_finite() && value.fract() == 0.0 && value >= min as f64 && value <= max as f64 {
        // In range and integral, so the cast is exact.
        Ok(value as u64)
    } else {
        Err(OptionError::invalid(
            field,
            format!("a whole number from {min} to {max}{what}"),
            show_number(value),
        ))
    }
}

/// [`whole`] as a `usize`.
///
/// # Errors
/// As [`whole`].
pub fn whole_usize(
    field: &str,
    value: f64,
    min: usize,
    max: usize,
    what: &str,
) -> Result<usize, OptionError> {
    // usize is 32 or 64 bits on every target built here, and the limits fit 32.
    whole(field, value, min as u64, max as u64, what).map(|v| v as usize)
}

/// The range of a real-valued option, defined once in [`limits`](super::limits): the
/// engine checks values against it here, and the CLI checks the decimal text as typed
/// against it too, so that text rounding onto a bound (`1000000.0000000001`) is refused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RealRange {
    /// The lower bound.
    pub min: f64,
    /// Whether the lower bound itself is excluded (top-p's `(0, 1]`).
    pub min_excluded: bool,
    /// The upper bound (infinity: none, though the value must be finite).
    pub max: f64,
}

impl RealRange {
    /// `[min, max]`.
    #[must_use]
    pub const fn closed(min: f64, max: f64) -> Self {
        Self {
            min,
            min_excluded: false,
            max,
        }
    }

    /// `(min, max]`.
    #[must_use]
    pub const fn above(min: f64, max: f64) -> Self {
        Self {
            min,
            min_excluded: true,
            max,
        }
    }

    /// Whether `value` is finite and in the range.
    #[must_use]
    pub fn contains(self, value: f64) -> bool {
        let above_min = if self.min_excluded {
            value > self.min
        } else {
            value >= self.min
        };
        value.is_finite() && above_min && value <= self.max
    }

    /// `value` if [`contains`](Self::contains) (`-0` read as 0).
    ///
    /// # Errors
    /// [`OptionError`] naming `field`; `expected` is the sentence it shows.
    pub fn check(self, field: &str, value: f64, expected: &str) -> Result<f64, OptionError> {
        if self.contains(value) {
            Ok(value + 0.0)
        } else {
            Err(OptionError::invalid(field, expected, show_number(value)))
        }
    }
}

/// A finite number in `[min, max]` (`-0` read as 0).
///
/// # Errors
/// [`OptionError`] naming `field`; `expected` is the sentence it shows.
pub fn finite(
    field: &str,
    value: f64,
    min: f64,
    max: f64,
    expected: &str,
) -> Result<f64, OptionError> {
    RealRange::closed(min, max).check(field, value, expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_shown_as_javascript_prints_them() {
        let cases = [
            (-0.0, "0"),
            (f64::from_bits(1), "5e-324"),
            (-5e-324, "-5e-324"),
            (1.5e-7, "1.5e-7"),
            (0.000_001, "0.000001"),
            (1e21, "1e+21"),
            (123.5, "123.5"),
            (3.0, "3"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ];
        for (x, shown) in cases {
            assert_eq!(show_number(x), shown, "{x:e}");
        }
    }

    #[test]
    fn whole_numbers_keep_to_their_range() {
        assert_eq!(whole("n", 3.0, 1, 5, ""), Ok(3));
        for bad in [0.0, 6.0, 2.5, f64::NAN, f64::INFINITY, -1.0] {
            let e = whole("n", bad, 1, 5, " (things)").unwrap_err();
            assert_eq!(e.field, "n");
            assert_eq!(e.expected, "a whole number from 1 to 5 (things)");
        }
        assert_eq!(
            finite("t", -0.0, 0.0, 1.0, "x").map(f64::to_bits),
            Ok(0.0f64.to_bits())
        );
        let top_p = RealRange::above(0.0, 1.0);
        assert!(top_p.contains(1.0) && top_p.contains(5e-324));
        assert!(!top_p.contains(0.0) && !top_p.contains(f64::NAN));
        let unbounded = RealRange::closed(0.0, f64::INFINITY);
        assert!(unbounded.contains(f64::MAX) && !unbounded.contains(f64::INFINITY));
    }
}
