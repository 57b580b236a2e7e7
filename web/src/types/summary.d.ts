// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-wasm --test
// generated` (ts-rs): do not edit. What each field means is documented on the Rust type.
// A whole generation's summary and metrics, where the models run, and the theory curves.
import type { FinishReason, Timing } from "./rounds";

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
 * Rounds with drafts drawn while the last round's target request was outstanding
 * (parallel drafting).
 */
earlyRounds: number, 
/**
 * Draft depths drawn while the last round's target request was outstanding.
 */
earlyDrafts: number, 
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
tokensPerSecond: number | null, 
/**
 * Accepted / tested positions (accepted + resampled): the per-position acceptance
 * α of speculative decoding's theory.
 */
testedAcceptance: number | null, 
/**
 * Mean draft call time / mean target call time: the draft's cost c in target calls.
 */
costRatio: number | null, };

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
reason: string | null, 
/**
 * Which wasm module runs them: `"full"` (WebGPU and CPU) or `"cpu"` (CPU-only).
 */
module: ModuleKind, };

export type BackendChoice = "auto" | "webgpu" | "cpu";

export type ModuleKind = "full" | "cpu";

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
