// decode(): exact speculative decoding over any pair of models the caller runs, on the
// calling thread. The engine is a small wasm module of its own (crates/specula-decode, no
// burn, no models), loaded on the first call; the models are JavaScript objects
// { vocabSize, logits(tokens, count), forward?(request), rollback?(committedLen) }.
// The engine says which model must score which positions; this file runs the model,
// checks its answer and hands the logits back, round after round. Under parallel
// drafting the draft's and the target's requests may run at once, each answer supplied
// as it arrives (docs/parallel-draft.md: the tokens do not depend on the order).

import { SpeculaError, describe, fromPayload, optionError, splitSignal } from "./errors.js";
import { LIMITS } from "./limits.js";

// Token ids cross as Int32Array, so a vocabulary must fit it (the engine's MAX_VOCAB).
const MAX_VOCAB = LIMITS.maxVocab;

let loading = null;

/** The wasm bindings, instantiated once: from the package's file in Node, by URL elsewhere. */
function loadModule() {
  loading ??= (async () => {
    // A literal specifier, so bundlers include the bindings (and, through the URL below,
    // the module) in their output.
    const bindings = await import("./decode-wasm/specula_decode.js");
    // The literal `new URL("./…", import.meta.url)` is what bundlers look for.
    const url = new URL("./decode-wasm/specula_decode_bg.wasm", import.meta.url);
    if (url.protocol === "file:") {
      // Node has no fetch() of file: URLs; a variable specifier keeps bundlers from
      // resolving this browser-unreachable import.
      const fs = "node:fs/promises";
      const { readFile } = await import(/* @vite-ignore */ fs);
      bindings.initSync({ module: await readFile(url) });
    } else {
      await bindings.default({ module_or_path: url });
    }
    return bindings;
  })();
  // A failed load (a missing file) is retried by the next call rather than cached.
  loading.catch(() => (loading = null));
  return loading;
}

function modelError(name, message) {
  return new SpeculaError(`the ${name} model ${message}`, "bad_model", { field: name });
}

/** Checks one model's shape; returns its vocabulary size. */
function checkModel(model, name) {
  if (model === undefined || model === null) {
    throw optionError(name, `${name} is required: a model { vocabSize, logits(tokens, count) }`);
  }
  if (typeof model !== "object" && typeof model !== "function") {
    throw optionError(name, `${name} must be a model { vocabSize, logits(tokens, count) }, got ${describe(model)}`);
  }
  const vocab = model.vocabSize;
  if (typeof vocab !== "number" || !Number.isInteger(vocab) || vocab < 1 || vocab > MAX_VOCAB) {
    const shown = typeof vocab === "number" ? String(vocab) : describe(vocab);
    throw modelError(name, `has vocabSize ${shown}; it must be a whole number from 1 to 2^${Math.log2(MAX_VOCAB)}`);
  }
  if (typeof model.logits !== "function" && typeof model.forward !== "function") {
    throw modelError(name, "has no logits(tokens, count) function (nor forward(request))");
  }
  for (const method of ["forward", "rollback"]) {
    if (model[method] !== undefined && typeof model[method] !== "function") {
      throw modelError(name, `has a ${method} that is ${describe(model[method])}, not a function`);
    }
  }
  return vocab;
}

function isThenable(value) {
  return value !== null && (typeof value === "object" || typeof value === "function") && typeof value.then === "function";
}

/** A model call's failure, its error kept as `cause`. */
function failed(name, call, error) {
  const why = error instanceof Error ? error.message : describe(error);
  return new SpeculaError(`the ${name} model's ${call} failed: ${why}`, "model_failed", { field: name, cause: error });
}

/** `f()` awaited only when it returns a promise, so synchronous models never wait a tick. */
function callModel(f, name, call) {
  let result;
  try {
    result = f();
  } catch (error) {
    throw failed(name, call, error);
  }
  if (!isThenable(result)) return result;
  return Promise.resolve(result).catch((error) => {
    throw failed(name, call, error);
  });
}

/**
 * `answer`, checked: `rows × vocab` finite numbers in a Float32Array, Float64Array or
 * array; `rows` says what the rows are ("count 3", "5 queries").
 */
