// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-wasm --test
// generated` (ts-rs): do not edit. What each field means is documented on the Rust type.
// The options of generate(), their limits, the configuration they resolve to, and the one error shape.

export type DecodeOptions = { 
/**
 * What to continue (required): text (at least one character) for `generate()` and
 * the CLI, token ids (at least one) for `decode()`.
 */
prompt?: string | Array<number>, 
/**
 * One of [`MethodName::ALL`]; default `"speculative"`.
 */
method?: string, 
/**
 * SpecTr's selection rule at each depth: `"kseq"` (the default) or `"race"` (the
 * ratio race, which reaches the optimal selection's acceptance).
 */
selection?: string, 
/**
 * Draft tokens per round: γ for speculative, mentored and typical decoding, the most
 * tokens prompt lookup proposes, the draft length L for the multi-draft methods
 * (default [`limits::DEFAULT_GAMMA`]).
 */
gamma?: number, 
/**
 * K, the draft sequences of the multi-draft methods (default
 * [`limits::DEFAULT_DRAFTS`]).
 */
drafts?: number, 
/**
 * Children per node at each depth of a prefix tree of drafts (multi-draft methods),
 * instead of `drafts` i.i.d. sequences of length `gamma`.
 */
tree?: Array<number>, 
/**
 * Adapt γ between rounds (speculative, mentored and typical): +2 after a round that
 * accepted every draft, −1 otherwise.
 */
dynamicGamma?: boolean, 
/**
 * Draft the next round while the target verifies this one (speculative only, with
 * a fixed γ; default [`limits::DEFAULT_PARALLEL_DRAFT`]): the same distribution,
 * faster when the two models run concurrently. docs/parallel-draft.md.
 */
parallelDraft?: boolean, 
/**
 * The KL budget D of mentored decoding, in nats per position (required there).
 */
kl?: number, 
/**
 * Typical acceptance's ceiling ε on its threshold, in `[0, 1]` (typical only;
 * default [`limits::DEFAULT_TYPICAL_EPSILON`]).
 */
epsilon?: number, 
/**
 * Typical acceptance's scale δ of `exp(−H(target))` in its threshold, from 0 to
 * [`limits::MAX_TYPICAL_DELTA`] (typical only; default
 * [`limits::DEFAULT_TYPICAL_DELTA`]).
 */
delta?: number, 
/**
 * The longest context suffix prompt lookup searches for, 1 to
 * [`limits::MAX_NGRAM`] (lookup only; default [`limits::DEFAULT_NGRAM`]).
 */
ngram?: number, 
/**
 * Sampling temperature; 0 is greedy (default [`limits::DEFAULT_TEMPERATURE`]).
 */
temperature?: number, 
/**
 * Keep the k most likely tokens.
 */
topK?: number, 
/**
 * Keep the smallest set of tokens with at least this much probability.
 */
topP?: number, 
/**
 * Seed of the decoder's random numbers (default [`limits::DEFAULT_SEED`]).
 */
seed?: number, 
/**
 * Tokens to generate (default [`limits::DEFAULT_MAX_TOKENS`]).
 */
maxTokens?: number, 
/**
 * Stop once the generated text contains any of these strings (`generate()`, the
 * CLI), or right after emitting any of these token ids (`decode()`).
 */
stop?: Array<string> | Array<number>, 
/**
 * Put full distributions in the traces (for teaching pages).
 */
recordDistributions?: boolean, 
/**
 * A deliberate bug to plant in the decoder (one of `specula_core::Bug::ALL`, by
 * name), for the lossless methods with a draft model (speculative, spectr,
 * multiround).
 */
bug?: string, };

export type CheckedOptions = { 
/**
 * The prompt text.
 */
prompt: string, 
/**
 * The engine configuration.
 */
config: DecodeConfig, };

export type MethodName = "autoregressive" | "speculative" | "spectr" | "multiround" | "mentored" | "typical" | "lookup";

export type MethodOption = "gamma" | "selection" | "drafts" | "tree" | "dynamicGamma" | "parallelDraft" | "kl" | "epsilon" | "delta" | "ngram" | "bug";

