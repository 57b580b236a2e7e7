// The lesson's pictures (lesson-steps.js): the coin flip as u on a 0–1 bar, the area
// picture of why the output is exactly the target, and mentored decoding's budget per
// position. Every number drawn is a value of the engine's trace or plan(), kept on the
// element as a data attribute (full precision), so the page tests read what is drawn.
import { h, fmt } from "./state.js";
import { rich } from "./glossary.js";

/** Writes numbers (and other values) as data attributes, unrounded. */
function data(el, values) {
  for (const [k, v] of Object.entries(values)) el.dataset[k] = String(v);
  return el;
}

/** A bar from 0 to 1 split at `at`: [0, at) is "accept", [at, 1) is "reject". */
function zoneBar(at, cls = "") {
  const bar = h("div", `zonebar ${cls}`);
  const ok = h("span", "zone accept");
  ok.style.width = `${100 * Math.min(1, at)}%`;
  const no = h("span", "zone reject");
  no.style.left = `${100 * Math.min(1, at)}%`;
  no.style.width = `${100 * (1 - Math.min(1, at))}%`;
  bar.append(ok, no);
  return bar;
}

/**
 * The coin flip of one draft test: u on a bar from 0 to 1, green below
 * min(1, target/draft) (the engine's acceptProb), red above it.
 */
export function coinFigure(test, where, ch) {
  const fig = data(h("figure", "lesson-fig lesson-coin"), {
    ...where,
    token: test.token,
    target: test.targetProb,
    draft: test.draftProb,
    ratio: test.ratio,
    acceptProb: test.acceptProb,
    uniform: test.uniform,
    accepted: test.accepted,
  });
  const bar = zoneBar(test.acceptProb);
  bar.setAttribute("role", "img");
  bar.setAttribute("aria-label", `u = ${fmt(test.uniform, 3)} on a bar from 0 to 1; the part below ${fmt(test.acceptProb, 3)} accepts '${ch(test.token)}'`);
  const mark = h("span", "u-mark");
  mark.style.left = `${100 * test.uniform}%`;
  // The label beside the mark, on the side with room.
  mark.append(h("span", `u-label ${test.uniform < 0.15 ? "right" : test.uniform > 0.85 ? "left" : ""}`, `u = ${fmt(test.uniform, 3)}`));
  bar.append(mark);
  const scale = h("div", "zonescale");
  const cut = h("span", "cut");
  cut.style.left = `${100 * Math.min(1, test.acceptProb)}%`;
  cut.textContent = fmt(test.acceptProb, 3);
  const at = Math.min(1, test.acceptProb);
  // The ends' labels give way to the threshold's when it is near them.
  scale.append(...(at > 0.1 ? [h("span", "", "0")] : []), cut, ...(at < 0.9 ? [h("span", "end", "1")] : []));
  if (at > 0.9) cut.classList.add("near-end");
  const cap = h("figcaption");
  cap.append(rich(`{u} = ${fmt(test.uniform, 3)} ${test.accepted ? "<" : "≥"} {ratio} = ${fmt(test.acceptProb, 3)}: '${ch(test.token)}' ${test.accepted ? "accepted (green)" : "rejected (red)"}`));
  fig.append(bar, scale, cap);
  return fig;
}

/**
 * The area picture at one position, for the rows `tokens`: each character's target bar
 * filled by what accepted drafts emit (plan()'s acceptedMass, min(target, draft) here) and
 * what the residual emits after a rejection (its residualMass, (1 − Σ min)·residual), all
 * from plan()'s report; its tvTargetOutput says how far their sum is from the target.
 */
export function areaFigure(report, tokens, where, ch) {
  const overlap = report.acceptance;
  const rows = tokens.map((t) => ({ t, target: report.target[t], min: report.acceptedMass[t], share: report.residualMass[t] }));
  const gap = report.tvTargetOutput;
  const fig = data(h("figure", "lesson-fig lesson-area"), { ...where, overlap, gap });
  const key = h("p", "reskey");
  key.append(h("span", "sw min"), " min(target, draft) + ", h("span", "sw share"), ` (1 − Σ min)·residual = `, h("span", "sw base"), " target");
  const top = Math.max(1e-9, ...rows.map((r) => r.target));
  const bars = h("div", "areabars");
  bars.setAttribute("role", "img");
  bars.setAttribute("aria-label", rows.map((r) => `'${ch(r.t)}': ${fmt(r.min, 3)} + ${fmt(r.share, 3)} = ${fmt(r.target, 3)}`).join("; "));
  for (const r of rows) {
    const row = data(h("div", "arearow"), { token: r.t, target: r.target, min: r.min, share: r.share });
    const track = h("span", "track");
    const whole = h("span", "whole");
    whole.style.width = `${(100 * r.target) / top}%`;
    const min = h("span", "piece min");
    min.style.width = `${(100 * r.min) / top}%`;
    const share = h("span", "piece share");
    share.style.left = `${(100 * r.min) / top}%`;
    share.style.width = `${(100 * r.share) / top}%`;
    track.append(whole, min, share);
    row.append(h("span", "lab", ch(r.t)), track, h("span", "val", `${fmt(r.min, 3)} + ${fmt(r.share, 3)} = ${fmt(r.target, 3)}`));
    bars.append(row);
  }
  fig.append(key, bars);
  return fig;
}

/** Mentored decoding's plan per position of a round: λ, β, KL against D, acceptance against lossless Σ min. */
export function budgetTable(steps, lossless) {
  const table = h("table", "lesson-budget");
  const head = h("tr");
  for (const c of ["pos", "{mAlpha}", "{mBeta|β}", "{kl}", "{D}", "acceptance", "lossless"]) {
    const th = h("th");
    th.append(rich(c));
    th.scope = "col";
    head.append(th);
  }
  table.append(h("thead"));
  table.tHead.append(head);
  const body = h("tbody");
  steps.forEach((s, i) => {
    const p = s.plan;
    const tr = data(h("tr"), { position: s.depth, kl: p.kl, budget: p.klBudget, acceptance: p.acceptance, lossless: lossless[i] ?? "" });
    for (const v of [String(s.depth), fmt(p.alpha, 3), Number.isFinite(p.beta) ? fmt(p.beta, 3) : "∞", fmt(p.kl, 3), fmt(p.klBudget, 3), fmt(p.acceptance, 3), fmt(lossless[i], 3)]) tr.append(h("td", "", v));
    body.append(tr);
  });
  table.append(body);
  return table;
}
