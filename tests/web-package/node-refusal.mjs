// The worker API in Node, against a built package's dist/ (argument 1; scripts/test-web.sh
// passes the packed package's): Node has no Web Worker, so `new Specula()` throws and
// Specula.load(), plan(), theory(), retarget() and checkOptions() reject, each with a
// SpeculaError of code "backend_unavailable" that says why and points to decode(); and
// decode() itself still runs.
// Usage: node tests/web-package/node-refusal.mjs <package dist/ directory>

import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const dist = process.argv[2];
if (!dist) {
  console.error("usage: node tests/web-package/node-refusal.mjs <package dist/ directory>");
  process.exit(2);
}
assert.equal(typeof globalThis.Worker, "undefined", "this test is about a runtime without a global Worker");
const specula = await import(pathToFileURL(resolve(dist, "index.js")).href);
const { Specula, SpeculaError, plan, theory, retarget, checkOptions, decode } = specula;

function isRefusal(error) {
  assert.ok(error instanceof SpeculaError, `a SpeculaError, got ${error?.name}: ${error?.message}`);
  assert.equal(error.name, "SpeculaError");
  assert.equal(error.code, "backend_unavailable");
  assert.match(error.message, /Web Worker/);
  assert.match(error.message, /Node/);
  assert.match(error.message, /decode\(\)/);
  return true;
}

/** `call()` must return a promise (not throw) that rejects with the refusal. */
async function rejects(name, call) {
  let promise;
  assert.doesNotThrow(() => (promise = call()), `${name} throws synchronously instead of rejecting`);
  assert.ok(promise instanceof Promise, `${name} returns a Promise`);
  await assert.rejects(promise, isRefusal, name);
  console.log(`ok: ${name} rejects with backend_unavailable`);
}

assert.throws(() => new Specula(), isRefusal, "new Specula()");
console.log("ok: new Specula() throws backend_unavailable");

await rejects("Specula.load()", () => Specula.load());
await rejects("Specula.load({ backend: 'cpu' })", () => Specula.load({ backend: "cpu" }));
await rejects("plan()", () => plan({ method: "speculative", target: [0.5, 0.5], draft: [0.9, 0.1] }));
await rejects("theory()", () => theory({ alpha: 0.8, gammas: [1, 2, 3] }));
await rejects("retarget()", () => retarget({ probs: [0.5, 0.5], from: 1 }));
await rejects("checkOptions()", () => checkOptions({ prompt: "ROMEO:" }));
// Twice: a failed start leaves nothing behind that makes the next call hang or differ.
await rejects("plan() again", () => plan({ method: "speculative", target: [0.5, 0.5], draft: [0.9, 0.1] }));

// decode() needs no worker: a one-token model pair runs to the end.
const model = { vocabSize: 2, logits: (tokens, count) => new Float32Array(count * 2) };
const rounds = decode({ draft: model, target: model, prompt: [0], maxTokens: 3, seed: 1 });
let summary;
for (;;) {
  const { done, value } = await rounds.next();
  if (done) {
    summary = value;
    break;
  }
}
assert.equal(summary.tokens.length, 3);
console.log("ok: decode() runs in Node");
console.log("node refusal: all checks passed");
