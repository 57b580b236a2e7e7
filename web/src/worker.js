// The Web Worker that owns the wasm module (the full one or the CPU-only one) and the models,
// so the page never freezes.
// Protocol (every message carries the `id` of the request it answers):
//   page -> worker: load {backend, draftBackend, urls} (urls.targetGguf and urls.draftGguf
//                     for a GGUF pair, else the bundled files) | generate {options} | abort
//                   | serve {port} (answer the target's requests arriving on `port`)
//                   | loadDraft {urls, port, targetInfo} (be a draft worker: the draft
//                     model and the decoder here, the target behind `port`)
//                   | sample {options, settings: {runs, position}} | memory
//                   | plan {options} | check {options} | theory {options} | retarget {options}
//                   | gpuCalls
//   worker -> page: progress {file, loaded, total} | ready {backend, alphabet, vocabSize, tokenTexts}
//                   round {round} | done {summary | value} | abort {summary | value}
//                   | runs {value} (sample's running counts)
//                   error {error: {name, message, code, field}}
import * as fullGlue from "./wasm/specula_wasm.js";
import * as cpuGlue from "./wasm-cpu/specula_wasm.js";
import * as cpuRelaxedGlue from "./wasm-cpu-relaxed/specula_wasm.js";
import { densePort, serveDense } from "./dense-helper.js";
import { relaxedSimdCompiles } from "./simd-probe.js";
import { fetchWithProgress, streamWithProgress } from "./weights.js";
import { FILE_LIMITS } from "./limits.js";

// Resolved by the bundler (Vite, webpack 5, esbuild with loaders) as assets of this package.
const DEFAULT_URLS = {
  // The full module: WebGPU (wgpu, CubeCL, the few-row kernels) and the CPU.
  wasm: new URL("./wasm/specula_wasm_bg.wasm", import.meta.url).href,
  // The CPU-only module (built without the `webgpu` feature): a quarter of the download.
  wasmCpu: new URL("./wasm-cpu/specula_wasm_bg.wasm", import.meta.url).href,
  // The CPU-only module built with relaxed SIMD (load option cpuSimd): where the browser
  // compiles it, its fused multiply-add makes the dense layers cheaper.
  wasmCpuRelaxed: new URL("./wasm-cpu-relaxed/specula_wasm_bg.wasm", import.meta.url).href,
  manifest: new URL("./weights/manifest.json", import.meta.url).href,
  draftMeta: new URL("./weights/draft.json", import.meta.url).href,
  draftWeights: new URL("./weights/draft.bpk", import.meta.url).href,
  targetMeta: new URL("./weights/target.json", import.meta.url).href,
  targetWeights: new URL("./weights/target.bpk", import.meta.url).href,
};

// Each module's JS glue (wasm-bindgen's output differs between the two builds). Imported
// statically, not with import(): a bundler's default worker format (Vite's "iife") cannot
// split a worker into chunks. The glue is small (14 and 8 KB gzip); only the chosen
// module's .wasm is downloaded, on first use.
const GLUE = { full: fullGlue, cpu: cpuGlue, cpuRelaxed: cpuRelaxedGlue };

// The requests answered by one call into the wasm module, no models needed: their exports.
const MATH = { plan: "plan", check: "validateGenerateOptions", theory: "theory", retarget: "retarget" };

const modules = {}; // "full" | "cpu" | "cpuRelaxed" -> Promise<the initialised glue's exports>
let glue = null; // the glue of the module that holds `engine`
let engineModule = null; // "full" | "cpu" | "cpuRelaxed": which module holds `engine`
let engine = null; // Engine once load() succeeded
// In a draft worker (parallel drafting, docs/parallel-draft.md), the DraftEngine and where
// its target runs (the main worker's backend report, updated from its answers).
let draftEngine = null;
let targetInfo = null;
let loading = false;
let running = null; // id of the running generation or sample
let sampleAborted = false; // set by "abort" while sample() runs (start() clears the engine's flag)
const wasmMemory = {}; // each module's memory, for the soak test's "memory" request

const post = (message, transfer) => self.postMessage(message, transfer ?? []);

