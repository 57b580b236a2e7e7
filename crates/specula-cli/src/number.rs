//! Number flags as typed: the text the user gave beside the `f64` it reads as, so that a
//! refusal quotes the text (`--seed 18446744073709551616`, not the `1.8446744073709552e19`
//! it rounds to; `--temperature 1e309`, not `Infinity`) and a whole-number flag takes
//! only a whole number, not a decimal that rounds to one (`--gamma 4.0000000000000001`),
//! and a real-valued flag is held to its range as typed, not as rounded
//! (`--temperature 1000000.00000000001` is past 1e6 though it reads as 1e6). The ranges
//! stay the engine's (`specula_engine::options`), as for the npm package.

use std::cmp::Ordering;

use specula_engine::options::{OptionError, Problem, RealRange, show_number};

/// A number flag's value: the text as typed and the `f64` it reads as.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed {
    /// The text as typed.
    pub text: String,
    /// What Rust's `f64` parser reads it as (rounded, `1e309` as infinity).
    pub value: f64,
}

/// Clap's value parser for a number flag: what `f64` parses, kept with its text.
/// Surrounding white space is ignored, as in every name and number the CLI reads (text
/// such as `--prompt` is taken as typed).
///
/// # Errors
/// The parser's reason, for clap's message (which quotes the text).
pub fn typed(raw: &str) -> Result<Typed, String> {
    let text = raw.trim();
    text.parse::<f64>()
        .map(|value| Typed {
            text: text.to_owned(),
            value,
        })
        .map_err(|e| e.to_string())
}

impl Typed {
    /// The value for an option that takes a whole number: the number itself, or NaN
    /// (which the engine refuses as not whole, and the message quotes the text) for a
    /// decimal that is not exactly whole but reads as a whole `f64`
    /// (`4.0000000000000001`).
    #[must_use]
    pub fn whole(&self) -> f64 {
        let integral = self.value.is_finite() && self.value.fract() == 0.0;
        if integral && exact_whole(&self.text) == Some(false) {
            f64::NAN
        } else {
            self.value
        }
    }

    /// The value for a real-valued option with `range`: the number itself, or NaN (which
    /// the engine refuses, and the message quotes the text) for a decimal outside the
    /// range that reads as a number inside it (`1000000.00000000001` as 1e6, `-1e-400`
    /// as -0).
    #[must_use]
    pub fn real(&self, range: RealRange) -> f64 {
        if range.contains(self.value) && !within(&self.text, range) {
            f64::NAN
        } else {
            self.value
        }
    }
}

/// The range of a `plan --target`/`--draft` entry as typed: at least 0 (the core's
/// distribution check refuses the rest: not finite, or below 0 as read).
pub const LIST_ENTRY_RANGE: RealRange = RealRange::closed(0.0, f64::INFINITY);

/// The number a list entry's text is handed to the engine as: what `f64` parses, or NaN
/// (which the engine refuses, and the message quotes the text) for a decimal below 0
/// that reads as -0 (`-1e-400`), as [`Typed::real`] does for a flag; `None` for text
/// that is no number.
#[must_use]
pub fn list_entry(text: &str) -> Option<f64> {
    let value = text.parse::<f64>().ok()?;
    Some(
        if LIST_ENTRY_RANGE.contains(value) && !within(text, LIST_ENTRY_RANGE) {
            f64::NAN
        } else {
            value
        },
    )
}

/// Whether the decimal `text` lies in `range`, compared exactly with each bound's
/// shortest decimal (the number the messages and docs/limits.md quote); true for text
/// that is no decimal (`inf`), which the engine judges by its value.
pub fn within(text: &str, range: RealRange) -> bool {
    let Some(x) = Decimal::parse(text) else {
        return true;
    };
    let bound = |b: f64| Decimal::parse(&format!("{b:e}"));
    let above = bound(range.min).is_none_or(|min| match x.cmp(&min) {
        Ordering::Greater => true,
        Ordering::Equal => !range.min_excluded,
        Ordering::Less => false,
    });
    above && bound(range.max).is_none_or(|max| x <= max)
}

/// A decimal's exact value: `0.d₁d₂… × 10^point`, negative or not, with no leading or
/// trailing zero digit (no digits at all for zero).
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    point: i64,
}

