//! Shell words, as `sh` splits a command line of the docs: quotes (`'…'`, `"…"`, `$'…'`),
//! backslash escapes and comments are read; variables are not expanded (`"$M"` stays the
//! word `$M`). Operators (`|`, `;`, `&&`, `$(`, `)`, redirections) are tokens of their own, so
//! that a command ends where the shell would end it.

/// One token of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word, its quotes removed.
    Word(String),
    /// An operator: `|`, `||`, `&`, `&&`, `;`, `(`, `)`, `$(`, `<`, `>` or `>>`.
    Op(&'static str),
}

/// The tokens of one command line (continuation lines already joined). A `#` at the start
/// of a word begins a comment to the end of the line; an unterminated quote runs to the end.
#[must_use]
pub fn tokens(line: &str) -> Vec<Token> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    // Whether `word` is a word even when empty (`""` is an empty word).
    let mut in_word = false;
    let mut i = 0;
    let flush = |word: &mut String, in_word: &mut bool, out: &mut Vec<Token>| {
        if *in_word {
            out.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            ' ' | '\t' | '\n' => flush(&mut word, &mut in_word, &mut out),
            '#' if !in_word => break,
            '\\' => {
                if let Some(n) = next {
                    word.push(n);
                    in_word = true;
                    i += 1;
                }
            }
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '$' if next == Some('\'') => {
                in_word = true;
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                        word.push(match chars[i] {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                    } else {
                        word.push(chars[i]);
                    }
                    i += 1;
                }
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && matches!(chars.get(i + 1), Some('"' | '\\' | '$' | '`'))
                    {
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '$' if next == Some('(') => {
                flush(&mut word, &mut in_word, &mut out);
                out.push(Token::Op("$("));
                i += 1;
            }
            '|' | '&' | ';' | '(' | ')' | '<' | '>' => {
                flush(&mut word, &mut in_word, &mut out);
                let op = match (c, next) {
                    ('|', Some('|')) => "||",
                    ('&', Some('&')) => "&&",
                    ('>', Some('>')) => ">>",
                    ('|', _) => "|",
                    ('&', _) => "&",
                    (';', _) => ";",
                    ('(', _) => "(",
                    (')', _) => ")",
                    ('<', _) => "<",
                    _ => ">",
                };
                i += op.len() - 1;
                out.push(Token::Op(op));
            }
            _ => {
                word.push(c);
                in_word = true;
            }
        }
        i += 1;
    }
    flush(&mut word, &mut in_word, &mut out);
    out
}

/// The simple commands of a line: the runs of words between operators.
#[must_use]
pub fn simple_commands(line: &str) -> Vec<Vec<String>> {
    let mut commands = vec![Vec::new()];
    for token in tokens(line) {
        match token {
            Token::Word(w) => commands.last_mut().expect("one command").push(w),
            Token::Op(_) => commands.push(Vec::new()),
        }
    }
    commands.retain(|c| !c.is_empty());
    commands
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        simple_commands(line)
    }

    #[test]
    fn quotes_escapes_and_comments() {
        assert_eq!(
            words(r#"specula generate --prompt "ROMEO:" --stop 'a b' # the comment"#),
            [["specula", "generate", "--prompt", "ROMEO:", "--stop", "a b"]]
        );
        assert_eq!(
            words(r"specula sample --prompt $'ROMEO:\nI' --x a\ b"),
            [["specula", "sample", "--prompt", "ROMEO:\nI", "--x", "a b"]]
        );
        assert_eq!(words(r#"echo "" x"#), [["echo", "", "x"]]);
        assert_eq!(
            words(r#"a "say \"hi\" \$HOME""#),
            [["a", r#"say "hi" $HOME"#]]
        );
    }

    #[test]
    fn operators_end_commands() {
        assert_eq!(
            words("M=$(bash scripts/fetch.sh | tail -n 1)   # cached"),
            [
                vec!["M="],
                vec!["bash", "scripts/fetch.sh"],
                vec!["tail", "-n", "1"]
            ]
        );
        assert_eq!(
            words("a && b; c > out 2>&1 || d"),
            [
                vec!["a"],
                vec!["b"],
                vec!["c"],
                vec!["out", "2"],
                vec!["1"],
                vec!["d"]
            ]
        );
        assert_eq!(
            words("specula generate ... --backend wgpu|cpu"),
            [
                vec!["specula", "generate", "...", "--backend", "wgpu"],
                vec!["cpu"]
            ]
        );
    }
}
