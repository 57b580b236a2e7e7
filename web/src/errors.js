// The one error class of `specula` and the helpers that build it, shared by the worker
// API (index.js) and decode() (decode.js), so that `instanceof SpeculaError` holds for
// both.

/**
 * An error from Specula: `code` tells the cases apart, and with code "invalid_option"
 * `field` names the option as the options object spells it ("topK", "tree[1]", "options"
 * for the object itself; see index.d.ts).
 */
export class SpeculaError extends Error {
  constructor(message, code, extra = {}) {
    super(message);
    this.name = "SpeculaError";
    this.code = code;
    Object.assign(this, extra);
  }
}

/** A SpeculaError from its plain shape `{ code, field?, message }` (a worker's reply, a thrown wasm error). */
export function fromPayload(payload) {
  const field = typeof payload?.field === "string" ? { field: payload.field } : {};
  return new SpeculaError(payload?.message ?? "unknown error", payload?.code ?? "internal", field);
}

/** An "invalid_option" SpeculaError about the option `field`. */
export function optionError(field, message) {
  return new SpeculaError(message, "invalid_option", { field });
}

/** How a message quotes a value: its type and, for scalars, itself. */
export function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "number" || typeof value === "boolean") return `the ${typeof value} ${value}`;
  // Its digits, as the engine quotes one (options/raw.rs): no number holds 2n ** 64n.
  if (typeof value === "bigint") {
    const digits = String(value);
    return `the BigInt ${digits.slice(0, 40)}${digits.length > 40 ? "…" : ""}n`;
  }
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * `options` without `signal`, and the signal (checked: an AbortSignal, null or left out).
 * generate() and decode() keep the signal on the calling side.
 */
export function splitSignal(options) {
  if (options === null || typeof options !== "object" || Array.isArray(options) || !("signal" in options)) {
    return { options, signal: undefined };
  }
  let { signal, ...rest } = options;
  if (signal === null) signal = undefined;
  // Duck-typed, so a signal from another realm (an iframe's AbortController) works too.
  if (signal !== undefined && (typeof signal?.addEventListener !== "function" || typeof signal.aborted !== "boolean")) {
    throw optionError("signal", `signal must be an AbortSignal, got ${describe(signal)}`);
  }
  return { options: rest, signal };
}
