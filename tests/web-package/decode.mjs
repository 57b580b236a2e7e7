// npm decode() in Node, against a built package's dist/ (argument 1; scripts/test-web.sh
// passes the packed package's): exactness of every lossless method at the sequence level
// (chi-square of the first 3 tokens against the exact joint of a synthetic target, with
// temperature, top-k and top-p applied to both models; prompt lookup with no draft
// model), typical acceptance's first token against its closed form, the power to reject
// a planted bug, greedy decoding against the target's argmax chain, async and forward() models
// against sync ones, rollback, parallel drafting with asynchronous models (concurrent
// calls, the same tokens, exact), and every bad model and option refused with its code.
// Exits non-zero on the first failure. About a minute on one core.

import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

import { chiSquare, joint, markov, processed, rng, withTable, runToEnd } from "./decode-models.mjs";

const dist = process.argv[2];
if (!dist) {
  console.error("usage: node tests/web-package/decode.mjs <package dist/ directory>");
  process.exit(2);
}
const { decode, SpeculaError } = await import(pathToFileURL(resolve(dist, "index.js")).href);

const V = 4;
const PROMPT = [2, 1];
const LENGTH = 3;
// A target and a draft that differs from it enough for rejections at every depth.
const target = markov(V, 11, 2);
const draft = markov(V, 29, 2);

const run = (options) => runToEnd(decode, options);

/** Sequence counts of the first LENGTH tokens over `n` seeds. */
async function counts(options, n) {
  const c = new Array(V ** LENGTH).fill(0);
  for (let seed = 0; seed < n; seed++) {
    const { summary } = await run({ draft, target, prompt: PROMPT, maxTokens: LENGTH, seed, ...options });
    assert.equal(summary.tokens.length, LENGTH);
    c[summary.tokens.reduce((index, t) => index * V + t, 0)]++;
  }
  return c;
}

const SAMPLING = { temperature: 0.8, topK: 3, topP: 0.9 };
const N = Number(process.env.SPECULA_DECODE_SAMPLES ?? 20000);
let failures = 0;
const started = performance.now();

