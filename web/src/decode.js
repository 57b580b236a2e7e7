// decode(): exact speculative decoding over any pair of models the caller runs, on the
// calling thread. The engine is a small wasm module of its own (crates/specula-decode, no
// burn, no models), loaded on the first call; the models are JavaScript objects
// { vocabSize, logits(tokens, count), forward?(request), rollback?(committedLen) }.
// The engine says which model must score which positions; this file runs the model,
// checks its answer and hands the logits back, round after round.

import { SpeculaError, describe, fromPayload, optionError, splitSignal } from "./errors.js";

// Token ids cross as Int32Array, so a vocabulary must fit it.
const MAX_VOCAB = 2 ** 31;

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
    throw modelError(name, `has vocabSize ${shown}; it must be a whole number from 1 to 2^31`);
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

/** The pending request as a model's `forward` takes it (the engine's ForwardRequest). */
function forwardRequest(session, name) {
  const sequences = [];
  for (let i = 0, n = session.sequenceCount(); i < n; i++) sequences.push(session.sequence(i));
  const flat = session.queries();
  const queries = [];
  for (let i = 0; i < flat.length; i += 2) queries.push({ sequence: flat[i], prefixLen: flat[i + 1] });
  return { role: name, committedLen: session.requestCommittedLen(), sequences, queries };
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
  const models = drafting ? [draft, target] : [target];
  try {
    for (;;) {
      if (signal?.aborted) throw aborted(session);
      const role = wasmCall(() => session.nextModel());
      if (role === 0) break;
      const [model, name] = role === 1 ? [draft, "draft"] : [target, "target"];
      let report;
      if (typeof model.forward === "function") {
        const request = forwardRequest(session, name);
        let logits = callModel(() => model.forward(request), name, "forward(request)");
        if (isThenable(logits)) {
          logits = await logits;
          if (signal?.aborted) throw aborted(session);
        }
        const queries = request.queries.length;
        checkAnswer(logits, queries, `${queries} queries`, vocab, name, "forward(request)");
        report = wasmCall(() => session.supplyQueries(logits));
      } else {
        const calls = session.callCount();
        const answers = new Array(calls);
        let total = 0;
        for (let i = 0; i < calls; i++) {
          const tokens = session.callTokens(i);
          const count = session.callRows(i);
          const call = `logits(tokens, ${count})`;
          let logits = callModel(() => model.logits(tokens, count), name, call);
          if (isThenable(logits)) {
            logits = await logits;
            if (signal?.aborted) throw aborted(session);
          }
          answers[i] = checkAnswer(logits, count, `count ${count}`, vocab, name, call);
          total += answers[i].length;
        }
        let all = answers[0];
        if (calls !== 1) {
          all = new Float32Array(total);
          let at = 0;
          for (const a of answers) {
            all.set(a, at);
            at += a.length;
          }
        }
        report = wasmCall(() => session.supplyCalls(all));
      }
      if (report === undefined) continue;
      const committed = session.committedLen();
      for (const m of models) {
        if (typeof m.rollback !== "function") continue;
        const name = m === target ? "target" : "draft";
        const done = callModel(() => m.rollback(committed), name, `rollback(${committed})`);
        if (isThenable(done)) await done;
      }
      yield JSON.parse(report);
    }
    return JSON.parse(session.summary(false));
  } finally {
    session.free();
  }
}
