//! Generation options as JavaScript passes them (numbers are f64, everything optional
//! but the prompt) and their checked form, an engine [`DecodeConfig`]. Pure Rust, so the
//! rules are unit-tested natively; the private `fields` module fills the raw struct from JS.

use specula_engine::{DecodeConfig, DraftShape, GammaPolicy, Method, SamplingConfig};

use crate::error::{Result, WasmError};

/// The option names `generate` accepts, in documentation order.
pub const GENERATE_KEYS: [&str; 14] = [
    "prompt",
    "method",
    "gamma",
    "drafts",
    "tree",
    "dynamicGamma",
    "kl",
    "temperature",
    "topK",
    "topP",
    "seed",
    "maxTokens",
    "stop",
    "recordDistributions",
];

/// The decoding methods `generate` accepts.
pub const METHODS: [&str; 6] = [
    "autoregressive",
    "speculative",
    "spectr",
    "multiround",
    "otm",
    "mentored",
];

/// The most draft tokens per sequence and per round (γ, or L for SpecTr).
pub const MAX_GAMMA: usize = 32;
/// The most draft sequences K for SpecTr and multi-round decoding.
pub const MAX_DRAFTS: usize = 16;
/// The most tokens one call may generate (past the models' context the window slides:
/// see [`Generation`](crate::Generation)).
pub const MAX_TOKENS: usize = 4096;
/// Defaults.
pub const DEFAULT_GAMMA: usize = 4;
/// The most leaves (draft sequences) of a SpecTr/multi-round draft tree.
pub const MAX_TREE_LEAVES: usize = 64;
/// Default K.
pub const DEFAULT_DRAFTS: usize = 2;
/// Default number of new tokens.
pub const DEFAULT_MAX_TOKENS: usize = 64;
/// JavaScript's largest exactly representable integer, the largest seed.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Generation options as given, before any check.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenerateOptions {
    /// The text to continue.
    pub prompt: Option<String>,
    /// One of [`METHODS`]; default `"speculative"`.
    pub method: Option<String>,
    /// Draft tokens per round (γ), and the draft length L for SpecTr/multi-round.
    pub gamma: Option<f64>,
    /// K, the draft sequences of SpecTr and multi-round decoding.
    pub drafts: Option<f64>,
    /// Branching per depth of a prefix tree of drafts (SpecTr, multi-round), instead of
    /// `drafts` i.i.d. sequences of length `gamma`.
    pub tree: Option<Vec<f64>>,
    /// Adapt γ between rounds (speculative and mentored) with Hugging Face's heuristic:
    /// +2 after a round that accepted every draft, −1 otherwise. Deterministic for a seed.
    pub dynamic_gamma: Option<bool>,
    /// The KL budget D of mentored decoding (nats, ≥ 0).
    pub kl: Option<f64>,
    /// Sampling temperature (≥ 0; 0 is greedy).
    pub temperature: Option<f64>,
    /// Keep the k most likely tokens.
    pub top_k: Option<f64>,
    /// Keep the smallest set of tokens with this much probability.
    pub top_p: Option<f64>,
    /// Seed of the decoder's random generator.
    pub seed: Option<f64>,
    /// Tokens to generate.
    pub max_tokens: Option<f64>,
    /// Stop after the text contains any of these.
    pub stop: Option<Vec<String>>,
    /// Put full distributions in the traces (for teaching pages).
    pub record_distributions: Option<bool>,
}

/// Checked options.
#[derive(Debug, Clone, PartialEq)]
pub struct Generate {
    /// The prompt text.
    pub prompt: String,
    /// The engine configuration (without the token text table, which the models add).
    pub config: DecodeConfig,
}

/// A number as JavaScript would print it (NaN, Infinity, 3, 0.5).
pub(crate) fn show_number(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        String::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else if x == 0.0 {
        // JavaScript's String(-0) is "0".
        "0".into()
    } else if x.abs() >= 1e21 || x.abs() < 1e-6 {
        // Where JavaScript switches to exponents, with its "e+" for positive ones.
        let e = format!("{x:e}");
        if e.contains("e-") {
            e
        } else {
            e.replacen('e', "e+", 1)
        }
    } else {
        format!("{x}")
    }
}

