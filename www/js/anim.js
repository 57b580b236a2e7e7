// Animates one round of the engine's trace on the stage: drafts appear one by one, the
// target's single pass lights every position, then each position's coin flip, the
// accepted / rejected / discarded marks, the residual draw and the bonus token.

import { residualOf } from "./distributions.js";

export class Cancelled extends Error {}

/** Speed steps of the speed slider; the last is "instant". */
export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, Infinity];

/** Pacing of one animation: respects speed, pause, skip (step) and cancel (reset). */
export class Pacer {
  constructor(getSpeed) {
    this.getSpeed = getSpeed;
    this.paused = false;
    this.skip = false;
    this.cancelled = false;
    this.wakers = new Set();
  }
  wake() {
    for (const w of this.wakers) w();
    this.wakers.clear();
  }
  async wait(ms) {
    if (this.cancelled) throw new Cancelled();
    const speed = this.getSpeed();
    if (!this.skip && Number.isFinite(speed)) {
      await new Promise((resolve) => {
        const t = setTimeout(done, ms / speed);
        const self = this;
        function done() {
          clearTimeout(t);
          self.wakers.delete(done);
          resolve();
        }
        this.wakers.add(done);
      });
    }
    while (this.paused && !this.skip && !this.cancelled) await new Promise((r) => this.wakers.add(r));
    if (this.cancelled) throw new Cancelled();
  }
}

export const showChar = (ch) => (ch === "\n" ? "↵" : ch === " " ? "␣" : ch);
const fmt = (x, d = 2) => (x === null || x === undefined ? "–" : !Number.isFinite(x) ? "∞" : x.toFixed(d));

function h(tag, cls, text) {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined) n.textContent = text;
  return n;
}

/** Root-to-leaf paths of the draft set (one row per leaf; i.i.d. drafts are a tree too). */
export function draftRows(trace) {
  const children = new Map();
  for (const d of trace.drafts) {
    const key = d.parent ?? -1;
    if (!children.has(key)) children.set(key, []);
    children.get(key).push(d.id);
  }
  const rows = [];
  const walk = (id, path) => {
    const kids = children.get(id) ?? [];
    if (kids.length === 0) {
      if (path.length) rows.push(path);
      return;
    }
    for (const k of kids) walk(k, [...path, k]);
  };
  walk(-1, []);
  return rows;
}