function check(name, ok, detail) {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? `: ${detail}` : ""}`);
  if (!ok) failures++;
}

// Exactness: every lossless method follows the target's processed distribution. The
// seeds are fixed, so each p-value is the same on every run; 1e-4 leaves room for the
// handful of cases while any real deviation at these sample sizes lands far below it.
const LOSSLESS = [
  ["autoregressive", { method: "autoregressive" }],
  ["speculative γ=2", { method: "speculative", gamma: 2 }],
  ["speculative γ=2, dynamic γ", { method: "speculative", gamma: 2, dynamicGamma: true }],
  ["spectr i.i.d. K=3 kseq", { method: "spectr", drafts: 3, gamma: 2 }],
  ["spectr i.i.d. K=3 race", { method: "spectr", drafts: 3, gamma: 2, selection: "race" }],
  ["spectr tree [2,2] kseq", { method: "spectr", tree: [2, 2] }],
  ["spectr tree [2,2] race", { method: "spectr", tree: [2, 2], selection: "race" }],
  ["multiround i.i.d. K=2", { method: "multiround", drafts: 2, gamma: 2 }],
  ["multiround tree [2,2]", { method: "multiround", tree: [2, 2] }],
  ["mentored D=0", { method: "mentored", kl: 0, gamma: 2 }],
  ["speculative γ=1, parallel drafting", { method: "speculative", gamma: 1, parallelDraft: true }],
];
for (const sampling of [{}, SAMPLING]) {
  const truth = joint(target, PROMPT.at(-1), LENGTH, sampling);
  for (const [name, options] of LOSSLESS) {
    // The unprocessed case only for the two basic methods: the rest run with sampling on.
    if (Object.keys(sampling).length === 0 && !["autoregressive", "speculative γ=2"].includes(name)) continue;
    const test = chiSquare(await counts({ ...options, ...sampling }, N), truth);
    const label = `${name}${Object.keys(sampling).length ? " (T 0.8, top-k 3, top-p 0.9)" : ""}`;
    check(`exact: ${label}`, test.p > 1e-4, `chi2 ${test.stat.toFixed(1)}, df ${test.df}, p ${test.p.toExponential(2)}`);
  }
}

// Power: the same test rejects planted bugs.
{
  const truth = joint(target, PROMPT.at(-1), LENGTH, SAMPLING);
  for (const [bug, options] of [
    ["resample-from-target", { method: "speculative", gamma: 2 }],
    ["shared-uniform", { method: "spectr", drafts: 3, gamma: 2 }],
  ]) {
    const test = chiSquare(await counts({ ...options, ...SAMPLING, bug }, N), truth);
    check(`power: bug ${bug} rejected`, test.p < 1e-8, `p ${test.p.toExponential(2)}`);
  }
}

// Prompt lookup: no draft model is given or called. Over a repetitive prompt and a target
// that mostly continues its cycle, most rounds draft (copied from the prompt), and the
// joint is the target's; a verifier that sharpens only the rows after a proposed token
// (logits / 0.9 there) is rejected by the same test.
{
  const cycle = Array.from({ length: V }, (_, c) => Float32Array.from({ length: V }, (_, v) => Math.log(v === (c + 1) % V ? 0.7 : 0.1)));
  const cyclic = withTable(V, cycle);
  const skewed = {
    vocabSize: V,
    forward(request) {
      const out = new Float32Array(request.queries.length * V);
      request.queries.forEach((q, i) => {
        const row = cycle[request.sequences[q.sequence][q.prefixLen - 1]];
        out.set(q.prefixLen > request.committedLen ? row.map((x) => x / 0.9) : row, i * V);
      });
      return out;
    },
  };
  const prompt = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1];
  const lookupCounts = async (model, sampling) => {
    const c = new Array(V ** LENGTH).fill(0);
    let accepted = 0;
    let draftCalls = 0;
    for (let seed = 0; seed < N; seed++) {
      const { summary } = await run({ target: model, prompt, method: "lookup", gamma: 3, maxTokens: LENGTH, seed, ...sampling });
      c[summary.tokens.reduce((index, t) => index * V + t, 0)]++;
      accepted += summary.metrics.acceptedTokens;
      draftCalls += summary.metrics.draftCalls;
    }
    return { c, accepted, draftCalls };
  };
  for (const sampling of [{}, SAMPLING]) {
    const label = Object.keys(sampling).length ? " (T 0.8, top-k 3, top-p 0.9)" : "";
    const { c, accepted, draftCalls } = await lookupCounts(cyclic, sampling);
    const test = chiSquare(c, joint(cyclic, prompt.at(-1), LENGTH, sampling));
    check(`exact: lookup γ=3${label}`, test.p > 1e-4, `chi2 ${test.stat.toFixed(1)}, df ${test.df}, p ${test.p.toExponential(2)}`);
    check(`lookup drafts without a draft model${label}`, draftCalls === 0 && accepted > N / 2, `${accepted} accepted in ${N} runs, ${draftCalls} draft calls`);
  }
  const { c } = await lookupCounts(skewed, {});
  const test = chiSquare(c, joint(cyclic, prompt.at(-1), LENGTH, {}));
  check("power: lookup with a skewed verifier rejected", test.p < 1e-8, `p ${test.p.toExponential(2)}`);
}

// Typical acceptance: the first token follows the closed form
// π = draft·1[target > τ] + (1 − R)·target with τ = min(ε, δ·exp(−H(target))), and not the
// target; with τ above every target probability (ε = 1, δ = 1e6) it is the target.
{
  const t = processed(target.table[PROMPT.at(-1)]);
  const d = processed(draft.table[PROMPT.at(-1)]);
  const entropy = -t.reduce((h, p) => (p > 0 ? h + p * Math.log(p) : h), 0);
  for (const [epsilon, delta] of [[0.3, 1], [1, 1e6]]) {
    const tau = Math.min(epsilon, delta * Math.exp(-entropy));
    const accepted = d.map((p, x) => (t[x] > tau ? p : 0));
    const rest = 1 - accepted.reduce((a, b) => a + b, 0);
    const closed = t.map((p, x) => accepted[x] + rest * p);
    const c = new Array(V).fill(0);
    for (let seed = 0; seed < N; seed++) {
      const { summary } = await run({ draft, target, prompt: PROMPT, method: "typical", epsilon, delta, gamma: 2, maxTokens: 2, seed });
      c[summary.tokens[0]]++;
    }
    const fit = chiSquare(c, closed);
    const vsTarget = chiSquare(c, t);
    check(`typical ε=${epsilon} δ=${delta}: first token fits its closed form`, fit.p > 1e-4, `τ ${tau.toFixed(3)}, p ${fit.p.toExponential(2)}`);
    if (rest < 1) check(`power: typical ε=${epsilon} told from the target`, vsTarget.p < 1e-8, `p ${vsTarget.p.toExponential(2)}`);
    else check(`typical ε=${epsilon}: accepts nothing, so it is the target`, vsTarget.p > 1e-4, `p ${vsTarget.p.toExponential(2)}`);
  }
}

// Greedy: temperature 0 follows the target's argmax chain, whatever the method.
{
  const chain = [];
  let last = PROMPT.at(-1);
  for (let i = 0; i < 12; i++) {
    last = processed(target.table[last], { temperature: 0 }).indexOf(1);
    chain.push(last);
  }
  for (const [name, options] of LOSSLESS) {
    const { summary } = await run({ draft, target, prompt: PROMPT, maxTokens: 12, temperature: 0, ...options });
    check(`greedy: ${name}`, JSON.stringify(summary.tokens) === JSON.stringify(chain), `${summary.tokens}`);
  }
}

// Async models, forward() models and typed-array prompts give the same tokens as sync
// logits() models; rollback hears the committed length after every round.
{
  const options = { prompt: PROMPT, method: "spectr", tree: [2, 2], seed: 3, maxTokens: 20, ...SAMPLING };
  const reference = await run({ draft, target, ...options });
  for (const [name, kind] of [
    ["async logits()", { async: true }],
    ["sync forward()", { forward: true }],
    ["async forward()", { async: true, forward: true }],
  ]) {
    const d = withTable(V, draft.table, kind);
    const t = withTable(V, target.table, kind);
    const { summary, rounds } = await run({ draft: d, target: t, ...options, prompt: Int32Array.from(PROMPT) });
    check(`same tokens: ${name}`, JSON.stringify(summary.tokens) === JSON.stringify(reference.summary.tokens));
    let committed = PROMPT.length;
    const want = rounds.map((r) => (committed += r.tokens.length));
    check(`rollback: ${name}`, JSON.stringify(t.rollbacks) === JSON.stringify(want) && JSON.stringify(d.rollbacks) === JSON.stringify(want), `${t.rollbacks}`);
  }
  const m = reference.summary.metrics;
  check("round reports add up", reference.rounds.length === m.rounds && m.emittedTokens === 20 && reference.summary.finish?.kind === "max_new_tokens");
  const last = reference.rounds.at(-1);
  check("round shape", ["round", "tokens", "counts", "finish", "trace", "metrics", "summary"].every((k) => k in last) && last.trace.method === "spectr");
  // A stop token ends the run right after it is emitted.
  const stopped = await run({ draft, target, prompt: PROMPT, stop: [3], maxTokens: 200, seed: 1 });
  check("stop token", stopped.summary.tokens.at(-1) === 3 && stopped.summary.finish?.kind === "stop_token");
}

// Parallel drafting with asynchronous models: the draft's and the target's calls run at
// once, the tokens are those of the same models answering synchronously whatever the
// delays, rollback never overlaps a call of its model (nor a call a rollback), and
// decode() returns with both models idle.
{
  const shared = { now: 0, most: 0 };
  /**
   * `base` answering after a random delay: `wait()` gives a Promise that resolves later
   * (a timer, or a few microtask hops). Records the calls in flight, across both models
   * too, and every call or rollback that overlapped one of the same model.
   */
  const delayed = (base, wait, asyncRollback = false) => {
    const m = { vocabSize: V, inflight: 0, rolling: false, overlaps: 0, rollbacks: [], calls: 0, pending: new Set() };
    const answer = (f) => {
      if (m.inflight || m.rolling) m.overlaps++;
      m.calls++;
      m.inflight++;
      shared.now++;
      shared.most = Math.max(shared.most, shared.now);
      const out = f();
      const done = wait().then(() => {
        m.inflight--;
        shared.now--;
        m.pending.delete(done);
        return out;
      });
      m.pending.add(done);
      return done;
    };
    if (base.forward) m.forward = (request) => answer(() => base.forward(request));
    else m.logits = (tokens, count) => answer(() => base.logits(tokens, count));
    m.rollback = (committed) => {
      if (m.inflight || m.rolling) m.overlaps++;
      m.rollbacks.push(committed);
      if (!asyncRollback) return undefined;
      m.rolling = true;
      return wait().then(() => (m.rolling = false));
    };
    return m;
  };
  const timer = (seed, lo, hi) => {
    const next = rng(seed);
    return () => new Promise((resolve) => setTimeout(resolve, lo + (hi - lo) * next()));
  };
  const hops = (seed) => {
    const next = rng(seed);
    return async () => {
      for (let k = Math.floor(next() * 6); k > 0; k--) await null;
    };
  };
  const settings = { prompt: PROMPT, method: "speculative", parallelDraft: true, maxTokens: 16, ...SAMPLING };
  let same = 0;
  let runs = 0;
  let overlaps = 0;
  let rollbacksRight = true;
  let idleAtEnd = true;
  let busyAtEnd = 0;
  for (const [name, draftDelay, targetDelay, kind, extra] of [
    ["draft slower", [2, 6], [1, 3], {}, {}],
    ["draft faster", [0, 1], [2, 5], {}, {}],
    ["async rollback, forward()", [1, 4], [1, 4], { forward: true }, {}],
    // A stop token can end the run while the next round's draft runs.
    ["stop token", [2, 6], [1, 3], {}, { stop: [3], maxTokens: 40 }],
  ]) {
    for (let seed = 0; seed < 4; seed++) {
      const options = { ...settings, gamma: 2 + (seed % 3), seed, ...extra };
      const reference = await run({ draft, target, ...options });
      const asyncRollback = kind.forward === true;
      const d = delayed(withTable(V, draft.table, kind), timer(seed, ...draftDelay), asyncRollback);
      const t = delayed(withTable(V, target.table, kind), timer(seed + 50, ...targetDelay), asyncRollback);
      const iterator = decode({ draft: d, target: t, ...options });
      const rounds = [];
      let summary;
      let busy = 0;
      for (;;) {
        const { value, done } = await iterator.next();
        if (done) {
          summary = value;
          break;
        }
        rounds.push(value);
        busy = d.inflight;
      }
      if (busy) busyAtEnd++;
      runs++;
      if (JSON.stringify(summary.tokens) === JSON.stringify(reference.summary.tokens)) same++;
      else console.log(`  ${name}, seed ${seed}: ${summary.tokens} vs ${reference.summary.tokens}`);
      overlaps += d.overlaps + t.overlaps;
      idleAtEnd &&= d.inflight === 0 && t.inflight === 0 && !d.rolling && !t.rolling;
      let committed = PROMPT.length;
      const want = JSON.stringify(rounds.map((r) => (committed += r.tokens.length)));
      rollbacksRight &&= JSON.stringify(d.rollbacks) === want && JSON.stringify(t.rollbacks) === want;
    }
  }
  check("parallel, async models: the tokens of the same models answering synchronously", same === runs, `${same} of ${runs}`);
  check("parallel, async models: the two models' calls overlap", shared.most === 2, `at most ${shared.most} calls in flight`);
  check("parallel, async models: no call or rollback overlaps another of the same model", overlaps === 0, `${overlaps} overlaps`);
  check("parallel, async models: rollback hears every round's committed length", rollbacksRight);
  check("parallel, async models: decode() returns with both models idle", idleAtEnd && busyAtEnd > 0, `${busyAtEnd} runs had a draft call running at the last round`);

  // Exactness with asynchronous models answering in a random order (microtask hops: no
  // timers, so the sample stays fast).
  shared.most = 0;
  const d = delayed(withTable(V, draft.table), hops(1));
  const t = delayed(withTable(V, target.table), hops(2));
  const c = new Array(V ** LENGTH).fill(0);
  for (let seed = 0; seed < N; seed++) {
    const { summary } = await run({ draft: d, target: t, prompt: PROMPT, maxTokens: LENGTH, seed, method: "speculative", gamma: 1, parallelDraft: true, ...SAMPLING });
    c[summary.tokens.reduce((index, x) => index * V + x, 0)]++;
  }
  const test = chiSquare(c, joint(target, PROMPT.at(-1), LENGTH, SAMPLING));
  check("exact: speculative γ=1, parallel drafting, async models (T 0.8, top-k 3, top-p 0.9)", test.p > 1e-4 && shared.most === 2, `chi2 ${test.stat.toFixed(1)}, df ${test.df}, p ${test.p.toExponential(2)}, at most ${shared.most} calls in flight`);

  // Abort while both models' calls run (the abort's timer comes first): decode() rejects
  // at once, without waiting for them; their late answers are dropped and nothing more
  // is called.
  const controller = new AbortController();
  const slowDraft = delayed(withTable(V, draft.table), timer(3, 20, 30));
  const quickTarget = delayed(withTable(V, target.table), timer(4, 5, 8));
  let targetCalls = 0;
  const base = quickTarget.logits;
  quickTarget.logits = (tokens, count) => {
    if (++targetCalls === 2) setTimeout(() => controller.abort(), 0);
    return base(tokens, count);
  };
  const e = await refusal({ draft: slowDraft, target: quickTarget, ...settings, maxTokens: 40, gamma: 3, signal: controller.signal });
  const running = slowDraft.inflight + quickTarget.inflight;
  const calls = slowDraft.calls + quickTarget.calls;
  const rolled = slowDraft.rollbacks.length + quickTarget.rollbacks.length;
  await Promise.all([...slowDraft.pending, ...quickTarget.pending]);
  check(
    "parallel, async models: aborted with calls in flight",
    e?.code === "aborted" && e.summary?.aborted === true && running === 2,
    `${e?.code}: ${e?.summary?.tokens}, ${running} calls in flight`,
  );
  const after = slowDraft.calls + quickTarget.calls + slowDraft.rollbacks.length + quickTarget.rollbacks.length;
  check("parallel, async models: nothing is called after the abort", after === calls + rolled, `${after - calls - rolled} calls`);
}

/** The SpeculaError decode(options) throws (or rejects with). */
async function refusal(options) {
  try {
    await run(options);
  } catch (error) {
    return error;
  }
  return null;
}

// Every bad model and option is a SpeculaError with its code, naming the model.
{
  const good = { draft, target, prompt: PROMPT, maxTokens: 4 };
  const returning = (value) => ({ vocabSize: V, logits: () => value });
  const nan = new Float32Array(2 * V);
  nan[5] = NaN;
  const cases = [
    ["options null", null, "invalid_option", "options", "options must be an object"],
    ["target missing", { ...good, target: undefined }, "invalid_option", "target", "target is required"],
    ["draft missing", { ...good, draft: undefined }, "invalid_option", "draft", "draft is required"],
    ["vocabSize 0", { ...good, target: { vocabSize: 0, logits() {} } }, "bad_model", "target", "the target model has vocabSize 0; it must be a whole number from 1 to 2^31"],
    ["vocabSize 2.5", { ...good, draft: { vocabSize: 2.5, logits() {} } }, "bad_model", "draft", "the draft model has vocabSize 2.5"],
    ["vocabSize a string", { ...good, draft: { vocabSize: "4", logits() {} } }, "bad_model", "draft", 'vocabSize the string "4"'],
    ["vocabSizes differ", { ...good, draft: markov(V + 1, 3) }, "bad_model", "draft", "has vocabSize 5 but the target model has 4"],
    ["no logits", { ...good, target: { vocabSize: V } }, "bad_model", "target", "has no logits(tokens, count) function"],
    ["rollback not a function", { ...good, target: { ...target, rollback: 1 } }, "bad_model", "target", "has a rollback that is the number 1"],
    ["logits too short", { ...good, draft: returning(new Float32Array(V - 1)) }, "bad_model", "draft", "returned 3 logits from logits(tokens, 1); it must return 4"],
    ["logits a string", { ...good, draft: returning("0,0,0,0") }, "bad_model", "draft", 'returned the string "0,0,0,0"'],
    ["logits undefined", { ...good, target: returning(undefined) }, "bad_model", "target", "returned undefined from logits(tokens, 4); it must return a Float32Array of 16 logits (count 4 × vocabSize 4)"],
    ["logits NaN", { ...good, method: "autoregressive", target: { vocabSize: V, logits: (t, c) => (c === 2 ? nan : new Float32Array(c * V).fill(NaN)) } }, "bad_model", "target", "returned NaN"],
    ["logits Infinity", { ...good, draft: returning(new Float32Array(V).fill(Infinity)) }, "bad_model", "draft", "returned Infinity from logits(tokens, 1) at row 0, token 0"],
    ["logits -Infinity", { ...good, draft: returning([0, 1, -Infinity, 0]) }, "bad_model", "draft", "returned -Infinity"],
    ["logits an array with a string", { ...good, draft: returning([0, 1, "2", 0]) }, "bad_model", "draft", 'returned the string "2"'],
    ["prompt out of range", { ...good, prompt: [1, V] }, "invalid_option", "prompt[1]", "a token id of the models' vocabulary of 4"],
    ["prompt empty", { ...good, prompt: [] }, "invalid_option", "prompt", "at least one token id"],
    ["prompt text", { ...good, prompt: "To be" }, "invalid_option", "prompt", "must be an array of token ids"],
    ["prompt missing", { ...good, prompt: undefined }, "invalid_option", "prompt", "prompt is required"],
    ["stop strings", { ...good, stop: ["\n"] }, "invalid_option", "stop[0]", "stop[0] must be a number"],
    ["stop out of range", { ...good, stop: [9] }, "invalid_option", "stop[0]", "got 9"],
    ["gamma 0", { ...good, gamma: 0 }, "invalid_option", "gamma", "gamma must be a whole number from 1 to 64"],
    ["drafts with speculative", { ...good, drafts: 2 }, "invalid_option", "drafts", "refused rather than ignored"],
    ["draft missing with typical", { ...good, draft: undefined, method: "typical" }, "invalid_option", "draft", "draft is required"],
    ["ngram 0", { ...good, draft: undefined, method: "lookup", ngram: 0 }, "invalid_option", "ngram", "ngram must be a whole number from 1 to 16"],
    ["epsilon with speculative", { ...good, epsilon: 0.1 }, "invalid_option", "epsilon", "refused rather than ignored"],
    ["unknown option", { ...good, temprature: 1 }, "invalid_option", "temprature", "unknown option"],
    ["signal not a signal", { ...good, signal: {} }, "invalid_option", "signal", "signal must be an AbortSignal"],
  ];
  for (const [name, options, code, field, needle] of cases) {
    const e = await refusal(options);
    const ok = e instanceof SpeculaError && e.name === "SpeculaError" && e.code === code && e.field === field && e.message.includes(needle);
    check(`refused: ${name}`, ok, e ? `${e.code} ${e.field}: ${e.message}` : "accepted");
  }
  // A model that throws or rejects: model_failed, its error kept as the cause.
  const boom = new Error("out of memory");
  for (const [name, logits] of [
    ["throws", () => { throw boom; }],
    ["rejects", () => Promise.reject(boom)],
  ]) {
    const e = await refusal({ ...good, target: { vocabSize: V, logits }, method: "autoregressive" });
    check(`model ${name}`, e instanceof SpeculaError && e.code === "model_failed" && e.cause === boom && e.message.includes("the target model's logits(tokens, 1) failed: out of memory"), e?.message);
  }
  // Abort: before the start, and while an async model call is pending.
  const before = new AbortController();
  before.abort();
  let e = await refusal({ ...good, signal: before.signal });
  check("aborted before the start", e?.code === "aborted" && e.summary?.tokens.length === 0, e?.message);
  const during = new AbortController();
  let calls = 0;
  const slow = { vocabSize: V, logits: (t, c) => { if (++calls === 3) during.abort(); return Promise.resolve(new Float32Array(c * V)); } };
  e = await refusal({ ...good, method: "autoregressive", target: slow, maxTokens: 10, signal: during.signal });
  check("aborted during a model call", e?.code === "aborted" && e.summary?.aborted === true && e.summary.tokens.length === 2, `${e?.message} ${e?.summary?.tokens}`);
}

console.log(`== decode() tests: ${((performance.now() - started) / 1000).toFixed(1)} s, ${failures} failed`);
process.exit(failures ? 1 : 0);
