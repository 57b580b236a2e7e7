//! References to things a reader of the repository does not have: the folder beside the
//! checkout that the project's notes once lived in, a work log ("the ninth session"), or
//! the number of an issue on a tracker readers cannot see. A public project's issue
//! ("vLLM issue 9834") is fine: readers can look it up.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::Problem;

/// Files that may name these patterns: the lockfile (package names) and this checker.
const EXEMPT_PREFIXES: &[&str] = &["Cargo.lock", "tools/docs-check/"];

/// Projects whose public trackers an issue number may refer to (lower case).
const PUBLIC_TRACKERS: &[&str] = &[
    "vllm",
    "transformers",
    "transformers.js",
    "web-llm",
    "webllm",
    "burn",
    "wasm-bindgen",
    "trunk",
    "cubecl",
    "wgpu",
    "rust",
    "chromium",
    "binaryen",
];

struct Rule {
    pattern: Regex,
    why: &'static str,
}

// The patterns are spelt so that this file does not match them itself.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |pattern: &str, why| Rule {
        pattern: Regex::new(pattern).expect("regex"),
        why,
    };
    vec![
        rule(
            r"\.\./shared\b|\bshared/(?:DESIGN|STYLE|TOOLCHAIN)\.md|\bshared/seeds\b",
            "names a folder outside the repository",
        ),
        rule(
            r"(?i)\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|\d+(?:st|nd|rd|th)|this|previous|last|next|earlier|later|same)[\s-]+sessions?\b",
            "cites a work log (a session) readers do not have",
        ),
        rule(
            r"(?i)(?P<before>[\w.-]+\s+)?\b(?:issue|task|ticket)\s+#?\d+",
            "cites an issue number readers cannot look up (name the public project, or cite docs/ or a commit)",
        ),
    ]
});

/// The problems in one tracked text file.
#[must_use]
pub fn check_text(file: &Path, text: &str) -> Vec<Problem> {
    let name = file.to_string_lossy();
    if EXEMPT_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return Vec::new();
    }
    let mut problems = Vec::new();
    for (index, line) in text.lines().enumerate() {
        for rule in RULES.iter() {
            for cap in rule.pattern.captures_iter(line) {
                let public = cap.name("before").is_some_and(|before| {
                    let project = before.as_str().trim().to_lowercase();
                    PUBLIC_TRACKERS.contains(&project.as_str())
                });
                if public {
                    continue;
                }
                problems.push(Problem {
                    file: file.to_path_buf(),
                    line: Some(index + 1),
                    message: format!("`{}` {}", cap[0].trim(), rule.why),
                });
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(text: &str) -> usize {
        check_text(Path::new("docs/x.md"), text).len()
    }

    #[test]
    fn a_sibling_folder_is_refused() {
        assert_eq!(count(&["See ", "..", "/shared/", "DESIGN.md"].concat()), 1);
        assert_eq!(count(&["shared/", "TOOLCHAIN.md has it"].concat()), 1);
    }

    #[test]
    fn work_log_sessions_are_refused() {
        assert_eq!(count(&["measured in the ninth ", "session"].concat()), 1);
        assert_eq!(count(&["as this ", "session found"].concat()), 1);
        assert_eq!(count(&["the 12th ", "session"].concat()), 1);
    }

    #[test]
    fn private_issue_numbers_are_refused_and_public_ones_kept() {
        assert_eq!(count(&["fixed for ", "issue 26"].concat()), 1);
        assert_eq!(count(&["see ", "task #4"].concat()), 1);
        assert_eq!(
            count(&["vLLM ", "issue 9834 and transformers ", "issue 32867"].concat()),
            0
        );
    }

    #[test]
    fn ordinary_words_pass() {
        assert_eq!(
            count("training wall time over all sessions; an issue with shapes"),
            0
        );
    }

    #[test]
    fn the_lockfile_and_this_checker_are_exempt() {
        let text = ["..", "/shared"].concat();
        assert!(check_text(Path::new("Cargo.lock"), &text).is_empty());
        assert!(check_text(Path::new("tools/docs-check/src/outside.rs"), &text).is_empty());
    }
}
