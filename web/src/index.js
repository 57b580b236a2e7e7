// The page side of `specula`: a promise API over the worker that owns the wasm module
// and the models. Every failure is a thrown SpeculaError with a `code`; an
// "invalid_option" one also names the option in `field`.

import { SpeculaError, describe, fromPayload, optionError, splitSignal } from "./errors.js";
import { checkLoadOptions, urlsFor } from "./load-options.js";
import { startThreads, stopThreads } from "./threads.js";
import { SAMPLE_SETTING_NAMES } from "./limits.js";

export { BUGS, LIMITS, METHOD_OPTIONS } from "./limits.js";
export { SpeculaError } from "./errors.js";
export { decode } from "./decode.js";
export { cachedModel } from "./cached-model.js";

/**
 * The first part of an options object that a worker cannot be sent (a function, a symbol,
 * a DOM object), named as in the object ("seed", "stop[0]"; "" for the object itself):
 * `{ path, value }`, or null when all of it can be sent.
 */
function unclonable(value, path = "", seen = new Set()) {
  try {
    structuredClone(value);
    return null;
  } catch {
    // Look inside for the part that was refused.
  }
  if (value !== null && typeof value === "object" && !seen.has(value)) {
    seen.add(value);
    const entries = Array.isArray(value)
      ? value.map((item, i) => [`${path || "options"}[${i}]`, item])
      : Object.entries(value).map(([key, item]) => [path ? `${path}.${key}` : key, item]);
    for (const [inner, item] of entries) {
      const found = unclonable(item, inner, seen);
      if (found) return found;
    }
  }
  return { path, value };
}

/** The error for options a worker cannot be sent, naming the part refused. */
function notPlainData(options, error) {
  const found = unclonable(options);
  const field = found?.path || "options";
  const got = found ? describe(found.value) : error?.message;
  return optionError(field, `${field} must be plain data (strings, numbers, booleans, arrays, objects), got ${got}`);
}

/**
 * Why the worker API cannot run where there is no Web Worker (Node has none): it says so
 * and points to what works there, instead of a ReferenceError from deep inside.
 */
const NO_WORKER =
  "Specula runs its models and math in a Web Worker, and this environment has none (no global Worker, as in Node.js): " +
  "Specula.load(), new Specula(), plan(), theory(), retarget() and checkOptions() need a browser (a runtime with module Web Workers). " +
  "In Node, use decode() with models of your own (Node 20 or later; see the package's examples/node-decode.mjs).";

function spawnWorker() {
  if (typeof Worker !== "function") throw new SpeculaError(NO_WORKER, "backend_unavailable");
  // The literal `new Worker(new URL(...), { type: "module" })` is what bundlers look for.
  return new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
}

/** Sends requests to one worker and routes its replies by request id. */
class Channel {
  constructor() {
    this.terminated = false;
    this.worker = spawnWorker();
    this.nextId = 1;
    this.handlers = new Map();
    this.worker.onmessage = (event) => {
      const message = event.data;
      this.handlers.get(message.id)?.(message);
    };
    this.worker.onerror = (event) => {
      const error = { message: `the Specula worker failed: ${event.message ?? "unknown error"}`, code: "crashed" };
      for (const handler of this.handlers.values()) handler({ type: "error", error });
    };
  }

  /** Posts `message` (moving `transfer`); `onMessage` gets every reply until it returns true. */
  send(message, onMessage, transfer = []) {
    // A terminated worker takes messages and never answers: refuse instead of hanging.
    if (this.terminated) throw new SpeculaError("this Specula instance was terminated", "terminated");
    const id = this.nextId++;
    this.handlers.set(id, (reply) => {
      if (onMessage(reply)) this.handlers.delete(id);
    });
    try {
      this.worker.postMessage({ ...message, id }, transfer);
    } catch (error) {
      this.handlers.delete(id);
      throw notPlainData(message.options, error);
    }
    return id;
  }