impl Decimal {
    /// `text` as Rust's `f64` parser reads a decimal (sign, digits with one optional
    /// point, optional exponent); `None` for anything else (`inf`, `NaN`).
    fn parse(text: &str) -> Option<Self> {
        let negative = text.starts_with('-');
        let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(at) => (&unsigned[..at], &unsigned[at + 1..]),
            None => (unsigned, "0"),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if !(digits_only(int) && digits_only(frac)) || int.len() + frac.len() == 0 {
            return None;
        }
        let exponent_digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        if exponent_digits.is_empty() || !digits_only(exponent_digits) {
            return None;
        }
        // An exponent past i64 saturates: the point then lies beyond every digit.
        let exponent = exponent
            .parse::<i64>()
            .unwrap_or(if exponent.starts_with('-') {
                i64::MIN / 2
            } else {
                i64::MAX / 2
            });
        let all: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
        let leading = all.iter().take_while(|&&d| d == b'0').count();
        let digits = all[leading..].to_vec();
        let kept = digits.len() - digits.iter().rev().take_while(|&&d| d == b'0').count();
        let point = (int.len() as i64)
            .saturating_add(exponent)
            .saturating_sub(leading as i64);
        let mut digits = digits;
        digits.truncate(kept);
        Some(if digits.is_empty() {
            Self {
                negative: false,
                digits,
                point: 0,
            }
        } else {
            Self {
                negative,
                digits,
                point,
            }
        })
    }

    /// Whether the value is a whole number.
    fn is_whole(&self) -> bool {
        i64::try_from(self.digits.len()).is_ok_and(|n| n <= self.point) || self.digits.is_empty()
    }

    /// The magnitudes' order.
    fn cmp_magnitude(&self, other: &Self) -> Ordering {
        match (self.digits.is_empty(), other.digits.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            // With no trailing zeros, byte order of the digits is the order of values.
            (false, false) => (self.point, &self.digits).cmp(&(other.point, &other.digits)),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.negative, other.negative) {
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        }
    }
}

/// Whether `text`, a decimal as Rust's `f64` parser reads it, is exactly a whole number;
/// `None` for anything else (`inf`, `NaN`).
fn exact_whole(text: &str) -> Option<bool> {
    Decimal::parse(text).map(|d| d.is_whole())
}

/// What each option was typed as, by the engine's name for it (`topK`, `tree[1]`,
/// `maxTokens`, `target[3]`): an engine refusal that quotes the number it read quotes
/// the text instead.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TypedFields {
    entries: Vec<Entry>,
    lists: Vec<TypedList>,
}

/// A list option's text (`plan --target`), whose entries are looked up only when a
/// refusal names one (a list may hold a million).
#[derive(Debug, Clone, PartialEq)]
pub struct TypedList {
    /// The option (`target`).
    pub field: &'static str,
    /// The list as given, or the contents of its file.
    pub text: String,
}

impl TypedList {
    /// The entries as typed, on the command line and in a file alike: commas separate
    /// entries, and so does white space within what lies between two commas; what lies
    /// between two commas (or before the first, or after the last) with no entry in it
    /// is one empty entry (`""`), which no list accepts (`0.5,,0.5`, `0.5,0.5,`).
    #[must_use]
    pub fn items(&self) -> Vec<&str> {
        let mut items = Vec::new();
        for piece in self.text.split(',') {
            let before = items.len();
            items.extend(piece.split_whitespace());
            if items.len() == before {
                items.push("");
            }
        }
        items
    }
}

/// One option: its field, the text as typed, and the number the engine read, as the
/// engine prints it in a message.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    field: String,
    text: String,
    shown: String,
}

impl TypedFields {
    /// Records `typed` (if given) as the text of `field`; `read` is the number the
    /// engine was given (the value, or [`Typed::whole`]'s).
    pub fn add(&mut self, field: impl Into<String>, typed: Option<&Typed>, read: f64) {
        if let Some(typed) = typed {
            self.entries.push(Entry {
                field: field.into(),
                text: typed.text.clone(),
                shown: show_number(read),
            });
        }
    }

    /// Records a real-valued option with `range`, and gives the number to hand the
    /// engine ([`Typed::real`]).
    pub fn real(&mut self, field: &str, typed: Option<&Typed>, range: RealRange) -> Option<f64> {
        let read = typed.map(|t| t.real(range));
        self.add(field, typed, read.unwrap_or(f64::NAN));
        read
    }

