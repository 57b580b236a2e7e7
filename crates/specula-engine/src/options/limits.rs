//! Every default and limit of the decoding options, defined once: the CLI, the wasm
//! bindings, the npm package and the page all read these (the page and the package
//! through `limits()` of the bindings). docs/limits.md says how the limits were sized.

use super::number::RealRange;

/// The most draft tokens per round: γ for speculative, mentored and typical decoding (and
/// the most prompt lookup proposes), L (and the
/// depth of a tree) for the multi-draft methods.
pub const MAX_GAMMA: usize = 64;
/// γ (or L) when the options leave it out.
pub const DEFAULT_GAMMA: usize = 4;
/// Whether speculative decoding drafts the next round while the target verifies this
/// one (`parallelDraft`) when the options leave it out.
pub const DEFAULT_PARALLEL_DRAFT: bool = false;
/// The most draft sequences K (or leaves of a tree) per round.
pub const MAX_DRAFTS: usize = 1024;
/// K when the options leave it out.
pub const DEFAULT_DRAFTS: usize = 4;
/// The most drafts k a token-level analysis (`plan`) takes: far more than a decoding
/// round may draft, since a plan only sums over the vocabulary (multi-round's work, k
/// times the vocabulary, has its own limit in the core). K's default is
/// [`DEFAULT_DRAFTS`] there too.
pub const MAX_PLAN_DRAFTS: usize = 1_000_000;
/// The most draft nodes one round may create (`K × L` for i.i.d. drafts, the sum of the
/// level widths for a tree): the target verifies them all in one call whose attention is
/// quadratic in their number, so this keeps the largest round within about a second and
/// a few hundred megabytes with the bundled target (docs/limits.md).
pub const MAX_ROUND_NODES: usize = 1024;
/// Typical acceptance's ceiling ε on its threshold when the options leave it out (Medusa's
/// setting).
pub const DEFAULT_TYPICAL_EPSILON: f64 = 0.09;
/// Typical acceptance's scale δ when the options leave it out (Medusa's setting, √ε).
pub const DEFAULT_TYPICAL_DELTA: f64 = 0.3;
/// The largest δ (past `e^H` the threshold is ε whatever the entropy).
pub const MAX_TYPICAL_DELTA: f64 = 1e6;
/// The most runs one call of the lab's `sample` may make (the page's field goes up to it).
pub const MAX_LAB_RUNS: u64 = 1_000_000;
/// The lab's runs when the options leave it out.
pub const DEFAULT_LAB_RUNS: u64 = 1000;
/// The longest context suffix (n-gram) prompt lookup searches for, when the options
/// leave it out (then shorter ones, down to 1).
pub const DEFAULT_NGRAM: usize = 3;
/// The largest n-gram prompt lookup takes: each round searches the context once per
/// length, so this bounds that work at `MAX_NGRAM` passes.
pub const MAX_NGRAM: usize = 16;
/// The most tokens one call may generate (past the models' context the window slides).
pub const MAX_TOKENS: usize = 65_536;
/// Tokens to generate when the options leave it out.
pub const DEFAULT_MAX_TOKENS: usize = 64;
/// Tokens per continuation of the CLI's `sample` when `--max-tokens` is left out: short
/// continuations, enough for the lab's first and second characters.
pub const DEFAULT_SAMPLE_TOKENS: usize = 8;
/// The largest temperature.
pub const MAX_TEMPERATURE: f64 = 1e6;
/// The temperature when the options leave it out.
pub const DEFAULT_TEMPERATURE: f64 = 1.0;
/// The most tokens top-k may keep (a vocabulary larger than any model's here).
pub const MAX_TOP_K: usize = 1 << 20;
/// The largest KL budget D of mentored decoding (nats per position).
pub const MAX_KL: f64 = 1e6;
/// The largest seed: JavaScript's largest exactly representable integer, 2⁵³ − 1, so a
/// seed means the same number on every surface.
pub const MAX_SEED: u64 = (1 << 53) - 1;
/// The seed when the options leave it out.
pub const DEFAULT_SEED: u64 = 0;
/// The most stop strings one call may give.
pub const MAX_STOP_STRINGS: usize = 64;
/// The longest stop string, in characters.
pub const MAX_STOP_CHARS: usize = 1024;

/// The largest vocabulary `decode()` takes (a model's `vocabSize`): token ids cross to
/// and from the engine as `Int32Array`s, so every id must fit one.
pub const MAX_VOCAB: usize = 1 << 31;
/// The most draft lengths one call of `theory()` evaluates (`gammas`): every γ from 1
/// to [`MAX_GAMMA`] many times over.
pub const MAX_THEORY_GAMMAS: usize = 1024;
/// The most entries of the distribution `retarget()` takes (`probs`): as many tokens as
/// top-k may keep, more than any model's vocabulary here.
pub const MAX_RETARGET_PROBS: usize = MAX_TOP_K;