/// Temperature (default 1), topK and topP (default none), checked (`generate`, and
/// `plan` with a bug).
pub(crate) fn sampling(
    temperature: Option<f64>,
    top_k: Option<f64>,
    top_p: Option<f64>,
) -> Result<SamplingConfig> {
    let temperature = match temperature {
        Some(t) if t.is_finite() && t >= 0.0 => t + 0.0,
        Some(t) => {
            return Err(WasmError::option(format!(
                "temperature must be a finite number >= 0 (0 is greedy), got {}",
                show_number(t)
            )));
        }
        None => 1.0,
    };
    let top_k = top_k
        .map(|k| {
            whole(
                "topK",
                k,
                1,
                u32::MAX as usize,
                " (leave it out for no top-k)",
            )
        })
        .transpose()?;
    let top_p = match top_p {
        Some(p) if p > 0.0 && p <= 1.0 => Some(p),
        Some(p) => {
            return Err(WasmError::option(format!(
                "topP must be in (0, 1] (leave it out for no top-p), got {}",
                show_number(p)
            )));
        }
        None => None,
    };
    Ok(SamplingConfig {
        temperature,
        top_k,
        top_p,
    })
}

/// A whole number in `min..=max`.
pub(crate) fn whole(name: &str, value: f64, min: usize, max: usize, hint: &str) -> Result<usize> {
    let ok =
        value.is_finite() && value.fract() == 0.0 && value >= min as f64 && value <= max as f64;
    if ok {
        // In range and integral, so the cast is exact.
        Ok(value as usize)
    } else {
        Err(WasmError::option(format!(
            "{name} must be a whole number from {min} to {max}{hint}, got {}",
            show_number(value)
        )))
    }
}

impl GenerateOptions {
    /// A prefix tree from its branching per depth; `gamma` and `drafts`, when also given,
    /// must agree with it (depth and leaves), so no setting is silently ignored.
    fn tree_shape(&self, tree: &[f64]) -> Result<DraftShape> {
        if tree.is_empty() || tree.len() > MAX_GAMMA {
            return Err(WasmError::option(format!(
                "tree must list the branching at each depth, 1 to {MAX_GAMMA} depths, got {} depths",
                tree.len()
            )));
        }
        let mut branching = Vec::with_capacity(tree.len());
        let mut leaves = 1usize;
        for (i, &b) in tree.iter().enumerate() {
            let b = whole(
                &format!("tree[{i}]"),
                b,
                1,
                MAX_TREE_LEAVES,
                " (children per node)",
            )?;
            leaves = leaves.saturating_mul(b);
            branching.push(b);
        }
        if leaves > MAX_TREE_LEAVES {
            return Err(WasmError::option(format!(
                "tree {branching:?} has {leaves} leaves (draft sequences); at most {MAX_TREE_LEAVES}"
            )));
        }
        if let Some(g) = self.gamma.filter(|&g| g != branching.len() as f64) {
            return Err(WasmError::option(format!(
                "gamma {} disagrees with tree {branching:?} of depth {}: leave gamma out or make them agree",
                show_number(g),
                branching.len()
            )));
        }
        if let Some(k) = self.drafts.filter(|&k| k != leaves as f64) {
            return Err(WasmError::option(format!(
                "drafts {} disagrees with tree {branching:?}, which has {leaves} leaves: leave drafts out or make them agree",
                show_number(k)
            )));
        }
        Ok(DraftShape::Tree {
            k: leaves,
            branching,
        })
    }

