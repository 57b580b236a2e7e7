//! Line limits. BENCHMARKS.md holds today's figures and MODELS.md what the models are and
//! what running them taught; both grew by appending when history was kept in them, so each
//! has a limit: a new figure replaces the one it supersedes, and git keeps the old one. Every
//! other source or document file has the general limit [`FILE_MAX_LINES`]: small files with
//! one purpose. CHANGELOG.md alone is exempt, being a list that grows with every release.

use std::path::Path;

use crate::Problem;

/// The most lines BENCHMARKS.md may have.
pub const BENCHMARKS_MAX_LINES: usize = 250;

/// The most lines MODELS.md may have.
pub const MODELS_MAX_LINES: usize = 300;

/// The most lines of any other tracked source or document file (by [`LIMITED_EXTENSIONS`]).
pub const FILE_MAX_LINES: usize = 600;

/// The extensions of the files [`FILE_MAX_LINES`] applies to: code, scripts, styles, pages
/// and documents (data such as JSON fixtures is not prose to split).
pub const LIMITED_EXTENSIONS: &[&str] = &[
    "rs", "js", "mjs", "ts", "sh", "py", "css", "html", "md", "toml",
];

/// The one file exempt from [`FILE_MAX_LINES`].
pub const UNLIMITED: &str = "CHANGELOG.md";

/// Every document with a limit of its own (path from the repository root) and that limit:
/// the one place the checks read the limits from.
pub const LINE_LIMITS: &[(&str, usize)] = &[
    ("BENCHMARKS.md", BENCHMARKS_MAX_LINES),
    ("MODELS.md", MODELS_MAX_LINES),
];

/// The line limit of `file` (relative to the repository root), if it has one.
#[must_use]
pub fn limit_of(file: &Path) -> Option<usize> {
    if let Some(&(_, limit)) = LINE_LIMITS.iter().find(|(name, _)| Path::new(name) == file) {
        return Some(limit);
    }
    let limited = file
        .extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| LIMITED_EXTENSIONS.contains(&ext));
    (limited && file != Path::new(UNLIMITED)).then_some(FILE_MAX_LINES)
}

/// The problem of `file` when its `text` has more lines than its limit; the reported line is
/// the first one past the limit.
#[must_use]
pub fn check_length(file: &Path, text: &str) -> Option<Problem> {
    let limit = limit_of(file)?;
    let lines = text.lines().count();
    (lines > limit).then(|| Problem {
        file: file.to_path_buf(),
        line: Some(limit + 1),
        message: if limit == FILE_MAX_LINES {
            format!(
                "{lines} lines, over the limit of {limit} for any file: split it by purpose or \
                 cut repetition"
            )
        } else {
            format!(
                "{lines} lines, over its limit of {limit}: cut repetition, narration and \
                 superseded figures (replace a figure, don't append; history is git's)"
            )
        },
    })
}

/// A problem for every limited document that is not among the tracked `files`, so that a
/// renamed document does not slip out of its limit unnoticed.
#[must_use]
pub fn check_present(files: &[impl AsRef<Path>]) -> Vec<Problem> {
    LINE_LIMITS
        .iter()
        .filter(|(name, _)| !files.iter().any(|f| f.as_ref() == Path::new(name)))
        .map(|&(name, limit)| Problem {
            file: name.into(),
            line: None,
            message: format!(
                "has a line limit ({limit}) in tools/docs-check/src/length.rs but is not tracked"
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn the_limits_are_the_named_constants() {
        assert_eq!(
            limit_of(Path::new("BENCHMARKS.md")),
            Some(BENCHMARKS_MAX_LINES)
        );
        assert_eq!(limit_of(Path::new("MODELS.md")), Some(MODELS_MAX_LINES));
        assert_eq!(
            limit_of(Path::new("docs/BENCHMARKS.md")),
            Some(FILE_MAX_LINES)
        );
        assert_eq!(limit_of(Path::new("README.md")), Some(FILE_MAX_LINES));
        assert_eq!(limit_of(Path::new("www/js/run.js")), Some(FILE_MAX_LINES));
        assert_eq!(limit_of(Path::new("CHANGELOG.md")), None);
        assert_eq!(limit_of(Path::new("tests/options/table.json")), None);
    }

    #[test]
    fn benchmarks_over_its_limit_fails_and_at_it_passes() {
        let file = Path::new("BENCHMARKS.md");
        let problem = check_length(file, &lines(BENCHMARKS_MAX_LINES + 1)).expect("over");
        assert_eq!(problem.line, Some(BENCHMARKS_MAX_LINES + 1));
        assert!(
            problem
                .to_string()
                .contains("251 lines, over its limit of 250")
        );
        assert!(check_length(file, &lines(BENCHMARKS_MAX_LINES)).is_none());
    }

    #[test]
    fn models_over_its_limit_fails_and_at_it_passes() {
        let file = Path::new("MODELS.md");
        assert!(check_length(file, &lines(MODELS_MAX_LINES + 1)).is_some());
        assert!(check_length(file, &lines(MODELS_MAX_LINES)).is_none());
        // A last line without a newline still counts.
        let unterminated = lines(MODELS_MAX_LINES) + "one more";
        assert!(check_length(file, &unterminated).is_some());
    }

    #[test]
    fn any_source_file_over_the_general_limit_fails() {
        for name in ["docs/design.md", "crates/x/src/lib.rs", "www/js/anim.js"] {
            let problem = check_length(Path::new(name), &lines(FILE_MAX_LINES + 1)).expect(name);
            assert!(
                problem
                    .to_string()
                    .contains("over the limit of 600 for any file")
            );
            assert!(check_length(Path::new(name), &lines(FILE_MAX_LINES)).is_none());
        }
    }

    #[test]
    fn the_changelog_and_data_pass_at_any_length() {
        assert!(check_length(Path::new("CHANGELOG.md"), &lines(5000)).is_none());
        assert!(check_length(Path::new("tests/www/traces/a.json"), &lines(5000)).is_none());
    }

    #[test]
    fn a_limited_document_missing_from_the_tree_is_reported() {
        let problems = check_present(&["MODELS.md", "README.md"]);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].to_string().starts_with("BENCHMARKS.md:"));
        assert!(check_present(&["BENCHMARKS.md", "MODELS.md"]).is_empty());
    }
}
