// A small event channel between the page's modules, so that the views and the transport
// need not import each other: a view asks (emit), whoever can do it answers (on).
const handlers = new Map();

/** Calls `fn(...args)` on every `emit(name, ...args)`. */
export function on(name, fn) {
  if (!handlers.has(name)) handlers.set(name, new Set());
  handlers.get(name).add(fn);
}

/** Tells every handler of `name`; returns what the first one returned (a promise, say). */
export function emit(name, ...args) {
  let first;
  for (const fn of handlers.get(name) ?? []) {
    const r = fn(...args);
    if (first === undefined) first = r;
  }
  return first;
}