/** Builds the stage for a round (all cells hidden) and returns an animator. */
export function buildStage(stage, notes, trace, alphabet, dynamicGamma = false) {
  const ch = (t) => showChar(alphabet[t] ?? "?");
  const rows = draftRows(trace);
  const depth = trace.branching.length;
  const byNode = new Map(); // node id -> [cell]
  stage.replaceChildren();
  notes.replaceChildren();
  stage.dataset.round = String(trace.round);
  stage.dataset.method = trace.method;
  const grid = h("div", "grid");
  grid.style.setProperty("--cols", String(depth + 1));
  const head = h("div", "row head");
  head.append(h("span", "rowlabel", ""));
  for (let d = 1; d <= depth + 1; d++) head.append(h("span", "colhead", d <= depth ? `pos ${d}` : "bonus"));
  grid.append(head);
  rows.forEach((path, r) => {
    const row = h("div", "row draftrow");
    row.append(h("span", "rowlabel", rows.length > 1 ? `draft ${r + 1}` : "draft"));
    const seen = new Set();
    path.forEach((id) => {
      const node = trace.drafts[id];
      const cell = h("span", "cell hidden");
      cell.dataset.node = String(id);
      cell.dataset.depth = String(node.depth);
      // A node shared by several rows of a tree is drawn in each; later copies are dimmed.
      if (r > 0 && rows.slice(0, r).some((p) => p.includes(id))) cell.classList.add("shared");
      seen.add(id);
      const tok = h("span", "tok draft", ch(node.token));
      tok.title = `draft probability ${fmt(node.draftProb, 3)}`;
      cell.append(tok, h("span", "coin"));
      row.append(cell);
      if (!byNode.has(id)) byNode.set(id, []);
      byNode.get(id).push(cell);
    });
    for (let d = path.length; d <= depth; d++) row.append(h("span", "cell empty"));
    grid.append(row);
  });
  const out = h("div", "row outrow");
  out.append(h("span", "rowlabel", "emitted"));
  const outCells = [];
  for (let d = 1; d <= depth + 1; d++) {
    const c = h("span", "cell result");
    c.dataset.depth = String(d);
    outCells.push(c);
    out.append(c);
  }
  grid.append(out);
  stage.append(grid);

  const note = (text, cls) => {
    const li = h("li", cls, text);
    notes.append(li);
    return li;
  };
  const mark = (id, cls) => {
    for (const cell of byNode.get(id) ?? []) {
      const tok = cell.querySelector(".tok");
      tok.classList.remove("draft", "verified");
      tok.classList.add(cls);
      cell.dataset.state = cls;
    }
  };
  const stateOf = (id) => byNode.get(id)?.[0]?.dataset.state;
  const descendants = (id) => trace.drafts.filter((d) => {
    let p = d.parent;
    while (p !== null && p !== undefined) {
      if (p === id) return true;
      p = trace.drafts[p].parent;
    }
    return false;
  });
  const emit = (d, token, source, extra) => {
    const c = outCells[d - 1];
    c.replaceChildren(h("span", `tok ${source}`, ch(token)));
    c.dataset.source = source;
    c.dataset.token = String(token);
    if (extra) c.title = extra;
  };

  async function animate(pacer, timing) {
    const t = timing;
    if (trace.drafts.length === 0) {
      note(`No drafts: the target runs once and samples the next character.`);
    } else {
      // 1. Drafts appear one depth at a time (the draft model runs once per depth).
      for (let d = 1; d <= depth; d++) {
        for (const node of trace.drafts.filter((n) => n.depth === d)) {
          for (const cell of byNode.get(node.id) ?? []) cell.classList.remove("hidden");
        }
        await pacer.wait(t.draft);
      }
      note(`The draft proposes ${trace.drafts.length} token${trace.drafts.length > 1 ? "s" : ""}` +
        (rows.length > 1 ? ` in ${rows.length} rows (branching ${trace.branching.join("·")}).` : "."));
      // 2. One target pass scores every position at once.
      stage.classList.add("verifying");
      for (const node of trace.drafts) {
        for (const cell of byNode.get(node.id)) cell.querySelector(".tok").classList.add("verified");
      }
      note(`One target pass scores all ${depth + 1} positions at once.`);
      await pacer.wait(t.verify);
      stage.classList.remove("verifying");
    }
    // 3. Position by position: coin flips, survivors, residual.
    for (const step of trace.steps) {
      const out = step.outcome;
      if (step.kseq) {
        note(`pos ${step.depth}: k-Seq over ${step.candidates.length} draft${step.candidates.length > 1 ? "s" : ""}, ρ* = ${fmt(step.kseq.rhoStar, 3)}, ρ = ${fmt(step.kseq.rho, 3)}, P(accept) = ${fmt(step.kseq.acceptance, 3)}`, "kseq");
      }
      if (step.otm) {
        const o = step.otm;
        note(`pos ${step.depth}: optimal selection over ${step.candidates.length} draft${step.candidates.length > 1 ? "s" : ""} (the ratio race: the draft with the largest w(x)/u), P(accept) = ${fmt(o.acceptance, 3)} of the best possible ${fmt(o.optimum, 3)}`, "kseq");
      }
      if (step.mentored) {
        const m = step.mentored;
        let base = null;
        if (step.targetProbs && step.draftProbs) {
          base = step.targetProbs.reduce((s, x, i) => s + Math.min(x, step.draftProbs[i]), 0);
        }
        note(`pos ${step.depth}: mentored α = ${fmt(m.alpha, 3)}, β = ${fmt(m.beta, 3)}, KL = ${fmt(m.kl, 3)} ≤ D = ${fmt(m.klBudget, 3)}; acceptance ${fmt(m.acceptance, 3)}` +
          (base !== null ? ` vs ${fmt(base, 3)} lossless (the budget bought +${fmt(m.acceptance - base, 3)})` : ""), "mentored");
      }
      for (const test of out.tests) {
        const id = step.candidates[test.draftIndex];
        const cells = byNode.get(id) ?? [];
        const limit = test.acceptProb;
        const coin = test.uniform === null || test.uniform === undefined
          ? (test.accepted ? "argmax ✓" : "≠ argmax ✗")
          : `u ${fmt(test.uniform)} ${test.accepted ? "<" : "≥"} ${fmt(limit)}`;
        for (const cell of cells) {
          const c = cell.querySelector(".coin");
          c.textContent = coin;
          c.title = `ratio target/draft = ${fmt(test.ratio, 3)} (target ${fmt(test.targetProb, 4)}, draft ${fmt(test.draftProb, 4)}); accept probability ${fmt(limit, 3)}`;
          cell.dataset.uniform = String(test.uniform);
          cell.dataset.acceptProb = String(limit);
        }
        mark(id, test.accepted ? "accepted" : "rejected");
        const rule = step.kseq
          ? "min(1, target/(ρ·draft))"
          : step.otm
            ? "min(1, target/r), r = the race's chance of choosing this token"
            : step.mentored
            ? "the mentored acceptance r"
            : trace.method.startsWith("multi") && test.draftIndex > 0
              ? "min(1, residual/draft)"
              : "min(1, target/draft)";
        note(`pos ${step.depth}: draft '${ch(test.token)}' — u = ${fmt(test.uniform, 3)} vs ${rule} = ${fmt(limit, 3)} → ${test.accepted ? "accepted" : "rejected"}`,
          test.accepted ? "ok" : "no");
        await pacer.wait(t.coin);
      }
      // Candidates that did not survive, and everything after them, are discarded.
      for (const id of step.candidates) {
        if (!step.survivors.includes(id) && stateOf(id) !== "rejected") mark(id, "discarded");
      }
      for (const id of step.candidates) {
        if (!step.survivors.includes(id)) for (const d of descendants(id)) mark(d.id, "discarded");
      }
      for (const id of step.survivors) if (stateOf(id) !== "accepted") mark(id, "accepted");
      if (out.residual) {
        emit(step.depth, step.token, "resampled", `drawn from the residual (${out.residual.residual.kind}), u = ${fmt(out.residual.uniform, 3)}`);
        const li = note(`pos ${step.depth}: every draft rejected → '${ch(step.token)}' drawn from the residual ${residualName(out.residual.residual)} (u = ${fmt(out.residual.uniform, 3)})`, "res");
        const residual = residualOf(step);
        if (residual) li.append(residualBars(residual, step.token, ch));
        await pacer.wait(t.residual);
      } else {
        emit(step.depth, step.token, "accepted");
        if (step.survivors.length > 1) note(`pos ${step.depth}: ${step.survivors.length} drafts agree and survive to the next position`);
      }
    }
    if (trace.bonus) {
      emit(trace.steps.length + 1, trace.bonus.token, "bonus", `sampled from the target, u = ${fmt(trace.bonus.uniform, 3)}`);
      note(trace.drafts.length ? `All drafts accepted → bonus '${ch(trace.bonus.token)}' from the target's last position` : `Target samples '${ch(trace.bonus.token)}' (u = ${fmt(trace.bonus.uniform, 3)})`, "bonus");
      await pacer.wait(t.residual);
    }
    if (trace.truncated) note(`${trace.truncated} token(s) after the stop condition dropped.`);
    if (dynamicGamma && trace.nextGamma !== null && trace.nextGamma !== undefined && trace.drafts.length) {
      note(`dynamic γ: next round drafts ${trace.nextGamma}`);
    }
  }
  return { animate, outCells };
}

