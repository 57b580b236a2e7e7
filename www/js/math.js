// The package's closed forms for the page — plan(), theory() and retarget(), computed by
// the engine's core in the package's own worker (the one checkOptions uses, never busy
// with a generation) — so the page restates none of the engine's formulas. Each resolves
// to null when the package is unavailable (the recorded run still plays).
import { S, hook } from "./state.js";
import { isSparse, pooledPair } from "./pieces.js";

/**
 * Σ min(target, draft): the acceptance of one draft character at a position, which is
 * the acceptance plan() reports for standard speculative sampling.
 */
export async function overlap(target, draft) {
  return (await plan({ method: "speculative", target, draft, normalize: true }))?.acceptance ?? null;
}

/**
 * plan() of the package (counted: tests wait on the count). Distributions compacted for a
 * large vocabulary (pieces.js) go as their kept tokens and one pooled entry; the report's
 * `tokens` then maps each of its entries to a token id (−1: the pooled rest).
 */
export async function plan(options) {
  if (!S.pkg) return null;
  hook.planCalls += 1;
  if (!isSparse(options.target) && !isSparse(options.draft)) return S.pkg.plan(options);
  const { target, draft, tokens } = pooledPair(options.target, options.draft);
  return { ...(await S.pkg.plan({ ...options, target, draft })), tokens };
}

/** The theory curves at each γ: { gammas, expectedTokens, walltimeFactor }. */
export async function curves(alpha, gammas, costRatio) {
  if (!S.pkg) return null;
  return S.pkg.theory(costRatio === undefined ? { alpha, gammas } : { alpha, gammas, costRatio });
}

/** A distribution recorded at temperature `from` as the engine would process it with `to` ({ temperature, topK, topP }). */
export async function retarget(probs, from, to) {
  if (!S.pkg) return null;
  return S.pkg.retarget({ probs, from, ...to });
}

/** The mean of `f` over `items` (awaited one after another), or null when there are none. */
export async function meanOf(items, f) {
  if (items.length === 0) return null;
  let total = 0;
  for (const item of items) total += (await f(item)) ?? 0;
  return total / items.length;
}
