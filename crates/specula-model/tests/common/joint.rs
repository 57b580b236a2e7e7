//! The two-token test of the SmolLM2 exactness files: the target's joint distribution of
//! the next two tokens enumerated exactly (top-k 8 at temperature 1: at most 64 pairs,
//! from uncached passes), seeded runs of a decoder counted against it by Pearson's
//! chi-square test, and the same test run with a bug planted as its power check. The
//! files say which draft, prompt and number of runs, and why.

use std::collections::{BTreeMap, HashMap};

use burn::tensor::Device;
use specula_core::{Bug, Distribution};
use specula_engine::{
    DecodeConfig, Decoder, ForwardRequest, ForwardResponse, LanguageModel, Method, Query,
    SamplingConfig, Step,
};
use specula_gguf::GgufModel;
use specula_model::LlamaLm;
use statrs::distribution::{ChiSquared, ContinuousCDF};

const TOP_K: usize = 8;
/// Tokens asked of each run, which is stopped once it has emitted the two tested: the
/// engine never drafts a position it could not emit, so asked for two it would never
/// draft the second (the bonus or the next round's plain target sample would give it);
/// asked for three its first round drafts and verifies both.
const GENERATED: usize = 3;
/// How many decoders run in lockstep at once.
const LOCKSTEP: usize = 300;
/// A correct decoder must pass the chi-square test at this level.
pub const EXACT_P: f64 = 1e-4;
/// A near miss must fail it below this level.
pub const BUG_P: f64 = 1e-6;
/// Cells of the joint whose expected count is below this are pooled into one.
const MIN_EXPECTED: f64 = 5.0;

/// Top-k [`TOP_K`] at temperature 1.
pub fn sampling() -> SamplingConfig {
    SamplingConfig {
        top_k: Some(TOP_K),
        ..SamplingConfig::default()
    }
}

/// A target, its draft (empty caches) and the encoded prompt.
pub struct Pair {
    pub prompt: Vec<u32>,
    pub target: LlamaLm,
    pub draft: LlamaLm,
}

impl Pair {
    /// Both models on burn's CPU device, the prompt encoded by the target's tokenizer.
    pub fn load(target: &GgufModel, draft: &GgufModel, prompt: &str) -> Self {
        let device = Device::flex();
        Self {
            prompt: target.tokenizer.encode(prompt).expect("the prompt encodes"),
            target: LlamaLm::load(target, &device).expect("the target builds"),
            draft: LlamaLm::load(draft, &device).expect("the draft builds"),
        }
    }
}

/// The target's next-token distributions after the prompt and after each possible first
/// token, and the joint of the two over the pairs it gives positive probability.
pub struct Exact {
    pub first: Distribution,
    pub seconds: Vec<(u32, Distribution)>,
    pub cells: HashMap<(u32, u32), usize>,
    pub probs: Vec<f64>,
}

/// From one uncached pass per context, so that neither the caches nor the batching the
/// runs go through take part in the reference.
pub fn exact(target: &LlamaLm, prompt: &[u32]) -> Exact {
    let next = |context: &[u32]| {
        let logits = target.logits_uncached(context).expect("a forward pass");
        let last = &logits[logits.len() - target.vocab_size()..];
        Distribution::from_logits(last, &sampling()).expect("logits")
    };
    let first = next(prompt);
    let seconds: Vec<(u32, Distribution)> = (0..first.len())
        .filter(|&a| first.prob(a) > 0.0)
        .map(|a| {
            let a = u32::try_from(a).expect("a token id");
            let context: Vec<u32> = prompt.iter().copied().chain([a]).collect();
            (a, next(&context))
        })
        .collect();
    let (mut cells, mut probs) = (HashMap::new(), Vec::new());
    for (a, second) in &seconds {
        for b in (0..second.len()).filter(|&b| second.prob(b) > 0.0) {
            cells.insert((*a, u32::try_from(b).expect("a token id")), probs.len());
            probs.push(first.prob(*a as usize) * second.prob(b));
        }
    }
    Exact {
        first,
        seconds,
        cells,
        probs,
    }
}

