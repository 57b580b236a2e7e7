// Hand-written SVG charts: bars (distributions, histograms) and curves with marked points.
// Drawn at 1:1 (user units are pixels up to the container's width), text at 12–13 px,
// legends in HTML under the chart, ticks chosen so labels never overlap.
const NS = "http://www.w3.org/2000/svg";
const W = 340;
const FONT = 12; // px, tick and value labels (CSS sets the same)
const charW = FONT * 0.62; // a generous estimate of one character's width

export function el(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function svg(width, height, label) {
  return el("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": label, class: "chart" });
}

const fmt = (x, d = 2) => (x === null || x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(d));

/** An HTML legend: [{name, cls}]. */
function legendList(items, shape = "line") {
  const ul = document.createElement("ul");
  ul.className = "chart-legend";
  for (const it of items) {
    const li = document.createElement("li");
    const sw = document.createElement("span");
    sw.className = `swatch ${shape === "dot" || it.dot ? "dot" : ""} ${it.cls ?? ""}`;
    li.append(sw, it.name);
    ul.append(li);
  }
  return ul;
}

/** Decimals needed to print multiples of `step` exactly (0.25 → 2, 0.1 → 1, 2 → 0). */
export function decimalsOf(step) {
  for (let d = 0; d <= 6; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-9) return d;
  return 6;
}

/** A "nice" tick step giving at most `most` intervals over `span`. */
export function niceStep(span, most = 5, integer = false) {
  const steps = [];
  for (let e = -4; e <= 4; e++) for (const m of [1, 2, 2.5, 5]) steps.push(m * 10 ** e);
  for (const s of steps) {
    if (integer && !Number.isInteger(s)) continue;
    if (span / s <= most + 1e-9) return s;
  }
  return 10 ** 5;
}

/**
 * Grouped horizontal bars: rows of {label, values: [..], mark} with one colour class per
 * series [{name, cls}]. Each bar has its own 14 px band, so value labels never overlap.
 * `fitLabels` widens the label column to the longest label (token pieces, a pooled row);
 * a row with `pooled` is drawn as the rest of the vocabulary.
 */
export function groupedBars(container, { rows, series, label, max, fitLabels = false }) {
  const band = 15;
  const rowH = band * series.length + 6;
  const longest = Math.max(0, ...rows.map((r) => [...String(r.label)].length));
  const left = fitLabels ? Math.min(120, Math.max(40, Math.ceil(14 + longest * charW))) : 40;
  const height = rows.length * rowH + 4;
  const top = max ?? Math.max(1e-9, ...rows.flatMap((r) => r.values.filter(Number.isFinite)));
  const s = svg(W, height, label);
  rows.forEach((row, i) => {
    const y = 2 + i * rowH;
    s.append(el("text", { x: left - 6, y: y + (band * series.length) / 2 + 4, class: row.pooled ? "tick pooled" : "tick", "text-anchor": "end" }, row.label));
    row.values.forEach((v, j) => {
      const w = Number.isFinite(v) ? ((W - left - 50) * v) / top : 0;
      const bar = el("rect", { x: left, y: y + j * band + 2, width: Math.max(0, w), height: band - 4, class: `bar ${series[j].cls}${row.pooled ? " pooled" : ""}` });
      bar.append(el("title", {}, `${series[j].name} ${row.label}: ${fmt(v, 4)}`));
      s.append(bar);
      s.append(el("text", { x: left + w + 4, y: y + j * band + band - 3, class: "val" }, v > 0.0005 ? fmt(v, 3) : "0"));
    });
    if (row.mark) s.append(el("text", { x: 2, y: y + (band * series.length) / 2 + 4, class: "mark" }, row.mark));
  });
  container.replaceChildren(legendList(series.map((x) => ({ name: x.name, cls: x.cls })), "box"), s);
}

