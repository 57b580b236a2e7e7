// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-wasm --test
// generated` (ts-rs): do not edit. What each field means is documented on the Rust type.
// One round of decoding as generate() yields it: the report, the engine's trace, each depth's tests and plans.
import type { Method } from "./options";
import type { Metrics, MetricsSummary } from "./summary";

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
 * Under parallel drafting, how many of this round's draft depths were drawn while
 * the last round's target request was outstanding (before its answer was supplied);
 * 0 otherwise.
 */
earlyDrafts: number, 
/**
 * Target model requests this round (1).
 */
targetCalls: number, 
/**
 * Time spent this round.
 */
timing: Timing, 
/**
 * γ for the next round, for the single-sequence drafting methods (speculative,
 * mentored, typical; for prompt lookup the most tokens it may propose).
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
 * the next depth (empty ends the round; typical acceptance leaves it empty after a
 * rejection).
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
 * The target's most likely token here, when greedy decoding (temperature 0) verified
 * this depth: the token each test's `argmax` rule compares with, and the one a
 * rejection emits. `None` when a coin or a threshold decided.
 */
targetArgmax: number | null, 
/**
 * The selection rule's parameters at this depth: k-Seq's ρ and acceptance, the
 * fitted ratio race, mentored decoding's thresholds or typical acceptance's threshold;
 * none for the other rules.
 */
plan?: StepPlan, 
/**
 * The target distribution tested against, when the config asks for distributions.
 */
targetProbs?: Array<number>, 
/**
 * The draft distribution the candidates were drawn from, when asked for.
 */
draftProbs?: Array<number>, 
/**
 * The residual distribution the replacement token was drawn from (the core scheme's
 * `residual_distribution`, or the target when the outcome's residual is
 * [`Residual::Target`](specula_core::Residual::Target)), when distributions are asked
 * for and every draft was rejected.
 */
residualProbs?: Array<number>, 
/**
 * What that residual subtracts from what (`residualProbs` is
 * `norm(max(0, base − sub))`), recorded with it, for pictures of the residual.
 */
residualParts?: ResidualParts, };

export type StepPlan = { "kind": "kseq" } & KSeqPlan | { "kind": "race" } & RacePlan | { "kind": "mentored" } & MentoredPlan | { "kind": "typical" } & TypicalPlan;

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
 * The target's most likely token, when greedy decoding took it (then it is `token`);
 * `None` when the token was sampled.
 */
targetArgmax: number | null, 
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
 * The uniform `u` in `[0, 1)` drawn for the test; `None` for deterministic tests
 * (greedy, typical).
 */
uniform: number | null, 
/**
 * How the token was judged.
 */
rule: TestRule, 
/**
 * Whether the token was accepted.
 */
accepted: boolean, };

export type TestRule = "coin" | "argmax" | "threshold";

export type ResidualDraw = { 
/**
 * Which residual distribution was sampled (the scheme's `residual_distribution` gives
 * it whole).
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

export type Residual = { "kind": "target_minus_draft" } | { "kind": "target" } | { "kind": "kseq", 
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
overlap: number, } | { "kind": "multiround", 
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

export type ResidualParts = { 
/**
 * What is subtracted from: the target, `target/β` (mentored) or the residual after
 * the earlier rejections (multi-round).
 */
base: Array<number>, 
/**
 * What is subtracted: the draft, k-Seq's accepted share, the race's selection
 * distribution `r`, or nothing (zeros) when the residual is the target.
 */
sub: Array<number>, 
/**
 * `Σ max(0, base − sub)`, all that is left over: the residual is the left-overs
 * divided by it, so that it sums to 1.
 */
leftOver: number, };

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

export type TypicalPlan = { 
/**
 * ε, the hard ceiling on the threshold (a probability).
 */
epsilon: number, 
/**
 * δ, the scale of the entropy-dependent threshold.
 */
delta: number, 
/**
 * `H(target)` in nats.
 */
entropy: number, 
/**
 * `τ = min(ε, δ·exp(−H))`: a drafted token is accepted when `target(x) > τ`.
 */
threshold: number, };
