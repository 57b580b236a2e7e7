// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-wasm --test
// generated` (ts-rs): do not edit. What each field means is documented on the Rust type.

export type DecodeOptions = { 
/**
 * The text to continue (required, at least one character).
 */
prompt?: string, 
/**
 * One of [`MethodName::ALL`]; default `"speculative"`.
 */
method?: string, 
/**
 * Draft tokens per round: γ for speculative and mentored decoding, the draft length
 * L for the multi-draft methods (default [`limits::DEFAULT_GAMMA`]).
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
 * Adapt γ between rounds (speculative and mentored): +2 after a round that accepted
 * every draft, −1 otherwise.
 */
dynamicGamma?: boolean, 
/**
 * The KL budget D of mentored decoding, in nats per position (required there).
 */
kl?: number, 
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
 * Stop once the text contains any of these.
 */
stop?: Array<string>, 
/**
 * Put full distributions in the traces (for teaching pages).
 */
recordDistributions?: boolean, 
/**
 * A deliberate bug to plant in the decoder (one of `specula_core::Bug::ALL`, by
 * name), for the lossless drafting methods.
 */
bug?: string, };

export type MethodName = "autoregressive" | "speculative" | "spectr" | "multiround" | "otm" | "mentored";

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
 * [`MAX_DRAFTS`].
 */
maxDrafts: number, 
/**
 * [`DEFAULT_DRAFTS`].
 */
defaultDrafts: number, 
/**
 * [`MAX_ROUND_NODES`].
 */
maxRoundNodes: number, 
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
maxStopChars: number, };

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
bug?: Bug | null, };

export type Method = { "kind": "autoregressive" } | { "kind": "speculative", 
/**
 * Draft tokens per round (the starting value when the policy is dynamic).
 */
gamma: number, 
/**
 * How γ changes between rounds.
 */
policy: GammaPolicy, } | { "kind": "spec_tr", 
/**
 * The draft set.
 */
drafts: DraftShape, } | { "kind": "multi_round", 
/**
 * The draft set.
 */
drafts: DraftShape, } | { "kind": "otm", 
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
policy: GammaPolicy, };

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

export type RoundReport = { 
/**
 * 0-based round number.
 */
round: number, 
/**
 * The text emitted this round.
 */
text: string, 
/**
 * The token ids emitted this round.
 */
tokens: Array<number>, 
/**
 * Emitted tokens by source.
 */
counts: TokenCounts, 
/**
 * Where this round's model calls ran (`"webgpu"` or `"cpu"`).
 */
backend: string, 
/**
 * Set on the round during which the models moved to the CPU: why.
 */
fallback: string | null, 
/**
 * Why generation stopped, on the last round.
 */
finish: FinishReason | null, 
/**
 * The engine's full record of the round (drafts, tests, uniforms, ratios).
 */
trace: RoundTrace, 
/**
 * The whole generation's metrics up to and including this round (vLLM's
 * definitions, over every stretch of the sliding window), so a page shows them
 * without recounting.
 */
metrics: Metrics, 
/**
 * The rates derived from [`Self::metrics`].
 */
summary: MetricsSummary, };

export type RoundTrace = { 
/**
 * 0-based round number.
 */
round: number, 
/**
 * The method's name ([`Method::name`](crate::Method::name)).
 */
method: string, 
/**
 * Tokens (prompt and generated) committed before this round.
 */
committedLen: number, 
/**
 * Children per node at each depth this round (`γ` ones for speculative decoding;
 * shorter than configured when few tokens remain).
 */
branching: Array<number>, 
/**
 * The draft set, parents before children.
 */
drafts: Array<DraftNode>, 
/**
 * The selection at each depth of the accepted path.
 */
steps: Array<DepthStep>, 
/**
 * The bonus token, when a draft survived every depth.
 */
bonus: BonusStep | null, 
/**
 * The tokens emitted this round, in order.
 */
emitted: Array<number>, 
/**
 * How each emitted token was produced.
 */
sources: Array<TokenSource>, 
/**
 * Selected tokens not emitted because generation stopped inside the round.
 */
truncated: number, 
/**
 * Emitted tokens by source.
 */
counts: TokenCounts, 
/**
 * Draft model requests this round.
 */
draftCalls: number, 
/**
 * Target model requests this round (1).
 */
targetCalls: number, 
/**
 * Time spent this round.
 */
timing: Timing, 
/**
 * γ for the next round, for speculative and mentored decoding.
 */
nextGamma: number | null, 
/**
 * Why generation stopped, when it stopped in this round.
 */
finish: FinishReason | null, };

