//! Relative links and images in Markdown: each must name a tracked file or folder of the
//! repository, and an `#anchor` into a Markdown file must name one of its headings (as
//! GitHub makes heading anchors) or an HTML `id`/`name` in it.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use regex::Regex;

use crate::Problem;

/// The tracked files of a repository and the folders that hold them.
#[derive(Debug, Default)]
pub struct Tree {
    files: HashSet<PathBuf>,
    dirs: HashSet<PathBuf>,
}

impl Tree {
    /// The tree of these files (paths relative to the repository root).
    #[must_use]
    pub fn new(files: &[PathBuf]) -> Self {
        let mut tree = Self::default();
        for file in files {
            let mut dir = file.parent();
            while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
                tree.dirs.insert(d.to_path_buf());
                dir = d.parent();
            }
            tree.files.insert(file.clone());
        }
        tree
    }

    fn contains(&self, path: &Path) -> bool {
        path.as_os_str().is_empty() || self.files.contains(path) || self.dirs.contains(path)
    }
}

static HTML_SOURCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?i)\b(?:src|href)\s*=\s*"([^"]*)""#).expect("regex"));
static HTML_ANCHOR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?i)\b(?:id|name)\s*=\s*"([^"]*)""#).expect("regex"));

/// A destination with a scheme (`https:`, `mailto:`) or a protocol-relative one is not a
/// path into the repository.
fn is_external(dest: &str) -> bool {
    if dest.starts_with("//") {
        return true;
    }
    match dest.find(':') {
        Some(colon) => {
            let scheme = &dest[..colon];
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && !dest[..colon].contains('/')
        }
        None => false,
    }
}

/// `%20` and friends, as a browser decodes a URL path.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `base/relative` with `.` and `..` folded; `None` when it climbs above the root.
fn join_inside(base: &Path, relative: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = Vec::new();
    for component in base.join(relative).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.iter().collect())
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_`
/// dropped, spaces turned into `-`; repeats get `-1`, `-2`, ….
#[must_use]
pub fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors a Markdown text defines: its headings' slugs and HTML ids.
#[must_use]
pub fn anchors(text: &str) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(text, Options::all()) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                if let Some(text) = heading.take() {
                    let base = slug(&text);
                    let mut candidate = base.clone();
                    let mut n = 0;
                    while !found.insert(candidate.clone()) {
                        n += 1;
                        candidate = format!("{base}-{n}");
                    }
                }
            }
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                for cap in HTML_ANCHOR.captures_iter(&html) {
                    found.insert(cap[1].to_string());
                }
            }
            _ => {}
        }
    }
    found
}

/// Every link or image destination in a Markdown text, with its byte offset.
fn destinations(text: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    for (event, range) in Parser::new_ext(text, Options::all()).into_offset_iter() {
        match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                found.push((dest_url.to_string(), range.start));
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                for cap in HTML_SOURCE.captures_iter(&html) {
                    found.push((cap[1].to_string(), range.start));
                }
            }
            _ => {}
        }
    }
    found
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The problems of one Markdown file (`file` relative to `root`) whose text is `text`.
#[must_use]
pub fn check_markdown(root: &Path, tree: &Tree, file: &Path, text: &str) -> Vec<Problem> {
    let dir = file.parent().unwrap_or(Path::new(""));
    let mut problems = Vec::new();
    let mut problem = |offset: usize, message: String| {
        problems.push(Problem {
            file: file.to_path_buf(),
            line: Some(line_of(text, offset)),
            message,
        });
    };
    for (dest, offset) in destinations(text) {
        if dest.is_empty() || is_external(&dest) {
            continue;
        }
        let (path, fragment) = match dest.split_once('#') {
            Some((path, fragment)) => (path, Some(fragment)),
            None => (dest.as_str(), None),
        };
        let path = percent_decode(path.split('?').next().unwrap_or(""));
        let target = if path.is_empty() {
            file.to_path_buf()
        } else if let Some(stripped) = path.strip_prefix('/') {
            PathBuf::from(stripped)
        } else {
            match join_inside(dir, &path) {
                Some(target) => target,
                None => {
                    problem(offset, format!("`{dest}` points outside the repository"));
                    continue;
                }
            }
        };
        if !tree.contains(&target) {
            problem(
                offset,
                format!("`{dest}`: no tracked file or folder {}", target.display()),
            );
            continue;
        }
        let Some(fragment) = fragment.filter(|f| !f.is_empty()) else {
            continue;
        };
        if target.extension().is_none_or(|ext| ext != "md") {
            continue; // line anchors of source files are the host's business
        }
        let target_text = if target == file {
            text.to_string()
        } else {
            std::fs::read_to_string(root.join(&target)).unwrap_or_default()
        };
        if !anchors(&target_text).contains(&percent_decode(fragment)) {
            problem(
                offset,
                format!(
                    "`{dest}`: {} has no heading `#{fragment}`",
                    target.display()
                ),
            );
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> Tree {
        Tree::new(&[
            PathBuf::from("README.md"),
            PathBuf::from("docs/design.md"),
            PathBuf::from("docs/shots/a b.png"),
        ])
    }

    fn check(file: &str, text: &str) -> Vec<String> {
        check_markdown(Path::new("/nonexistent"), &tree(), Path::new(file), text)
            .into_iter()
            .map(|p| p.to_string())
            .collect()
    }

    #[test]
    fn good_links_pass() {
        let text = "# Top\n\n## Two words, and `code`\n\n[a](docs/design.md) [b](docs) \
                    ![c](docs/shots/a%20b.png) [d](#two-words-and-code) [e](#top) \
                    [f](https://example.org/x) [g](mailto:x@y) <img src=\"docs/shots/a b.png\">";
        assert_eq!(check("README.md", text), Vec::<String>::new());
    }

    #[test]
    fn a_missing_file_is_reported_with_its_line() {
        let problems = check("README.md", "line\n\n[x](docs/missing.md)\n");
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("README.md:3:"), "{problems:?}");
        assert!(problems[0].contains("docs/missing.md"));
    }

    #[test]
    fn a_missing_image_and_html_image_are_reported() {
        let text = "![x](docs/shots/none.png)\n\n<img src=\"docs/gone.png\">\n";
        assert_eq!(check("README.md", text).len(), 2);
    }

    #[test]
    fn a_missing_anchor_is_reported() {
        let problems = check("README.md", "# Top\n\n[x](#bottom)\n");
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("#bottom"));
    }

    #[test]
    fn a_link_above_the_root_is_reported() {
        let dest = ["..", "/", "..", "/elsewhere/X.md"].concat();
        let problems = check("docs/design.md", &format!("[x]({dest})"));
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("outside the repository"));
    }

    #[test]
    fn relative_links_resolve_from_the_files_folder() {
        assert!(check("docs/design.md", "[x](../README.md) [y](shots)").is_empty());
        assert_eq!(check("docs/design.md", "[x](README.md)").len(), 1);
    }

    #[test]
    fn slugs_follow_github() {
        assert_eq!(slug("SpecTr: k-Seq and ρ*"), "spectr-k-seq-and-ρ");
        assert_eq!(slug("The ratio race (OTM)"), "the-ratio-race-otm");
        let twice = anchors("# A\n\n# A\n");
        assert!(twice.contains("a") && twice.contains("a-1"));
    }
}