  /** A request answered by one "done" (or "ready") message. */
  request(message, onProgress, transfer) {
    return new Promise((resolve, reject) => {
      this.send(message, (reply) => {
        switch (reply.type) {
          case "progress":
            onProgress?.(reply);
            return false;
          case "ready":
          case "done":
            resolve(reply);
            return true;
          case "error":
            reject(fromPayload(reply.error));
            return true;
          default:
            return false;
        }
      }, transfer);
    });
  }

  terminate() {
    this.terminated = true;
    this.worker.terminate();
    const error = { message: "this Specula instance was terminated", code: "terminated" };
    for (const handler of this.handlers.values()) handler({ type: "error", error });
    this.handlers.clear();
  }
}

/** Throws unless `specula`'s models are loaded and nothing runs (generate() and sample() share its worker's engine). */
function checkIdle(specula) {
  if (!specula.loaded) {
    throw new SpeculaError("the models are not loaded: call load() first and wait for it to finish", "not_loaded");
  }
  if (specula.generation) {
    throw new SpeculaError("a generation is already running; abort() it or wait for it to end", "busy");
  }
}

/**
 * The draft worker of parallel drafting (docs/parallel-draft.md), started and loaded on
 * first use: the CPU-only module with the draft model and the decoder, the target's
 * requests sent to `specula`'s worker over a MessageChannel. Resolves to its Channel.
 */
function draftWorker(specula) {
  if (!specula.draftReady) {
    const channel = new Channel();
    const { port1, port2 } = new MessageChannel();
    specula.channel.worker.postMessage({ type: "serve", id: 0, port: port1 }, [port1]);
    const ready = channel
      .request({ type: "loadDraft", urls: specula.modelUrls, targetInfo: specula.backendInfo, port: port2 }, undefined, [port2])
      .then(() => channel);
    ready.catch(() => {
      channel.terminate();
      if (specula.draftReady === ready) specula.draftReady = null;
    });
    specula.draftChannel = channel;
    specula.draftReady = ready;
  }
  return specula.draftReady;
}

/** Stops `specula`'s draft worker, if it has one. */
function stopDraftWorker(specula) {
  specula.draftChannel?.terminate();
  specula.draftChannel = null;
  specula.draftReady = null;
}

/** One bundled model as a decode() model: its requests go to the worker's engine. */
function bundledModel(specula, role) {
  return {
    vocabSize: specula.vocabSizeValue,
    async forward(request) {
      const plain = {
        committedLen: request.committedLen,
        sequences: request.sequences,
        queries: request.queries,
      };
      return (await specula.channel.request({ type: "forward", role, request: plain })).value;
    },
    /** Turns the stage profile of this model's host forward pass on (totals from zero) or off. */
    async profileStages(on) {
      await specula.channel.request({ type: "profileStages", role, on });
    },
    /** The stage profile's totals `{ enabled, passes, positions, totalMs, stagesMs }`; `{ reset: true }` zeroes them after reading. */
    async stageTimes(options) {
      return (await specula.channel.request({ type: "stageTimes", role, options })).value;
    },
  };
}

/** The bundled draft/target models in a worker. Create with `await Specula.load()`. */
export class Specula {
  /** Starts the worker; call `load()` before generating. */
  constructor() {
    this.channel = new Channel();
    this.urls = null; // set by load(); plan() uses the same wasm URL
    // Those of the last load() that succeeded: a failed one leaves its models in place.
    this.modelUrls = null;
    this.gguf = false; // whether the models loaded are GGUF files (target, draft)
    this.loaded = false;
    this.generation = null; // { id, aborted } of the running generation
    this.backendInfo = null;
    this.alphabetText = null;
    this.vocabSizeValue = 0;
    this.tokenTextsValue = null;
    this.bundled = null;
    this.draftChannel = null; // the draft worker, under parallel drafting
    this.threadChannel = null; // the target's second worker (load option threads)
    this.draftReady = null; // Promise of it, loaded
  }

  /** Creates an instance and loads the models: `await Specula.load({ backend, onProgress })`. */
  static async load(options = {}) {
    const specula = new Specula();
    try {
      await specula.load(options);
    } catch (error) {
      specula.terminate();
      throw error;
    }
    return specula;
  }

