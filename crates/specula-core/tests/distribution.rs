//! Construction and validation of distributions: every invalid input is a typed error.

use specula_core::{Distribution, Error, SamplingConfig};

fn config(temperature: f64, top_k: Option<usize>, top_p: Option<f64>) -> SamplingConfig {
    SamplingConfig {
        temperature,
        top_k,
        top_p,
    }
}

#[test]
fn invalid_probabilities_are_typed_errors() {
    assert_eq!(Distribution::from_probs(vec![]), Err(Error::Empty));
    assert_eq!(
        Distribution::from_probs(vec![0.5, f64::NAN]),
        Err(Error::NotANumber { index: 1 })
    );
    assert_eq!(
        Distribution::from_probs(vec![f64::INFINITY, 0.0]),
        Err(Error::Infinite {
            index: 0,
            value: f64::INFINITY
        })
    );
    assert_eq!(
        Distribution::from_probs(vec![1.5, -0.5]),
        Err(Error::Negative {
            index: 1,
            value: -0.5
        })
    );
    assert_eq!(
        Distribution::from_probs(vec![0.0, 0.0]),
        Err(Error::AllZero)
    );
    assert!(matches!(
        Distribution::from_probs(vec![0.5, 0.6]),
        Err(Error::NotNormalized { .. })
    ));
    assert!(Distribution::from_probs(vec![0.5, 0.5 + 5e-7]).is_ok());
    assert_eq!(Distribution::from_weights(vec![0.0]), Err(Error::AllZero));
    assert_eq!(
        Distribution::from_weights(vec![-1.0]),
        Err(Error::Negative {
            index: 0,
            value: -1.0
        })
    );
    assert!(matches!(
        Distribution::from_weights(vec![f64::MAX, f64::MAX]),
        Err(Error::Infinite { .. })
    ));
    assert_eq!(Distribution::uniform(0), Err(Error::Empty));
    assert_eq!(
        Distribution::one_hot(3, 3),
        Err(Error::TokenOutOfRange { token: 3, vocab: 3 })
    );
}

#[test]
fn weights_are_normalised() {
    let d = Distribution::from_weights(vec![1.0, 3.0]).unwrap();
    assert_eq!(d.probs(), &[0.25, 0.75]);
    assert_eq!(d.prob(7), 0.0);
    assert_eq!(d.argmax(), 1);
}

#[test]
fn invalid_logits_and_settings_are_typed_errors() {
    let ok = SamplingConfig::default();
    assert_eq!(
        Distribution::from_logits::<f32>(&[], &ok),
        Err(Error::Empty)
    );
    assert_eq!(
        Distribution::from_logits(&[0.0, f64::NAN], &ok),
        Err(Error::NotANumber { index: 1 })
    );
    assert!(matches!(
        Distribution::from_logits(&[f32::INFINITY], &ok),
        Err(Error::Infinite { index: 0, .. })
    ));
    assert_eq!(
        Distribution::from_logits(&[f64::NEG_INFINITY; 3], &ok),
        Err(Error::AllZero)
    );
    for t in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            Distribution::from_logits(&[0.0], &config(t, None, None)),
            Err(Error::BadTemperature(_))
        ));
    }
    assert_eq!(
        Distribution::from_logits(&[0.0], &config(1.0, Some(0), None)),
        Err(Error::BadTopK)
    );
    for p in [0.0, -0.1, 1.1, f64::NAN] {
        assert!(matches!(
            Distribution::from_logits(&[0.0], &config(1.0, None, Some(p))),
            Err(Error::BadTopP(_))
        ));
    }
}

#[test]
fn softmax_temperature_top_k_and_top_p() {
    let logits = [1.0_f32, 2.0, 3.0, 0.0];
    let plain = Distribution::from_logits(&logits, &SamplingConfig::default()).unwrap();
    let z: f64 = logits.iter().map(|&l| f64::from(l).exp()).sum();
    for (i, &l) in logits.iter().enumerate() {
        assert!((plain.prob(i) - f64::from(l).exp() / z).abs() < 1e-12);
    }
    let hot = Distribution::from_logits(&logits, &config(0.5, None, None)).unwrap();
    assert!(hot.prob(2) > plain.prob(2));
    let greedy = Distribution::from_logits(&logits, &SamplingConfig::greedy()).unwrap();
    assert_eq!(greedy.probs(), &[0.0, 0.0, 1.0, 0.0]);
    // Ties under greedy go to the lowest id.
    let tied = Distribution::from_logits(&[1.0, 5.0, 5.0], &SamplingConfig::greedy()).unwrap();
    assert_eq!(tied.argmax(), 1);
    let top2 = Distribution::from_logits(&logits, &config(1.0, Some(2), None)).unwrap();
    assert_eq!(top2.probs().iter().filter(|&&p| p > 0.0).count(), 2);
    assert!(top2.prob(0) == 0.0 && top2.prob(3) == 0.0);
    assert!((top2.prob(2) - 1.0 / (1.0 + (-1.0f64).exp())).abs() < 1e-12);
    // top-p keeps the smallest most-likely set reaching p: here {2} has 0.64 < 0.7, {2,1} 0.88.
    let nucleus = Distribution::from_logits(&logits, &config(1.0, None, Some(0.7))).unwrap();
    assert_eq!(nucleus.probs().iter().filter(|&&p| p > 0.0).count(), 2);
    let tiny = Distribution::from_logits(&logits, &config(1.0, None, Some(1e-9))).unwrap();
    assert_eq!(tiny.probs(), &[0.0, 0.0, 1.0, 0.0]);
    // Masked tokens stay impossible.
    let masked =
        Distribution::from_logits(&[0.0, f64::NEG_INFINITY], &SamplingConfig::default()).unwrap();
    assert_eq!(masked.probs(), &[1.0, 0.0]);
}

#[test]
fn inverse_cdf_never_returns_a_zero_probability_token() {
    let d = Distribution::from_probs(vec![0.0, 0.3, 0.0, 0.7, 0.0]).unwrap();
    assert_eq!(d.sample_with_uniform(0.0), 1);
    assert_eq!(d.sample_with_uniform(0.29), 1);
    assert_eq!(d.sample_with_uniform(0.31), 3);
    assert_eq!(d.sample_with_uniform(1.0 - f64::EPSILON / 2.0), 3);
    assert_eq!(d.sample_with_uniform(1.0), 3);
}

#[test]
fn a_subnormal_temperature_is_greedy_not_nan() {
    // 1 / 5e-324 overflows: scaling would give 0 · ∞ = NaN for the top token.
    let logits = [0.5, 2.0, 1.0];
    for temperature in [f64::from_bits(1), 1e-310, 0.0] {
        let config = SamplingConfig {
            temperature,
            ..SamplingConfig::default()
        };
        assert!(config.is_greedy(), "{temperature:e}");
        let d = Distribution::from_logits(&logits, &config).unwrap();
        assert_eq!(d.probs(), [0.0, 1.0, 0.0], "{temperature:e}");
    }
    // The smallest normal temperature still scales (and is as sharp as greedy here).
    let config = SamplingConfig {
        temperature: 1e-300,
        ..SamplingConfig::default()
    };
    assert!(!config.is_greedy());
    let d = Distribution::from_logits(&logits, &config).unwrap();
    assert_eq!(d.probs(), [0.0, 1.0, 0.0]);
}
