// The draft set of a round drawn as a tree: the context at the root, one cell per draft
// node in the column of its depth, centred over the leaves below it, and an SVG edge from
// every parent to each child (i.i.d. drafts are a tree whose root has k children).
import { h } from "./state.js";

const NS = "http://www.w3.org/2000/svg";

/** Leaves under each node, in drawing order: Map id → {first, count}, and the leaf count. */
export function treeLayout(trace) {
  const children = new Map();
  for (const d of trace.drafts) {
    const key = d.parent ?? -1;
    if (!children.has(key)) children.set(key, []);
    children.get(key).push(d.id);
  }
  const span = new Map();
  let leaves = 0;
  const walk = (id) => {
    const kids = children.get(id) ?? [];
    const first = leaves;
    if (kids.length === 0) leaves += 1;
    else for (const k of kids) walk(k);
    span.set(id, { first, count: leaves - first });
  };
  for (const k of children.get(-1) ?? []) walk(k);
  return { span, leaves: Math.max(1, leaves), children };
}

let observer = null;

/**
 * Builds the grid: a header row, the tree rows, the emitted row. Returns the node cells
 * (Map id → cell), the emitted cells, and redraw() for the edges.
 */
export function buildTree(stage, trace, ch, fmt) {
  const depth = trace.branching.length;
  const { span, leaves } = treeLayout(trace);
  const grid = h("div", "tree");
  grid.style.setProperty("--cols", String(depth + 1));
  const place = (node, row, rowSpan, col) => {
    node.style.gridRow = `${row} / span ${rowSpan}`;
    node.style.gridColumn = String(col);
    grid.append(node);
  };
  place(h("span", "rowlabel", ""), 1, 1, 1);
  for (let d = 1; d <= depth + 1; d++) place(h("span", "colhead", d <= depth ? `pos ${d}` : "bonus"), 1, 1, d + 1);
  const root = h("span", "root", trace.drafts.length ? "context" : "");
  root.dataset.node = "root";
  place(root, 2, leaves, 1);
  const cells = new Map();
  for (const node of trace.drafts) {
    const { first, count } = span.get(node.id);
    const cell = h("span", "cell hidden");
    cell.dataset.node = String(node.id);
    cell.dataset.depth = String(node.depth);
    const tok = h("span", "tok draft", ch(node.token));
    tok.title = `draft probability ${fmt(node.draftProb, 3)}`;
    cell.append(tok, h("span", "coin"));
    place(cell, 2 + first, count, node.depth + 1);
    cells.set(node.id, cell);
  }
  const outRow = 2 + leaves;
  const label = h("span", "rowlabel outlabel", "emitted");
  place(label, outRow, 1, 1);
  const outCells = [];
  for (let d = 1; d <= depth + 1; d++) {
    const c = h("span", "cell result");
    c.dataset.depth = String(d);
    outCells.push(c);
    place(c, outRow, 1, d + 1);
  }
  const edges = document.createElementNS(NS, "svg");
  edges.setAttribute("class", "edges");
  edges.setAttribute("aria-hidden", "true");
  grid.prepend(edges);
  stage.append(grid);

  const paths = new Map();
  for (const node of trace.drafts) {
    const p = document.createElementNS(NS, "path");
    p.setAttribute("class", "edge hidden");
    p.dataset.from = node.parent === null || node.parent === undefined ? "root" : String(node.parent);
    p.dataset.to = String(node.id);
    edges.append(p);
    paths.set(node.id, p);
  }
  function redraw() {
    const box = grid.getBoundingClientRect();
    edges.setAttribute("width", String(box.width));
    edges.setAttribute("height", String(box.height));
    const anchor = (id, side) => {
      const el = id === "root" ? root : cells.get(Number(id))?.querySelector(".tok");
      const r = el.getBoundingClientRect();
      return [(side === "right" ? r.right : r.left) - box.left, r.top + r.height / 2 - box.top];
    };
    for (const [id, p] of paths) {
      const [x1, y1] = anchor(p.dataset.from, "right");
      const [x2, y2] = anchor(id, "left");
      const mx = (x1 + x2) / 2;
      p.setAttribute("d", `M${x1.toFixed(1)},${y1.toFixed(1)} C${mx.toFixed(1)},${y1.toFixed(1)} ${mx.toFixed(1)},${y2.toFixed(1)} ${x2.toFixed(1)},${y2.toFixed(1)}`);
    }
  }
  observer?.disconnect();
  observer = new ResizeObserver(() => redraw());
  observer.observe(grid);
  redraw();
  /** Shows the edge into node `id`, styled like the node's state. */
  const edge = (id, state) => {
    const p = paths.get(id);
    if (p) p.setAttribute("class", `edge ${state}`);
  };
  return { cells, outCells, edge, redraw };
}
