// The residual distributions of every scheme, recomputed from recorded target/draft
// distributions (formulas of docs/design.md), for the bar charts.

const norm = (v) => {
  const s = v.reduce((a, b) => a + b, 0);
  return s > 1e-12 ? v.map((x) => x / s) : null;
};

/** The distribution the replacement token was drawn from, or null when unknown. */
export function residualOf(step) {
  const target = step.targetProbs;
  const draft = step.draftProbs;
  const draw = step.outcome?.residual;
  if (!target || !draw) return null;
  const r = draw.residual;
  switch (r.kind) {
    case "target":
      return target.slice();
    case "target_minus_draft":
      return draft ? norm(target.map((t, i) => Math.max(0, t - draft[i]))) ?? target.slice() : null;
    case "k_seq": {
      if (!draft) return null;
      const f = r.acceptance / r.overlap;
      return norm(target.map((t, i) => Math.max(0, t - Math.min(draft[i], t / r.rho) * f))) ?? target.slice();
    }
    case "multi_round": {
      if (!draft) return null;
      let res = target.slice();
      for (let j = 0; j < r.rounds; j++) res = norm(res.map((x, i) => Math.max(0, x - draft[i]))) ?? target.slice();
      return res;
    }
    case "mentored":
      return draft ? norm(target.map((t, i) => Math.max(0, t / r.beta - draft[i]))) ?? target.slice() : null;
    case "race": {
      const sel = step.otm?.selection;
      return sel ? norm(target.map((t, i) => Math.max(0, t - sel[i]))) ?? target.slice() : null;
    }
    default:
      return null;
  }
}

/** Indices of the n largest entries over several vectors (union, by max). */
export function topIndices(vectors, n, always = []) {
  const len = vectors.find(Boolean)?.length ?? 0;
  const score = new Array(len).fill(0);
  for (const v of vectors) if (v) v.forEach((x, i) => (score[i] = Math.max(score[i], x)));
  const order = [...score.keys()].sort((a, b) => score[b] - score[a]);
  const chosen = new Set(always.filter((i) => i >= 0 && i < len));
  for (const i of order) {
    if (chosen.size >= n) break;
    chosen.add(i);
  }
  return [...chosen].sort((a, b) => score[b] - score[a]);
}

/**
 * Re-targets a distribution recorded at temperature `from` (with no top-k/top-p) to new
 * sampling settings, as the engine derives it from logits: softmax(logits/T) ∝
 * recorded^(from/T), then top-k, then top-p. Exact up to the rounding of the recorded
 * probabilities; temperature 0 is the one-hot argmax.
 */
export function retarget(probs, from, { temperature, topK, topP }) {
  let argmax = 0;
  for (let i = 1; i < probs.length; i++) if (probs[i] > probs[argmax]) argmax = i;
  if (temperature === 0) return probs.map((_, i) => (i === argmax ? 1 : 0));
  const power = from / temperature;
  let w = probs.map((x) => (x > 0 ? Math.exp(power * Math.log(x / probs[argmax])) : 0));
  if (topK && topK < w.length) {
    const order = [...w.keys()].sort((a, b) => w[b] - w[a]);
    const keep = new Set(order.slice(0, topK));
    w = w.map((x, i) => (keep.has(i) ? x : 0));
  }
  if (topP && topP < 1) {
    const total = w.reduce((a, b) => a + b, 0);
    const order = [...w.keys()].sort((a, b) => w[b] - w[a]);
    const keep = new Set();
    let mass = 0;
    for (const i of order) {
      keep.add(i);
      mass += w[i] / total;
      if (mass >= topP) break;
    }
    w = w.map((x, i) => (keep.has(i) ? x : 0));
  }
  const sum = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / sum);
}

/** Σ min(target, draft) = 1 − TV: the acceptance probability of one draft token. */
export function overlap(target, draft) {
  let s = 0;
  for (let i = 0; i < target.length; i++) s += Math.min(target[i], draft[i]);
  return s;
}