  /**
   * Downloads the wasm module and the weights (with progress), checks checksums, builds the
   * models: the bundled pair, the pair at `weightsUrl`, or two GGUF files (`target`, `draft`).
   */
  async load(options = {}) {
    const checked = checkLoadOptions(options);
    if (this.generation) {
      throw new SpeculaError("a generation is running; abort() it or wait before load()", "busy");
    }
    this.urls = urlsFor(checked);
    // A draft worker serves the models being replaced; the next parallel generation starts one anew.
    stopDraftWorker(this);
    const reply = await this.channel.request(
      { type: "load", backend: checked.backend, draftBackend: checked.draftBackend, urls: this.urls },
      checked.onProgress && ((p) => checked.onProgress({ file: p.file, loaded: p.loaded, total: p.total })),
    );
    // The second worker held a copy of the models just replaced (a failed load keeps both).
    stopThreads(this);
    this.loaded = true;
    this.modelUrls = this.urls;
    this.gguf = this.urls.targetGguf !== undefined;
    this.backendInfo = await startThreads(this, checked.threads, reply, () => new Channel());
    this.alphabetText = reply.alphabet;
    this.vocabSizeValue = reply.vocabSize;
    this.tokenTextsValue = Object.freeze(reply.tokenTexts);
    this.bundled = null;
    return reply.backend;
  }

  /**
   * The loaded pair as {@link decode} models, `{ draft, target }`: each answers decode()'s
   * requests with one batched pass in this instance's worker (its `forward`), so
   * `decode({ ...s.models, prompt: await s.tokenize(text) })` gives the tokens
   * `generate()` gives for the same seed and options. Null before `load()`.
   */
  get models() {
    if (!this.loaded) return null;
    this.bundled ??= { draft: bundledModel(this, "draft"), target: bundledModel(this, "target") };
    return this.bundled;
  }

  /** The token ids of `text` (one per character of {@link alphabet}), for decode(). */
  async tokenize(text) {
    if (typeof text !== "string") throw optionError("text", `text must be a string, got ${describe(text)}`);
    return (await this.channel.request({ type: "tokenize", text })).value;
  }

  /** The text of token ids, as decode()'s rounds give them. */
  async detokenize(tokens) {
    return (await this.channel.request({ type: "detokenize", tokens: Array.from(tokens ?? []) })).value;
  }

  /** Where the models run: `{ backend: "webgpu" | "cpu", draftBackend: "webgpu" | "cpu", requested, adapter, isFallbackAdapter, reason, module: "full" | "cpu", simd, threads: 1 | 2, threadsReason }`. */
  get backend() {
    return this.backendInfo;
  }

  /** The characters the models know; "" for GGUF models (see {@link tokenTexts}). */
  get alphabet() {
    return this.alphabetText;
  }

  /**
   * Every token's text, in id order (frozen): the bundled pair's characters, or a GGUF
   * model's byte-level BPE pieces as text (" the", "\n"; U+FFFD for a byte that is not
   * UTF-8 alone). Null before load().
   */
  get tokenTexts() {
    return this.tokenTextsValue;
  }