// The WebGPU calls this worker's module makes (the "gpuCalls" request, Specula.gpuCalls()),
// counted where wgpu's calls reach the browser: wasm-bindgen's glue looks each method up
// on the object at every call, so wrapping the prototypes once counts them all. The
// counts decide a model call's fixed cost on a real GPU, and can be read on any adapter.
const gpuCalls = { dispatches: 0, submits: 0, readbacks: 0, pipelines: 0, buffers: 0, writes: 0 };
function countGpuCalls() {
  const wrap = (type, method, key) => {
    const proto = self[type]?.prototype;
    const original = proto?.[method];
    if (typeof original !== "function") return;
    proto[method] = function counted(...args) {
      gpuCalls[key] += 1;
      return original.apply(this, args);
    };
  };
  wrap("GPUComputePassEncoder", "dispatchWorkgroups", "dispatches");
  wrap("GPUComputePassEncoder", "dispatchWorkgroupsIndirect", "dispatches");
  wrap("GPUQueue", "submit", "submits");
  wrap("GPUBuffer", "mapAsync", "readbacks");
  wrap("GPUDevice", "createComputePipeline", "pipelines");
  wrap("GPUDevice", "createComputePipelineAsync", "pipelines");
  wrap("GPUDevice", "createBuffer", "buffers");
  wrap("GPUQueue", "writeBuffer", "writes");
}
countGpuCalls();

function errorPayload(error) {
  if (error && typeof error === "object") {
    const isWasmTrap = error instanceof WebAssembly.RuntimeError;
    return {
      name: "SpeculaError",
      message: isWasmTrap
        ? `the wasm module crashed (${error.message}); this is a bug — create a new Specula instance`
        : String(error.message ?? error),
      code: isWasmTrap ? "crashed" : (error.code ?? "internal"),
      // The option an "invalid_option" error is about ("topK", "tree[1]", "options").
      field: typeof error.field === "string" ? error.field : undefined,
    };
  }
  return { name: "SpeculaError", message: String(error), code: "internal" };
}

function fail(id, error) {
  post({ type: "error", id, error: errorPayload(error) });
}

/**
 * The module to use: `wanted` ("full" | "cpu"); for the CPU the relaxed-SIMD build
 * ("cpuRelaxed") or the simd128 one as urls.cpuSimd says, except that a caller who gave
 * only `wasmUrl` (urls.wasmCpu and urls.wasmCpuRelaxed null) has one module, the full
 * one, for everything.
 */
function moduleFor(urls, wanted) {
  if (wanted !== "cpu") return "full";
  const choice = urls.cpuSimd ?? "auto";
  const relaxed = choice !== "simd128" && Boolean(urls.wasmCpuRelaxed) && relaxedSimdCompiles();
  if (choice === "relaxed-simd" && !relaxed) {
    const why = urls.wasmCpuRelaxed ? "this browser does not compile relaxed SIMD" : "no relaxed-SIMD module is served (wasmCpuRelaxedUrl)";
    throw Object.assign(new Error(`cpuSimd "relaxed-simd" cannot be used: ${why}; use "auto" or "simd128"`), {
      code: "backend_unavailable",
      field: "cpuSimd",
    });
  }
  if (relaxed) return "cpuRelaxed";
  return urls.wasmCpu ? "cpu" : "full";
}

/** The initialised glue of module `kind` ("full" | "cpu" | "cpuRelaxed"), downloading it on first use. */
function ensureWasm(id, urls, kind) {
  if (!modules[kind]) {
    const url = { full: urls.wasm, cpu: urls.wasmCpu, cpuRelaxed: urls.wasmCpuRelaxed }[kind];
    const ready = (async () => {
      // Compiled while it downloads (instantiateStreaming inside the glue's init).
      const response = await streamWithProgress(url, "specula_wasm_bg.wasm", (p) =>
        post({ type: "progress", id, ...p }),
      );
      const exports = GLUE[kind];
      try {
        wasmMemory[kind] = (await exports.default({ module_or_path: response })).memory;
      } catch (error) {
        // Bytes that do not compile or link (another file, another build): a bad download,
        // not a bug in Specula.
        throw Object.assign(
          new Error(`specula_wasm_bg.wasm from ${url} is not the specula WebAssembly module: ${error.message}`),
          { code: "download_failed" },
        );
      }
      return exports;
    })();
    modules[kind] = ready;
    // A failed download may be retried by the next request.
    ready.catch(() => {
      if (modules[kind] === ready) delete modules[kind];
    });
  }
  return modules[kind];
}

