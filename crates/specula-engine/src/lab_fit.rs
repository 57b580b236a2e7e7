//! The lab's test of many runs' counts against an exact distribution: total variation
//! and Pearson's chi-square, or no test (and why) when the runs leave fewer than two bins.

use serde::Serialize;
use specula_core::total_variation;
use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::refuse;
use crate::options::OptionError;

/// Many runs' counts against an exact distribution.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Fit {
    /// The runs counted.
    pub samples: u64,
    /// Total variation between the empirical and the exact distribution.
    pub tv: f64,
    /// Pearson's chi-square of the counts against the exact distribution.
    pub chi_square: f64,
    /// Its degrees of freedom (bins expecting fewer than 5 counts pooled into one).
    pub degrees_of_freedom: usize,
    /// Its p-value: small when the counts do not follow the exact distribution; `None`
    /// when no test is possible (`noTest` says why).
    pub p_value: Option<f64>,
    /// The same test against the target's distribution: for a lossless method the same
    /// question; for a lossy rule or a bug, small once there are enough runs; `None`
    /// when no test is possible.
    pub target_p_value: Option<f64>,
    /// Why there is no p-value: fewer than two bins to compare (too few runs, or an
    /// exact distribution on one token). `None` when both tests were made.
    pub no_test: Option<String>,
}

/// Pearson's chi-square of `counts` against `expected`, pooling bins expecting fewer
/// than 5 counts: (statistic, degrees of freedom, p-value). A count where the expected
/// probability is 0 gives p = 0; fewer than two bins give no p-value (no test).
#[must_use]
pub fn chi_square(counts: &[u64], expected: &[f64]) -> (f64, usize, Option<f64>) {
    let n = counts.iter().sum::<u64>() as f64;
    let (mut stat, mut bins) = (0.0, 0_usize);
    let (mut pooled_obs, mut pooled_exp) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(expected) {
        let e = p * n;
        if p <= 0.0 {
            if c > 0 {
                return (f64::INFINITY, bins, Some(0.0));
            }
        } else if e < 5.0 {
            pooled_obs += c as f64;
            pooled_exp += e;
        } else {
            stat += (c as f64 - e).powi(2) / e;
            bins += 1;
        }
    }
    if pooled_exp > 0.0 {
        stat += (pooled_obs - pooled_exp).powi(2) / pooled_exp;
        bins += 1;
    }
    if bins < 2 {
        return (stat, 0, None);
    }
    let df = bins - 1;
    let p = ChiSquared::new(df as f64).ok().map(|d| d.sf(stat));
    (stat, df, p)
}

/// Many runs' `counts` (one per token) against `expected` and against `target`.
///
/// # Errors
/// [`OptionError`] for `counts` when its length is not the distributions'.
pub fn fit(counts: &[u64], expected: &[f64], target: &[f64]) -> Result<Fit, OptionError> {
    if counts.len() != expected.len() || target.len() != expected.len() {
        return Err(refuse(
            "counts",
            format!("{} counts, one per token", expected.len()),
            counts.len().to_string(),
        ));
    }
    let samples: u64 = counts.iter().sum();
    let n = samples.max(1) as f64;
    let empirical: Vec<f64> = counts.iter().map(|&c| c as f64 / n).collect();
    let (chi, df, p) = chi_square(counts, expected);
    let (_, _, target_p) = chi_square(counts, target);
    let no_test = (p.is_none() || target_p.is_none()).then(|| no_test_reason(samples, expected));
    Ok(Fit {
        samples,
        tv: total_variation(&empirical, expected),
        chi_square: chi,
        degrees_of_freedom: df,
        p_value: p,
        target_p_value: target_p,
        no_test,
    })
}

/// Why `samples` runs against `expected` leave fewer than two bins to compare.
fn no_test_reason(samples: u64, expected: &[f64]) -> String {
    let support = expected.iter().filter(|&&p| p > 0.0).count();
    if support <= 1 {
        return "the exact distribution puts all its mass on one token: every run gives it, \
                so there is nothing to test"
            .to_owned();
    }
    // With the likeliest token expecting 5 counts, it and the pooled rest are two bins.
    let likeliest = expected.iter().copied().fold(0.0, f64::max);
    let needed = (5.0 / likeliest).ceil();
    let few = if samples == 1 {
        "1 run is".to_owned()
    } else {
        format!("{samples} runs are")
    };
    format!(
        "{few} too few for a chi-square test: no token expects 5 or more counts, so \
         every bin is pooled into one; at least {needed} runs are needed"
    )
}
