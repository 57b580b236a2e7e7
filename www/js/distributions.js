// The residual distributions of every scheme, recomputed from recorded target/draft
// distributions (formulas of DESIGN.md §2), for the bar charts.

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

/** Probabilities at temperature 1 → sampling temperature/top-k/top-p, as the engine applies them. */
export function totalVariation(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += Math.abs(a[i] - b[i]);
  return s / 2;
}