/**
 * Why `backend: "auto"` cannot use WebGPU here (so the CPU-only module will do), or null
 * when the browser gives an adapter. The full module probes again and may still fall back.
 */
async function noAdapter() {
  const gpu = self.navigator?.gpu;
  if (!gpu || typeof gpu.requestAdapter !== "function") {
    return "navigator.gpu is missing (this browser or context has no WebGPU)";
  }
  try {
    return (await gpu.requestAdapter()) ? null : "navigator.gpu.requestAdapter() returned no adapter";
  } catch (error) {
    return `navigator.gpu.requestAdapter() failed: ${error?.message ?? error}`;
  }
}

/** The module a math request uses: the one already there (the engine's first), else the CPU one. */
function mathModule(urls) {
  if (engineModule) return engineModule;
  if (modules.cpuRelaxed) return "cpuRelaxed";
  if (modules.cpu) return "cpu";
  if (modules.full) return "full";
  return moduleFor(urls, "cpu");
}

// Lets queued messages (an abort) in between rounds; a MessageChannel hop is not
// throttled like setTimeout(0).
function yieldToEventLoop() {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });
}

/** The most bytes a description or a weight file may have; the wasm module checks the exact sizes. */
function byteLimit(name) {
  return name.endsWith(".json") ? FILE_LIMITS.descriptionBytes : FILE_LIMITS.weightsBytes;
}

/**
 * The names progress reports give the GGUF files: each URL's last path segment, or
 * "target.gguf" and "draft.gguf" where those would not tell the two apart (a data: or
 * blob: URL, a path ending in "/", two files of the same name).
 */
function ggufNames(urls) {
  const last = (url) => {
    try {
      const { protocol, pathname } = new URL(url);
      return /^(https?|file):$/.test(protocol) ? decodeURIComponent(pathname.slice(pathname.lastIndexOf("/") + 1)) : "";
    } catch {
      return "";
    }
  };
  const target = last(urls.targetGguf);
  const draft = last(urls.draftGguf);
  if (!target || !draft || target === draft) return { target: "target.gguf", draft: "draft.gguf" };
  return { target, draft };
}

/** Both GGUF files' bytes, downloaded side by side with progress: `{ draftGguf, targetGguf }`. */
async function ggufFiles(urls, report) {
  const names = ggufNames(urls);
  const [draftGguf, targetGguf] = await Promise.all([
    fetchWithProgress(urls.draftGguf, names.draft, undefined, report, FILE_LIMITS.ggufBytes),
    fetchWithProgress(urls.targetGguf, names.target, undefined, report, FILE_LIMITS.ggufBytes),
  ]);
  return { draftGguf, targetGguf };
}

/** The bundled pair's four files (or weightsUrl's), as Engine.load takes them. */
async function bundleFiles(urls, report) {
  let sizes = {};
  try {
    const manifest = await (await fetch(urls.manifest)).json();
    sizes = manifest.files ?? {};
  } catch {
    // Sizes only improve progress reports; Content-Length is the fallback.
  }
  const get = (key, name) => fetchWithProgress(urls[key], name, sizes[name]?.bytes, report, byteLimit(name));
  const [draftMeta, draftWeights, targetMeta, targetWeights] = await Promise.all([
    get("draftMeta", "draft.json"),
    get("draftWeights", "draft.bpk"),
    get("targetMeta", "target.json"),
    get("targetWeights", "target.bpk"),
  ]);
  const text = new TextDecoder();
  return { draftMeta: text.decode(draftMeta), draftWeights, targetMeta: text.decode(targetMeta), targetWeights };
}