export type OptionError = { 
/**
 * The option's name as the JavaScript API spells it (`topK`, `maxTokens`, `tree`);
 * the CLI shows the matching flag (`--top-k`).
 */
field: string, 
/**
 * What the option must be (or, for [`Problem::Unknown`], the options there are).
 */
expected: string, 
/**
 * What was given, as JavaScript would print it.
 */
got: string, 
/**
 * The kind of mistake.
 */
problem: Problem, };

export type Problem = "invalid" | "unknown" | "missing" | "unused";

export type ApiError = { 
/**
 * What kind of failure.
 */
code: ErrorCode, 
/**
 * The option or input it is about, as JavaScript spells it (`topK`, `tree[1]`,
 * `prompt`); left out when it is about no one option.
 */
field?: string, 
/**
 * What was wrong and what to do, in one line.
 */
message: string, };

export type ErrorCode = "invalid_option" | "plan_failed" | "not_loaded" | "not_started" | "busy" | "aborted" | "bad_weights" | "bad_prompt" | "backend_unavailable" | "download_failed" | "engine" | "model_failed" | "bad_model" | "crashed" | "terminated" | "internal" | "usage" | "failure";

export type Limits = { 
/**
 * [`MAX_GAMMA`].
 */
maxGamma: number, 
/**
 * [`DEFAULT_GAMMA`].
 */
defaultGamma: number, 
/**
 * [`DEFAULT_PARALLEL_DRAFT`].
 */
defaultParallelDraft: boolean, 
/**
 * [`MAX_DRAFTS`].
 */
maxDrafts: number, 
/**
 * [`DEFAULT_DRAFTS`].
 */
defaultDrafts: number, 
/**
 * [`MAX_PLAN_DRAFTS`].
 */
maxPlanDrafts: number, 
/**
 * [`MAX_ROUND_NODES`].
 */
maxRoundNodes: number, 
/**
 * [`DEFAULT_TYPICAL_EPSILON`].
 */
defaultTypicalEpsilon: number, 
/**
 * [`DEFAULT_TYPICAL_DELTA`].
 */
defaultTypicalDelta: number, 
/**
 * [`MAX_TYPICAL_DELTA`].
 */
maxTypicalDelta: number, 
/**
 * [`MAX_LAB_RUNS`].
 */
maxLabRuns: number, 
/**
 * [`DEFAULT_LAB_RUNS`].
 */
defaultLabRuns: number, 
/**
 * [`DEFAULT_NGRAM`].
 */
defaultNgram: number, 
/**
 * [`MAX_NGRAM`].
 */
maxNgram: number, 
/**
 * [`MAX_TOKENS`].
 */
maxTokens: number, 
/**
 * [`DEFAULT_MAX_TOKENS`].
 */
defaultMaxTokens: number, 
/**
 * [`MAX_TEMPERATURE`].
 */
maxTemperature: number, 
/**
 * [`DEFAULT_TEMPERATURE`].
 */
defaultTemperature: number, 
/**
 * [`MAX_TOP_K`].
 */
maxTopK: number, 
/**
 * [`MAX_KL`].
 */
maxKl: number, 
/**
 * [`MAX_SEED`].
 */
maxSeed: number, 
/**
 * [`DEFAULT_SEED`].
 */
defaultSeed: number, 
/**
 * [`MAX_STOP_STRINGS`].
 */
maxStopStrings: number, 
/**
 * [`MAX_STOP_CHARS`].
 */
maxStopChars: number, 
/**
 * [`MAX_VOCAB`].
 */
maxVocab: number, 
/**
 * [`MAX_THEORY_GAMMAS`].
 */
maxTheoryGammas: number, 
/**
 * [`MAX_RETARGET_PROBS`].
 */
maxRetargetProbs: number, };