/// Temperature's range: 0 (greedy) to [`MAX_TEMPERATURE`].
pub const TEMPERATURE_RANGE: RealRange = RealRange::closed(0.0, MAX_TEMPERATURE);
/// Top-p's range: above 0, at most 1.
pub const TOP_P_RANGE: RealRange = RealRange::above(0.0, 1.0);
/// Mentored decoding's KL budget D when decoding: 0 (lossless) to [`MAX_KL`].
pub const KL_RANGE: RealRange = RealRange::closed(0.0, MAX_KL);
/// The KL budget D of a plan: any finite number from 0 (a plan costs the same for any D).
pub const PLAN_KL_RANGE: RealRange = RealRange::closed(0.0, f64::INFINITY);
/// Typical acceptance's ceiling ε: a probability.
pub const TYPICAL_EPSILON_RANGE: RealRange = RealRange::closed(0.0, 1.0);
/// Typical acceptance's scale δ: 0 to [`MAX_TYPICAL_DELTA`].
pub const TYPICAL_DELTA_RANGE: RealRange = RealRange::closed(0.0, MAX_TYPICAL_DELTA);

/// `theory()`'s acceptance rate α: a probability.
pub const ALPHA_RANGE: RealRange = RealRange::closed(0.0, 1.0);
/// `theory()`'s cost ratio c of a draft call to a target call: any finite number from 0.
pub const COST_RATIO_RANGE: RealRange = RealRange::closed(0.0, f64::INFINITY);
/// `retarget()`'s recording temperature `from`: any finite number above 0.
pub const RECORDED_TEMPERATURE_RANGE: RealRange = RealRange::above(0.0, f64::INFINITY);

/// Every default and limit above in one value, as the bindings hand it to JavaScript
/// (`limits()`), so that the page's controls and the package read the same numbers.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// [`MAX_GAMMA`].
    pub max_gamma: usize,
    /// [`DEFAULT_GAMMA`].
    pub default_gamma: usize,
    /// [`DEFAULT_PARALLEL_DRAFT`].
    pub default_parallel_draft: bool,
    /// [`MAX_DRAFTS`].
    pub max_drafts: usize,
    /// [`DEFAULT_DRAFTS`].
    pub default_drafts: usize,
    /// [`MAX_PLAN_DRAFTS`].
    pub max_plan_drafts: usize,
    /// [`MAX_ROUND_NODES`].
    pub max_round_nodes: usize,
    /// [`DEFAULT_TYPICAL_EPSILON`].
    pub default_typical_epsilon: f64,
    /// [`DEFAULT_TYPICAL_DELTA`].
    pub default_typical_delta: f64,
    /// [`MAX_TYPICAL_DELTA`].
    pub max_typical_delta: f64,
    /// [`MAX_LAB_RUNS`].
    pub max_lab_runs: u64,
    /// [`DEFAULT_LAB_RUNS`].
    pub default_lab_runs: u64,
    /// [`DEFAULT_NGRAM`].
    pub default_ngram: usize,
    /// [`MAX_NGRAM`].
    pub max_ngram: usize,
    /// [`MAX_TOKENS`].
    pub max_tokens: usize,
    /// [`DEFAULT_MAX_TOKENS`].
    pub default_max_tokens: usize,
    /// [`MAX_TEMPERATURE`].
    pub max_temperature: f64,
    /// [`DEFAULT_TEMPERATURE`].
    pub default_temperature: f64,
    /// [`MAX_TOP_K`].
    pub max_top_k: usize,
    /// [`MAX_KL`].
    pub max_kl: f64,
    /// [`MAX_SEED`].
    pub max_seed: u64,
    /// [`DEFAULT_SEED`].
    pub default_seed: u64,
    /// [`MAX_STOP_STRINGS`].
    pub max_stop_strings: usize,
    /// [`MAX_STOP_CHARS`].
    pub max_stop_chars: usize,
    /// [`MAX_VOCAB`].
    pub max_vocab: usize,
    /// [`MAX_THEORY_GAMMAS`].
    pub max_theory_gammas: usize,
    /// [`MAX_RETARGET_PROBS`].
    pub max_retarget_probs: usize,
}

/// The limits, as one value.
pub const LIMITS: Limits = Limits {
    max_gamma: MAX_GAMMA,
    default_gamma: DEFAULT_GAMMA,
    default_parallel_draft: DEFAULT_PARALLEL_DRAFT,
    max_drafts: MAX_DRAFTS,
    default_drafts: DEFAULT_DRAFTS,
    max_plan_drafts: MAX_PLAN_DRAFTS,
    max_round_nodes: MAX_ROUND_NODES,
    default_typical_epsilon: DEFAULT_TYPICAL_EPSILON,
    default_typical_delta: DEFAULT_TYPICAL_DELTA,
    max_typical_delta: MAX_TYPICAL_DELTA,
    max_lab_runs: MAX_LAB_RUNS,
    default_lab_runs: DEFAULT_LAB_RUNS,
    default_ngram: DEFAULT_NGRAM,
    max_ngram: MAX_NGRAM,
    max_tokens: MAX_TOKENS,
    default_max_tokens: DEFAULT_MAX_TOKENS,
    max_temperature: MAX_TEMPERATURE,
    default_temperature: DEFAULT_TEMPERATURE,
    max_top_k: MAX_TOP_K,
    max_kl: MAX_KL,
    max_seed: MAX_SEED,
    default_seed: DEFAULT_SEED,
    max_stop_strings: MAX_STOP_STRINGS,
    max_stop_chars: MAX_STOP_CHARS,
    max_vocab: MAX_VOCAB,
    max_theory_gammas: MAX_THEORY_GAMMAS,
    max_retarget_probs: MAX_RETARGET_PROBS,
};
