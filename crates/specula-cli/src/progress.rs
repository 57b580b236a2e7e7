//! The progress bars of long commands (`train`, `bench`): on stderr, drawn only on a
//! terminal (indicatif hides them otherwise), and hidden on request.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps in `template` (indicatif's syntax), or a hidden one.
pub fn bar(len: u64, hidden: bool, template: &str) -> ProgressBar {
    let bar = if hidden {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(len)
    };
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