/** Vertical bars: values indexed from `start` (e.g. positions 1.. or lengths 0..). */
export function columns(container, { values, start = 0, label, max, cls = "bar-accent", fmtValue = (v) => fmt(v, 2), xLabel }) {
  const W = 300; // narrower: two of these sit side by side in the metrics panel
  const height = 150;
  const n = Math.max(values.length, 1);
  const top = max ?? Math.max(1e-9, ...values);
  const s = svg(W, height, label);
  const bw = Math.min(40, (W - 20) / n);
  // Integer ticks, thinned so labels keep apart.
  const widest = String(n - 1 + start).length * charW + 6;
  const every = Math.max(1, Math.ceil(widest / bw));
  const showValues = values.length > 0 && bw >= Math.max(...values.map((v) => fmtValue(v).length)) * charW + 4;
  values.forEach((v, i) => {
    const hgt = ((height - 44) * v) / top;
    const x = 10 + i * bw;
    const r = el("rect", { x: x + 1, y: height - 22 - hgt, width: Math.max(1, bw - 2), height: Math.max(0, hgt), class: `bar ${cls}` });
    r.append(el("title", {}, `${i + start}: ${fmtValue(v)}`));
    s.append(r);
    if ((i + start) % every === 0 || every === 1) s.append(el("text", { x: x + bw / 2, y: height - 6, class: "tick", "text-anchor": "middle" }, String(i + start)));
    if (showValues) s.append(el("text", { x: x + bw / 2, y: height - 26 - hgt, class: "val", "text-anchor": "middle" }, fmtValue(v)));
  });
  if (values.length === 0) s.append(el("text", { x: W / 2, y: height / 2, class: "tick", "text-anchor": "middle" }, "no data yet"));
  container.replaceChildren(s);
  if (xLabel) container.append(xLabel);
}

/**
 * Line chart: curves [{points: [[x,y]], cls, name}], marks [{x, y, cls, name}].
 * xLog: log-scale x axis; an x of 0 is drawn at the left, past an axis break.
 * xInteger: the x variable is a whole number (integer ticks only).
 */