async function load(id, { backend, draftBackend, urls: given }) {
  if (loading || running !== null) {
    throw Object.assign(new Error("the engine is busy; wait for the current call to finish"), {
      code: "busy",
    });
  }
  loading = true;
  try {
    const urls = { ...DEFAULT_URLS, ...(given ?? {}) };
    // The CPU-only module when the CPU is asked for, or when "auto" finds no adapter.
    const cpuReason = backend === "cpu" ? "" : backend === "auto" ? await noAdapter() : null;
    const kind = moduleFor(urls, cpuReason === null ? "full" : "cpu");
    // The weights download while the module downloads and compiles.
    const report = (p) => post({ type: "progress", id, ...p });
    const [exports, models] = await Promise.all([
      ensureWasm(id, urls, kind),
      urls.targetGguf ? ggufFiles(urls, report) : bundleFiles(urls, report),
    ]);
    const next = new exports.Engine();
    let info;
    try {
      // Checks each SHA-256 (the GGUF pair: a shared tokenizer), builds both models, picks
      // WebGPU or the CPU.
      info = await next.load({ backend, draftBackend, ...models });
    } catch (error) {
      next.free();
      throw error;
    }
    engine?.free();
    engine = next;
    glue = exports;
    engineModule = kind;
    // The exchange with the replaced models' second worker; load option threads may start another.
    self.speculaDenseHelper = undefined;
    // The CPU-only module's own reason is that it has no WebGPU; the cause is the browser's.
    if (cpuReason && kind !== "full") info.reason = cpuReason;
    post({ type: "ready", id, backend: info, moduleKind: kind, alphabet: engine.alphabet(), vocabSize: engine.vocabSize(), tokenTexts: engine.tokenTexts() });
  } finally {
    loading = false;
  }
}

/** The engine with its models (the draft worker's DraftEngine there), or the "not_loaded" error. */
function loaded() {
  if (draftEngine) return draftEngine;
  if (!engine) {
    throw Object.assign(new Error("the models are not loaded: call load() first and wait for it to finish"), {
      code: "not_loaded",
    });
  }
  return engine;
}

/** The engine, unless it is not loaded or a generation, a sample or a load is running. */
function idle() {
  const active = loaded();
  if (running !== null || loading) {
    throw Object.assign(new Error("a generation is already running; abort() it or wait for it to end"), {
      code: "busy",
    });
  }
  return active;
}

async function generate(id, options) {
  const active = idle();
  active.start(options); // throws SpeculaError on bad options or prompt
  running = id;
  try {
    for (;;) {
      const round = await active.nextRound();
      if (round === null) break;
      post({ type: "round", id, round });
      await yieldToEventLoop();
    }
    const summary = active.summary();
    // A draft worker knows of its target only what the answers said.
    if (active === draftEngine) {
      summary.backend = { ...targetInfo, backend: summary.backend.backend, draftBackend: "cpu" };
    }
    post({ type: summary.aborted ? "abort" : "done", id, summary });
  } finally {
    running = null;
  }
}

/** sample()'s running result: the exact distribution, the counts so far and their fit. */
function lab(exact, counts, done, unreached) {
  return { ...exact, ...glue.fit(counts, exact.expected, exact.target), counts: counts.slice(), done, unreached };
}

// How often sample() reports its counts (milliseconds): often enough for a live chart,
// rarely enough that posting costs nothing next to the runs.
const SAMPLE_REPORT_MS = 100;

/**
 * Many runs of the same options (seeds firstSeed + i), each generating `runTokens`
 * characters through the real decoder, counting character `position`; the exact
 * distribution comes from Engine.exact (docs/lab.md).
 */
async function sample(id, { options, settings }) {
  if (idle() !== engine) throw Object.assign(new Error("a draft worker runs no lab"), { code: "internal" });
  running = id;
  sampleAborted = false;
  try {
    const exact = await engine.exact(options, settings ?? {});
    const counts = new Array(exact.expected.length).fill(0);
    let done = 0;
    // Runs that ended at the model's end token before the position (not counted; the
    // exact distribution is conditioned on the same).
    let unreached = 0;
    let reported = performance.now();
    while (done < exact.runs && !sampleAborted) {
      engine.start({ ...options, seed: exact.firstSeed + done, maxTokens: exact.runTokens });
      // Counted by token id: a character of the bundled pair, a BPE token of a GGUF pair.
      const tokens = [];
      for (let round; (round = await engine.nextRound()) !== null; ) tokens.push(...round.tokens);
      if (tokens.length >= exact.position) counts[tokens[exact.position - 1]] += 1;
      else unreached += 1;
      done += 1;
      if (performance.now() - reported >= SAMPLE_REPORT_MS) {
        post({ type: "runs", id, value: lab(exact, counts, done, unreached) });
        reported = performance.now();
      }
      // Lets an "abort" in between runs.
      await yieldToEventLoop();
    }
    post({ type: sampleAborted ? "abort" : "done", id, value: lab(exact, counts, done, unreached) });
  } finally {
    running = null;
  }
}

