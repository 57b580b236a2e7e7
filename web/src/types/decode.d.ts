// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-decode
// generated` (ts-rs): do not edit. What each field means is documented on the Rust type.
// One round of decode() and its summary, made of the engine types generate()'s rounds use.
import type { FinishReason, RoundTrace, TokenCounts } from "./rounds";
import type { Metrics, MetricsSummary } from "./summary";

export type DecodeRound = { 
/**
 * 0-based round number.
 */
round: number, 
/**
 * The token ids emitted this round.
 */
tokens: Array<number>, 
/**
 * Emitted tokens by source.
 */
counts: TokenCounts, 
/**
 * Why decoding stopped, on the last round.
 */
finish: FinishReason | null, 
/**
 * The engine's full record of the round (drafts, tests, uniforms, ratios).
 */
trace: RoundTrace, 
/**
 * The run's metrics up to and including this round (vLLM's definitions).
 */
metrics: Metrics, 
/**
 * The rates derived from [`Self::metrics`].
 */
summary: MetricsSummary, };

export type DecodeSummary = { 
/**
 * The prompt's token ids.
 */
prompt: Array<number>, 
/**
 * Every generated token id (without the prompt).
 */
tokens: Array<number>, 
/**
 * Why it stopped; `None` when aborted.
 */
finish: FinishReason | null, 
/**
 * Whether the abort signal stopped it.
 */
aborted: boolean, 
/**
 * Totals with vLLM's definitions.
 */
metrics: Metrics, 
/**
 * The derived rates.
 */
summary: MetricsSummary, };
