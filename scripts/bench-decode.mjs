// decode()'s overhead in Node with models that cost nothing: each returns a slice of one
// precomputed Float32Array, so the time is the package's JavaScript, the copies across
// the wasm boundary, the engine's own work (logits to distributions, drafting,
// selection, traces, metrics) and JSON.parse of each round's report. Not a test; the
// figures are in BENCHMARKS.md. Usage, after scripts/test-decode.sh has staged the
// package (or with any built package's dist/):
//   node scripts/bench-decode.mjs "$CARGO_TARGET_DIR/specula-decode-stage/dist"

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const dist = process.argv[2];
if (!dist) {
  console.error("usage: node scripts/bench-decode.mjs <package dist/ directory>");
  process.exit(2);
}
const { decode } = await import(pathToFileURL(resolve(dist, "index.js")).href);

/** A free model over `vocab` tokens: fixed pseudo-random logits for every position. */
function freeModel(vocab, seed) {
  const rows = 80;
  const table = new Float32Array(rows * vocab);
  let x = seed;
  for (let i = 0; i < table.length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    table[i] = (x / 2147483648) * 4;
  }
  return {
    vocabSize: vocab,
    logits: (tokens, count) => table.subarray(0, count * vocab),
  };
}

const METHODS = [
  ["autoregressive", { method: "autoregressive" }],
  ["speculative γ=4", { method: "speculative", gamma: 4 }],
  ["spectr K=4, L=4", { method: "spectr", drafts: 4, gamma: 4 }],
];

async function measure(vocab, options, tokens, runs) {
  const draft = freeModel(vocab, 1);
  const target = freeModel(vocab, 2);
  let rounds = 0;
  let emitted = 0;
  let start = 0;
  // One warm-up run (module load, JIT), then the timed ones.
  for (let r = -1; r < runs; r++) {
    if (r === 0) start = performance.now();
    const iterator = decode({ draft, target, prompt: [1, 2, 3], maxTokens: tokens, seed: r + 1, ...options });
    for (;;) {
      const { value, done } = await iterator.next();
      if (done) {
        if (r >= 0) emitted += value.tokens.length;
        break;
      }
      if (r >= 0) rounds++;
    }
  }
  const ms = performance.now() - start;
  return { perRoundUs: (ms * 1000) / rounds, perTokenUs: (ms * 1000) / emitted, tokensPerRound: emitted / rounds };
}

console.log(`node ${process.version}`);
console.log("| V | method | µs per round | µs per token | tokens per round |");
console.log("|---|---|---|---|---|");
for (const [vocab, tokens, runs] of [
  [8, 64, 200],
  [32000, 64, 4],
]) {
  for (const [name, options] of METHODS) {
    const m = await measure(vocab, options, tokens, runs);
    console.log(`| ${vocab} | ${name} | ${m.perRoundUs.toFixed(0)} | ${m.perTokenUs.toFixed(0)} | ${m.tokensPerRound.toFixed(2)} |`);
  }
}
