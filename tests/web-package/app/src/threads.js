// Load option threads: the target's second worker. On this cross-origin isolated page
// "auto" starts it, the dense calls reach it and it answers them, and the logits and
// sampled tokens are those of one worker; the option's mistakes are typed errors. On a page
// that is not isolated (run.mjs --no-isolation) one worker runs and says why.
import { Specula, SpeculaError } from "specula";
import { refusal } from "./simd.js";

/** The target's logits for a 45-token first pass, then 5 new positions (a verification). */
async function passes(specula) {
  const model = specula.models.target;
  const sequence = Int32Array.from({ length: 50 }, (_, i) => (i * 7 + 3) % model.vocabSize);
  const first = await model.forward({ committedLen: 0, sequences: [sequence.subarray(0, 45)], queries: [{ sequence: 0, prefixLen: 45 }] });
  const queries = Array.from({ length: 5 }, (_, i) => ({ sequence: 0, prefixLen: 46 + i }));
  const verify = await model.forward({ committedLen: 45, sequences: [sequence], queries });
  return [...first, ...verify];
}

/**
 * Two workers against one for the models `options` load (the bundled pair or a GGUF pair):
 * at least `minCalls` dense calls handed over by the passes below.
 */
async function sameAsOneWorker(check, what, options, generateOptions, minCalls) {
  const two = await Specula.load({ ...options, backend: "cpu" });
  const one = await Specula.load({ ...options, backend: "cpu", threads: 1 });
  check(
    two.backend.threads === 2 && two.backend.threadsReason === null && one.backend.threads === 1 && one.backend.threadsReason === null,
    `threads (${what}): "auto" runs two workers here, 1 one (${JSON.stringify([two.backend.threads, two.backend.threadsReason, one.backend.threads])})`,
  );
  const [a, b] = [await passes(two), await passes(one)];
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  const calls = await two.threadCalls();
  check(
    calls.posted >= minCalls && calls.answered === calls.posted && (await one.threadCalls()).posted === 0,
    `threads (${what}): the second worker answered every dense call it was handed (${JSON.stringify(calls)})`,
  );
  // Each output column is computed by one worker with the same kernels: equal, bit for bit.
  check(a.length === b.length && a.length > 0 && worst === 0, `threads (${what}): the logits of two workers equal one's (${a.length} values, worst difference ${worst})`);
  const [x, y] = [await two.complete(generateOptions), await one.complete(generateOptions)];
  check(
    x.text === y.text && x.text.length > 0,
    `threads (${what}): the same sampled text from a seed with two workers and one (${JSON.stringify(x.text.slice(0, 40))})`,
  );
  // Loading again with one worker stops the second: nothing more is handed over.
  await two.load({ ...options, backend: "cpu", threads: 1 });
  const after = await two.threadCalls();
  check(
    two.backend.threads === 1 && after.posted === 0 && (await passes(two)).length === a.length,
    `threads (${what}): a new load with threads 1 runs one worker (${JSON.stringify(after)})`,
  );
  two.terminate();
  one.terminate();
}

export async function threadChecks(check, sampled) {
  check(globalThis.crossOriginIsolated === true, "threads: the test page is cross-origin isolated (COOP and COEP headers)");
  await sameAsOneWorker(check, "bundled pair", {}, { ...sampled, method: "speculative", gamma: 4 }, 20);
  const { prompt } = await (await fetch("/gguf/expected.json")).json();
  await sameAsOneWorker(
    check,
    "GGUF pair",
    { target: { url: "/gguf/target.gguf" }, draft: { url: "/gguf/draft.gguf" } },
    { prompt, maxTokens: 16, temperature: 1, seed: 11, method: "speculative", gamma: 3 },
    // A tiny model: only the head's calls of many positions are large enough to split.
    1,
  );
  const wrong = await refusal({ backend: "cpu", threads: 3 });
  check(
    wrong instanceof SpeculaError && wrong.code === "invalid_option" && wrong.field === "threads" && wrong.message.includes('"auto"'),
    `threads: an unknown count is refused naming the choices (${wrong?.code} ${wrong?.field}: ${wrong?.message})`,
  );
}

/** The checks of a page that is not cross-origin isolated. */
export async function unisolatedChecks(check) {
  check(globalThis.crossOriginIsolated === false, "threads: this page is not cross-origin isolated");
  const s = await Specula.load({ backend: "cpu" });
  check(
    s.backend.threads === 1 && /cross-origin isolated/.test(s.backend.threadsReason ?? ""),
    `threads: "auto" runs one worker and says why (${JSON.stringify(s.backend.threadsReason)})`,
  );
  const text = (await s.complete({ prompt: "ROMEO:", maxTokens: 24, temperature: 0, method: "speculative", gamma: 4 })).text;
  check(text.length > 0, `threads: one worker generates (${JSON.stringify(text)})`);
  s.terminate();
  const insisted = await refusal({ backend: "cpu", threads: 2 });
  check(
    insisted instanceof SpeculaError && insisted.code === "backend_unavailable" && insisted.field === "threads",
    `threads: 2 is backend_unavailable without isolation (${insisted?.code} ${insisted?.field}: ${insisted?.message})`,
  );
}
