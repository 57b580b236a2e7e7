// The adapter pattern of web/examples/transformers-js.js, tested without its weights:
// cachedModel() over a synthetic runtime with a real key/value-style cache, whose logits
// at a position depend on the whole prefix (so a stale cache entry would change them).
// decode() must give the same tokens through the cache as with a model that recomputes
// everything, for every method, while running fewer positions, and the cache must be cut
// back to the committed tokens after each round; under parallel drafting over an
// asynchronous runtime too, with the two models' steps overlapping.
// Usage: node tests/web-package/decode-adapter.mjs <package dist/ directory>

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

import { rng, runToEnd } from "./decode-models.mjs";

const dist = process.argv[2];
const { cachedModel, decode } = await import(pathToFileURL(resolve(dist, "index.js")).href);

const V = 6;
const STATES = 97;

/**
 * A runtime whose state after each token hashes the whole prefix; logits come from the
 * state. `wait()`, when given, delays each step (a timer): an asynchronous runtime.
 */
function runtime(seed, wait) {
  const next = rng(seed);
  const table = Array.from({ length: STATES }, () => Float32Array.from({ length: V }, () => (next() - 0.5) * 4));
  const advance = (state, token) => (state * 31 + token + 7) % STATES;
  /** Every position's state and logits from scratch (what a model without a cache does). */
  const plain = {
    vocabSize: V,
    positions: 0,
    logits(tokens, count) {
      let state = 0;
      const out = new Float32Array(count * V);
      tokens.forEach((t, i) => {
        state = advance(state, t);
        const row = i - (tokens.length - count);
        if (row >= 0) out.set(table[state], row * V);
      });
      plain.positions += tokens.length;
      return out;
    },
  };
  const cuts = [];
  const cached = cachedModel({
    vocabSize: V,
    // The cache is the list of states, one per position, as a K/V cache is one entry per position.
    async step(cache, tokens) {
      if (wait) await wait();
      const states = cache ? cache.slice() : [];
      const logits = new Float32Array(tokens.length * V);
      tokens.forEach((t, i) => {
        states.push(advance(states.at(-1) ?? 0, t));
        logits.set(table[states.at(-1)], i * V);
      });
      return { logits, cache: states };
    },
    truncate(cache, length) {
      cuts.push(length);
      return cache.slice(0, length);
    },
  });
  return { plain, cached, cuts };
}

let failures = 0;
function check(name, ok, detail) {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? `: ${detail}` : ""}`);
  if (!ok) failures++;
}

const run = (options) => runToEnd(decode, options);

const PROMPT = [1, 4, 2];
for (const [name, options] of [
  ["speculative", { method: "speculative", gamma: 4 }],
  ["spectr tree [2,2,1]", { method: "spectr", tree: [2, 2, 1] }],
  ["multiround K=3", { method: "multiround", drafts: 3, gamma: 3 }],
  ["mentored D=0.1", { method: "mentored", kl: 0.1, gamma: 3 }],
]) {
  for (const seed of [1, 2, 3]) {
    const a = { target: runtime(5), draft: runtime(9) };
    const b = { target: runtime(5), draft: runtime(9) };
    const settings = { ...options, prompt: PROMPT, seed, maxTokens: 40, temperature: 0.9 };
    const reference = await run({ ...settings, target: a.target.plain, draft: a.draft.plain });
    const through = await run({ ...settings, target: b.target.cached, draft: b.draft.cached });
    const same = JSON.stringify(through.summary.tokens) === JSON.stringify(reference.summary.tokens);
    check(`${name}, seed ${seed}: the same tokens through the cache`, same, same ? "" : `${through.summary.tokens} vs ${reference.summary.tokens}`);
    const ran = b.target.cached.stats.positions;
    check(`${name}, seed ${seed}: the cache saves work`, ran < a.target.plain.positions, `${ran} positions vs ${a.target.plain.positions} without it`);
    // After each round the cache holds no more than the committed tokens.
    let committed = PROMPT.length;
    const ends = through.rounds.map((r) => (committed += r.tokens.length));
    const cutToCommitted = b.target.cuts.every((c) => c >= PROMPT.length) && b.target.cuts.some((c) => ends.includes(c));
    check(`${name}, seed ${seed}: rejected drafts leave the cache`, cutToCommitted, `cuts ${b.target.cuts.slice(0, 8)}`);
  }
}

// Parallel drafting over asynchronous runtimes (random delays): the draft's and the
// target's calls overlap, and the caches stay right, as rollback never cuts a cache
// while its model's call runs.
for (const seed of [1, 2, 3]) {
  const next = rng(seed);
  let waiting = 0;
  let most = 0;
  const wait = async () => {
    most = Math.max(most, ++waiting);
    await new Promise((resolve) => setTimeout(resolve, 2 * next()));
    waiting--;
  };
  const a = { target: runtime(5), draft: runtime(9) };
  const b = { target: runtime(5, wait), draft: runtime(9, wait) };
  const settings = { method: "speculative", gamma: 3, parallelDraft: true, prompt: PROMPT, seed, maxTokens: 40, temperature: 0.9 };
  const reference = await run({ ...settings, target: a.target.plain, draft: a.draft.plain });
  const through = await run({ ...settings, target: b.target.cached, draft: b.draft.cached });
  const same = JSON.stringify(through.summary.tokens) === JSON.stringify(reference.summary.tokens);
  check(`speculative γ=3, parallel drafting, async, seed ${seed}: the same tokens through the cache`, same, same ? "" : `${through.summary.tokens} vs ${reference.summary.tokens}`);
  check(`speculative γ=3, parallel drafting, async, seed ${seed}: the two runtimes' steps overlap`, most === 2, `at most ${most} at once`);
}

// Bad step() answers surface as decode()'s own errors, naming the model.
{
  const bad = cachedModel({ vocabSize: V, step: async () => ({ logits: new Float32Array(1), cache: [] }), truncate: (c) => c });
  const t = runtime(5);
  try {
    await run({ prompt: PROMPT, target: t.plain, draft: bad, maxTokens: 4 });
    check("a step() with the wrong number of logits is refused", false, "accepted");
  } catch (error) {
    check("a step() with the wrong number of logits is refused", error.code === "bad_model" && error.field === "draft", `${error.code} ${error.field}: ${error.message}`);
  }
}

if (failures) {
  console.error(`decode() adapter: ${failures} failing checks`);
  process.exit(1);
}
console.log("decode() adapter: every check passed");