export type DraftNode = { 
/**
 * Index in [`RoundTrace::drafts`].
 */
id: number, 
/**
 * The node this one extends; `None` when it extends the committed context.
 */
parent: number | null, 
/**
 * 1-based depth: the position after the committed context.
 */
depth: number, 
/**
 * The draft token.
 */
token: number, 
/**
 * Its probability under the draft distribution it was drawn from.
 */
draftProb: number, 
/**
 * That whole distribution, when the config asks for distributions.
 */
draftProbs?: Array<number>, };

export type DepthStep = { 
/**
 * 1-based depth.
 */
depth: number, 
/**
 * The drafts tested here: ids of the draft nodes at this depth that still agree with
 * the accepted prefix, in test order. `outcome.tests[i].draft_index` indexes this list.
 */
candidates: Array<number>, 
/**
 * The candidates whose token equals the selected token: the drafts that survive to
 * the next depth (empty ends the round).
 */
survivors: Array<number>, 
/**
 * The token-level result: every uniform `u`, ratio and decision, and the residual
 * draw when every candidate was rejected.
 */
outcome: TokenOutcome, 
/**
 * The selected token.
 */
token: number, 
/**
 * Whether it was accepted or resampled.
 */
source: TokenSource, 
/**
 * The k-Seq parameters (ρ, acceptance), for SpecTr.
 */
kseq?: KSeqPlan, 
/**
 * The mentored thresholds (α, β, KL), for mentored decoding.
 */
mentored?: MentoredPlan, 
/**
 * The fitted ratio race (weights, selection distribution r, acceptance and the
 * optimum), for SpecTr with the optimal selection.
 */
otm?: RacePlan, 
/**
 * The target distribution tested against, when the config asks for distributions.
 */
targetProbs?: Array<number>, 
/**
 * The draft distribution the candidates were drawn from, when asked for.
 */
draftProbs?: Array<number>, 
/**
 * The residual distribution the replacement token was drawn from
 * ([`Residual::distribution`](specula_core::Residual::distribution) of the outcome's
 * residual), when distributions are asked for and every draft was rejected.
 */
residualProbs?: Array<number>, };

export type BonusStep = { 
/**
 * The token.
 */
token: number, 
/**
 * The inverse-CDF uniform used; `None` for greedy.
 */
uniform: number | null, 
/**
 * The target distribution sampled, when the config asks for distributions.
 */
targetProbs?: Array<number>, };

export type TokenSource = "accepted" | "resampled" | "bonus";

export type TokenCounts = { 
/**
 * Accepted draft tokens.
 */
accepted: number, 
/**
 * Tokens from a residual.
 */
resampled: number, 
/**
 * Tokens drawn directly from the target.
 */
bonus: number, };

export type Timing = { 
/**
 * Between handing out a draft request and receiving its logits.
 */
draftNanos: number, 
/**
 * Between handing out a target request and receiving its logits.
 */
targetNanos: number, 
/**
 * Inside the engine: building requests, logits to distributions, drawing drafts,
 * selection, bookkeeping.
 */
selectionNanos: number, };

export type FinishReason = { "kind": "max_new_tokens" } | { "kind": "stop_token", 
/**
 * The token.
 */
token: number, } | { "kind": "stop_string", 
/**
 * Its index in the config's `stop_strings`.
 */
index: number, };