    /// Records a whole-number option, and gives the number to hand the engine
    /// ([`Typed::whole`]).
    pub fn whole(&mut self, field: &str, typed: Option<&Typed>) -> Option<f64> {
        let read = typed.map(Typed::whole);
        self.add(field, typed, read.unwrap_or(f64::NAN));
        read
    }

    /// Records a list option, whose entries a refusal may name (`target[3]`).
    pub fn list(&mut self, list: TypedList) {
        self.lists.push(list);
    }

    /// The entry of a list that `field` (`target[3]`) names, as an [`Entry`].
    fn list_entry(&self, field: &str) -> Option<Entry> {
        let (name, index) = field.strip_suffix(']')?.split_once('[')?;
        let index: usize = index.parse().ok()?;
        let list = self.lists.iter().find(|l| l.field == name)?;
        let text = (*list.items().get(index)?).to_owned();
        let shown = show_number(list_entry(&text)?);
        Some(Entry {
            field: field.to_owned(),
            text,
            shown,
        })
    }

    /// `error` with the number it quotes replaced by the text typed for its option
    /// (the whole `got`, or its start before a comma: `3, which over 4 tokens needs …`).
    #[must_use]
    pub fn quote(&self, mut error: OptionError) -> OptionError {
        if error.problem != Problem::Invalid {
            return error;
        }
        let found = self
            .entries
            .iter()
            .find(|e| e.field == error.field)
            .cloned();
        let Some(entry) = found.or_else(|| self.list_entry(&error.field)) else {
            return error;
        };
        if error.got == entry.shown {
            error.got.clone_from(&entry.text);
        } else if let Some(rest) = error.got.strip_prefix(&format!("{},", entry.shown)) {
            error.got = format!("{},{rest}", entry.text);
        }
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> Typed {
        typed(text).expect("a number")
    }

    #[test]
    fn whole_numbers_are_read_exactly() {
        for text in [
            "4", "+4", "-0", "4.0", "4.", "0.4e1", "400e-2", "1e3", "1E+3",
        ] {
            assert_eq!(exact_whole(text), Some(true), "{text}");
        }
        for text in [
            "4.0000000000000001",
            "0.5",
            ".5",
            "45e-1",
            "1e-400",
            "4.5e0",
        ] {
            assert_eq!(exact_whole(text), Some(false), "{text}");
        }
        for text in ["inf", "-Infinity", "NaN"] {
            assert_eq!(exact_whole(text), None, "{text}");
        }
        assert_eq!(exact_whole("0e-99999999999999999999"), Some(true));
        assert_eq!(exact_whole("1e99999999999999999999"), Some(true));
        assert!(t("4.0000000000000001").whole().is_nan());
        assert_eq!(t("4").whole(), 4.0);
        // Not whole either way: left for the engine to refuse, quoting the text.
        assert_eq!(t("4.5").whole(), 4.5);
        assert!(typed("2^64").is_err());
        assert_eq!(
            typed(" 4\n").map(|t| (t.text, t.value)),
            Ok(("4".to_owned(), 4.0))
        );
    }

    #[test]
    fn reals_are_held_to_their_range_as_typed() {
        let closed = RealRange::closed(0.0, 1e6);
        for text in [
            "0",
            "-0",
            "-0.0e-400",
            "1e6",
            "1000000.000",
            "0.001e9",
            "5e-324",
        ] {
            assert!(within(text, closed), "{text}");
            assert_eq!(t(text).real(closed), t(text).value, "{text}");
        }
        for text in [
            "1000000.00000000001",
            "1e6000000000000000000000",
            "-1e-400",
            "-5e-324",
        ] {
            assert!(!within(text, closed), "{text}");
        }
        assert!(t("1000000.00000000001").real(closed).is_nan());
        assert!(t("-1e-400").real(closed).is_nan());
        // Out of range as read too: left for the engine, which quotes the text.
        assert_eq!(t("2e6").real(closed), 2e6);
        let top_p = RealRange::above(0.0, 1.0);
        assert!(within("1", top_p) && within("1e-400", top_p));
        assert!(!within("0.0", top_p) && !within("1.00000000000000001", top_p));
        // No upper bound; and text that is no decimal is judged by its value.
        let unbounded = RealRange::closed(0.0, f64::INFINITY);
        assert!(within("1e400", unbounded) && within("inf", unbounded));
        // A bound that is no short decimal is compared with its shortest decimal.
        let tenth = RealRange::closed(0.0, 0.1);
        assert!(within("0.1", tenth) && !within("0.10000000000000001", tenth));
    }

    #[test]
    fn list_entries_are_split_alike_wherever_they_come_from() {
        let items = |text: &str| {
            let list = TypedList {
                field: "target",
                text: text.into(),
            };
            list.items()
                .into_iter()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert_eq!(items(" 0.5, 0.5 "), ["0.5", "0.5"]);
        assert_eq!(items("0.5 0.25\n0.25\n"), ["0.5", "0.25", "0.25"]);
        assert_eq!(items("0.5,\n0.5\n"), ["0.5", "0.5"]);
        assert_eq!(items("0.5,,0.5"), ["0.5", "", "0.5"]);
        assert_eq!(items("0.5,0.5,\n"), ["0.5", "0.5", ""]);
        assert_eq!(items(",,"), ["", "", ""]);
    }

    #[test]
    fn list_entries_below_zero_as_typed_are_refused_quoting_them() {
        assert!(list_entry("-1e-400").is_some_and(f64::is_nan));
        assert!(list_entry("-0.1e-999").is_some_and(f64::is_nan));
        for (text, value) in [
            ("-0", 0.0),
            ("-0.0e-400", 0.0),
            ("1e-400", 0.0),
            ("0.5", 0.5),
        ] {
            assert_eq!(list_entry(text), Some(value), "{text}");
        }
        // Below 0 as read, or not finite: left for the engine's check, which quotes them.
        assert_eq!(list_entry("-0.1"), Some(-0.1));
        assert_eq!(list_entry("1e400"), Some(f64::INFINITY));
        assert_eq!(list_entry("x"), None);
        let mut typed = TypedFields::default();
        typed.list(TypedList {
            field: "target",
            text: "0.5, -1e-400, 0.5".into(),
        });
        let error = OptionError::invalid("target[1]", "a probability >= 0", "NaN");
        assert_eq!(typed.quote(error).got, "-1e-400");
    }

    #[test]
    fn refusals_quote_the_text_as_typed() {
        let mut fields = TypedFields::default();
        let seed = t("18446744073709551616");
        fields.whole("seed", Some(&seed));
        let temperature = t("1e309");
        fields.real(
            "temperature",
            Some(&temperature),
            RealRange::closed(0.0, 1e6),
        );
        let gamma = t("4.0000000000000001");
        let read = fields.whole("gamma", Some(&gamma));
        assert!(read.is_some_and(f64::is_nan));
        let drafts = t("3.0");
        fields.whole("drafts", Some(&drafts));
        fields.list(TypedList {
            field: "target",
            text: "0.5, 1e309,-0.50".into(),
        });
        fields.list(TypedList {
            field: "draft",
            text: "0.5\n\n-1e-0 2".into(),
        });
        let quoted =
            |field: &str, got: &str| fields.quote(OptionError::invalid(field, "x", got)).got;
        assert_eq!(
            quoted("seed", "18446744073709552000"),
            "18446744073709551616"
        );
        assert_eq!(quoted("temperature", "Infinity"), "1e309");
        assert_eq!(quoted("gamma", "NaN"), "4.0000000000000001");
        assert_eq!(
            quoted("drafts", "3, which needs more"),
            "3.0, which needs more"
        );
        // Another number, or another option, is left alone.
        assert_eq!(quoted("drafts", "30"), "30");
        assert_eq!(quoted("kl", "1"), "1");
        let unused = OptionError::unused("seed", "lookup", "x");
        assert_eq!(fields.quote(unused.clone()), unused);
        // List entries are found when a refusal names one.
        assert_eq!(quoted("target[1]", "Infinity"), "1e309");
        assert_eq!(quoted("target[2]", "-0.5"), "-0.50");
        assert_eq!(quoted("draft[1]", "-1"), "-1e-0");
        assert_eq!(quoted("draft[2]", "2"), "2");
        assert_eq!(quoted("draft[3]", "2"), "2");
    }
}
