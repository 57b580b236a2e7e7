// decode() with parallel drafting against sequential drafting, over asynchronous models
// whose calls take time without using the CPU (as a model on a GPU, in another worker or
// behind a server does): each call resolves after a fixed delay, the target's T ms, the
// draft's c·T. The models are order-1 Markov chains over 32 tokens (the draft a
// perturbation of the target), so α is about 0.85. Prints, per γ and c, the tokens per
// second of each schedule, the speedup and the one docs/parallel-draft.md predicts at the
// measured α. Not a test; the figures are in BENCHMARKS.md. Usage, after
// scripts/test-decode.sh has staged the package (or with any built package's dist/):
//   node scripts/bench-decode-parallel.mjs "$CARGO_TARGET_DIR/specula-decode-stage/dist"

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const dist = process.argv[2];
if (!dist) {
  console.error("usage: node scripts/bench-decode-parallel.mjs <package dist/ directory>");
  process.exit(2);
}
const { decode } = await import(pathToFileURL(resolve(dist, "index.js")).href);

const VOCAB = 32;
const TARGET_MS = 10;
const TOKENS = 64;
const SEEDS = 8;

/** A fixed table of next-token logits per last token; `noise` perturbs a copy. */
function table(seed, base = null, noise = 0) {
  const t = new Float32Array(VOCAB * VOCAB);
  let x = seed;
  const next = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let i = 0; i < t.length; i++) t[i] = base ? base[i] + noise * (next() - 0.5) : 3 * next();
  return t;
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** An order-1 Markov model whose every call takes `ms` milliseconds of waiting. */
function model(rows, ms) {
  return {
    vocabSize: VOCAB,
    async logits(tokens, count) {
      await sleep(ms);
      const out = new Float32Array(count * VOCAB);
      for (let i = 0; i < count; i++) {
        const last = tokens[tokens.length - count + i];
        out.set(rows.subarray(last * VOCAB, (last + 1) * VOCAB), i * VOCAB);
      }
      return out;
    },
  };
}

/** docs/parallel-draft.md's tokens per target-call time, sequential or parallel. */
function predicted(a, g, c, parallel) {
  if (!parallel) return (1 - a ** (g + 1)) / ((1 - a) * (g * c + 1));
  const s = g * c > 1 ? Math.ceil(1 / c) * c - 1 : 0;
  const full = a ** g;
  return (1 - full) / (1 - a) / (full * Math.max(1, g * c) + (1 - full) * (1 + s + g * c));
}

async function run(draft, target, gamma, parallelDraft) {
  let tokens = 0;
  let accepted = 0;
  let drafted = 0;
  const start = performance.now();
  for (let seed = 1; seed <= SEEDS; seed++) {
    const iterator = decode({ draft, target, prompt: [1], method: "speculative", gamma, parallelDraft, maxTokens: TOKENS, seed });
    for (;;) {
      const { value, done } = await iterator.next();
      if (done) {
        tokens += value.tokens.length;
        accepted += value.metrics.acceptedTokens;
        drafted += value.metrics.draftedTokens;
        break;
      }
    }
  }
  return { tps: tokens / ((performance.now() - start) / 1000), alpha: accepted / drafted };
}

const targetRows = table(7);
const draftRows = table(11, targetRows, 1.2);
console.log(`node ${process.version}; target call ${TARGET_MS} ms, ${SEEDS} seeds × ${TOKENS} tokens per cell`);
console.log("| γ | c | α | sequential tok/s | parallel tok/s | speedup | predicted |");
console.log("|---|---|---|---|---|---|---|");
for (const c of [0.1, 0.3, 0.5]) {
  for (const gamma of [2, 3, 4]) {
    const draft = model(draftRows, c * TARGET_MS);
    const target = model(targetRows, TARGET_MS);
    const seq = await run(draft, target, gamma, false);
    const par = await run(draft, target, gamma, true);
    const p = predicted(seq.alpha, gamma, c, true) / predicted(seq.alpha, gamma, c, false);
    console.log(`| ${gamma} | ${c} | ${seq.alpha.toFixed(2)} | ${seq.tps.toFixed(0)} | ${par.tps.toFixed(0)} | ${(par.tps / seq.tps).toFixed(2)}× | ${p.toFixed(2)}× |`);
  }
}
