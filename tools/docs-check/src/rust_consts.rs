//! The numeric constants of the crates, read from their one Rust definition: every
//! `const NAME: T = EXPR;` under `crates/*/src/` whose `EXPR` is arithmetic over literals
//! (`64`, `1_000_000`, `1e6`, `0.09`, `1 << 20`, `(1 << 53) - 1`, `false`) or is another
//! such constant by name (`MAX_RETARGET_PROBS = MAX_TOP_K`). The prose checks
//! ([`crate::numbers`]) compare the numbers the docs quote with these.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

/// A constant's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A number (integers up to 2⁵³ are exact).
    Number(f64),
    /// A boolean.
    Bool(bool),
}

impl Value {
    /// Whether `other` is this value (numbers within a relative 1e-12).
    #[must_use]
    pub fn same(self, other: Self) -> bool {
        match (self, other) {
            (Self::Number(a), Self::Number(b)) => (a - b).abs() <= 1e-12 * a.abs().max(b.abs()),
            (Self::Bool(a), Self::Bool(b)) => a == b,
            _ => false,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// Where a constant is defined and what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// The file, relative to the repository root.
    pub file: PathBuf,
    /// Its value, or `None` when the expression is not arithmetic over literals.
    pub value: Option<Value>,
    /// The constant it names, when its expression is another constant's name.
    pub alias: Option<String>,
}

/// The constants of the crates by name (a name defined twice keeps every definition).
#[derive(Debug, Default)]
pub struct Constants {
    by_name: HashMap<String, Vec<Definition>>,
}

static CONST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?const\s+([A-Z][A-Z0-9_]*)\s*:[^=;]+=\s*([^;]+);")
        .expect("regex")
});

impl Constants {
    /// The constants of the tracked Rust sources under `crates/*/src/` among `files`.
    #[must_use]
    pub fn read(root: &Path, files: &[PathBuf]) -> Self {
        let mut constants = Self::default();
        for file in files {
            let in_src = file.starts_with("crates")
                && file
                    .components()
                    .nth(2)
                    .is_some_and(|c| c.as_os_str() == "src");
            if !in_src || file.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(root.join(file)) {
                constants.add_source(file, &text);
            }
        }
        constants
    }

    /// Adds the constants defined in one Rust source.
    pub fn add_source(&mut self, file: &Path, text: &str) {
        for cap in CONST.captures_iter(text) {
            self.by_name
                .entry(cap[1].to_string())
                .or_default()
                .push(Definition {
                    file: file.to_path_buf(),
                    value: evaluate(&cap[2]),
                    alias: alias(&cap[2]),
                });
        }
    }

    /// The value of `name`: `Err` says why there is none (not defined, defined twice with
    /// different values, or not a literal expression).
    ///
    /// # Errors
    /// As above, in words for a report.
    pub fn value(&self, name: &str) -> Result<Value, String> {
        self.value_within(name, 8)
    }

    /// [`Self::value`], following at most `hops` names from one constant to another.
    fn value_within(&self, name: &str, hops: usize) -> Result<Value, String> {
        let Some(defs) = self.by_name.get(name) else {
            return Err(format!("no crate defines `{name}`"));
        };
        if let (None, Some(other), [_]) = (defs[0].value, &defs[0].alias, defs.as_slice()) {
            return if hops == 0 {
                Err(format!("`{name}` names constants in a loop"))
            } else {
                self.value_within(other, hops - 1)
            };
        }
        let first = defs[0].value.ok_or_else(|| {
            format!(
                "`{name}` ({}) is not a literal expression",
                defs[0].file.display()
            )
        })?;
        if defs.iter().any(|d| d.value.is_none_or(|v| !v.same(first))) {
            return Err(format!(
                "`{name}` is defined more than once, with different values"
            ));
        }
        Ok(first)
    }
}

/// The constant an expression names, when it is one bare constant name.
fn alias(expr: &str) -> Option<String> {
    let expr = expr.trim();
    let mut chars = expr.chars();
    let named = chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    named.then(|| expr.to_owned())
}

/// The value of a constant expression over literals, or `None`.
#[must_use]
pub fn evaluate(expr: &str) -> Option<Value> {
    match expr.trim() {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    let tokens = lex(expr)?;
    let mut parser = Parser { tokens, at: 0 };
    let value = parser.shift()?;
    (parser.at == parser.tokens.len()).then_some(Value::Number(value))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    Num(f64),
    Op(&'static str),
}

fn lex(expr: &str) -> Option<Vec<Tok>> {
    static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:0x[0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][+-]?[0-9]+)?)(?:_?(?:u8|u16|u32|u64|u128|usize|i32|i64|f32|f64))?")
            .expect("regex")
    });
    let mut tokens = Vec::new();
    let mut rest = expr.trim();
    while !rest.is_empty() {
        if let Some(m) = NUMBER.find(rest) {
            let text: String = m.as_str().chars().filter(|&c| c != '_').collect();
            let digits = strip_suffix_type(&text);
            let value = match digits.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok()? as f64,
                None => digits.parse::<f64>().ok()?,
            };
            tokens.push(Tok::Num(value));
            rest = &rest[m.end()..];
        } else {
            let op = ["<<", "(", ")", "+", "-", "*", "/"]
                .into_iter()
                .find(|op| rest.starts_with(op))?;
            tokens.push(Tok::Op(op));
            rest = &rest[op.len()..];
        }
        rest = rest.trim_start();
    }
    Some(tokens)
}