// Engine.forward holds the models while it runs (a WebGPU read-back is awaited), so model
// requests that arrive meanwhile (decode() running both bundled models at once, a draft
// worker's target requests) wait their turn here instead of failing as busy.
let forwardQueue = Promise.resolve();
function queuedForward(role, request) {
  const result = forwardQueue.then(() => loaded().forward(role, request));
  forwardQueue = result.catch(() => {});
  return result;
}

/**
 * The main worker's side of parallel drafting: answers the target requests a draft worker
 * sends on `port`, one after another, with where the target ran and, once, why it left
 * WebGPU.
 */
function serve(port) {
  let backend = engine?.backendInfo()?.backend;
  port.onmessage = async ({ data: { call, request } }) => {
    try {
      const logits = await queuedForward("target", request);
      const info = engine.backendInfo();
      const fallback = backend === "webgpu" && info.backend === "cpu" ? info.reason : null;
      backend = info.backend;
      port.postMessage({ call, logits, backend, fallback }, [logits.buffer]);
    } catch (error) {
      port.postMessage({ call, error: errorPayload(error) });
    }
  };
}

/** The draft worker's target: each call a message on `port`, answered by serve(). */
function remoteTarget(port) {
  const calls = new Map();
  let next = 1;
  port.onmessage = (event) => {
    const { call, error, ...answer } = event.data;
    const pending = calls.get(call);
    calls.delete(call);
    if (!pending) return;
    if (error) {
      pending.reject(Object.assign(new Error(error.message), { code: error.code }));
      return;
    }
    targetInfo = { ...targetInfo, backend: answer.backend, reason: answer.fallback ?? targetInfo.reason };
    pending.resolve(answer);
  };
  return (request) =>
    new Promise((resolve, reject) => {
      const call = next++;
      calls.set(call, { resolve, reject });
      port.postMessage({ call, request });
    });
}

/**
 * Makes this worker a draft worker: the CPU-only module, the draft model and the decoder,
 * the target in the worker behind `port` (described by `info`, its backend report).
 */
async function loadDraft(id, { urls: given, port, targetInfo: info }) {
  if (loading || running !== null) {
    throw Object.assign(new Error("the draft worker is busy"), { code: "busy" });
  }
  loading = true;
  try {
    const urls = { ...DEFAULT_URLS, ...(given ?? {}) };
    const text = new TextDecoder();
    const get = (key, name) => fetchWithProgress(urls[key], name, undefined, () => {}, byteLimit(name));
    const kind = moduleFor(urls, "cpu");
    // A GGUF pair: both files again (the target's for its tokenizer and context only).
    const files = urls.targetGguf
      ? ggufFiles(urls, () => {})
      : Promise.all([get("draftMeta", "draft.json"), get("draftWeights", "draft.bpk"), get("targetMeta", "target.json")]).then(
          ([draftMeta, draftWeights, targetMeta]) => ({ draftMeta: text.decode(draftMeta), draftWeights, targetMeta: text.decode(targetMeta) }),
        );
    const [exports, models] = await Promise.all([ensureWasm(id, urls, kind), files]);
    const next = new exports.DraftEngine();
    try {
      next.load({
        ...models,
        target: remoteTarget(port),
        pause: yieldToEventLoop,
        targetBackend: info.backend,
      });
    } catch (error) {
      next.free();
      throw error;
    }
    draftEngine?.free();
    draftEngine = next;
    targetInfo = info;
    glue = exports;
    engineModule = kind;
    post({ type: "ready", id, backend: { ...info, draftBackend: "cpu" } });
  } finally {
    loading = false;
  }
}