function checkAnswer(answer, count, rows, vocab, name, call) {
  const want = count * vocab;
  if (!(answer instanceof Float32Array || answer instanceof Float64Array || Array.isArray(answer))) {
    throw modelError(name, `returned ${describe(answer)} from ${call}; it must return a Float32Array of ${want} logits (${rows} × vocabSize ${vocab})`);
  }
  if (answer.length !== want) {
    throw modelError(name, `returned ${answer.length} logits from ${call}; it must return ${want} (${rows} × vocabSize ${vocab})`);
  }
  for (let i = 0; i < want; i++) {
    const x = answer[i];
    // NaN and ±Infinity fail x - x === 0; so does every non-number.
    if (typeof x !== "number" || x - x !== 0) {
      const got = typeof x === "number" ? String(x) : describe(x);
      throw modelError(name, `returned ${got} from ${call} at row ${Math.floor(i / vocab)}, token ${i % vocab}; every logit must be a finite number`);
    }
  }
  return answer;
}

// The session's names of the models (nextModel() and the request accessors), and what
// nextModel() says when every request wanted now is already running.
const DRAFT = 1;
const TARGET = 2;
const WAIT = 3;

/** The running request of `role` as a model's `forward` takes it (the engine's ForwardRequest). */
function forwardRequest(session, role, name) {
  const sequences = [];
  for (let i = 0, n = session.sequenceCount(role); i < n; i++) sequences.push(session.sequence(role, i));
  const flat = session.queries(role);
  const queries = [];
  for (let i = 0; i < flat.length; i += 2) queries.push({ sequence: flat[i], prefixLen: flat[i + 1] });
  return { role: name, committedLen: session.requestCommittedLen(role), sequences, queries };
}

/** `answers` (one per call) end to end, in one Float32Array unless there is one. */
function concat(answers) {
  if (answers.length === 1) return answers[0];
  const all = new Float32Array(answers.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of answers) {
    all.set(a, at);
    at += a.length;
  }
  return all;
}

/**
 * Runs `role`'s request on its model: the checked answer, or a Promise of it when the
 * model is asynchronous. The request is read here, at the start, as the session may be
 * gone by the time a call resolves; `live()` false stops a request of several calls
 * between them (the run ended).
 */
function runRequest(session, role, model, name, vocab, live) {
  if (typeof model.forward === "function") {
    const request = forwardRequest(session, role, name);
    const queries = request.queries.length;
    const check = (logits) => checkAnswer(logits, queries, `${queries} queries`, vocab, name, "forward(request)");
    const logits = callModel(() => model.forward(request), name, "forward(request)");
    return isThenable(logits) ? logits.then(check) : check(logits);
  }
  const calls = [];
  for (let i = 0, n = session.callCount(role); i < n; i++) calls.push([session.callTokens(role, i), session.callRows(role, i)]);
  const answers = [];
  // Synchronous calls stay synchronous; the first Promise makes the rest a chain of it.
  const from = (i) => {
    for (; i < calls.length; i++) {
      const [tokens, count] = calls[i];
      const call = `logits(tokens, ${count})`;
      const logits = callModel(() => model.logits(tokens, count), name, call);
      const check = (l) => answers.push(checkAnswer(l, count, `count ${count}`, vocab, name, call));
      if (isThenable(logits)) {
        const rest = i + 1;
        return logits.then((l) => {
          check(l);
          return live() ? from(rest) : null;
        });
      }
      check(logits);
    }
    return concat(answers);
  };
  return from(0);
}

/**
 * `role`'s request started on `model`: a slot whose `answer` is there at once from a
 * synchronous model, else once `done`. `settled` resolves to the slot when an
 * asynchronous answer arrives and never rejects (a failure is kept as `error`), so an
 * answer that arrives after the run ended is dropped quietly. `rollback`, when set, is
 * a committed length the model hears once this call is over, never during it.
 */
function start(session, role, model, name, vocab, live) {
  const slot = { role, model, name, done: true, answer: undefined, failed: false, error: undefined, rollback: undefined, settled: null };
  const answer = runRequest(session, role, model, name, vocab, live);
  if (!isThenable(answer)) {
    slot.answer = answer;
    return slot;
  }
  slot.done = false;
  slot.settled = answer.then(
    (value) => Object.assign(slot, { done: true, answer: value }),
    (error) => Object.assign(slot, { done: true, failed: true, error }),
  );
  return slot;
}

/** Tells `model` the committed length: the Promise to await when it returns one, else null. */
function rollback(model, name, committed) {
  const done = callModel(() => model.rollback(committed), name, `rollback(${committed})`);
  return isThenable(done) ? done : null;
}

function wasmCall(f) {
  try {
    return f();
  } catch (error) {
    throw error?.name === "SpeculaError" ? fromPayload(error) : error;
  }
}

function aborted(session) {
  const summary = JSON.parse(session.summary(true));
  return new SpeculaError("decode() was aborted through its signal", "aborted", { summary });
}

