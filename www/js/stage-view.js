// Draws a stage model (stage-model.js) into the page: the draft tree (tree.js), each
// draft's mark and test, the emitted row, the sentences under the tree and the round's log,
// and the residual a replacement was drawn from (residual-view.js). It computes nothing of
// its own: what it draws is the model's, and the model is the trace's. Drawing the next
// step of the same round changes only what changed.
import { h } from "./state.js";
import { rich } from "./glossary.js";
import { buildTree } from "./tree.js";
import { residualChart } from "./residual-view.js";
import { overlap } from "./math.js";
import { showPiece } from "./piece-text.js";
import { fmt } from "./stage-model.js";

/** What is drawn now: the round, its DOM handles, and how much of the model they show. */
let drawn = null;

/** Σ min(target, draft) at a step (the package's plan()), asked once per step. */
const lossless = new WeakMap();
function losslessOf(step) {
  if (!step?.targetProbs || !step?.draftProbs) return Promise.resolve(null);
  if (!lossless.has(step)) lossless.set(step, overlap(step.targetProbs, step.draftProbs).catch(() => null));
  return lossless.get(step);
}

/** A sentence: its glossary marks, and for mentored decoding the lossless acceptance it improves on, from the package. */
function sentence(note, trace) {
  const frag = document.createDocumentFragment();
  frag.append(rich(note.text));
  if (note.lossless) {
    const more = h("span", "lossless-compare");
    frag.append(more);
    losslessOf(trace.steps[note.lossless.step]).then((base) => {
      if (base !== null) more.textContent = ` vs ${fmt(base, 3)} lossless (the budget bought +${fmt(note.lossless.acceptance - base, 3)})`;
    });
  }
  return frag;
}

/** Starts drawing `trace` afresh: the stage, the box under it and the log emptied, the tree built. */
function start(boxes, trace, model, options) {
  const { stage, focus, notes } = boxes;
  const ch = (t) => showPiece((options.alphabet ?? [])[t] ?? "?");
  stage.classList.toggle("pieces", model.pieces);
  stage.classList.remove("verifying");
  stage.replaceChildren();
  focus.replaceChildren();
  notes.replaceChildren();
  stage.dataset.round = String(model.round);
  stage.dataset.method = model.method;
  stage.dataset.bug = model.bug;
  const tree = buildTree(stage, trace, ch, fmt);
  const sentences = h("div", "sentences");
  const planted = h("p", "now planted");
  const scheme = h("p", "now scheme");
  const now = h("p", "now");
  now.setAttribute("aria-live", "polite");
  sentences.append(planted, scheme, now);
  focus.append(sentences);
  return { boxes, trace, ch, tree, planted, scheme, now, step: 0, notes: 0, residuals: 0, nodes: new Map(), out: new Map(), shown: { planted: null, scheme: null, line: null } };
}

/** A node's drawn state, as a key: redrawn only when it changes. */
const nodeKey = (n) => `${n.visible}|${n.verified}|${n.state}|${n.coin ? n.coin.lines.join("/") : ""}`;

/**
 * Draws `model`, the stage of round `trace` at some step, into `boxes` ({ stage, focus,
 * notes }); `options` as for stageModel (the alphabet names the tokens).
 */
export function renderStage(boxes, trace, model, options = {}) {
  if (!drawn || drawn.trace !== trace || drawn.boxes.stage !== boxes.stage || model.step < drawn.step || !boxes.stage.firstChild) {
    drawn = start(boxes, trace, model, options);
  }
  const d = drawn;
  const { cells, outCells, edge, redraw } = d.tree;
  boxes.stage.classList.toggle("verifying", model.verifying);
  for (const n of model.nodes) {
    const key = nodeKey(n);
    if (d.nodes.get(n.id) === key) continue;
    d.nodes.set(n.id, key);
    const cell = cells.get(n.id);
    if (!cell) continue;
    cell.classList.toggle("hidden", !n.visible);
    const tok = cell.querySelector(".tok");
    tok.className = `tok ${n.state ?? (n.verified ? "draft verified" : "draft")}`;
    if (n.state) cell.dataset.state = n.state;
    else delete cell.dataset.state;
    edge(n.id, n.state ?? (n.visible ? "draft" : "hidden"));
    const coin = cell.querySelector(".coin");
    if (n.coin) {
      coin.replaceChildren(...n.coin.lines.map((line) => h("span", "", line)));
      coin.title = n.coin.title;
      if (n.coin.rule !== "threshold") cell.dataset.uniform = String(n.coin.uniform);
      cell.dataset.acceptProb = String(n.coin.acceptProb);
    } else {
      coin.replaceChildren();
      coin.removeAttribute("title");
    }
  }
  for (const o of model.out) {
    const key = `${o.token}|${o.source}`;
    if (d.out.get(o.depth) === key || o.token === null) continue;
    d.out.set(o.depth, key);
    const c = outCells[o.depth - 1];
    if (!c) continue;
    c.replaceChildren(h("span", `tok ${o.source}`, o.text));
    c.dataset.source = o.source;
    c.dataset.token = String(o.token);
    if (o.title) c.title = o.title;
  }
  // The sentences under the tree: the planted bug, the position's scheme, the step's.
  for (const [slot, el, base] of [["planted", d.planted, "now planted"], ["scheme", d.scheme, "now scheme"], ["line", d.now, "now"]]) {
    const note = model.now[slot];
    if (d.shown[slot] === note) continue;
    d.shown[slot] = note;
    el.replaceChildren(...(note ? [sentence(note, trace)] : []));
    el.className = slot === "planted" ? base : `${base} ${note?.cls ?? ""}`.trim();
  }
  for (const note of model.notes.slice(d.notes)) {
    const li = h("li", note.cls ?? undefined);
    if (!note.cls) li.removeAttribute("class");
    li.append(sentence(note, trace));
    boxes.notes.append(li);
  }
  d.notes = model.notes.length;
  for (const r of model.residuals.slice(d.residuals)) {
    const step = trace.steps[r.step];
    const bug = r.fromTarget ? { name: r.fromTarget } : null;
    const chart = residualChart(step, r.token, d.ch, 3, model.pieces, bug);
    if (chart) boxes.focus.append(chart);
  }
  d.residuals = model.residuals.length;
  d.step = model.step;
  redraw();
}

/** Forgets what is drawn (the stage was emptied): the next model is drawn afresh. */
export function clearStage() {
  drawn = null;
}