/**
 * Makes this worker the target's second worker (load option threads, dense-helper.js):
 * module `kind` (the main worker's build, so both compute alike) with its own copy of the
 * target, answering dense calls on `buffer` for the rest of its life once it says "done".
 */
async function loadDenseHelper(id, { urls: given, kind, buffer }) {
  const urls = { ...DEFAULT_URLS, ...(given ?? {}) };
  const get = (key, name, limit) => fetchWithProgress(urls[key], name, undefined, () => {}, limit);
  const [exports, files] = await Promise.all([
    ensureWasm(id, urls, kind),
    urls.targetGguf
      ? get("targetGguf", "target.gguf", FILE_LIMITS.ggufBytes).then((gguf) => [gguf])
      : Promise.all([get("targetMeta", "target.json", byteLimit(".json")), get("targetWeights", "target.bpk", byteLimit(".bpk"))]),
  ]);
  const server = urls.targetGguf ? exports.DenseServer.fromGguf(files[0]) : exports.DenseServer.fromBundle(...files);
  post({ type: "done", id });
  // After this message's handler returns, so that nothing else waits on this worker.
  setTimeout(() => serveDense(server, buffer), 0);
}

self.onmessage = async (event) => {
  const { type, id, ...rest } = event.data ?? {};
  try {
    switch (type) {
      case "load":
        await load(id, rest);
        break;
      case "generate":
        await generate(id, rest.options);
        break;
      case "sample":
        await sample(id, rest);
        break;
      case "memory":
        // For the soak test: the wasm memory and, where the browser tells, the JS heap.
        post({
          type: "done",
          id,
          value: {
            wasmBytes: Object.values(wasmMemory).reduce((sum, m) => sum + m.buffer.byteLength, 0),
            jsHeapBytes: self.performance?.memory?.usedJSHeapSize ?? null,
          },
        });
        break;
      case "gpuCalls":
        post({ type: "done", id, value: { ...gpuCalls } });
        break;
      case "threadCalls":
        post({ type: "done", id, value: self.speculaDenseHelper?.counts() ?? { posted: 0, answered: 0, tooLarge: 0 } });
        break;
      case "forward": {
        // The bundled models as decode() models (index.js bundledModel): one request each.
        const logits = await queuedForward(rest.role, rest.request);
        post({ type: "done", id, value: logits }, [logits.buffer]);
        break;
      }
      case "tokenize":
        post({ type: "done", id, value: loaded().tokenize(rest.text) });
        break;
      case "detokenize":
        post({ type: "done", id, value: loaded().detokenize(rest.tokens) });
        break;
      case "profileStages":
        post({ type: "done", id, value: loaded().profileStages(rest.role, rest.on) });
        break;
      case "stageTimes":
        post({ type: "done", id, value: loaded().stageTimes(rest.role, rest.options) });
        break;
      case "serve":
        serve(rest.port);
        break;
      case "loadDraft":
        await loadDraft(id, rest);
        break;
      case "loadDenseHelper":
        await loadDenseHelper(id, rest);
        break;
      case "threads":
        // The main worker's side of load option threads: the second worker's exchange.
        if (rest.buffer) self.speculaDenseHelper = densePort(rest.buffer);
        post({ type: "done", id, value: loaded().setThreads(rest.threads, rest.reason ?? undefined) });
        break;
      case "abort":
        // Harmless when nothing runs; the running generation stops before its next
        // model call and reports "abort".
        engine?.abort();
        draftEngine?.abort();
        sampleAborted = true;
        break;
      case "plan":
      case "check":
      case "theory":
      case "retarget": {
        // The closed forms, and the checks engine.start() makes before it needs the models:
        // in the module already here, else the CPU-only one (the smaller download).
        const urls = { ...DEFAULT_URLS, ...(rest.urls ?? {}) };
        const exports = await ensureWasm(id, urls, mathModule(urls));
        post({ type: "done", id, value: exports[MATH[type]](rest.options) });
        break;
      }
      default:
        throw Object.assign(new Error(`unknown message type ${JSON.stringify(type)}`), {
          code: "internal",
        });
    }
  } catch (error) {
    fail(id, error);
  }
};
