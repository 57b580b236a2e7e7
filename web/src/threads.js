// Load option `threads`: the target's second worker (dense-helper.js;
// docs/host-forward-pass.md, "Two workers"), started after the main worker has loaded the
// models, or the reason one worker runs.

import { EXCHANGE_BYTES } from "./dense-helper.js";

/**
 * Why `wanted` ("auto" | 1 | 2) gives one worker for models loaded as `info`; null when a
 * second worker should start. (threads 2 on a page that is not cross-origin isolated was
 * refused before loading.)
 */
function oneWorkerReason(wanted, info) {
  if (wanted === 1) return null;
  if (info.backend !== "cpu") return "the target runs on WebGPU: a second worker shares the CPU's dense layers only";
  if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer !== "function") {
    return "the page is not cross-origin isolated (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp), so it has no SharedArrayBuffer";
  }
  const cores = globalThis.navigator?.hardwareConcurrency ?? 1;
  if (wanted === "auto" && cores < 2) return `this machine reports ${cores} core`;
  return undefined;
}

/**
 * Starts `specula`'s second worker as `wanted` asks, after the main worker's load reply
 * `loaded`; resolves to the backend report. A second worker that fails to start leaves
 * one, and the report says why.
 */
export async function startThreads(specula, wanted, loaded, newChannel) {
  const reason = oneWorkerReason(wanted, loaded.backend);
  if (reason === null) return loaded.backend;
  if (reason !== undefined) {
    return (await specula.channel.request({ type: "threads", threads: 1, reason })).value;
  }
  const helper = newChannel();
  try {
    const buffer = new SharedArrayBuffer(EXCHANGE_BYTES);
    await helper.request({ type: "loadDenseHelper", urls: specula.urls, kind: loaded.moduleKind, buffer });
    const info = (await specula.channel.request({ type: "threads", threads: 2, buffer })).value;
    specula.threadChannel = helper;
    return info;
  } catch (error) {
    helper.terminate();
    const why = `the second worker did not start: ${error?.message ?? error}`;
    return (await specula.channel.request({ type: "threads", threads: 1, reason: why })).value;
  }
}

/** Stops `specula`'s second worker, if it has one. */
export function stopThreads(specula) {
  specula.threadChannel?.terminate();
  specula.threadChannel = null;
}