export function lines(container, { curves, marks = [], label, xLabel, yLabel, xLog = false, xInteger = false, yMin = 0, yMax }) {
  const legend = curves.filter((c) => c.name).map((c) => ({ name: c.name, cls: c.cls }))
    .concat(marks.filter((m) => m.name).map((m) => ({ name: m.name, cls: m.cls, dot: true })));
  // The plot box (top 18, 130 high: bottom at 148) is what the page tests read values from.
  const pad = { l: 44, r: 14, t: 18, b: 38 };
  const plotH = 130;
  const height = pad.t + plotH + pad.b;
  const all = curves.flatMap((c) => c.points.map((p) => p[0])).concat(marks.map((m) => m.x)).filter(Number.isFinite);
  const hasZero = xLog && all.some((x) => x === 0);
  const xs = all.filter((x) => !xLog || x > 0);
  const ys = curves.flatMap((c) => c.points.map((p) => p[1])).concat(marks.map((m) => m.y)).filter(Number.isFinite);
  const s = svg(W, height, label);
  if (xs.length === 0) {
    s.append(el("text", { x: W / 2, y: height / 2, class: "tick", "text-anchor": "middle" }, "no data yet"));
    container.replaceChildren(s);
    return;
  }
  const tx = xLog ? Math.log10 : (x) => x;
  let x0 = Math.min(...xs.map(tx));
  let x1 = Math.max(...xs.map(tx));
  if (xLog) {
    x0 = Math.floor(x0 + 1e-9);
    x1 = Math.ceil(x1 - 1e-9);
  }
  if (x1 === x0) x1 = x0 + 1;
  // y: nice ticks; the top rounded up to a tick unless given.
  const yRaw1 = yMax ?? Math.max(...ys) * 1.05;
  const yStep = niceStep(Math.max(1e-9, yRaw1 - yMin), 5);
  const y1 = yMax ?? Math.ceil(yRaw1 / yStep - 1e-9) * yStep;
  const y0 = yMin;
  const bottom = pad.t + plotH;
  const zeroGap = hasZero ? 46 : 0;
  const left = pad.l + zeroGap;
  const X = (x) => (hasZero && x === 0 ? pad.l + 10 : left + ((tx(x) - x0) / (x1 - x0)) * (W - left - pad.r));
  const Y = (y) => bottom - ((y - y0) / (y1 - y0 || 1)) * plotH;
  s.append(el("line", { x1: pad.l, y1: bottom, x2: W - pad.r, y2: bottom, class: "axis" }));
  s.append(el("line", { x1: pad.l, y1: pad.t, x2: pad.l, y2: bottom, class: "axis" }));
  const yd = decimalsOf(yStep);
  for (let yv = y0; yv <= y1 + 1e-9; yv += yStep) {
    s.append(el("text", { x: pad.l - 5, y: Y(yv) + 4, class: "tick", "text-anchor": "end" }, yv.toFixed(yd)));
    s.append(el("line", { x1: pad.l, y1: Y(yv), x2: W - pad.r, y2: Y(yv), class: "grid" }));
  }
  // x ticks: decades on a log axis, whole numbers for an integer variable, nice steps else.
  let xt;
  let xfmt;
  if (xLog) {
    xt = [];
    for (let e = x0; e <= x1; e++) xt.push(10 ** e);
    xfmt = (v) => (v === 0 ? "0" : v >= 1 ? String(Math.round(v)) : v.toFixed(Math.round(-Math.log10(v))));
    if (hasZero) {
      xt.unshift(0);
      // The axis break between 0 and the log scale.
      s.append(el("text", { x: pad.l + 26, y: bottom + 1, class: "tick break", "text-anchor": "middle" }, "//"));
    }
  } else {
    const span = x1 - x0;
    const step = niceStep(span, Math.max(2, Math.floor((W - pad.l - pad.r) / 40)), xInteger);
    xt = [x0];
    for (let v = Math.ceil(x0 / step) * step; v <= x1 + 1e-9; v += step) if (v - x0 >= step * 0.6) xt.push(v);
    if (xInteger) xt = xt.filter((v) => Number.isInteger(Math.round(v * 1e9) / 1e9)).map((v) => Math.round(v));
    const d = xInteger ? 0 : decimalsOf(step);
    xfmt = (v) => v.toFixed(d);
  }
  for (const xv of xt) {
    s.append(el("text", { x: X(xv), y: bottom + 16, class: "tick", "text-anchor": "middle", "data-x": xv }, xfmt(xv)));
  }
  s.append(el("text", { x: (W + pad.l) / 2, y: bottom + 33, class: "tick", "text-anchor": "middle" }, xLabel ?? ""));
  s.append(el("text", { x: pad.l + 6, y: 13, class: "tick" }, yLabel ?? ""));
  for (const c of curves) {
    const pts = c.points.filter((p) => Number.isFinite(p[1]) && Number.isFinite(p[0]) && (!xLog || p[0] > 0 || (hasZero && p[0] === 0)));
    if (pts.length === 0) continue;
    const d = pts.map((p, i) => `${i ? "L" : "M"}${X(p[0]).toFixed(1)},${Y(Math.min(p[1], y1)).toFixed(1)}`).join("");
    const path = el("path", { d, class: `curve ${c.cls ?? ""}` });
    path.append(el("title", {}, c.name));
    s.append(path);
  }
  for (const m of marks) {
    if (!Number.isFinite(m.x) || !Number.isFinite(m.y) || (xLog && m.x < 0) || (xLog && m.x === 0 && !hasZero)) continue;
    const dot = el("circle", { cx: X(m.x), cy: Y(Math.min(Math.max(m.y, y0), y1)), r: 5, class: `point ${m.cls ?? ""}` });
    dot.append(el("title", {}, `${m.name}: ${fmt(m.y, 3)} at ${fmt(m.x, 3)}`));
    s.append(dot);
  }
  container.replaceChildren(s, legendList(legend));
}