impl Exact {
    /// Counts of `pairs` per cell, with one more cell at the end for pairs of
    /// probability 0.
    pub fn count(&self, pairs: &[(u32, u32)]) -> Vec<u64> {
        let mut counts = vec![0; self.probs.len() + 1];
        for pair in pairs {
            counts[self.cells.get(pair).copied().unwrap_or(self.probs.len())] += 1;
        }
        counts
    }
}

/// Pearson's chi-square test of `counts` (the last entry the pairs outside the cells)
/// against `probs`, with the cells expected below [`MIN_EXPECTED`] under `bins_from`
/// pooled (the same bins for any `probs`, so the near misses are tested on the
/// partition of the null).
pub struct ChiSquare {
    pub statistic: f64,
    pub bins: u32,
    pub p_value: f64,
}

impl ChiSquare {
    pub fn new(counts: &[u64], probs: &[f64], bins_from: &[f64]) -> Self {
        let (&outside, counts) = counts.split_last().expect("the outside cell");
        let n = counts.iter().sum::<u64>() as f64 + outside as f64;
        let (mut pooled_observed, mut pooled_prob) = (0.0, 0.0);
        let (mut statistic, mut bins) = (0.0, 0);
        let mut add = |observed: f64, prob: f64| {
            if prob == 0.0 {
                // An observation in a cell of probability 0 rejects outright.
                return if observed > 0.0 { f64::INFINITY } else { 0.0 };
            }
            bins += 1;
            (observed - prob * n).powi(2) / (prob * n)
        };
        for ((&o, &prob), &bin) in counts.iter().zip(probs).zip(bins_from) {
            if bin * n < MIN_EXPECTED {
                pooled_observed += o as f64;
                pooled_prob += prob;
            } else {
                statistic += add(o as f64, prob);
            }
        }
        statistic += add(pooled_observed, pooled_prob) + add(outside as f64, 0.0);
        assert!(bins >= 15, "only {bins} bins: too few runs for this test");
        let p_value = ChiSquared::new(f64::from(bins - 1))
            .expect("degrees of freedom")
            .sf(statistic);
        Self {
            statistic,
            bins,
            p_value,
        }
    }
}

impl std::fmt::Display for ChiSquare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (statistic, df, p) = (self.statistic, self.bins - 1, self.p_value);
        write!(f, "chi-square {statistic:.1} on {df} df, p-value {p:.2e}")
    }
}

/// The first two tokens of `runs` seeded runs, and the tokens drafted and accepted in
/// all of them.
pub struct Sampled {
    pub pairs: Vec<(u32, u32)>,
    pub drafted: u64,
    pub accepted: u64,
}

pub fn sample(pair: &mut Pair, method: &Method, bug: Option<Bug>, runs: u64) -> Sampled {
    let vocab = pair.target.vocab_size();
    let mut sampled = Sampled {
        pairs: Vec::new(),
        drafted: 0,
        accepted: 0,
    };
    let seeds: Vec<u64> = (0..runs).collect();
    for batch in seeds.chunks(LOCKSTEP) {
        let mut decoders: Vec<Decoder> = batch
            .iter()
            .map(|&seed| {
                let config = DecodeConfig::builder(method.clone())
                    .sampling(sampling())
                    .max_new_tokens(GENERATED)
                    .seed(seed)
                    .bug(bug)
                    .build()
                    .unwrap();
                let mut decoder = Decoder::new(config, pair.prompt.clone()).expect("a config");
                decoder.set_vocab_size(vocab).expect("the vocabulary");
                decoder
            })
            .collect();
        while step(&mut decoders, &mut pair.draft, &mut pair.target) {}
        for decoder in &decoders {
            let &[a, b, ..] = decoder.generated() else {
                panic!("generated {:?}", decoder.generated());
            };
            sampled.pairs.push((a, b));
            sampled.drafted += decoder.metrics().drafted_tokens;
            sampled.accepted += decoder.metrics().accepted_tokens;
        }
    }
    sampled
}

