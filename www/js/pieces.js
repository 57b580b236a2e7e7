// Tokens that are text pieces, and vocabularies too large to keep whole. A GGUF model's
// tokens are byte-level BPE pieces (" the", "\n") out of tens of thousands, and each trace
// it sends carries a whole distribution per position (49,152 numbers for SmolLM2), so a
// round is compacted on arrival: each distribution keeps its most likely tokens and every
// token the round names (drafts, emitted, tested), the rest pooled into one number.
// Older rounds keep fewer, so a long run stays small. The helpers here read both shapes,
// and a dense array (the bundled pair's 65 characters) exactly as before.
import { hook } from "./state.js";

/** Vocabularies larger than this are compacted (the test hook may lower it). */
hook.largeVocab = 4096;
/** Vocabularies larger than this get a pooled "other N tokens" row under their top bars. */
export const POOLED_ROW_VOCAB = 128;
const KEEP = 256; // entries per distribution in the recent rounds (the theory charts' cache)
const KEEP_OLD = 16; // in older ones: the distributions panel shows 8, the residual 5
export const RECENT = 32; // rounds kept at KEEP
const MASS = 1 - 1e-6; // fewer entries when these carry this much of the mass

export { showPiece, shortPiece } from "./piece-text.js";

/** A compacted distribution: { sparse, size, ids, p, rest } with ids by decreasing p. */
export const isSparse = (v) => !!v && v.sparse === true;
/** The vocabulary size of a distribution (dense or compacted). */
export const sizeOf = (v) => (!v ? 0 : isSparse(v) ? v.size : v.length);

const indexes = new WeakMap();
/** p(t) of a distribution; 0 for a token a compacted one did not keep (its mass is in `rest`). */
export function probOf(v, t) {
  if (!isSparse(v)) return v?.[t];
  let index = indexes.get(v);
  if (!index) {
    index = new Map(v.ids.map((id, i) => [id, i]));
    indexes.set(v, index);
  }
  const i = index.get(t);
  return i === undefined ? 0 : v.p[i];
}

/** The token ids a distribution holds: all of a dense one, the kept ones of a compacted one. */
export const idsOf = (v) => (isSparse(v) ? v.ids : [...v.keys()]);

/** The `keep` largest entries of a dense vector with every token of `named`: a compacted distribution. */
function compactDense(v, named, keep) {
  // One pass with a sorted buffer of the best `keep`: most entries lose to its smallest at once.
  const top = [];
  let floor = -Infinity;
  let total = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    total += x;
    if (x <= floor || !(x > 0)) continue;
    let j = Math.min(top.length, keep - 1);
    while (j > 0 && v[top[j - 1]] < x) {
      top[j] = top[j - 1];
      j -= 1;
    }
    top[j] = i;
    if (top.length === keep) floor = v[top[keep - 1]];
  }
  return sparseOf(top.map((i) => [i, v[i]]), named, (t) => v[t] ?? 0, total, v.length);
}

/** The first `keep` entries of a compacted distribution with every token of `named`. */
function shrink(v, named, keep) {
  return sparseOf(v.ids.slice(0, keep).map((id, i) => [id, v.p[i]]), named, (t) => probOf(v, t), 1, v.size);
}

/** Entries [id, p] (by decreasing p) cut to MASS, plus `named`: the compacted shape. */
function sparseOf(entries, named, p, total, size) {
  const kept = [];
  const seen = new Set();
  let mass = 0;
  for (const [id, x] of entries) {
    if (mass >= MASS * total) break;
    kept.push([id, x]);
    seen.add(id);
    mass += x;
  }
  for (const id of named) {
    if (seen.has(id) || !(id >= 0 && id < size)) continue;
    seen.add(id);
    const x = p(id);
    kept.push([id, x]);
    mass += x;
  }
  kept.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return { sparse: true, size, ids: kept.map((e) => e[0]), p: kept.map((e) => e[1]), rest: Math.max(0, total - mass) };
}

/** Every token a trace names: drafted, emitted, tested, drawn. */
function namedTokens(trace) {
  const named = new Set(trace.emitted);
  for (const d of trace.drafts) named.add(d.token);
  for (const s of trace.steps) {
    named.add(s.token);
    for (const t of s.outcome?.tests ?? []) named.add(t.token);
  }
  if (trace.bonus) named.add(trace.bonus.token);
  return named;
}

/** Replaces, in place, every distribution of `x` (any numeric array over the vocabulary) by its compacted form. */
function compactDeep(x, named, keep, large) {
  if (Array.isArray(x) || ArrayBuffer.isView(x)) {
    if (x.length > large && typeof x[0] === "number") return compactDense(x, named, keep);
    if (Array.isArray(x)) for (let i = 0; i < x.length; i++) if (x[i] && typeof x[i] === "object") x[i] = compactDeep(x[i], named, keep, large);
    return x;
  }
  if (isSparse(x)) return x.ids.length > keep ? shrink(x, named, keep) : x;
  if (x && typeof x === "object") for (const k of Object.keys(x)) if (x[k] && typeof x[k] === "object") x[k] = compactDeep(x[k], named, keep, large);
  return x;
}

