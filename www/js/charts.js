// Hand-written SVG charts: bars (distributions, histograms) and curves with a marked point.
const NS = "http://www.w3.org/2000/svg";

export function el(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function svg(width, height, label) {
  return el("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label, class: "chart" });
}

const fmt = (x, d = 2) => (x === null || x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(d));

/**
 * Grouped horizontal bars: rows of {label, values: [..]} with one colour class per series.
 * series: [{name, cls}]
 */
export function groupedBars(container, { rows, series, label, max }) {
  const rowH = 8 * series.length + 8;
  const width = 320;
  const left = 34;
  const height = rows.length * rowH + 18;
  const top = max ?? Math.max(1e-9, ...rows.flatMap((r) => r.values.filter(Number.isFinite)));
  const s = svg(width, height, label);
  rows.forEach((row, i) => {
    const y = 14 + i * rowH;
    s.append(el("text", { x: left - 6, y: y + rowH / 2, class: "tick", "text-anchor": "end", "dominant-baseline": "middle" }, row.label));
    row.values.forEach((v, j) => {
      const w = Number.isFinite(v) ? ((width - left - 44) * v) / top : 0;
      const bar = el("rect", { x: left, y: y + j * 8, width: Math.max(0, w), height: 7, class: `bar ${series[j].cls}` });
      bar.append(el("title", {}, `${series[j].name} ${row.label}: ${fmt(v, 4)}`));
      s.append(bar);
      if (v > 0.0005) s.append(el("text", { x: left + w + 3, y: y + j * 8 + 6, class: "val" }, fmt(v, 3)));
    });
    if (row.mark) s.append(el("text", { x: 2, y: y + rowH / 2, class: "mark", "dominant-baseline": "middle" }, row.mark));
  });
  series.forEach((sr, j) => {
    s.append(el("rect", { x: left + j * 90, y: 2, width: 8, height: 8, class: `bar ${sr.cls}` }));
    s.append(el("text", { x: left + 12 + j * 90, y: 9, class: "tick" }, sr.name));
  });
  container.replaceChildren(s);
}

/** Vertical bars: values indexed from `start` (e.g. positions 1.. or lengths 0..). */
export function columns(container, { values, start = 0, label, max, cls = "bar-accent", fmtValue = (v) => fmt(v, 2) }) {
  const width = 300;
  const height = 120;
  const n = Math.max(values.length, 1);
  const top = max ?? Math.max(1e-9, ...values);
  const s = svg(width, height, label);
  const bw = Math.min(36, (width - 20) / n);
  values.forEach((v, i) => {
    const h = ((height - 34) * v) / top;
    const x = 10 + i * bw;
    const r = el("rect", { x: x + 1, y: height - 18 - h, width: bw - 2, height: Math.max(0, h), class: `bar ${cls}` });
    r.append(el("title", {}, `${i + start}: ${fmtValue(v)}`));
    s.append(r);
    s.append(el("text", { x: x + bw / 2, y: height - 5, class: "tick", "text-anchor": "middle" }, String(i + start)));
    if (bw > 14) s.append(el("text", { x: x + bw / 2, y: height - 21 - h, class: "val", "text-anchor": "middle" }, fmtValue(v)));
  });
  container.replaceChildren(s);
}

/**
 * Line chart: curves [{points: [[x,y]], cls, name}], marks [{x, y, cls, name}].
 * xLog: log-scale x axis (values > 0).
 */
export function lines(container, { curves, marks = [], label, xLabel, yLabel, xLog = false, yMin = 0, yMax }) {
  const legend = curves.filter((c) => c.name).concat(marks.filter((m) => m.name));
  const width = 320;
  const pad = { l: 38, r: 10, t: 18, b: 30 };
  const plotH = 130;
  const legendRows = Math.ceil(legend.length / 2);
  const height = pad.t + plotH + pad.b + legendRows * 12;
  const xs = curves.flatMap((c) => c.points.map((p) => p[0])).concat(marks.map((m) => m.x)).filter((x) => Number.isFinite(x) && (!xLog || x > 0));
  const ys = curves.flatMap((c) => c.points.map((p) => p[1])).concat(marks.map((m) => m.y)).filter(Number.isFinite);
  const s = svg(width, height, label);
  if (xs.length === 0) {
    s.append(el("text", { x: width / 2, y: height / 2, class: "tick", "text-anchor": "middle" }, "no data yet"));
    container.replaceChildren(s);
    return;
  }
  const tx = xLog ? Math.log10 : (x) => x;
  let x0 = Math.min(...xs.map(tx));
  let x1 = Math.max(...xs.map(tx));
  if (x1 === x0) x1 = x0 + 1;
  const y0 = yMin;
  let y1 = yMax ?? Math.max(...ys) * 1.08;
  if (!(y1 > y0)) y1 = y0 + 1;
  const bottom = pad.t + plotH;
  const X = (x) => pad.l + ((tx(x) - x0) / (x1 - x0)) * (width - pad.l - pad.r);
  const Y = (y) => bottom - ((y - y0) / (y1 - y0)) * plotH;
  s.append(el("line", { x1: pad.l, y1: bottom, x2: width - pad.r, y2: bottom, class: "axis" }));
  s.append(el("line", { x1: pad.l, y1: pad.t, x2: pad.l, y2: bottom, class: "axis" }));
  for (let i = 0; i <= 4; i++) {
    const yv = y0 + ((y1 - y0) * i) / 4;
    s.append(el("text", { x: pad.l - 4, y: Y(yv) + 3, class: "tick", "text-anchor": "end" }, fmt(yv, yv >= 10 ? 0 : 1)));
    s.append(el("line", { x1: pad.l, y1: Y(yv), x2: width - pad.r, y2: Y(yv), class: "grid" }));
  }
  const xt = xLog ? [x0, (x0 + x1) / 2, x1].map((v) => 10 ** v) : [x0, (x0 + x1) / 2, x1];
  for (const xv of xt) {
    s.append(el("text", { x: X(xv), y: bottom + 12, class: "tick", "text-anchor": "middle" }, xv < 0.1 ? xv.toPrecision(1) : fmt(xv, xv >= 10 || Number.isInteger(xv) ? 0 : 2)));
  }
  s.append(el("text", { x: (width + pad.l) / 2, y: bottom + 25, class: "tick", "text-anchor": "middle" }, xLabel));
  s.append(el("text", { x: 4, y: 10, class: "tick" }, yLabel));
  for (const c of curves) {
    const pts = c.points.filter((p) => Number.isFinite(p[1]) && (!xLog || p[0] > 0));
    if (pts.length === 0) continue;
    const d = pts.map((p, i) => `${i ? "L" : "M"}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join("");
    const path = el("path", { d, class: `curve ${c.cls ?? ""}` });
    path.append(el("title", {}, c.name));
    s.append(path);
  }
  for (const m of marks) {
    if (!Number.isFinite(m.x) || !Number.isFinite(m.y) || (xLog && m.x <= 0)) continue;
    const dot = el("circle", { cx: X(m.x), cy: Y(Math.min(Math.max(m.y, y0), y1)), r: 4.5, class: `point ${m.cls ?? ""}` });
    dot.append(el("title", {}, `${m.name}: ${fmt(m.y, 3)} at ${fmt(m.x, 3)}`));
    s.append(dot);
  }
  legend.forEach((c, i) => {
    const x = pad.l + (i % 2) * 140;
    const y = bottom + pad.b + Math.floor(i / 2) * 12 + 4;
    s.append(el("rect", { x, y: y - 7, width: 8, height: 8, class: `key ${c.cls ?? ""}` }));
    s.append(el("text", { x: x + 12, y, class: "tick" }, c.name));
  });
  container.replaceChildren(s);
}
