//! Option values as a caller passes them, before their types are checked: what a JSON
//! document or a JavaScript object can hold. Each surface turns its input into a
//! [`Raw`] object (the bindings from a JavaScript value, native callers through serde),
//! and [`take`](FromRaw::take) checks each field's type with one message for every
//! surface.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::error::OptionError;
use super::number::show_number;

/// A value as given.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    /// JSON `null`, or JavaScript `null`/`undefined`: "not given".
    Null,
    /// A boolean.
    Bool(bool),
    /// A number (NaN and ±∞ kept, so that the range checks can name them).
    Number(f64),
    /// A string.
    String(String),
    /// An array (or a typed array).
    Array(Vec<Raw>),
    /// An object, its entries in order.
    Object(Vec<(String, Raw)>),
    /// A BigInt, by its decimal digits (a message quotes it as given: `9007199254740993n`,
    /// which no number holds).
    BigInt(String),
    /// Bytes: a `Uint8Array` or an `ArrayBuffer` where an option takes a file (the
    /// bindings' load options build it; no JSON document gives one).
    Bytes(Vec<u8>),
    /// A value with no JSON counterpart, described for messages ("a function").
    Other(&'static str),
}

impl Raw {
    /// How a message quotes the value: its type and, for scalars, itself.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Null => "null".into(),
            Self::Bool(b) => format!("the boolean {b}"),
            Self::Number(x) => format!("the number {}", show_number(*x)),
            Self::String(s) => {
                let shown: String = s.chars().take(40).collect();
                format!("the string {shown:?}")
            }
            Self::Array(_) => "an array".into(),
            Self::Object(_) => "an object".into(),
            Self::BigInt(digits) => {
                let shown: String = digits.chars().take(40).collect();
                let cut = if shown.len() < digits.len() {
                    "…"
                } else {
                    ""
                };
                format!("the BigInt {shown}{cut}n")
            }
            Self::Bytes(bytes) => format!("{} bytes", bytes.len()),
            Self::Other(what) => (*what).into(),
        }
    }
}

/// The entries of an options object; anything else is refused with `example`, what the
/// object should look like (`"an object such as { prompt }"`), as the field `options`.
///
/// # Errors
/// [`OptionError`] about `options` when `raw` is not an object.
pub fn object_entries(raw: Raw, example: &str) -> Result<Vec<(String, Raw)>, OptionError> {
    match raw {
        Raw::Object(entries) => Ok(entries),
        other => Err(OptionError::invalid("options", example, other.describe())),
    }
}

/// A type an option's value can have, read from a [`Raw`] value.
pub trait FromRaw: Sized {
    /// The type as a message names it ("a number").
    const EXPECTED: &'static str;

    /// The value, or `None` when `raw` has another type.
    fn from_raw(raw: Raw) -> Option<Self>;

    /// The value of option `field`: `None` for null, an error naming the field for a
    /// value of another type.
    ///
    /// # Errors
    /// [`OptionError`] with [`Self::EXPECTED`] and a description of `raw`.
    fn take(field: &str, raw: Raw) -> Result<Option<Self>, OptionError> {
        if raw == Raw::Null {
            return Ok(None);
        }
        let described = raw.describe();
        Self::from_raw(raw)
            .map(Some)
            .ok_or_else(|| OptionError::invalid(field, Self::EXPECTED, described))
    }
}

impl FromRaw for f64 {
    const EXPECTED: &'static str = "a number";
    fn from_raw(raw: Raw) -> Option<Self> {
        match raw {
            Raw::Number(x) => Some(x),
            _ => None,
        }
    }
}

impl FromRaw for bool {
    const EXPECTED: &'static str = "true or false";
    fn from_raw(raw: Raw) -> Option<Self> {
        match raw {
            Raw::Bool(b) => Some(b),
            _ => None,
        }
    }
}

impl FromRaw for String {
    const EXPECTED: &'static str = "a string";
    fn from_raw(raw: Raw) -> Option<Self> {
        match raw {
            Raw::String(s) => Some(s),
            _ => None,
        }
    }
}

impl FromRaw for Vec<u8> {
    const EXPECTED: &'static str = "a Uint8Array or an ArrayBuffer";
    fn from_raw(raw: Raw) -> Option<Self> {
        match raw {
            Raw::Bytes(bytes) => Some(bytes),
            _ => None,
        }
    }
}

/// The items of an array option, each checked: an error names the item (`tree[2]`).
///
/// # Errors
/// [`OptionError`] naming the field, or the first item of the wrong type.
pub fn take_list<T: FromRaw>(
    field: &str,
    raw: Raw,
    expected: &str,
) -> Result<Option<Vec<T>>, OptionError> {
    let items = match raw {
        Raw::Null => return Ok(None),
        Raw::Array(items) => items,
        other => return Err(OptionError::invalid(field, expected, other.describe())),
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let described = item.describe();
            T::from_raw(item).ok_or_else(|| {
                OptionError::invalid(format!("{field}[{i}]"), T::EXPECTED, described)
            })
        })
        .collect::<Result<Vec<T>, _>>()
        .map(Some)
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        Raw::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }
    // Integers past 2⁵³ round to the nearest number, as in JavaScript.
    #[allow(clippy::cast_precision_loss)]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Number(v as f64))
    }
    #[allow(clippy::cast_precision_loss)]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::Number(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Number(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Raw>()? {
            entries.push((key, value));
        }
        Ok(Raw::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_as_given() {
        let gamma = |raw: Raw| f64::take("gamma", raw).unwrap_err().got;
        assert_eq!(
            gamma(Raw::BigInt("9007199254740993".into())),
            "the BigInt 9007199254740993n"
        );
        assert_eq!(
            gamma(Raw::BigInt("1".repeat(50))),
            format!("the BigInt {}…n", "1".repeat(40))
        );
        assert_eq!(gamma(Raw::String("4".into())), "the string \"4\"");
        assert_eq!(gamma(Raw::Other("a symbol")), "a symbol");
        let seed = FromRaw::take("seed", Raw::Number(f64::INFINITY)).map(|s: Option<f64>| s);
        assert_eq!(seed, Ok(Some(f64::INFINITY)));
    }
}
