// The residual where the eye is: for the most likely characters, the target's bar with the
// part the draft already covered (the draft bar) shaded and what is left — the residual —
// in orange. The replacement is drawn in proportion to the orange parts. The residual's
// numbers are the engine's (the step's residualProbs); the bars show what it subtracts
// from what, from the step's recorded distributions and the residual's parameters.
import { h } from "./state.js";
import { rich } from "./glossary.js";

const fmt = (x, d = 2) => (x === null || x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(d));
const norm = (v) => {
  const s = v.reduce((a, b) => a + b, 0);
  return s > 1e-12 ? v.map((x) => x / s) : v.slice();
};

/**
 * What the residual subtracts from what: { base, baseName, sub, subName, residual } with
 * residual ∝ max(0, base − sub), or null when the distributions were not recorded.
 */
export function residualParts(step) {
  const target = step.targetProbs;
  const draft = step.draftProbs;
  const r = step.outcome?.residual?.residual;
  const residual = step.residualProbs;
  if (!target || !r || !residual) return null;
  const zero = target.map(() => 0);
  switch (r.kind) {
    case "target_minus_draft":
      return draft ? { base: target, baseName: "target", sub: draft, subName: "draft", residual } : null;
    case "kseq": {
      if (!draft) return null;
      const f = r.acceptance / r.overlap;
      return { base: target, baseName: "target", sub: target.map((t, i) => Math.min(draft[i], t / r.rho) * f), subName: "accepted share", residual };
    }
    case "multiround": {
      if (!draft) return null;
      let base = target.slice();
      for (let j = 0; j < r.rounds - 1; j++) base = norm(base.map((x, i) => Math.max(0, x - draft[i])));
      return { base, baseName: r.rounds > 1 ? `residual after ${r.rounds - 1} rejection${r.rounds > 2 ? "s" : ""}` : "target", sub: draft, subName: "draft", residual };
    }
    case "race": {
      const sel = step.plan?.kind === "race" ? step.plan.selection : null;
      return sel ? { base: target, baseName: "target", sub: sel, subName: "r", residual } : null;
    }
    case "mentored":
      return draft ? { base: target.map((t) => t / r.beta), baseName: "target/β", sub: draft, subName: "draft", residual } : null;
    case "target":
      return { base: target, baseName: "target", sub: zero, subName: "nothing", residual };
    default:
      return null;
  }
}

/** The residual chart for a step whose replacement `drawn` was sampled from it. */
export function residualChart(step, drawn, ch, n = 3) {
  const parts = residualParts(step);
  if (!parts) return null;
  const { base, baseName, sub, subName, residual } = parts;
  const order = [...base.keys()].sort((a, b) => Math.max(residual[b], base[b]) - Math.max(residual[a], base[a])).slice(0, n);
  if (!order.includes(drawn)) order.push(drawn);
  // The rejected drafts too, up to five rows in all.
  for (const t of new Set(step.outcome.tests.map((x) => x.token))) if (!order.includes(t) && order.length < 5) order.push(t);
  const top = Math.max(1e-9, ...order.map((i) => Math.max(base[i], sub[i])));
  const box = h("div", "resview");
  box.setAttribute("role", "img");
  box.setAttribute("aria-label", `residual = ${baseName} minus ${subName}: ${order.map((i) => `${ch(i)} ${fmt(residual[i], 2)}`).join(", ")}`);
  const key = h("p", "reskey");
  key.append(h("span", "sw base"), ` ${baseName} = `, h("span", "sw covered"), ` ${subName} + `, h("span", "sw excess"), " ", rich("{residual}"));
  key.title = `residual = (${baseName} − ${subName})⁺, rescaled to sum to 1; the numbers on the right`;
  box.append(key);
  const bars = h("div", "resbars");
  for (const i of order) {
    const row = h("div", i === drawn ? "resbar drawn" : "resbar");
    row.dataset.token = String(i);
    const track = h("span", "track");
    const whole = h("span", "whole");
    whole.style.width = `${(100 * base[i]) / top}%`;
    const covered = h("span", "covered");
    covered.style.width = `${(100 * Math.min(base[i], sub[i])) / top}%`;
    const excess = h("span", "excess");
    excess.style.left = `${(100 * Math.min(base[i], sub[i])) / top}%`;
    excess.style.width = `${(100 * Math.max(0, base[i] - sub[i])) / top}%`;
    const draftLine = h("span", "subline");
    draftLine.style.left = `${Math.min(100, (100 * sub[i]) / top)}%`;
    draftLine.hidden = !(sub[i] > 0);
    track.append(whole, covered, excess, draftLine);
    track.title = `${baseName} ${fmt(base[i], 3)}, ${subName} ${fmt(sub[i], 3)}, residual ${fmt(residual[i], 3)}`;
    row.append(h("span", "lab", ch(i)), track, h("span", "val", fmt(residual[i], 2)));
    bars.append(row);
  }
  box.append(bars);
  return box;
}
