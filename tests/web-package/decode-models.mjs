// Synthetic models with an exactly known joint distribution for the decode() tests
// (decode.mjs): order-1 Markov models over a few tokens, the engine's sampling settings
// restated (temperature, top-k, top-p, as specula-core's Distribution::from_logits
// applies them), and a chi-square test with its p-value.

/** A seeded PRNG (mulberry32), so every table is the same on every run. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * An order-1 Markov model: the logits after a context depend only on its last token.
 * `table[prev]` are those logits, already rounded to f32 (what the engine reads).
 * `options.async` answers with promises; `options.forward` answers whole requests.
 */
export function markov(vocab, seed, spread = 2, options = {}) {
  const next = rng(seed);
  const table = Array.from({ length: vocab }, () => Float32Array.from({ length: vocab }, () => (next() - 0.5) * 2 * spread));
  return withTable(vocab, table, options);
}

/** A model answering from `table` (see {@link markov}). */
export function withTable(vocab, table, { async = false, forward = false } = {}) {
  const model = {
    vocabSize: vocab,
    table,
    calls: 0,
    rollbacks: [],
    logits(tokens, count) {
      model.calls++;
      const out = new Float32Array(count * vocab);
      for (let i = 0; i < count; i++) out.set(table[tokens[tokens.length - count + i]], i * vocab);
      return async ? Promise.resolve(out) : out;
    },
    rollback(committed) {
      model.rollbacks.push(committed);
    },
  };
  if (forward) {
    model.forward = (request) => {
      model.calls++;
      const out = new Float32Array(request.queries.length * vocab);
      request.queries.forEach((q, i) => out.set(table[request.sequences[q.sequence][q.prefixLen - 1]], i * vocab));
      return async ? Promise.resolve(out) : out;
    };
    delete model.logits;
  }
  return model;
}

/** The distribution the engine samples from `logits` under `{ temperature, topK, topP }`. */
export function processed(logits, { temperature = 1, topK, topP } = {}) {
  const n = logits.length;
  let max = -Infinity;
  let argmax = 0;
  for (let i = 0; i < n; i++) {
    if (logits[i] > max) {
      max = logits[i];
      argmax = i;
    }
  }
  if (temperature === 0) return Array.from({ length: n }, (_, i) => (i === argmax ? 1 : 0));
  const w = Array.from(logits, (l) => Math.exp((l - max) / temperature));
  // Most likely first, ties to the lower index, as the core orders them.
  const order = () => [...w.keys()].filter((i) => w[i] > 0).sort((a, b) => w[b] - w[a] || a - b);
  if (topK !== undefined && topK < n) for (const i of order().slice(topK)) w[i] = 0;
  if (topP !== undefined && topP < 1) {
    const total = w.reduce((a, b) => a + b, 0);
    const sorted = order();
    let acc = 0;
    let keep = sorted.length;
    for (let k = 0; k < sorted.length; k++) {
      acc += w[sorted[k]];
      if (acc >= topP * total) {
        keep = k + 1;
        break;
      }
    }
    for (const i of sorted.slice(keep)) w[i] = 0;
  }
  const sum = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / sum);
}

/** The exact probability of every sequence of `length` tokens after `last`, index Σ x_i V^(length-1-i). */
export function joint(model, last, length, sampling) {
  const V = model.vocabSize;
  const rows = model.table.map((row) => processed(row, sampling));
  let probs = [1];
  let lasts = [last];
  for (let step = 0; step < length; step++) {
    const nextProbs = [];
    const nextLasts = [];
    probs.forEach((p, s) => {
      for (let v = 0; v < V; v++) {
        nextProbs.push(p * rows[lasts[s]][v]);
        nextLasts.push(v);
      }
    });
    probs = nextProbs;
    lasts = nextLasts;
  }
  return probs;
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, as statrs). */
function lnGamma(x) {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  x -= 1;
  let a = c[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Q(a, x), the upper regularized incomplete gamma function: series below a + 1, continued fraction above. */
export function gammaQ(a, x) {
  if (x <= 0) return 1;
  const front = Math.exp(-x + a * Math.log(x) - lnGamma(a));
  if (x < a + 1) {
    let sum = 1 / a;
    let term = sum;
    for (let n = 1; n < 10000; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * 1e-15) break;
    }
    return Math.max(0, 1 - front * sum);
  }
  // Lentz's method for the continued fraction.
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return front * h;
}

/**
 * Pearson's chi-square of `counts` against `probs`, cells with an expected count under 5
 * pooled into one: `{ stat, df, p }`.
 */
export function chiSquare(counts, probs) {
  // A sequence the target cannot produce is a certain failure, whatever else holds.
  if (probs.some((p, i) => p === 0 && counts[i] > 0)) return { stat: Infinity, df: 1, p: 0 };
  const n = counts.reduce((a, b) => a + b, 0);
  let stat = 0;
  let cells = 0;
  let pooledObserved = 0;
  let pooledExpected = 0;
  probs.forEach((p, i) => {
    const expected = n * p;
    if (expected < 5) {
      pooledObserved += counts[i];
      pooledExpected += expected;
      return;
    }
    stat += (counts[i] - expected) ** 2 / expected;
    cells++;
  });
  if (pooledExpected > 0) {
    stat += (pooledObserved - pooledExpected) ** 2 / pooledExpected;
    cells++;
  }
  const df = Math.max(1, cells - 1);
  return { stat, df, p: Number.isFinite(stat) ? gammaQ(df / 2, stat / 2) : 0 };
}

/** Runs `decode(options)` to the end: `{ summary, rounds }`. */
export async function runToEnd(decode, options) {
  const rounds = [];
  const iterator = decode(options);
  for (;;) {
    const { value, done } = await iterator.next();
    if (done) return { summary: value, rounds };
    rounds.push(value);
  }
}
