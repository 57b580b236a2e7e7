//! Shared helpers for the engine's integration tests.
#![allow(dead_code)]

use specula_engine::synthetic::MarkovModel;
use specula_engine::{
    DecodeConfig, Decoder, DraftShape, ForwardRequest, ForwardResponse, GammaPolicy, Generation,
    LanguageModel, Method, ModelError, Selection, generate, generate_autoregressive,
};
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// A target and a draft that roughly agree: order-1 Markov models over `vocab` tokens.
pub fn pair(vocab: usize, order: usize, seed: u64, noise: f32) -> (MarkovModel, MarkovModel) {
    let target = MarkovModel::random(vocab, order, seed, 2.0).unwrap();
    let draft = target.perturbed(seed + 1000, noise).unwrap();
    (target, draft)
}

pub fn speculative(gamma: usize) -> Method {
    Method::Speculative {
        gamma,
        policy: GammaPolicy::Fixed,
    }
}

pub fn spectr_iid(k: usize, length: usize) -> Method {
    Method::SpecTr {
        drafts: DraftShape::Iid { k, length },
        selection: Selection::KSeq,
    }
}

/// The prefix tree with these children per depth (K = their product).
fn tree(branching: &[usize]) -> DraftShape {
    DraftShape::Tree {
        k: branching.iter().product(),
        branching: branching.to_vec(),
    }
}

pub fn spectr_tree(branching: &[usize]) -> Method {
    Method::SpecTr {
        drafts: tree(branching),
        selection: Selection::KSeq,
    }
}

pub fn multiround_iid(k: usize, length: usize) -> Method {
    Method::MultiRound {
        drafts: DraftShape::Iid { k, length },
    }
}

pub fn multiround_tree(branching: &[usize]) -> Method {
    Method::MultiRound {
        drafts: tree(branching),
    }
}

/// SpecTr with the ratio race (the optimal selection's acceptance), i.i.d. drafts.
pub fn race_iid(k: usize, length: usize) -> Method {
    Method::SpecTr {
        drafts: DraftShape::Iid { k, length },
        selection: Selection::Race,
    }
}

/// SpecTr with the ratio race over a prefix tree.
pub fn race_tree(branching: &[usize]) -> Method {
    Method::SpecTr {
        drafts: tree(branching),
        selection: Selection::Race,
    }
}

pub fn mentored(gamma: usize, kl_budget: f64) -> Method {
    Method::Mentored {
        gamma,
        kl_budget,
        policy: GammaPolicy::Fixed,
    }
}

pub fn typical(gamma: usize, epsilon: f64, delta: f64) -> Method {
    Method::Typical {
        gamma,
        epsilon,
        delta,
        policy: GammaPolicy::Fixed,
    }
}

pub fn lookup(gamma: usize, ngram: usize) -> Method {
    Method::Lookup { gamma, ngram }
}

/// Every method, with small shapes.
pub fn all_methods() -> Vec<Method> {
    vec![
        Method::Autoregressive,
        speculative(1),
        speculative(4),
        spectr_iid(3, 3),
        spectr_tree(&[2, 2, 1]),
        spectr_tree(&[3, 2]),
        multiround_iid(3, 2),
        multiround_tree(&[2, 2]),
        race_iid(3, 2),
        race_tree(&[2, 2]),
        mentored(3, 0.05),
        typical(3, 0.09, 0.3),
        lookup(4, 3),
    ]
}

/// Runs a decoder to the end with the right driver for its method.
pub fn run(
    config: DecodeConfig,
    prompt: &[u32],
    draft: &mut MarkovModel,
    target: &mut MarkovModel,
) -> Generation {
    let needs_draft = config.method().needs_draft();
    let mut decoder = Decoder::new(config, prompt.to_vec()).unwrap();
    if needs_draft {
        generate(&mut decoder, draft, target).unwrap()
    } else {
        generate_autoregressive(&mut decoder, target).unwrap()
    }
}

/// Pearson's chi-square of `counts` against `probs` (cells with zero probability must
/// be empty); returns the p-value.
pub fn chi_square_p(counts: &[u64], probs: &[f64]) -> f64 {
    let (stat, df) = chi_square(counts, probs);
    1.0 - ChiSquared::new(df as f64).unwrap().cdf(stat)
}

/// The statistic and degrees of freedom behind [`chi_square_p`].
pub fn chi_square(counts: &[u64], probs: &[f64]) -> (f64, usize) {
    let n: u64 = counts.iter().sum();
    let mut stat = 0.0;
    let mut cells = 0;
    for (&o, &prob) in counts.iter().zip(probs) {
        if prob == 0.0 {
            assert_eq!(o, 0, "a sequence of probability 0 was generated");
            continue;
        }
        let e = prob * n as f64;
        stat += (o as f64 - e).powi(2) / e;
        cells += 1;
    }
    (stat, (cells - 1).max(1))
}

/// The statistic above which [`chi_square_p`] is below `alpha` at `df` degrees of freedom.
pub fn critical_value(df: usize, alpha: f64) -> f64 {
    ChiSquared::new(df as f64).unwrap().inverse_cdf(1.0 - alpha)
}

/// The noncentrality `λ = n·Σ(q − p)²/p` of [`chi_square_p`] at `n` runs whose counts
/// come from `q` but are tested against `p`: the statistic is then about `df + λ`.
pub fn noncentrality(n: u64, p: &[f64], q: &[f64]) -> f64 {
    p.iter()
        .zip(q)
        .filter(|(p, _)| **p > 0.0)
        .map(|(p, q)| n as f64 * (q - p).powi(2) / p)
        .sum()
}

/// A model wrapper that records every request it answers.
pub struct Recording<M> {
    pub inner: M,
    pub requests: Vec<ForwardRequest>,
}

impl<M> Recording<M> {
    pub fn new(inner: M) -> Self {
        Self {
            inner,
            requests: Vec::new(),
        }
    }
}

impl<M: LanguageModel> LanguageModel for Recording<M> {
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn forward(&mut self, request: &ForwardRequest) -> Result<ForwardResponse, ModelError> {
        self.requests.push(request.clone());
        self.inner.forward(request)
    }
}