    /// Checks every option and builds the engine configuration.
    ///
    /// # Errors
    /// [`WasmError::InvalidOption`] naming the first bad option.
    pub fn validate(&self) -> Result<Generate> {
        let prompt = match &self.prompt {
            Some(p) if !p.is_empty() => p.clone(),
            Some(_) => {
                return Err(WasmError::option(
                    "prompt is empty: give at least one character to continue",
                ));
            }
            None => return Err(WasmError::option("prompt is required (a non-empty string)")),
        };
        let method_name = self.method.as_deref().unwrap_or("speculative");
        let gamma = match self.gamma {
            Some(g) => whole("gamma", g, 1, MAX_GAMMA, " (draft tokens per round)")?,
            None => DEFAULT_GAMMA,
        };
        let drafts = match self.drafts {
            Some(k) => whole("drafts", k, 1, MAX_DRAFTS, " (draft sequences per round)")?,
            None => DEFAULT_DRAFTS,
        };
        let kl = match self.kl {
            Some(d) if d.is_finite() && d >= 0.0 => Some(d),
            Some(d) => {
                return Err(WasmError::option(format!(
                    "kl (the KL budget D of mentored decoding) must be a finite number >= 0 (nats), got {}",
                    show_number(d)
                )));
            }
            None => None,
        };
        let multi_draft = matches!(method_name, "spectr" | "multiround" | "otm");
        if self.tree.is_some() && !multi_draft {
            return Err(WasmError::option(format!(
                "tree is for methods \"spectr\", \"multiround\" and \"otm\", not {method_name:?}"
            )));
        }
        let dynamic = self.dynamic_gamma.unwrap_or(false);
        if dynamic && !matches!(method_name, "speculative" | "mentored") {
            return Err(WasmError::option(format!(
                "dynamicGamma is for methods \"speculative\" and \"mentored\", not {method_name:?}"
            )));
        }
        let policy = if dynamic {
            GammaPolicy::Heuristic {
                max_gamma: MAX_GAMMA,
            }
        } else {
            GammaPolicy::Fixed
        };
        let shape = match &self.tree {
            Some(tree) => self.tree_shape(tree)?,
            None => DraftShape::Iid {
                k: drafts,
                length: gamma,
            },
        };
        let method = match method_name {
            "autoregressive" => Method::Autoregressive,
            "speculative" => Method::Speculative { gamma, policy },
            "spectr" => Method::SpecTr { drafts: shape },
            "multiround" => Method::MultiRound { drafts: shape },
            "otm" => Method::Otm { drafts: shape },
            "mentored" => Method::Mentored {
                gamma,
                kl_budget: kl.ok_or_else(|| {
                    WasmError::option(
                        "method \"mentored\" needs kl, the KL budget D >= 0 in nats (0 is lossless)",
                    )
                })?,
                policy,
            },
            other => {
                return Err(WasmError::option(format!(
                    "unknown method {other:?}; use one of: {}",
                    METHODS.join(", ")
                )));
            }
        };
        let sampling = sampling(self.temperature, self.top_k, self.top_p)?;
        let seed = match self.seed {
            Some(s) => {
                if !(s.is_finite() && s.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER).contains(&s)) {
                    return Err(WasmError::option(format!(
                        "seed must be a whole number from 0 to 2^53 - 1, got {}",
                        show_number(s)
                    )));
                }
                s as u64
            }
            None => 0,
        };
        let max_new_tokens = match self.max_tokens {
            Some(n) => whole("maxTokens", n, 1, MAX_TOKENS, "")?,
            None => DEFAULT_MAX_TOKENS,
        };
        let stop_strings = self.stop.clone().unwrap_or_default();
        if let Some(i) = stop_strings.iter().position(String::is_empty) {
            return Err(WasmError::option(format!(
                "stop[{i}] is empty; every stop string needs at least one character"
            )));
        }
        let config = DecodeConfig {
            method,
            sampling,
            max_new_tokens,
            stop_tokens: Vec::new(),
            stop_strings,
            token_text: None,
            seed,
            record_distributions: self.record_distributions.unwrap_or(false),
            bug: None,
        };
        // Everything above mirrors the engine's rules; this catches whatever is left.
        config.validate()?;
        Ok(Generate { prompt, config })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_are_shown_as_javascript_prints_them() {
        let cases = [
            (-0.0, "0"),
            (f64::from_bits(1), "5e-324"),
            (-5e-324, "-5e-324"),
            (1.5e-7, "1.5e-7"),
            (0.000_001, "0.000001"),
            (1e21, "1e+21"),
            (123.5, "123.5"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ];
        for (x, shown) in cases {
            assert_eq!(show_number(x), shown, "{x:e}");
        }
    }

    use super::*;

    fn opts() -> GenerateOptions {
        GenerateOptions {
            prompt: Some("To be".into()),
            ..GenerateOptions::default()
        }
    }

    fn err(o: GenerateOptions) -> String {
        o.validate().map(|_| ()).unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_speculative() {
        let g = opts().validate().unwrap();
        assert_eq!(g.prompt, "To be");
        assert_eq!(g.config.max_new_tokens, DEFAULT_MAX_TOKENS);
        assert!(matches!(
            g.config.method,
            Method::Speculative { gamma: 4, .. }
        ));
    }

    #[test]
    fn every_method_builds() {
        for m in METHODS {
            let o = GenerateOptions {
                method: Some(m.into()),
                kl: Some(0.1),
                ..opts()
            };
            assert_eq!(
                o.validate().unwrap().config.method.needs_draft(),
                m != "autoregressive"
            );
        }
    }

    #[test]
    fn bad_values_name_the_option() {
        let e = err(GenerateOptions {
            gamma: Some(0.0),
            ..opts()
        });
        assert!(e.contains("gamma") && e.contains("got 0"), "{e}");
        let e = err(GenerateOptions {
            gamma: Some(f64::NAN),
            ..opts()
        });
        assert!(e.contains("gamma") && e.contains("NaN"), "{e}");
        let e = err(GenerateOptions {
            gamma: Some(2.5),
            ..opts()
        });
        assert!(e.contains("whole number"), "{e}");
        let e = err(GenerateOptions {
            kl: Some(-0.1),
            ..opts()
        });
        assert!(e.contains("kl") && e.contains("-0.1"), "{e}");
        let e = err(GenerateOptions {
            kl: Some(f64::NAN),
            ..opts()
        });
        assert!(e.contains("NaN"), "{e}");
        let e = err(GenerateOptions {
            method: Some("beam".into()),
            ..opts()
        });
        assert!(
            e.contains("unknown method \"beam\"") && e.contains("spectr"),
            "{e}"
        );
        let e = err(GenerateOptions {
            method: Some("mentored".into()),
            ..opts()
        });
        assert!(e.contains("needs kl"), "{e}");
        let e = err(GenerateOptions {
            temperature: Some(-1.0),
            ..opts()
        });
        assert!(e.contains("temperature"), "{e}");
        let e = err(GenerateOptions {
            top_p: Some(0.0),
            ..opts()
        });
        assert!(e.contains("topP"), "{e}");
        let e = err(GenerateOptions {
            top_k: Some(0.0),
            ..opts()
        });
        assert!(e.contains("topK"), "{e}");
        let e = err(GenerateOptions {
            seed: Some(-1.0),
            ..opts()
        });
        assert!(e.contains("seed"), "{e}");
        let e = err(GenerateOptions {
            max_tokens: Some(0.0),
            ..opts()
        });
        assert!(e.contains("maxTokens"), "{e}");
        let e = err(GenerateOptions {
            prompt: Some(String::new()),
            ..opts()
        });
        assert!(e.contains("prompt is empty"), "{e}");
        let e = err(GenerateOptions::default());
        assert!(e.contains("prompt is required"), "{e}");
        let e = err(GenerateOptions {
            stop: Some(vec![String::new()]),
            ..opts()
        });
        assert!(e.contains("stop[0]"), "{e}");
    }

    #[test]
    fn trees_and_dynamic_gamma_build() {
        let g = GenerateOptions {
            method: Some("spectr".into()),
            tree: Some(vec![2.0, 2.0, 1.0]),
            ..opts()
        }
        .validate()
        .unwrap();
        assert_eq!(
            g.config.method,
            Method::SpecTr {
                drafts: DraftShape::Tree {
                    k: 4,
                    branching: vec![2, 2, 1]
                }
            }
        );
        let g = GenerateOptions {
            method: Some("otm".into()),
            drafts: Some(3.0),
            gamma: Some(2.0),
            ..opts()
        }
        .validate()
        .unwrap();
        assert_eq!(
            g.config.method,
            Method::Otm {
                drafts: DraftShape::Iid { k: 3, length: 2 }
            }
        );
        let g = GenerateOptions {
            dynamic_gamma: Some(true),
            ..opts()
        }
        .validate()
        .unwrap();
        assert!(matches!(
            g.config.method,
            Method::Speculative {
                policy: GammaPolicy::Heuristic { .. },
                ..
            }
        ));
    }

    #[test]
    fn bad_trees_name_the_problem() {
        let spectr = |tree: Vec<f64>| GenerateOptions {
            method: Some("spectr".into()),
            tree: Some(tree),
            ..opts()
        };
        assert!(err(spectr(vec![])).contains("1 to 32 depths"));
        let e = err(spectr(vec![2.0, 0.0]));
        assert!(e.contains("tree[1]") && e.contains("got 0"), "{e}");
        assert!(err(spectr(vec![8.0, 8.0, 2.0])).contains("128 leaves"));
        let e = err(GenerateOptions {
            gamma: Some(4.0),
            ..spectr(vec![2.0, 2.0])
        });
        assert!(e.contains("gamma 4 disagrees"), "{e}");
        let e = err(GenerateOptions {
            drafts: Some(3.0),
            ..spectr(vec![2.0, 2.0])
        });
        assert!(e.contains("drafts 3 disagrees"), "{e}");
        let e = err(GenerateOptions {
            tree: Some(vec![2.0]),
            ..opts()
        });
        assert!(e.contains("tree is for methods"), "{e}");
        let e = err(GenerateOptions {
            method: Some("spectr".into()),
            dynamic_gamma: Some(true),
            ..opts()
        });
        assert!(e.contains("dynamicGamma is for methods"), "{e}");
    }

    #[test]
    fn numbers_print_like_javascript() {
        assert_eq!(show_number(f64::NAN), "NaN");
        assert_eq!(show_number(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(show_number(3.0), "3");
        assert_eq!(show_number(-0.5), "-0.5");
    }
}