export type TokenOutcome = { 
/**
 * The token emitted.
 */
token: number, 
/**
 * The acceptance tests in the order they ran; later drafts are not tested once one
 * is accepted.
 */
tests: Array<DraftTest>, 
/**
 * Index of the accepted draft, if any.
 */
acceptedDraft: number | null, 
/**
 * The residual draw, when no draft was accepted.
 */
residual: ResidualDraw | null, };

export type DraftTest = { 
/**
 * Which draft this was (0-based, in the order tested).
 */
draftIndex: number, 
/**
 * The draft token.
 */
token: number, 
/**
 * The draft probability of the token, `draft(x)`.
 */
draftProb: number, 
/**
 * The probability the token is tested against: `target(x)`, or for multi-round the
 * current residual's probability of `x`.
 */
targetProb: number, 
/**
 * `target_prob / draft_prob` (`+inf` when only the draft probability is 0; 0 when both are).
 */
ratio: number, 
/**
 * The probability with which this scheme accepts the token.
 */
acceptProb: number, 
/**
 * The uniform `u` in `[0, 1)` drawn for the test; `None` for deterministic (greedy) tests.
 */
uniform: number | null, 
/**
 * Whether the token was accepted.
 */
accepted: boolean, };

export type ResidualDraw = { 
/**
 * Which residual distribution was sampled (recompute it with
 * [`Residual::distribution`]).
 */
residual: Residual, 
/**
 * The uniform in `[0, 1)` used for inverse-CDF sampling; `None` for greedy.
 */
uniform: number | null, 
/**
 * The token drawn.
 */
token: number, };

export type Residual = { "kind": "target_minus_draft" } | { "kind": "target" } | { "kind": "k_seq", 
/**
 * The ρ used (≥ ρ*).
 */
rho: number, 
/**
 * `p_acc(ρ) = 1 − (1 − b(ρ))^k`.
 */
acceptance: number, 
/**
 * `b(ρ) = Σ min(draft, target/ρ)`.
 */
overlap: number, } | { "kind": "multi_round", 
/**
 * How many drafts were rejected (≥ 1).
 */
rounds: number, } | { "kind": "mentored", 
/**
 * The upper ratio threshold β ≥ 1.
 */
beta: number, } | { "kind": "race", 
/**
 * Number of drafts.
 */
k: number, };

export type KSeqPlan = { 
/**
 * Number of drafts.
 */
k: number, 
/**
 * The ρ in use (ρ* unless overridden).
 */
rho: number, 
/**
 * The smallest valid ρ.
 */
rhoStar: number, 
/**
 * `b(ρ) = Σ min(draft, target/ρ)`: the per-draft acceptance probability.
 */
overlap: number, 
/**
 * `p_acc(ρ) = 1 − (1 − b(ρ))^k`: the probability that some draft is accepted.
 */
acceptance: number, };

export type RacePlan = { 
/**
 * Number of drafts.
 */
k: number, 
/**
 * The fitted weight `w(x)` of every token (only their ratios matter).
 */
weights: Array<number>, 
/**
 * `r(x)`: the probability that the race chooses a draft of token `x`.
 */
selection: Array<number>, 
/**
 * `Σ min(target, r)`: the probability that the chosen draft is accepted.
 */
acceptance: number, 
/**
 * The optimal acceptance α_k over every selection rule ([`otm_upper_bound`]).
 */
optimum: number, 
/**
 * Fitting steps taken.
 */
steps: number, };

export type MentoredPlan = { 
/**
 * The KL budget `D` (nats).
 */
klBudget: number, 
/**
 * Lower ratio threshold α in `[0, 1]`: a draft with `t/d ≤ α` is accepted with
 * probability `t/(α·d)`. 0 when every draft with `t > 0` is accepted.
 */
alpha: number, 
/**
 * Upper ratio threshold β ≥ 1: the residual is `norm(max(0, t/β − d))`.
 */
beta: number, 
/**
 * Acceptance probability of a drafted token the target gives probability 0; 0 unless
 * `alpha == 0` (see the module notes), 1 when `accepts_all`.
 */
zeroTargetAccept: number, 
/**
 * `R = Σ d·r`: the probability that the draft token is accepted.
 */
acceptance: number, 
/**
 * `KL(target ‖ output)` achieved (nats).
 */
kl: number, 
/**
 * `KL(target ‖ draft) ≤ D` (up to a relative 1e-12 of rounding): every draft is
 * accepted and the output is the draft.
 */
acceptsAll: boolean, };

