// load()'s options, checked on the page (so a mistake throws where it was made, before any
// module is downloaded: wasmUrl says where the module is) and turned into the URLs the
// worker downloads. Their names and the backends' are the engine's
// (specula_engine::options::LoadOptions), generated into limits.js.

import { SpeculaError, describe, optionError } from "./errors.js";
import { BACKENDS, CPU_SIMDS, DRAFT_BACKENDS, GGUF_SOURCE_NAMES, LOAD_OPTION_NAMES, THREADS } from "./limits.js";

/** `"a", "b" or "c"`. */
function choices(names) {
  const quoted = names.map((name) => JSON.stringify(name));
  return `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`;
}

/** The first key of `object` that is not in `names`, or undefined. */
function unknownKey(object, names) {
  return Object.keys(object).find((key) => !names.includes(key));
}

/** `target` or `draft` of load options: undefined, or `{ url }` with a string or URL. */
function checkModelFile(name, value) {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value) || value instanceof URL) {
    throw optionError(name, `${name} must be an object { url } naming a GGUF file, got ${describe(value)}`);
  }
  const extra = unknownKey(value, GGUF_SOURCE_NAMES);
  if (extra !== undefined) {
    throw optionError(`${name}.${extra}`, `unknown option ${JSON.stringify(extra)} in ${name}; the options are: ${GGUF_SOURCE_NAMES.join(", ")}`);
  }
  const { url } = value;
  if (url === undefined) throw optionError(`${name}.url`, `${name}.url is required: where the GGUF file is served`);
  if (typeof url !== "string" && !(url instanceof URL)) {
    throw optionError(`${name}.url`, `${name}.url must be a string or URL, got ${describe(url)}`);
  }
  return { url };
}

/** Why a page cannot have a second worker. */
export const NOT_ISOLATED =
  "threads 2 needs a cross-origin isolated page (served with Cross-Origin-Opener-Policy: same-origin and " +
  "Cross-Origin-Embedder-Policy: require-corp), which SharedArrayBuffer requires; this page is not";

export function checkLoadOptions(options) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw optionError("options", `load options must be an object, got ${describe(options)}`);
  }
  const extra = unknownKey(options, LOAD_OPTION_NAMES);
  if (extra !== undefined) {
    throw optionError(extra, `unknown option ${JSON.stringify(extra)} in load options; the options are: ${LOAD_OPTION_NAMES.join(", ")}`);
  }
  // The defaults are the first choices, as in the engine.
  const {
    backend = BACKENDS[0],
    draftBackend = DRAFT_BACKENDS[0],
    cpuSimd = CPU_SIMDS[0],
    threads = THREADS[0],
    onProgress,
    weightsUrl,
    target,
    draft,
    wasmUrl,
    wasmCpuUrl,
    wasmCpuRelaxedUrl,
  } = options;
  for (const [name, value, names] of [
    ["backend", backend, BACKENDS],
    ["draftBackend", draftBackend, DRAFT_BACKENDS],
    ["cpuSimd", cpuSimd, CPU_SIMDS],
    ["threads", threads, THREADS],
  ]) {
    if (!names.includes(value)) {
      const shown = typeof value === "string" ? JSON.stringify(value) : describe(value);
      throw optionError(name, `unknown ${name} ${shown}; use ${choices(names)}`);
    }
  }
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw optionError("onProgress", `onProgress must be a function, got ${describe(onProgress)}`);
  }
  for (const [name, value] of [
    ["weightsUrl", weightsUrl],
    ["wasmUrl", wasmUrl],
    ["wasmCpuUrl", wasmCpuUrl],
    ["wasmCpuRelaxedUrl", wasmCpuRelaxedUrl],
  ]) {
    if (value !== undefined && typeof value !== "string" && !(value instanceof URL)) {
      throw optionError(name, `${name} must be a string or URL, got ${describe(value)}`);
    }
  }
  const files = { target: checkModelFile("target", target), draft: checkModelFile("draft", draft) };
  // Both GGUF models or neither: the engine drafts with one and verifies with the other.
  for (const [given, missing] of [["target", "draft"], ["draft", "target"]]) {
    if (files[given] && !files[missing]) {
      throw optionError(missing, `${missing} is required with ${given}: give both GGUF files ({ url }) or neither`);
    }
  }
  if (files.target && weightsUrl !== undefined) {
    throw optionError("weightsUrl", "weightsUrl cannot be given with target and draft: those GGUF files are the models");
  }
  // Two workers share memory through a SharedArrayBuffer, which only a cross-origin
  // isolated page has: insisting elsewhere is refused before anything downloads.
  if (threads === 2 && !globalThis.crossOriginIsolated) {
    throw new SpeculaError(NOT_ISOLATED, "backend_unavailable", { field: "threads" });
  }
  return { backend, draftBackend, cpuSimd, threads, onProgress, weightsUrl, ...files, wasmUrl, wasmCpuUrl, wasmCpuRelaxedUrl };
}

/** `f()`, or an "invalid_option" SpeculaError naming the option when `new URL` refuses it. */
function resolving(name, value, f) {
  try {
    return f();
  } catch (error) {
    throw optionError(name, `${name} ${JSON.stringify(String(value))} is not a URL: ${error.message}`);
  }
}

export function urlsFor({ cpuSimd, weightsUrl, target, draft, wasmUrl, wasmCpuUrl, wasmCpuRelaxedUrl }) {
  // Which build of the CPU-only module the worker loads goes wherever the URLs go (the
  // load, a draft worker, the math calls), so all of them pick the same one.
  const urls = { cpuSimd };
  // Unlike weightsUrl, each names one file, so a data: or blob: URL (a picked file) works.
  for (const [key, name, file] of [["targetGguf", "target", target], ["draftGguf", "draft", draft]]) {
    if (file) urls[key] = resolving(`${name}.url`, file.url, () => new URL(String(file.url), globalThis.location?.href).href);
  }
  if (weightsUrl !== undefined) {
    // A URL with an opaque path (data:, blob:) parses but cannot have files under it.
    resolving("weightsUrl", weightsUrl, () => {
      const base = new URL(String(weightsUrl), globalThis.location?.href);
      if (!base.pathname.endsWith("/")) base.pathname += "/";
      for (const [key, file] of [
        ["manifest", "manifest.json"],
        ["draftMeta", "draft.json"],
        ["draftWeights", "draft.bpk"],
        ["targetMeta", "target.json"],
        ["targetWeights", "target.bpk"],
      ]) {
        urls[key] = new URL(file, base).href;
      }
    });
  }
  if (wasmUrl !== undefined) {
    urls.wasm = resolving("wasmUrl", wasmUrl, () => new URL(String(wasmUrl), globalThis.location?.href).href);
    // A caller who serves only the full module gets it for everything (the worker's
    // moduleFor): the package's CPU-only module may not be served next to it.
    if (wasmCpuUrl === undefined) urls.wasmCpu = null;
  }
  if (wasmCpuUrl !== undefined) {
    urls.wasmCpu = resolving("wasmCpuUrl", wasmCpuUrl, () => new URL(String(wasmCpuUrl), globalThis.location?.href).href);
  }
  if (wasmCpuRelaxedUrl !== undefined) {
    urls.wasmCpuRelaxed = resolving("wasmCpuRelaxedUrl", wasmCpuRelaxedUrl, () => new URL(String(wasmCpuRelaxedUrl), globalThis.location?.href).href);
  } else if (wasmUrl !== undefined || wasmCpuUrl !== undefined) {
    // Modules served elsewhere: the package's relaxed build may not be served beside them.
    urls.wasmCpuRelaxed = null;
  }
  return urls;
}
