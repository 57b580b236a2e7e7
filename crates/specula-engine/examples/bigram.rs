//! A model of your own under the engine: a bigram (character-pair) model counted from a
//! short text, as the target, and a smoothed copy of it as the draft. Implementing
//! `LanguageModel` is all it takes: answer each query of a request with one row of
//! logits. Run with `cargo run -p specula-engine --example bigram`.

use specula_engine::{
    DecodeConfig, Decoder, ForwardRequest, ForwardResponse, GammaPolicy, LanguageModel, Method,
    ModelError, generate,
};

/// Next-character logits from counts of character pairs: `ln(count + smoothing)`.
struct Bigram {
    alphabet: Vec<char>,
    /// `logits[a * V + b]`: the logit of `b` after `a`.
    logits: Vec<f32>,
}

impl Bigram {
    fn new(text: &str, smoothing: f32) -> Self {
        let mut alphabet: Vec<char> = text.chars().collect();
        alphabet.sort_unstable();
        alphabet.dedup();
        let v = alphabet.len();
        let mut counts = vec![0_u32; v * v];
        let ids: Vec<usize> = text
            .chars()
            .filter_map(|c| alphabet.binary_search(&c).ok())
            .collect();
        for pair in ids.windows(2) {
            counts[pair[0] * v + pair[1]] += 1;
        }
        let logits = counts
            .iter()
            .map(|&c| (c as f32 + smoothing).ln())
            .collect();
        Self { alphabet, logits }
    }

    fn encode(&self, text: &str) -> Vec<u32> {
        text.chars()
            .filter_map(|c| self.alphabet.binary_search(&c).ok())
            .map(|i| i as u32)
            .collect()
    }

    fn decode(&self, tokens: &[u32]) -> String {
        tokens.iter().map(|&t| self.alphabet[t as usize]).collect()
    }
}

impl LanguageModel for Bigram {
    fn vocab_size(&self) -> usize {
        self.alphabet.len()
    }

    fn forward(&mut self, request: &ForwardRequest) -> Result<ForwardResponse, ModelError> {
        let v = self.vocab_size();
        let mut logits = Vec::with_capacity(request.queries.len() * v);
        // A bigram reads only the last token of each queried prefix.
        for prefix in request.prefixes() {
            let last = prefix
                .and_then(|p| p.last())
                .ok_or_else(|| ModelError("a query outside its sequence".into()))?;
            let row = *last as usize * v;
            logits.extend_from_slice(&self.logits[row..row + v]);
        }
        Ok(ForwardResponse::new(v, logits))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let text = "to be, or not to be, that is the question: whether 'tis nobler in the mind \
                to suffer the slings and arrows of outrageous fortune";
    let mut target = Bigram::new(text, 0.1);
    // The same counts, smoothed far more: a cheaper guess that is often right.
    let mut draft = Bigram::new(text, 0.5);
    let method = Method::Speculative {
        gamma: 4,
        policy: GammaPolicy::Fixed,
    };
    let config = DecodeConfig::builder(method)
        .max_new_tokens(60)
        .seed(1)
        .build()?;
    let mut decoder = Decoder::new(config, target.encode("to be"))?;
    let out = generate(&mut decoder, &mut draft, &mut target)?;
    println!("to be{}", target.decode(&out.tokens));
    let m = &out.metrics;
    println!(
        "{} tokens in {} target calls; acceptance rate {:.2}",
        m.emitted_tokens,
        m.target_calls,
        m.acceptance_rate().unwrap_or(0.0)
    );
    Ok(())
}
