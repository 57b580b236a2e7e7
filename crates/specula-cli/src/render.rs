//! Human-readable rendering of a [`PlanReport`]: a per-token table and a summary.

use std::fmt::Write as _;

use crate::plan::PlanReport;

/// Width of one numeric column.
const WIDTH: usize = 10;

/// Renders the report as a table followed by a summary, ending with a newline.
#[must_use]
pub fn table(report: &PlanReport) -> String {
    let mut out = String::new();
    let method = report.method;
    let drafts = report
        .drafts
        .map(|k| format!(", k = {k} drafts"))
        .unwrap_or_default();
    let normalized = if report.normalized {
        " (inputs rescaled by --normalize)"
    } else {
        ""
    };
    // Writing into a String cannot fail; the results are ignored deliberately.
    let selection = report
        .selection
        .map(|s| format!(", selection {}", s.name()))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "method: {}{selection} ({}{drafts}){normalized}",
        method.name(),
        report.title()
    );
    for note in &report.notes {
        let _ = writeln!(out, "note: {}", note.message);
    }
    let _ = writeln!(out);

    let mut header = format!(
        "{:>5}  {:>WIDTH$}  {:>WIDTH$}  {:>WIDTH$}",
        "token", "target", "draft", "output"
    );
    if report.accept_probs.is_some() {
        let _ = write!(header, "  {:>WIDTH$}", "accept");
    }
    if report.residual.is_some() {
        let _ = write!(header, "  {:>WIDTH$}", "residual");
    }
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{}", "-".repeat(header.len()));
    for x in 0..report.vocab {
        let at = |v: &[f64]| v.get(x).copied().unwrap_or(f64::NAN);
        let mut row = format!(
            "{x:>5}  {:>WIDTH$}  {:>WIDTH$}  {:>WIDTH$}",
            prob(at(&report.target)),
            prob(at(&report.draft)),
            prob(at(&report.output)),
        );
        if let Some(accept) = &report.accept_probs {
            let _ = write!(row, "  {:>WIDTH$}", prob(at(accept)));
        }
        if let Some(residual) = &report.residual {
            let _ = write!(row, "  {:>WIDTH$}", prob(at(residual)));
        }
        let _ = writeln!(out, "{row}");
    }
    let _ = writeln!(out);

    let mut lines: Vec<(&str, String)> = Vec::new();
    if let Some(bug) = &report.bug {
        lines.push(("bug", format!("{} ({})", bug.name, bug.description)));
    }
    let default = specula_core::SamplingConfig::default();
    if (report.temperature, report.top_k, report.top_p)
        != (default.temperature, default.top_k, default.top_p)
    {
        let mut settings = format!("temperature {}", number(report.temperature));
        if let Some(k) = report.top_k {
            settings.push_str(&format!(", top-k {k}"));
        }
        if let Some(p) = report.top_p {
            settings.push_str(&format!(", top-p {}", number(p)));
        }
        lines.push(("applied to both", settings));
    }
    lines.push(("acceptance", number(report.acceptance)));
    if let Some(bound) = report.upper_bound {
        lines.push(("upper bound on acceptance", number(bound)));
    }
    if let Some(rho) = report.rho {
        lines.push(("rho", number(rho)));
    }
    if let Some(rho_star) = report.rho_star {
        lines.push(("rho*", number(rho_star)));
    }
    if let Some(overlap) = report.overlap {
        lines.push(("b(rho) = sum min(draft, target/rho)", number(overlap)));
    }
    if let Some(budget) = report.kl_budget {
        lines.push(("KL budget D", number(budget)));
    }
    if let Some(alpha) = report.alpha {
        lines.push(("alpha", number(alpha)));
    }
    if let Some(beta) = report.beta {
        lines.push(("beta", number(beta)));
    }
    if let Some(zero) = report.zero_target_accept.filter(|&z| z > 0.0) {
        lines.push(("accept prob. where target = 0", number(zero)));
    }
    if let Some(all) = report.accepts_all {
        lines.push(("accepts every draft", all.to_string()));
    }
    if let Some(entropy) = report.entropy {
        lines.push(("H(target), nats", number(entropy)));
    }
    if let Some(threshold) = report.threshold {
        lines.push(("threshold min(eps, delta e^-H)", number(threshold)));
    }
    lines.push(("KL(target || output)", number(report.kl_target_output)));
    lines.push(("TV(target, output)", number(report.tv_target_output)));
    lines.push(("KL(target || draft)", number(report.kl_target_draft)));
    lines.push(("TV(target, draft)", number(report.tv_target_draft)));
    let label_width = lines.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    for (label, value) in &lines {
        let _ = writeln!(out, "{label:<label_width$}  {value}");
    }
    if report.accept_probs.is_some() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "accept: probability that the token, once drafted, is accepted."
        );
    }
    if report.residual.is_some() {
        let _ = writeln!(
            out,
            "residual: the distribution sampled when every draft is rejected."
        );
    }
    out
}

/// A probability in the table: fixed six decimals.
fn prob(value: f64) -> String {
    if value.is_finite() {
        format!("{value:.6}")
    } else {
        value.to_string()
    }
}

/// A summary number: six decimals, or scientific notation for tiny non-zero values.
fn number(value: f64) -> String {
    if !value.is_finite() {
        value.to_string()
    } else if value != 0.0 && value.abs() < 1e-4 {
        format!("{value:.3e}")
    } else {
        format!("{value:.6}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_format() {
        assert_eq!(number(0.6), "0.600000");
        assert_eq!(number(f64::INFINITY), "inf");
        assert_eq!(number(1e-9), "1.000e-9");
        assert_eq!(prob(0.25), "0.250000");
    }
}