/** The residual's most likely tokens as small bars, the drawn token marked (on the stage). */
function residualBars(residual, drawn, ch, n = 4) {
  const order = [...residual.keys()].sort((a, b) => residual[b] - residual[a]).slice(0, n);
  if (!order.includes(drawn)) order.push(drawn);
  const box = h("span", "resbars");
  box.setAttribute("role", "img");
  box.setAttribute("aria-label", `residual: ${order.map((i) => `${ch(i)} ${fmt(residual[i], 2)}`).join(", ")}`);
  for (const i of order) {
    const bar = h("span", i === drawn ? "resbar drawn" : "resbar");
    bar.dataset.token = String(i);
    const fill = h("span", "fill");
    fill.style.width = `${Math.max(1, Math.round(residual[i] * 100))}%`;
    bar.append(h("span", "lab", ch(i)), fill, h("span", "val", fmt(residual[i], 2)));
    box.append(bar);
  }
  return box;
}

function residualName(r) {
  switch (r.kind) {
    case "target_minus_draft":
      return "norm(max(0, target − draft))";
    case "target":
      return "(the target itself)";
    case "k_seq":
      return `of k-Seq (ρ = ${fmt(r.rho, 3)})`;
    case "multi_round":
      return `after ${r.rounds} rejection${r.rounds > 1 ? "s" : ""}`;
    case "race":
      return "norm(max(0, target − r)), r = the race's selection";
    case "mentored":
      return `∝ max(0, target/β − draft), β = ${fmt(r.beta, 3)}`;
    default:
      return r.kind;
  }
}
