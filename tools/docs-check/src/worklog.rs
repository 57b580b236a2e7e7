//! Work-log phrasing in Markdown: the docs state today's figures and how to reproduce them,
//! not the order in which they were found. "Two more runs ten minutes later", "recorded in
//! a commit", "minutes earlier" or a dated heading narrate a history that git already keeps,
//! and leave the reader to work out which figure is current. Sessions ("this session") are
//! refused in every tracked file by [`crate::outside`].

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::Problem;

/// Files where a dated heading is the format (a release's date), not narration.
const DATED_HEADINGS_ALLOWED: &[&str] = &["CHANGELOG.md"];

struct Rule {
    pattern: Regex,
    why: &'static str,
    /// Whether files in [`DATED_HEADINGS_ALLOWED`] are exempt.
    dated_heading: bool,
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |pattern: &str, why, dated_heading| Rule {
        pattern: Regex::new(pattern).expect("regex"),
        why,
        dated_heading,
    };
    let log = "reads as a work log: state today's figure and its command (history is git's)";
    vec![
        rule(
            r"(?i)\b(?:minutes|hours|days|weeks)\s+(?:earlier|later)\b",
            log,
            false,
        ),
        rule(r"(?i)\b(?:same|these|those)\s+minutes\b", log, false),
        rule(
            r"(?i)\b(?:earlier|later)\s+today\b|\byesterday\b",
            log,
            false,
        ),
        rule(
            r"(?i)\b(?:one|two|three|four|five|\d+)\s+more\s+runs?\b",
            "appends runs beside a figure: replace the figure, don't append",
            false,
        ),
        rule(
            r"(?i)\brecorded\s+in\s+(?:commit\s+)?[0-9a-f]{7,40}\b",
            "dates a figure by a commit: give the command that reproduces it",
            false,
        ),
        rule(r"(?i)\bwork[\s-]?log\b", log, false),
        rule(
            r"(?i)\bthe\s+issue[’']s\b",
            "cites a tracker readers do not have: state the goal itself",
            false,
        ),
        rule(
            r"(?i)\bnot\s+run\s+here\b",
            "narrates where it was run: say what a reader needs to run it",
            false,
        ),
        rule(
            r"(?i)\b(?:no\s+GPU|none)\s+(?:has|had)?\s*(?:been|was)\s+available\b",
            "narrates the writer's machine: name the machine each figure is from",
            false,
        ),
        rule(
            r"^\s{0,3}#{1,6}\s.*\b\d{4}-\d{2}-\d{2}\b",
            "a dated section: keep one current section and let git keep the old ones",
            true,
        ),
    ]
});

/// The work-log phrases in one Markdown file (`file` relative to the repository root).
#[must_use]
pub fn check_markdown(file: &Path, text: &str) -> Vec<Problem> {
    let dated_ok = DATED_HEADINGS_ALLOWED
        .iter()
        .any(|name| Path::new(name) == file);
    let mut problems = Vec::new();
    for (index, line) in text.lines().enumerate() {
        for rule in RULES.iter().filter(|r| !(r.dated_heading && dated_ok)) {
            for found in rule.pattern.find_iter(line) {
                problems.push(Problem {
                    file: file.to_path_buf(),
                    line: Some(index + 1),
                    message: format!("`{}` {}", found.as_str().trim(), rule.why),
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
        check_markdown(Path::new("BENCHMARKS.md"), text).len()
    }

    #[test]
    fn relative_times_fail_and_durations_pass() {
        assert_eq!(
            count("the native engine on the same machine minutes earlier"),
            1
        );
        assert_eq!(
            count("Two more runs of the same command ten minutes later"),
            2
        );
        assert_eq!(count("native (same minutes), γ = 2"), 1);
        assert_eq!(count("in these minutes it gave 2.30×"), 1);
        assert_eq!(count("measured yesterday"), 1);
        assert_eq!(
            count("about 40 minutes on the dev machine; 8.5 min per run"),
            0
        );
        assert_eq!(count("a later run; earlier occurrences of the context"), 0);
    }

    #[test]
    fn appended_runs_fail_and_counted_runs_pass() {
        assert_eq!(count("3.30× and 3.62× in two more runs"), 1);
        assert_eq!(
            count("100 seeds × 4 prompts; two runs of the bench; 12 runs"),
            0
        );
    }

    #[test]
    fn recorded_in_a_commit_fails_and_other_records_pass() {
        assert_eq!(
            count("a bootstrap over the runs; recorded in 3c6eda2) gave"),
            1
        );
        assert_eq!(count("(recorded in commit e1d9d1b6e54dd2ee)"), 1);
        assert_eq!(
            count("the figures recorded in docs/plots/data/browser.json"),
            0
        );
        assert_eq!(
            count("the package of b5de3d3; recorded in a feedback form"),
            0
        );
    }

    #[test]
    fn tracker_and_machine_narration_fail() {
        assert_eq!(count("the issue's 2× with both on WebGPU **missed**"), 1);
        assert_eq!(count("the issue’s goal"), 1);
        assert_eq!(count("no coverage-guided fuzzer is not run here"), 1);
        assert_eq!(count("(SwiftShader): no GPU has been available, so"), 1);
        assert_eq!(count("need a real GPU; none was available."), 1);
        assert_eq!(count("see the work log"), 1);
        assert_eq!(count("work-log entries"), 1);
    }

    #[test]
    fn ordinary_sentences_pass() {
        let text = "An issue with shapes is refused. The figures run here with `specula bench`.\n\
                    No GPU is needed; the software adapter is available everywhere.\n\
                    The log of each run is kept; none is available offline.";
        assert_eq!(count(text), 0);
    }

    #[test]
    fn dated_headings_fail_outside_the_changelog() {
        let text = "# Benchmarks\n\n## Measured 2026-11-24\n\nText dated 2026-11-24 in prose.\n";
        let problems = check_markdown(Path::new("BENCHMARKS.md"), text);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].line, Some(3));
        assert!(check_markdown(Path::new("CHANGELOG.md"), "## [0.2.0] - 2026-11-24\n").is_empty());
        assert_eq!(count("## Measured today\n"), 0);
    }

    #[test]
    fn every_phrase_is_reported_with_its_line() {
        let problems = check_markdown(Path::new("docs/x.md"), "fine\n\nminutes earlier\n");
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0]
                .to_string()
                .starts_with("docs/x.md:3: `minutes earlier`")
        );
    }
}