/**
 * Decodes with `options.draft` and `options.target`: `for await (const round of
 * decode({ draft, target, prompt: [1, 2], method: "speculative", gamma: 4 }))`. The
 * iterator's return value is the summary. Every failure is a SpeculaError (index.d.ts).
 */
export function decode(options) {
  return run(options);
}

async function* run(options) {
  let signal;
  ({ options, signal } = splitSignal(options));
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw optionError("options", `options must be an object such as { draft, target, prompt }, got ${describe(options)}`);
  }
  const { draft, target, ...engineOptions } = options;
  // Autoregressive decoding and prompt lookup (drafts copied from the context) never
  // call a draft model, so they need none.
  const drafting = engineOptions.method !== "autoregressive" && engineOptions.method !== "lookup";
  const vocab = checkModel(target, "target");
  if (drafting || draft !== undefined) {
    const draftVocab = checkModel(draft, "draft");
    if (draftVocab !== vocab) {
      throw modelError("draft", `has vocabSize ${draftVocab} but the target model has ${vocab}; both must score the same vocabulary`);
    }
  }
  const { DecodeSession } = await loadModule();
  const session = wasmCall(() => new DecodeSession(engineOptions, vocab));
  const named = (role) => (role === DRAFT ? [draft, "draft"] : [target, "target"]);
  // The requests running, by role (DRAFT, TARGET): at most one per model, so a model
  // never has two calls at once. Under parallel drafting both may run; otherwise the
  // session hands out one request at a time.
  const slots = [null, null, null];
  const asynchronous = [false, false, false];
  let live = true;
  const isLive = () => live && !signal?.aborted;
  // The abort as a promise, raced with the calls running: an abort does not wait for them.
  let onAbort = null;
  const abortion = signal && new Promise((resolve) => (onAbort = () => resolve(null)));
  if (onAbort) signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      if (signal?.aborted) throw aborted(session);
      // Start every request whose model is idle; a request of a busy model is the one
      // it runs (nextModel() says WAIT). A model that answered asynchronously last time
      // starts first, as a synchronous call holds the thread until it returns.
      const roles = [];
      let next;
      while ((next = wasmCall(() => session.nextModel())) === DRAFT || next === TARGET) roles.push(next);
      if (roles.length === 2 && asynchronous[roles[1]] && !asynchronous[roles[0]]) roles.reverse();
      for (const role of roles) {
        slots[role] = start(session, role, ...named(role), vocab, isLive);
        asynchronous[role] = !slots[role].done;
      }
      if (next !== WAIT) break; // 0: decoding is over
      // An answer already there first, the draft's before the target's (synchronous
      // models run one call at a time, as they always did), else the first to arrive.
      let slot = [slots[DRAFT], slots[TARGET]].find((s) => s?.done);
      if (!slot) {
        const running = [slots[DRAFT], slots[TARGET]].filter((s) => s !== null).map((s) => s.settled);
        slot = await Promise.race(abortion ? [...running, abortion] : running);
        if (signal?.aborted) throw aborted(session);
      }
      slots[slot.role] = null;
      if (slot.failed) throw slot.error;
      const rolled = slot.rollback === undefined ? null : rollback(slot.model, slot.name, slot.rollback);
      if (rolled) await rolled;
      const forward = typeof slot.model.forward === "function";
      const report = wasmCall(() => (forward ? session.supplyQueries(slot.role, slot.answer) : session.supplyCalls(slot.role, slot.answer)));
      if (report === undefined) continue;
      // A round is over (the target just answered, so it is idle): an idle model hears
      // the committed length now, a busy one (the draft, drafting ahead) once its call
      // is over.
      const committed = session.committedLen();
      for (const role of drafting ? [DRAFT, TARGET] : [TARGET]) {
        const [model, name] = named(role);
        if (typeof model.rollback !== "function") continue;
        if (slots[role] !== null) {
          slots[role].rollback = committed;
          continue;
        }
        const rolled = rollback(model, name, committed);
        if (rolled) await rolled;
      }
      yield JSON.parse(report);
    }
    // A call still running (a draft the last round made unneeded) is awaited and its
    // answer dropped, so that decode() returns with both models idle and up to date.
    for (const slot of [slots[DRAFT], slots[TARGET]]) {
      if (slot === null) continue;
      if (!slot.done) await Promise.race(abortion ? [slot.settled, abortion] : [slot.settled]);
      if (signal?.aborted) throw aborted(session);
      const rolled = slot.failed || slot.rollback === undefined ? null : rollback(slot.model, slot.name, slot.rollback);
      if (rolled) await rolled;
    }
    return JSON.parse(session.summary(false));
  } finally {
    live = false;
    if (onAbort) signal.removeEventListener("abort", onAbort);
    session.free();
  }
}
