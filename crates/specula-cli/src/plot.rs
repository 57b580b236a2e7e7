//! The loss curve of a training run as CSV and as a small self-contained SVG chart.
//!
//! The SVG is written by hand (two polylines, axes, a few labels): a plotting crate would
//! add a dependency tree and fonts for one static line chart.

use std::fmt::Write as _;

use specula_train::LossPoint;

/// `step,tokens_seen,train_loss,val_loss,elapsed_secs,learning_rate` rows.
#[must_use]
pub fn csv(history: &[LossPoint]) -> String {
    let mut out = String::from("step,tokens_seen,train_loss,val_loss,elapsed_secs,learning_rate\n");
    for p in history {
        let _ = writeln!(
            out,
            "{},{},{:.5},{:.5},{:.1},{:.3e}",
            p.step, p.tokens_seen, p.train_loss, p.val_loss, p.elapsed_secs, p.learning_rate
        );
    }
    out
}

const W: f64 = 640.0;
const H: f64 = 400.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 45.0;

/// A line chart of training and validation loss against steps.
#[must_use]
pub fn svg(title: &str, history: &[LossPoint]) -> String {
    let max_step = history.iter().map(|p| p.step).max().unwrap_or(1).max(1) as f64;
    let losses = history.iter().flat_map(|p| [p.train_loss, p.val_loss]);
    let (lo, hi) = losses.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = if lo.is_finite() && hi > lo {
        ((lo * 10.0).floor() / 10.0, (hi * 10.0).ceil() / 10.0)
    } else {
        (0.0, 5.0)
    };
    let x = |step: f64| LEFT + step / max_step * (W - LEFT - RIGHT);
    let y = |loss: f64| TOP + (hi - loss) / (hi - lo) * (H - TOP - BOTTOM);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="18" text-anchor="middle" font-size="14">{}</text>"#,
        W / 2.0,
        escape(title)
    );
    for i in 0..=5 {
        let v = lo + (hi - lo) * f64::from(i) / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{v:.2}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y(v) + 4.0,
            yy = y(v)
        );
    }
    for i in 0..=4 {
        let step = max_step * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{step:.0}</text>"#,
            x(step),
            H - BOTTOM + 16.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">step</text>"#,
        W / 2.0,
        H - 8.0
    );
    let _ = writeln!(
        s,
        r#"<text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">cross-entropy (nats/char)</text>"#,
        H / 2.0,
        H / 2.0
    );
    for (name, color, pick, dy) in [
        (
            "train",
            "#1f77b4",
            (|p: &LossPoint| p.train_loss) as fn(&LossPoint) -> f64,
            0.0,
        ),
        ("validation", "#d62728", |p: &LossPoint| p.val_loss, 16.0),
    ] {
        let points: Vec<String> = history
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.step as f64), y(pick(p))))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            points.join(" ")
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" fill="{color}" text-anchor="end">{name}</text>"#,
            W - RIGHT - 4.0,
            TOP + 14.0 + dy
        );
    }
    s.push_str("</svg>\n");
    s
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_svg_cover_every_point() {
        let history: Vec<LossPoint> = (1..=3)
            .map(|i| LossPoint {
                step: i * 10,
                tokens_seen: i * 100,
                train_loss: 3.0 / i as f64,
                val_loss: 3.1 / i as f64,
                elapsed_secs: i as f64,
                learning_rate: 1e-3,
            })
            .collect();
        assert_eq!(csv(&history).lines().count(), 4);
        let svg = svg("a <title>", &history);
        assert!(svg.starts_with("<svg") && svg.contains("a &lt;title&gt;"));
        assert_eq!(svg.matches("<polyline").count(), 2);
    }
}