/// Answers the next request of every decoder that has not emitted two tokens yet, with
/// one forward per model and committed prefix (requests that share their committed
/// tokens are merged, so that the cache holds those once and only the drafted suffixes
/// run batched; going from one prefix to the next rolls the cache back); `false` once
/// none is left.
fn step(decoders: &mut [Decoder], draft: &mut LlamaLm, target: &mut LlamaLm) -> bool {
    type Group = Vec<(usize, ForwardRequest)>;
    let mut waiting: [BTreeMap<Vec<u32>, Group>; 2] = Default::default();
    for (i, decoder) in decoders.iter_mut().enumerate() {
        if decoder.generated().len() >= 2 {
            // The tokens tested are out; the rest of the run would only cost time.
            continue;
        }
        let (model, request) = match decoder.next_request().expect("a request") {
            Step::Draft(request) => (0, request),
            Step::Target(request) => (1, request),
            Step::Done(_) => continue,
            Step::Parallel { .. } => unreachable!("parallel drafting is off"),
        };
        let committed = decoder.tokens()[..request.committed_len].to_vec();
        waiting[model]
            .entry(committed)
            .or_default()
            .push((i, request));
    }
    let mut any = false;
    for (model, groups) in [draft, target].into_iter().zip(waiting) {
        for (committed, group) in groups {
            any = true;
            let mut merged = ForwardRequest {
                role: group[0].1.role,
                committed_len: committed.len(),
                sequences: Vec::new(),
                queries: Vec::new(),
            };
            for (_, request) in &group {
                let offset = merged.sequences.len();
                merged.queries.extend(request.queries.iter().map(|q| Query {
                    sequence: offset + q.sequence,
                    prefix_len: q.prefix_len,
                }));
                merged.sequences.extend_from_slice(&request.sequences);
            }
            let response = model.forward(&merged).expect("a forward");
            let vocab = response.vocab;
            let mut rows = response.logits.chunks_exact(vocab);
            for (i, request) in &group {
                let logits: Vec<f32> = rows
                    .by_ref()
                    .take(request.queries.len())
                    .flatten()
                    .copied()
                    .collect();
                decoders[*i]
                    .supply(ForwardResponse::new(vocab, logits))
                    .expect("the decoder takes its rows");
            }
        }
    }
    any
}

/// `method` samples the target's joint at `runs` seeded runs, and with each of `bugs`
/// planted (the near misses, at the same number of runs) it does not. Returns the
/// correct runs' acceptance (accepted ÷ drafted tokens).
pub fn assert_samples_target(mut pair: Pair, method: &Method, bugs: &[Bug], runs: u64) -> f64 {
    let exact = exact(&pair.target, &pair.prompt);
    let name = method.name();
    let sampled = sample(&mut pair, method, None, runs);
    // A draft that is never accepted would leave only the residual draws to test.
    assert!(
        sampled.accepted * 10 > runs,
        "{name}: {} of {} drafted tokens accepted",
        sampled.accepted,
        sampled.drafted
    );
    let observed = exact.count(&sampled.pairs);
    let test = ChiSquare::new(&observed, &exact.probs, &exact.probs);
    eprintln!(
        "{name}: {test}; {} of {} drafted tokens accepted",
        sampled.accepted, sampled.drafted
    );
    assert!(test.p_value > EXACT_P, "{name}: {test}");
    for &bug in bugs {
        let observed = exact.count(&sample(&mut pair, method, Some(bug), runs).pairs);
        let test = ChiSquare::new(&observed, &exact.probs, &exact.probs);
        eprintln!("{name} with {bug}: {test}");
        assert!(
            test.p_value < BUG_P,
            "{name} with the bug {bug} passed: {test}"
        );
    }
    sampled.accepted as f64 / sampled.drafted.max(1) as f64
}

/// `Σ(q − p)²/p` over the test's bins at `runs` runs: λ ÷ `runs`.
pub fn pooled_distance(p: &[f64], q: &[f64], runs: u64) -> f64 {
    let n = runs as f64;
    let (mut pooled_p, mut pooled_q, mut sum) = (0.0, 0.0, 0.0);
    for (&p, &q) in p.iter().zip(q) {
        if p * n < MIN_EXPECTED {
            pooled_p += p;
            pooled_q += q;
        } else {
            sum += (q - p).powi(2) / p;
        }
    }
    if pooled_p > 0.0 {
        sum += (pooled_q - pooled_p).powi(2) / pooled_p;
    }
    sum
}