/** A round as it arrives: its distributions compacted when the vocabulary is large (`vocab` tokens). */
export function compactRound(round, vocab) {
  if (!(vocab > hook.largeVocab) || !round?.trace) return round;
  compactDeep(round.trace, namedTokens(round.trace), KEEP, hook.largeVocab);
  return round;
}

/** Rounds of a small vocabulary kept whole behind the last; older ones are cut (forgetRound). */
export const OLD = 256;

/** Entries a forgotten round keeps per distribution: the 8 bars of the distributions panel. */
const KEEP_FORGOTTEN = 8;

/**
 * A round OLD rounds behind the last, over a small vocabulary: each distribution the page
 * shows (the target's, the draft's, the residual and its parts) cut to a few entries and
 * the tokens the round names, and the draft tree's own copies (no view reads them)
 * dropped, so that a run of 65,536 characters stays small.
 */
export function forgetRound(round) {
  const t = round?.trace;
  if (!t) return;
  const named = namedTokens(t);
  const cut = (v) => ((Array.isArray(v) || ArrayBuffer.isView(v)) && typeof v[0] === "number" ? compactDense(v, named, KEEP_FORGOTTEN) : v);
  for (const s of t.steps) {
    for (const key of ["targetProbs", "draftProbs", "residualProbs"]) if (s[key]) s[key] = cut(s[key]);
    if (s.residualParts) for (const key of ["base", "sub"]) s.residualParts[key] = cut(s.residualParts[key]);
  }
  for (const d of t.drafts) delete d.draftProbs;
  if (t.bonus?.targetProbs) t.bonus.targetProbs = cut(t.bonus.targetProbs);
}

/** A round that left the recent ones: its distributions cut to a few entries each. */
export function shrinkRound(round, vocab) {
  if (!(vocab > hook.largeVocab) || !round?.trace) return;
  compactDeep(round.trace, namedTokens(round.trace), KEEP_OLD, hook.largeVocab);
}

/**
 * Two distributions as aligned dense arrays for the package's closed forms (plan(),
 * retarget()): unchanged when dense; over the tokens either kept, then one entry pooling
 * each one's rest, when compacted. `tokens` maps each entry to its token id (−1: pooled).
 */
export function pooledPair(target, draft) {
  if (!isSparse(target) && !isSparse(draft)) return { target, draft, tokens: null, pooled: 0 };
  const ids = [...new Set([...idsOf(target), ...idsOf(draft)])];
  const dense = (v) => {
    const out = ids.map((t) => probOf(v, t) ?? 0);
    const sum = out.reduce((a, b) => a + b, 0);
    out.push(Math.max(0, 1 - sum));
    return out;
  };
  const t = dense(target);
  const d = dense(draft);
  return { target: t, draft: d, tokens: [...ids, -1], pooled: Math.max(t[t.length - 1], d[d.length - 1]) };
}

/**
 * The largest `n` entries over several distributions (union, by max) with `always` among
 * them, by decreasing score; over a compacted one only its kept tokens compete. A token
 * no distribution gives any probability is left out (at temperature 0 all but one).
 */
export function topTokens(vectors, n, always = []) {
  const present = vectors.filter(Boolean);
  const len = present[0] ? sizeOf(present[0]) : 0;
  if (!present.some(isSparse)) {
    // Dense: every index competes (the bundled pair's bars exactly as before).
    const score = new Array(len).fill(0);
    for (const v of present) v.forEach((x, i) => (score[i] = Math.max(score[i], x)));
    const order = [...score.keys()].sort((a, b) => score[b] - score[a]);
    return choose(order, (i) => score[i], n, always, len);
  }
  const score = new Map();
  for (const v of present) for (const id of idsOf(v)) score.set(id, Math.max(score.get(id) ?? 0, probOf(v, id)));
  const order = [...score.keys()].sort((a, b) => score.get(b) - score.get(a) || a - b);
  return choose(order, (i) => score.get(i) ?? 0, n, always, len);
}

function choose(order, score, n, always, len) {
  const chosen = new Set(always.filter((i) => i >= 0 && i < len));
  for (const i of order) {
    if (chosen.size >= n || !(score(i) > 0)) break;
    chosen.add(i);
  }
  return [...chosen].sort((a, b) => score(b) - score(a));
}

/** The `n` indices of the largest `weight(i)` over 0..len−1, without sorting them all. */
export function topIndicesBy(len, weight, n) {
  const top = [];
  for (let i = 0; i < len; i++) {
    const w = weight(i);
    if (top.length === n && w <= weight(top[n - 1])) continue;
    let j = Math.min(top.length, n - 1);
    while (j > 0 && weight(top[j - 1]) < w) {
      top[j] = top[j - 1];
      j -= 1;
    }
    top[j] = i;
  }
  return top;
}
