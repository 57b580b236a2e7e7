// What a race measures about this machine, and the walltime theory with those costs. The
// engine times every model call: the autoregressive lane's target calls score one
// position, the speculative lane's score γ + 1 (the verifying pass). Their ratio v is what
// verifying costs here; it is 1 only on a device that scores γ + 1 positions as fast as
// one, which a CPU does not.
import { curves } from "./math.js";
import { fmt } from "./state.js";

/** Totals to pool over a race's repeats: [nanoseconds, calls] per kind of call, α's counts. */
export const emptyTotals = () => ({ one: [0, 0], verify: [0, 0], draft: [0, 0], accepted: 0, tested: 0 });

/** Adds one race's lanes (their engine summaries) to `totals`. */
export function addLanes(totals, arSummary, specSummary) {
  const ar = arSummary.metrics;
  const sp = specSummary.metrics;
  totals.one[0] += ar.timing.targetNanos;
  totals.one[1] += ar.targetCalls;
  totals.verify[0] += sp.timing.targetNanos;
  totals.verify[1] += sp.targetCalls;
  totals.draft[0] += sp.timing.draftNanos;
  totals.draft[1] += sp.draftCalls;
  // α as the engine defines it: accepted ÷ tested positions (accepted + resampled).
  totals.accepted += sp.acceptedTokens;
  totals.tested += sp.acceptedTokens + sp.resampledTokens;
}

/**
 * The mean cost of each kind of call in ms, v = verifying ÷ one-position call, c = draft ÷
 * verifying call (the engine's cost ratio of the speculative lane) and α, at the race's γ.
 */
export function costsOf(totals, gamma) {
  const ms = ([nanos, calls]) => (calls > 0 ? nanos / calls / 1e6 : null);
  const oneMs = ms(totals.one);
  const verifyMs = ms(totals.verify);
  const draftMs = ms(totals.draft) ?? 0;
  const usable = oneMs > 0 && verifyMs > 0;
  return {
    gamma,
    oneMs,
    verifyMs,
    draftMs,
    v: usable ? verifyMs / oneMs : null,
    c: usable ? draftMs / verifyMs : null,
    alpha: totals.tested > 0 ? totals.accepted / totals.tested : null,
  };
}

/**
 * The walltime factor at each γ with these costs: theory()'s E/(γc + 1), c per verifying
 * call, divided by v, so one autoregressive token costs one one-position call. At γs the
 * race did not run, each position past the first costs what it cost at the race's γ (a
 * straight line through the two measured calls). Null where that line gives no cost.
 */
export async function walltimeWith(costs, alpha, gammas) {
  if (costs?.v == null || alpha == null) return null;
  const perPosition = (costs.v - 1) / costs.gamma;
  const draftPerOne = costs.draftMs / costs.oneMs;
  const out = [];
  for (const g of gammas) {
    const v = g === costs.gamma ? costs.v : 1 + g * perPosition;
    const t = v > 0 ? await curves(alpha, [g], draftPerOne / v) : null;
    if (v > 0 && !t) return null;
    out.push(v > 0 ? t.walltimeFactor[0] / v : null);
  }
  return out;
}

/** The costs in words: what each call took, v and c. */
export function costsSentence(costs) {
  return `a target call scoring 1 position took ${fmt(costs.oneMs, 2)} ms on average (the autoregressive lane), the verifying call scoring γ + 1 = ${costs.gamma + 1} positions ${fmt(costs.verifyMs, 2)} ms, so verifying costs v = ${fmt(costs.v, 2)} one-position calls${costs.v > 1.05 ? ", not 1" : ""}; a draft call took ${fmt(costs.draftMs, 3)} ms, c = ${fmt(costs.c, 3)} of a verifying call`;
}

/** Each lane's share of its clock spent outside the engine's model calls and selection. */
export function outsideShare(lane) {
  const t = lane.summary.metrics.timing;
  const inside = (t.targetNanos + t.draftNanos + t.selectionNanos) / 1e9;
  return Math.max(0, 1 - inside / lane.seconds);
}