/// `1024usize` → `1024`, `1.0f64` → `1.0` (the suffix after the digits).
fn strip_suffix_type(text: &str) -> &str {
    for suffix in [
        "u128", "usize", "u64", "u32", "u16", "u8", "i64", "i32", "f64", "f32",
    ] {
        if let Some(digits) = text.strip_suffix(suffix) {
            return digits;
        }
    }
    text
}

struct Parser {
    tokens: Vec<Tok>,
    at: usize,
}

impl Parser {
    fn eat(&mut self, op: &str) -> bool {
        let hit = matches!(self.tokens.get(self.at), Some(Tok::Op(o)) if *o == op);
        self.at += usize::from(hit);
        hit
    }

    fn shift(&mut self) -> Option<f64> {
        let mut value = self.sum()?;
        while self.eat("<<") {
            let by = self.sum()?;
            value *= 2f64.powf(by);
        }
        Some(value)
    }

    fn sum(&mut self) -> Option<f64> {
        let mut value = self.product()?;
        loop {
            if self.eat("+") {
                value += self.product()?;
            } else if self.eat("-") {
                value -= self.product()?;
            } else {
                return Some(value);
            }
        }
    }

    fn product(&mut self) -> Option<f64> {
        let mut value = self.unary()?;
        loop {
            if self.eat("*") {
                value *= self.unary()?;
            } else if self.eat("/") {
                value /= self.unary()?;
            } else {
                return Some(value);
            }
        }
    }

    fn unary(&mut self) -> Option<f64> {
        if self.eat("-") {
            return self.unary().map(|v| -v);
        }
        if self.eat("(") {
            let value = self.shift()?;
            return self.eat(")").then_some(value);
        }
        match self.tokens.get(self.at) {
            Some(&Tok::Num(n)) => {
                self.at += 1;
                Some(n)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(expr: &str) -> Option<f64> {
        match evaluate(expr) {
            Some(Value::Number(n)) => Some(n),
            _ => None,
        }
    }

    #[test]
    fn literal_arithmetic_evaluates() {
        assert_eq!(number("64"), Some(64.0));
        assert_eq!(number("1_000_000"), Some(1e6));
        assert_eq!(number("1e6"), Some(1e6));
        assert_eq!(number("0.09"), Some(0.09));
        assert_eq!(number("1 << 20"), Some(1_048_576.0));
        assert_eq!(number("64 << 20"), Some(67_108_864.0));
        assert_eq!(number("(1 << 53) - 1"), Some(9_007_199_254_740_991.0));
        assert_eq!(number("4 * 1024 + 2"), Some(4098.0));
        assert_eq!(number("1024usize"), Some(1024.0));
        assert_eq!(evaluate("false"), Some(Value::Bool(false)));
    }

    #[test]
    fn other_expressions_have_no_value() {
        for expr in [
            "u16::MAX",
            "TILE + 3",
            "include_bytes!(\"x\")",
            "[1, 2]",
            "(1 << 3",
            "1 +",
        ] {
            assert_eq!(evaluate(expr), None, "{expr}");
        }
    }

    #[test]
    fn lookups_report_why_a_value_is_missing() {
        let mut constants = Constants::default();
        constants.add_source(
            Path::new("a.rs"),
            "pub const MAX_A: usize = 64;\nconst B: u64 = u64::MAX;\npub(crate) const C: f64 = 1.0;\n",
        );
        constants.add_source(Path::new("b.rs"), "const C: f64 = 2.0;\n");
        assert_eq!(constants.value("MAX_A"), Ok(Value::Number(64.0)));
        assert!(constants.value("B").unwrap_err().contains("not a literal"));
        assert!(constants.value("C").unwrap_err().contains("more than once"));
        assert!(constants.value("D").unwrap_err().contains("no crate"));
    }

    #[test]
    fn a_constant_named_by_another_has_its_value() {
        let mut constants = Constants::default();
        constants.add_source(
            Path::new("a.rs"),
            "pub const MAX_TOP_K: usize = 1 << 20;
pub const MAX_PROBS: usize = MAX_TOP_K;
             const LOOP_A: usize = LOOP_B;
const LOOP_B: usize = LOOP_A;
const GONE: u8 = NONE;
",
        );
        assert_eq!(constants.value("MAX_PROBS"), Ok(Value::Number(1_048_576.0)));
        assert!(constants.value("LOOP_A").unwrap_err().contains("in a loop"));
        assert!(constants.value("GONE").unwrap_err().contains("no crate"));
    }
}
