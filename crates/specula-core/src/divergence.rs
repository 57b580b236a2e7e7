//! Distances between distributions given as probability slices.

/// Kullback–Leibler divergence `KL(a ‖ b) = Σ a ln(a/b)` in nats, with `0 ln 0 = 0` and
/// `+inf` when some `a > 0` meets `b = 0`.
///
/// # Panics
/// Never; slices of different lengths are compared on their common prefix.
#[must_use]
pub fn kl_divergence(a: &[f64], b: &[f64]) -> f64 {
    let mut kl = 0.0;
    for (&x, &y) in a.iter().zip(b) {
        if x > 0.0 {
            if y <= 0.0 {
                return f64::INFINITY;
            }
            kl += x * (x / y).ln();
        }
    }
    // Rounding can make a true zero come out as -1e-17.
    kl.max(0.0)
}

/// Total variation distance `½ Σ |a − b|`.
#[must_use]
pub fn total_variation(a: &[f64], b: &[f64]) -> f64 {
    0.5 * a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>()
}

/// The overlap `Σ min(a, b) = 1 − TV(a, b)`: the acceptance probability of standard
/// speculative sampling.
#[must_use]
pub fn overlap(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.min(*y)).sum()
}
