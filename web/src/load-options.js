// load()'s options, checked on the page (so a mistake throws where it was made) and turned
// into the URLs the worker downloads.

import { describe, optionError } from "./errors.js";

const BACKENDS = ["auto", "webgpu", "cpu"];
const DRAFT_BACKENDS = ["same", "cpu", "unfused"];
const LOAD_KEYS = "backend, draftBackend, onProgress, weightsUrl, target, draft, wasmUrl, wasmCpuUrl";

/** `target` or `draft` of load options: undefined, or `{ url }` with a string or URL. */
function checkModelFile(name, value) {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value) || value instanceof URL) {
    throw optionError(name, `${name} must be an object { url } naming a GGUF file, got ${describe(value)}`);
  }
  const { url, ...unknown } = value;
  const extra = Object.keys(unknown)[0];
  if (extra !== undefined) {
    throw optionError(`${name}.${extra}`, `unknown option ${JSON.stringify(extra)} in ${name}; the only one is url`);
  }
  if (url === undefined) throw optionError(`${name}.url`, `${name}.url is required: where the GGUF file is served`);
  if (typeof url !== "string" && !(url instanceof URL)) {
    throw optionError(`${name}.url`, `${name}.url must be a string or URL, got ${describe(url)}`);
  }
  return { url };
}

export function checkLoadOptions(options) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw optionError("options", `load options must be an object, got ${describe(options)}`);
  }
  const { backend = "auto", draftBackend = "same", onProgress, weightsUrl, target, draft, wasmUrl, wasmCpuUrl, ...unknown } = options;
  const extra = Object.keys(unknown);
  if (extra.length > 0) {
    throw optionError(extra[0], `unknown option ${JSON.stringify(extra[0])} in load options; the options are: ${LOAD_KEYS}`);
  }
  if (!BACKENDS.includes(backend)) {
    throw optionError(
      "backend",
      `unknown backend ${typeof backend === "string" ? JSON.stringify(backend) : describe(backend)}; use "auto", "webgpu" or "cpu"`,
    );
  }
  if (!DRAFT_BACKENDS.includes(draftBackend)) {
    throw optionError(
      "draftBackend",
      `unknown draftBackend ${typeof draftBackend === "string" ? JSON.stringify(draftBackend) : describe(draftBackend)}; use "same" (where the target runs), "cpu" or "unfused"`,
    );
  }
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw optionError("onProgress", `onProgress must be a function, got ${describe(onProgress)}`);
  }
  for (const [name, value] of [
    ["weightsUrl", weightsUrl],
    ["wasmUrl", wasmUrl],
    ["wasmCpuUrl", wasmCpuUrl],
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
  return { backend, draftBackend, onProgress, weightsUrl, ...files, wasmUrl, wasmCpuUrl };
}

/** `f()`, or an "invalid_option" SpeculaError naming the option when `new URL` refuses it. */
function resolving(name, value, f) {
  try {
    return f();
  } catch (error) {
    throw optionError(name, `${name} ${JSON.stringify(String(value))} is not a URL: ${error.message}`);
  }
}

export function urlsFor({ weightsUrl, target, draft, wasmUrl, wasmCpuUrl }) {
  const urls = {};
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
  return urls;
}