  /**
   * Generates text round by round: `for await (const round of s.generate({ prompt, ... }))`.
   * The iterator's return value is the summary. Throws a SpeculaError on bad options, before
   * load(), while another generation runs, and with code "aborted" after abort(). With
   * `parallelDraft: true` the draft model runs in a second worker of its own, drafting the
   * next round while this instance's worker verifies (docs/parallel-draft.md).
   */
  generate(options) {
    checkIdle(this);
    let signal;
    ({ options, signal } = splitSignal(options));
    const parallel = options !== null && typeof options === "object" && options.parallelDraft === true;
    // Checked here: its worker is sent the options only once the draft worker has loaded.
    if (parallel && unclonable(options)) throw notPlainData(options);
    const queue = [];
    let wake = null;
    const push = (item) => {
      queue.push(item);
      wake?.();
      wake = null;
    };
    // `channel`: the worker that runs it, once known (the draft worker may still be loading).
    const generation = { id: 0, aborted: false, channel: null };
    const onReply = (reply) => {
      if (reply.type === "progress") return false;
      const last = reply.type !== "round";
      // The worker is free again as soon as it says so, whether or not anyone iterates.
      if (last && this.generation === generation) this.generation = null;
      push(reply);
      return last;
    };
    if (parallel) {
      draftWorker(this).then(
        (channel) => {
          generation.channel = channel;
          generation.id = channel.send({ type: "generate", options }, onReply);
          if (generation.aborted) channel.worker.postMessage({ type: "abort", id: generation.id });
        },
        (error) => onReply({ type: "failed", error }),
      );
    } else {
      generation.channel = this.channel;
      generation.id = this.channel.send({ type: "generate", options }, onReply);
    }
    this.generation = generation;
    const onAbort = () => this.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) this.abort();
    const stop = () => {
      generation.aborted = true;
      generation.channel?.worker.postMessage({ type: "abort", id: generation.id });
    };
    async function* rounds() {
      let finished = false;
      try {
        for (;;) {
          while (queue.length === 0) await new Promise((resolve) => (wake = resolve));
          const reply = queue.shift();
          if (reply.type === "round") {
            yield reply.round;
            continue;
          }
          finished = true;
          if (reply.type === "done") return reply.summary;
          if (reply.type === "abort") {
            throw new SpeculaError("the generation was aborted by abort()", "aborted", { summary: reply.summary });
          }
          // The draft worker did not load: its error as it was thrown.
          if (reply.type === "failed") throw reply.error;
          throw fromPayload(reply.error);
        }
      } finally {
        signal?.removeEventListener("abort", onAbort);
        if (!finished) {
          // The consumer left early (break or throw): stop the worker and wait until it has.
          stop();
          while (!queue.some((r) => r.type !== "round")) await new Promise((resolve) => (wake = resolve));
        }
      }
    }
    return rounds();
  }

  /** Runs a whole generation; resolves to its summary `{ prompt, text, tokens, finish, metrics, ... }`. */
  async complete(options) {
    const iterator = this.generate(options);
    for (;;) {
      const { value, done } = await iterator.next();
      if (done) return value;
    }
  }

  /**
   * The lab: `runs` generations of the same options (seeds `seed`, `seed + 1`, …), each of
   * two characters through the real decoder, counting character `position` (1 or 2), and
   * the exact distribution of that character worked out from the models. Resolves to
   * `{ position, kind, expected, target, tvFromTarget, counts, done, samples, tv,
   * chiSquare, degreesOfFreedom, pValue, targetPValue, ... }`; `onProgress` gets the same
   * shape as the counts grow. `abort()` or `signal` stops it: it then rejects with code
   * "aborted" and the counts so far as `error.result`.
   */
  async sample(options, lab = {}) {
    checkIdle(this);
    if (lab === null || typeof lab !== "object" || Array.isArray(lab)) {
      throw optionError("lab", `sample()'s second argument must be an object { ${SAMPLE_SETTING_NAMES.join(", ")} }, got ${describe(lab)}`);
    }
    // signal and onProgress stay here; the engine reads the rest (SampleSettings: the
    // names, the types and the ranges of runs and position).
    const { signal, onProgress, ...settings } = lab;
    if (onProgress !== undefined && typeof onProgress !== "function") {
      throw optionError("onProgress", `onProgress must be a function, got ${describe(onProgress)}`);
    }
    if (unclonable(settings)) throw notPlainData(settings);
    const { signal: checked } = splitSignal({ signal });
    const generation = { id: 0, aborted: false, channel: this.channel };
    const done = new Promise((resolve, reject) => {
      generation.id = this.channel.send({ type: "sample", options, settings }, (reply) => {
        if (reply.type === "runs") {
          onProgress?.(reply.value);
          return false;
        }
        if (reply.type === "progress") return false;
        if (this.generation === generation) this.generation = null;
        if (reply.type === "done") resolve(reply.value);
        else if (reply.type === "abort") {
          reject(new SpeculaError("the runs were aborted by abort()", "aborted", { result: reply.value }));
        } else reject(fromPayload(reply.error));
        return true;
      });
    });
    this.generation = generation;
    const onAbort = () => this.abort();
    checked?.addEventListener("abort", onAbort, { once: true });
    if (checked?.aborted) this.abort();
    try {
      return await done;
    } finally {
      checked?.removeEventListener("abort", onAbort);
    }
  }

  /** The workers' wasm memory (the draft worker's too, once started) and (where the browser tells) the main worker's JS heap, in bytes: `{ wasmBytes, jsHeapBytes }`. */
  async memory() {
    const main = (await this.channel.request({ type: "memory" })).value;
    if (!this.draftChannel) return main;
    // The draft worker's module, under parallel drafting.
    const draft = (await this.draftChannel.request({ type: "memory" })).value;
    return { ...main, wasmBytes: main.wasmBytes + draft.wasmBytes };
  }

  /**
   * The WebGPU calls the main worker has made since it started (`GpuCalls`: dispatches,
   * submissions, read-backs, pipelines and buffers created, uploads), counted where they
   * reach the browser; all zero on the CPU. Take two and subtract to count a generation's.
   */
  async gpuCalls() {
    return (await this.channel.request({ type: "gpuCalls" })).value;
  }

  /**
   * The dense calls the main worker handed the target's second worker since the models
   * were loaded (`ThreadCalls`: posted, answered, too large); all zero with one worker.
   */
  async threadCalls() {
    return (await this.channel.request({ type: "threadCalls" })).value;
  }

  /** Stops the running generation before its next model call; its iterator throws code "aborted". */
  abort() {
    const generation = this.generation;
    if (!generation || generation.aborted) return;
    generation.aborted = true;
    // Before the draft worker has loaded, the flag is enough: it is checked once it has.
    generation.channel?.worker.postMessage({ type: "abort", id: generation.id });
  }

  /**
   * `plan()` in this instance's worker: the same report, without starting a second worker
   * with its own copy of the wasm module. Works before load() too, and while a
   * generation runs (it is answered between rounds).
   */
  async plan(options) {
    const reply = await this.channel.request({ type: "plan", options, urls: this.urls });
    return reply.value;
  }

  /** {@link theory} in this instance's worker, like `plan()`. */
  async theory(options) {
    const reply = await this.channel.request({ type: "theory", options, urls: this.urls });
    return reply.value;
  }

  /** {@link retarget} in this instance's worker, like `plan()`. */
  async retarget(options) {
    const reply = await this.channel.request({ type: "retarget", options, urls: this.urls });
    return reply.value;
  }

  /** Stops the worker; the instance cannot be used afterwards. */
  terminate() {
    this.loaded = false;
    stopDraftWorker(this);
    stopThreads(this);
    this.channel.terminate();
  }
}

