// The SharedArrayBuffer exchange of load option threads (web/src/dense-helper.js), in
// Node with a worker thread: 20,000 calls in a row, back to back and with pauses that let
// the helper fall asleep, each answered exactly once with its own result; calls too large
// for the exchange are refused and counted; a helper that fails is reported per call.
// Usage: node tests/web-package/dense-exchange.mjs
import assert from "node:assert/strict";
import { Worker, isMainThread, workerData } from "node:worker_threads";
import { EXCHANGE_BYTES, densePort, serveDense } from "../../web/src/dense-helper.js";

/** The stand-in for a DenseServer: each output is the layer's index plus twice an input; layer 13 fails. */
const server = {
  serve(layer, gelu, rows, dOut, x) {
    if (layer === 13) throw new Error("this layer fails");
    const out = new Float32Array(rows * 3);
    for (let i = 0; i < out.length; i++) out[i] = layer + 2 * x[i % x.length] + (gelu ? 0.5 : 0);
    return out;
  },
};

if (!isMainThread) {
  serveDense(server, workerData);
} else {
  const buffer = new SharedArrayBuffer(EXCHANGE_BYTES);
  const helper = new Worker(new URL(import.meta.url), { workerData: buffer });
  const port = densePort(buffer);
  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  let answered = 0;
  for (let call = 0; call < 20_000; call++) {
    const rows = 1 + (call % 5);
    const layer = call % 13; // never 13 here
    const x = Float32Array.from({ length: rows * 4 }, (_, i) => call + i);
    assert.equal(port.post(layer, call % 2 === 1, rows, 3, x), true, `call ${call} posted`);
    const out = port.collect();
    assert.ok(out instanceof Float32Array && out.length === rows * 3, `call ${call}: an answer of ${rows * 3} values`);
    for (let i = 0; i < out.length; i++) {
      assert.equal(out[i], layer + 2 * x[i % x.length] + (call % 2 === 1 ? 0.5 : 0), `call ${call}, value ${i}`);
    }
    answered += 1;
    // Now and then a pause past the helper's spin, so that it sleeps and must be woken.
    if (call % 1_000 === 999) await pause(5);
  }
  // A failing call gets no answer (the main worker computes it itself), and the next works.
  assert.equal(port.post(13, false, 1, 3, new Float32Array(4)), true);
  assert.equal(port.collect(), undefined, "a failed call has no answer");
  assert.equal(port.post(1, false, 1, 3, new Float32Array(4)), true);
  assert.equal(port.collect()?.length, 3, "the call after a failure is answered");
  // Inputs or outputs larger than the exchange stay in the main worker.
  const floats = (EXCHANGE_BYTES - 64) / 4;
  assert.equal(port.post(0, false, 1, 3, new Float32Array(floats + 1)), false, "too many inputs");
  assert.equal(port.post(0, false, 2, floats, new Float32Array(4)), false, "too many outputs");
  assert.deepEqual(port.counts(), { posted: answered + 2, answered: answered + 1, tooLarge: 2 });
  await helper.terminate();
  console.log(`dense exchange: ${answered} calls answered in order, a failure and two oversized calls handled`);
}
