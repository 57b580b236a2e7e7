// The residual where the eye is: for the most likely characters, the target's bar with the
// part the draft already covered (the draft bar) shaded and what is left over in light
// orange; under it the residual itself, those left-overs rescaled to sum to 1, in orange,
// with its number. Bars and numbers share one probability scale, so a number is the length
// of the bar beside it. Every number is the engine's: the residual (the step's
// residualProbs) and what it subtracts from what (its residualParts).
import { h } from "./state.js";
import { rich } from "./glossary.js";
import { idsOf, isSparse, probOf } from "./pieces.js";

const fmt = (x, d = 2) => (x === null || x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(d));

/** What each residual's two sides are called, by the residual's kind. */
function partNames(r) {
  switch (r.kind) {
    case "kseq":
      return ["target", "accepted share"];
    case "multiround":
      return [r.rounds > 1 ? `residual after ${r.rounds - 1} rejection${r.rounds > 2 ? "s" : ""}` : "target", "draft"];
    case "race":
      return ["target", "r"];
    case "mentored":
      return ["target/β", "draft"];
    case "target":
      return ["target", "nothing"];
    default:
      return ["target", "draft"];
  }
}

/**
 * What the residual subtracts from what: { base, baseName, sub, subName, residual,
 * leftOver } with residual = max(0, base − sub) ÷ leftOver, all the engine's (the step's
 * residualParts and residualProbs), or null when the distributions were not recorded.
 */
export function residualParts(step) {
  const r = step.outcome?.residual?.residual;
  const parts = step.residualParts;
  const residual = step.residualProbs;
  if (!r || !parts || !residual) return null;
  const [baseName, subName] = partNames(r);
  return { base: parts.base, baseName, sub: parts.sub, subName, residual, leftOver: parts.leftOver ?? null };
}

/**
 * The residual chart for a step whose replacement `drawn` was sampled from it; `pieces`
 * when tokens are text pieces (a wider label column). Distributions compacted for a large
 * vocabulary (pieces.js) offer the tokens they kept. `fromTarget`: the planted bug that drew
 * the replacement from the target itself ({ name }, bugs.js), which the chart's key says.
 */
export function residualChart(step, drawn, ch, n = 3, pieces = false, fromTarget = null) {
  const parts = residualParts(step);
  if (!parts) return null;
  const { baseName, subName } = parts;
  const base = (i) => probOf(parts.base, i);
  const sub = (i) => probOf(parts.sub, i);
  const residual = (i) => probOf(parts.residual, i);
  const candidates = isSparse(parts.base) ? [...new Set([...idsOf(parts.base), ...idsOf(parts.residual)])].sort((a, b) => a - b) : [...parts.base.keys()];
  const order = candidates.sort((a, b) => Math.max(residual(b), base(b)) - Math.max(residual(a), base(a))).slice(0, n);
  if (!order.includes(drawn)) order.push(drawn);
  // The rejected drafts too, up to five rows in all.
  for (const t of new Set(step.outcome.tests.map((x) => x.token))) if (!order.includes(t) && order.length < 5) order.push(t);
  // One scale for every bar: the residual's numbers can be several times the target's.
  const top = Math.max(1e-9, ...order.map((i) => Math.max(base(i), sub(i), residual(i))));
  const pct = (x) => `${(100 * x) / top}%`;
  // All that is left over, (base − sub)⁺ summed: the engine's (residualParts.leftOver).
  const { leftOver } = parts;
  const box = h("div", pieces ? "resview pieces" : "resview");
  box.setAttribute("role", "img");
  const what = fromTarget ? `drawn from the target itself (planted bug ${fromTarget.name})` : `residual = ${baseName} minus ${subName}, rescaled`;
  box.setAttribute("aria-label", `${what}: ${order.map((i) => `${ch(i)} ${fmt(residual(i), 2)}`).join(", ")}`);
  const key = h("p", "reskey");
  if (fromTarget) {
    key.append(h("span", "sw resid"), ` drawn from: the target itself (planted bug ${fromTarget.name}; a correct decoder draws from what is left after subtracting the draft, the `, rich("{residual}"), ")");
    key.title = "the planted bug draws the replacement from the target; its probabilities are the numbers on the right";
  } else {
    key.append(h("span", "sw base"), ` ${baseName} = `, h("span", "sw covered"), ` ${subName} + `, h("span", "sw excess"), " left over; ", h("span", "sw resid"), " ", rich("{residual}"), ` = left\u00a0over\u00a0÷\u00a0${fmt(leftOver, 3)}`);
    key.title = `residual = (${baseName} − ${subName})⁺ ÷ ${fmt(leftOver, 3)}, all that is left over, so that it sums to 1; its numbers on the right, on the bars' scale`;
  }
  box.append(key);
  const bars = h("div", "resbars");
  for (const i of order) {
    const row = h("div", i === drawn ? "resbar drawn" : "resbar");
    row.dataset.token = String(i);
    const track = h("span", "track");
    const whole = h("span", "whole");
    whole.style.width = pct(base(i));
    const covered = h("span", "covered");
    covered.style.width = pct(Math.min(base(i), sub(i)));
    const excess = h("span", "excess");
    excess.style.left = pct(Math.min(base(i), sub(i)));
    excess.style.width = pct(Math.max(0, base(i) - sub(i)));
    const draftLine = h("span", "subline");
    draftLine.style.left = pct(Math.min(top, sub(i)));
    draftLine.hidden = !(sub(i) > 0);
    const resid = h("span", "resid");
    resid.style.width = pct(residual(i));
    track.append(whole, covered, excess, draftLine, resid);
    track.title = `${baseName} ${fmt(base(i), 3)}, ${subName} ${fmt(sub(i), 3)}, residual ${fmt(residual(i), 3)}`;
    row.append(h("span", "lab", ch(i)), track, h("span", "val", fmt(residual(i), 2)));
    bars.append(row);
  }
  box.append(bars);
  return box;
}
