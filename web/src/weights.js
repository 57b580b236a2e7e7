// Downloads one file, reporting progress as bytes arrive.

/**
 * @param {string} url
 * @param {string} file name used in progress reports
 * @param {number | undefined} expected size from the manifest, if known
 * @param {(p: {file: string, loaded: number, total: number | null}) => void} report
 * @param {number} [limit] the most bytes accepted: a larger file is refused (code
 *   "bad_weights") before it is read whole
 * @returns {Promise<Uint8Array>}
 */
export async function fetchWithProgress(url, file, expected, report, limit = Infinity) {
  const { response, total, tooLarge } = await open(url, file, expected, report, limit);
  if (!response.body) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes.length > limit) throw tooLarge(bytes.length);
    report({ file, loaded: bytes.length, total: total ?? bytes.length });
    return bytes;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    if (loaded > limit) {
      await reader.cancel();
      throw tooLarge(loaded);
    }
    report({ file, loaded, total });
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  report({ file, loaded, total: loaded });
  return bytes;
}

/**
 * The wasm module as a `Response` whose body reports progress as it is read, so that
 * `WebAssembly.instantiateStreaming` compiles it while it downloads. The type is set to
 * `application/wasm` whatever the server said (streaming compilation requires it).
 * @param {string} url
 * @param {string} file name used in progress reports
 * @param {(p: {file: string, loaded: number, total: number | null}) => void} report
 * @returns {Promise<Response>}
 */
export async function streamWithProgress(url, file, report) {
  const { response, total } = await open(url, file, undefined, report, Infinity);
  if (!response.body) return new Response(await response.arrayBuffer(), { headers: { "content-type": "application/wasm" } });
  let loaded = 0;
  const counted = response.body.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        loaded += chunk.length;
        report({ file, loaded, total });
        controller.enqueue(chunk);
      },
      flush() {
        report({ file, loaded, total: loaded });
      },
    }),
  );
  return new Response(counted, { headers: { "content-type": "application/wasm" } });
}

/** The response for `url`, checked: HTTP success, and no larger than `limit` by its header. */
async function open(url, file, expected, report, limit) {
  const tooLarge = (bytes) =>
    Object.assign(new Error(`${file} from ${url} is ${bytes} bytes or more, above the limit of ${limit} bytes`), {
      code: "bad_weights",
    });
  let response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw Object.assign(new Error(`cannot download ${file} from ${url}: ${error.message}`), {
      code: "download_failed",
    });
  }
  if (!response.ok) {
    throw Object.assign(
      new Error(`cannot download ${file} from ${url}: HTTP ${response.status} ${response.statusText}`),
      { code: "download_failed" },
    );
  }
  const header = Number(response.headers.get("content-length"));
  if (Number.isFinite(header) && header > limit) {
    await response.body?.cancel();
    throw tooLarge(header);
  }
  // A compressed response reports the compressed length; the manifest knows the real one.
  const total = expected ?? (Number.isFinite(header) && header > 0 ? header : null);
  report({ file, loaded: 0, total });
  return { response, total, tooLarge };
}