export type Summary = { 
/**
 * The prompt.
 */
prompt: string, 
/**
 * The generated text (without the prompt).
 */
text: string, 
/**
 * Tokens generated.
 */
tokens: number, 
/**
 * Why it stopped; `None` when aborted or still running.
 */
finish: FinishReason | null, 
/**
 * Whether `abort()` stopped it.
 */
aborted: boolean, 
/**
 * Totals with vLLM's definitions.
 */
metrics: Metrics, 
/**
 * The derived rates.
 */
summary: MetricsSummary, 
/**
 * Where the models run now.
 */
backend: BackendInfo, };

export type Metrics = { 
/**
 * Rounds completed (target calls that produced tokens).
 */
rounds: number, 
/**
 * Draft tokens generated.
 */
draftedTokens: number, 
/**
 * Emitted tokens that were accepted drafts.
 */
acceptedTokens: number, 
/**
 * Emitted tokens drawn from a residual.
 */
resampledTokens: number, 
/**
 * Emitted tokens drawn directly from the target (bonus; every autoregressive token).
 */
bonusTokens: number, 
/**
 * Tokens emitted.
 */
emittedTokens: number, 
/**
 * Draft model requests.
 */
draftCalls: number, 
/**
 * Target model requests.
 */
targetCalls: number, 
/**
 * For each position i (0-based), rounds whose draft set reached depth i + 1.
 */
draftedPerPosition: Array<number>, 
/**
 * For each position i, rounds whose emitted token at depth i + 1 was an accepted draft.
 */
acceptedPerPosition: Array<number>, 
/**
 * Entry n: rounds that emitted n accepted draft tokens.
 */
acceptedLengthHistogram: Array<number>, 
/**
 * Time spent.
 */
timing: Timing, };

export type MetricsSummary = { 
/**
 * Accepted / drafted.
 */
acceptanceRate: number | null, 
/**
 * 1 + accepted / rounds.
 */
meanAcceptanceLength: number | null, 
/**
 * Accepted / drafted at each position.
 */
perPositionAcceptance: Array<number>, 
/**
 * Emitted tokens per target call.
 */
blockEfficiency: number | null, 
/**
 * Engine time per emitted token, in nanoseconds.
 */
selectionNanosPerToken: number | null, 
/**
 * Emitted tokens per second of total measured time.
 */
tokensPerSecond: number | null, };

export type BackendInfo = { 
/**
 * Where the target runs: `"webgpu"` or `"cpu"`.
 */
backend: string, 
/**
 * Where the draft runs: `"webgpu"` or `"cpu"`.
 */
draftBackend: string, 
/**
 * What was asked for.
 */
requested: BackendChoice, 
/**
 * The GPU adapter's name (WebGPU only).
 */
adapter: string | null, 
/**
 * Whether the adapter is a software fallback such as SwiftShader (slow).
 */
isFallbackAdapter: boolean | null, 
/**
 * Why the models are not on WebGPU when `auto` was asked, or why they left it.
 */
reason: string | null, };

export type BackendChoice = "auto" | "webgpu" | "cpu";

export type TheoryCurves = { 
/**
 * γ, as asked.
 */
gammas: Array<number>, 
/**
 * `(1 − α^{γ+1}) / (1 − α)`: expected tokens per round.
 */
expectedTokens: Array<number>, 
/**
 * `(1 − α^{γ+1}) / ((1 − α)(γc + 1))`: the walltime factor, when a cost ratio c was
 * given.
 */
walltimeFactor: Array<number> | null, };