let mathChannel = null;

/** One request of `type` to the worker shared by the functions below (started on first use). */
async function mathRequest(type, options) {
  mathChannel ??= new Channel();
  const reply = await mathChannel.request({ type, options });
  return reply.value;
}

/**
 * The closed-form analysis of one token-level scheme, no models needed:
 * `await plan({ method, selection, target, draft, drafts, kl, rho, temperature, normalize })`,
 * by generate()'s names (greedy is method "speculative" at temperature 0). Resolves to the
 * report of `specula plan --json`.
 */
export function plan(options) {
  return mathRequest("plan", options);
}

/**
 * Speculative decoding's closed forms over γ, computed by the engine's core:
 * `await theory({ alpha, gammas, costRatio })` resolves to `{ gammas, expectedTokens,
 * walltimeFactor }` (walltimeFactor null without costRatio).
 */
export function theory(options) {
  return mathRequest("theory", options);
}

/**
 * A distribution recorded at temperature `from` (no top-k or top-p) as the engine would
 * process it with other sampling settings: `await retarget({ probs, from, temperature,
 * topK, topP })` resolves to the new probabilities.
 */
export function retarget(options) {
  return mathRequest("retarget", options);
}

/**
 * Checks generate() options without the models, in the same worker as plan(): resolves to
 * the checked settings `{ prompt, config }` (defaults filled in) or rejects with the
 * SpeculaError generate() would throw for them. Only the prompt's characters are left to
 * generate(), which knows the models' alphabet (code "bad_prompt").
 */
export async function checkOptions(options) {
  ({ options } = splitSignal(options));
  return mathRequest("check", options);
}