export type DecodeConfig = { 
/**
 * The decoding method.
 */
method: Method, 
/**
 * Temperature, top-k and top-p, applied identically to both models' logits;
 * temperature 0 makes every method greedy.
 */
sampling: SamplingConfig, 
/**
 * Stop after this many generated tokens.
 */
maxNewTokens: number, 
/**
 * Stop right after emitting any of these tokens (the stop token is emitted).
 */
stopTokens: Array<number>, 
/**
 * Stop right after the token that completes any of these strings in the generated
 * text (needs `token_text` or a detokenizer).
 */
stopStrings: Array<string>, 
/**
 * The text of each token id, used to detect stop strings.
 */
tokenText: Array<string> | null, 
/**
 * Seed of the decoder's ChaCha8 random number generator.
 */
seed: number, 
/**
 * Whether traces carry full draft and target distributions (large: V floats each).
 */
recordDistributions: boolean, 
/**
 * A deliberate mistake to plant in the decoder, for teaching (a bug lab) and for
 * measuring the power of exactness tests: the output then no longer follows the
 * target. `None` (the default, left out of serialised configs) decodes correctly.
 * Only the lossless drafting methods take one.
 */
bug?: Bug | null, 
/**
 * Draft the next round while the target verifies this one (PEARL's post-verify):
 * standard speculative decoding with a fixed γ only. The decoder then issues
 * [`Step::Parallel`](crate::Step::Parallel); docs/parallel-draft.md has the schedule
 * and why it stays exact. `false` (the default, left out of serialised configs)
 * drafts each round after the last one was verified.
 */
parallelDraft?: boolean, };

export type Method = { "kind": "autoregressive" } | { "kind": "speculative", 
/**
 * Draft tokens per round (the starting value when the policy is dynamic).
 */
gamma: number, 
/**
 * How γ changes between rounds.
 */
policy: GammaPolicy, } | { "kind": "spectr", 
/**
 * The draft set.
 */
drafts: DraftShape, 
/**
 * How each depth selects among the drafts.
 */
selection: Selection, } | { "kind": "multiround", 
/**
 * The draft set.
 */
drafts: DraftShape, } | { "kind": "mentored", 
/**
 * Draft tokens per round (the starting value when the policy is dynamic).
 */
gamma: number, 
/**
 * The KL budget D ≥ 0 (nats) per position; 0 is standard speculative sampling.
 */
klBudget: number, 
/**
 * How γ changes between rounds.
 */
policy: GammaPolicy, } | { "kind": "typical", 
/**
 * Draft tokens per round (the starting value when the policy is dynamic).
 */
gamma: number, 
/**
 * ε, the ceiling of the threshold, in `[0, 1]`.
 */
epsilon: number, 
/**
 * δ ≥ 0, the scale of `exp(−H(target))` in the threshold.
 */
delta: number, 
/**
 * How γ changes between rounds.
 */
policy: GammaPolicy, } | { "kind": "lookup", 
/**
 * The most tokens proposed per round.
 */
gamma: number, 
/**
 * The longest suffix of the context searched for (then shorter ones, down to 1).
 */
ngram: number, };

export type DraftShape = { "kind": "iid", 
/**
 * K, the number of sequences.
 */
k: number, 
/**
 * L, the length of each.
 */
length: number, } | { "kind": "tree", 
/**
 * K, which must equal the product of `branching`.
 */
k: number, 
/**
 * k₁..k_L, one per depth.
 */
branching: Array<number>, };

export type Selection = "kseq" | "race";

export type GammaPolicy = { "kind": "fixed" } | { "kind": "heuristic", 
/**
 * The cap.
 */
maxGamma: number, } | { "kind": "optimal", 
/**
 * The cap.
 */
maxGamma: number, 
/**
 * c to assume until the clock has measured both models.
 */
costRatio: number, };

export type SamplingConfig = { 
/**
 * Softmax temperature, `>= 0`; 0 means greedy (one-hot on the argmax).
 */
temperature: number, 
/**
 * Keep only the `k` most likely tokens; `None` keeps all.
 */
topK: number | null, 
/**
 * Keep the smallest set of most likely tokens with mass `>= p`, `p` in (0, 1];
 * `None` keeps all.
 */
topP: number | null, };

export type Bug = "resample-from-target" | "argmax-draft" | "shared-uniform" | "unprocessed-target" | "filtered-draft" | "cache-reset";
