// The target's second worker (load option `threads`): std for wasm32 has no threads on
// stable Rust, so a second worker runs another instance of the same module with its own
// copy of the target and computes half the output columns of each large dense call
// (docs/host-forward-pass.md, "Two workers"). The two workers exchange each call's inputs
// and the helper's outputs through one SharedArrayBuffer: a header of Int32 words, then
// the values. Each side spins a little before it sleeps in Atomics.wait, since a dense
// call lasts tens of microseconds and waking a sleeping worker costs about as much.

/** The header's words. */
const STATE = 0;
const LAYER = 1;
const GELU = 2;
const ROWS = 3;
const D_OUT = 4;
const LENGTH = 5;
const HEADER_BYTES = 64;

/** The exchange's states. */
const IDLE = 0;
const POSTED = 1;
const DONE = 2;
const FAILED = 3;

/**
 * The exchange's size: 16 MiB of values, a call of SmolLM2's head over 170 positions;
 * larger calls (a long prompt's first pass through the head) run whole in the main worker.
 */
export const EXCHANGE_BYTES = HEADER_BYTES + (16 << 20);

/** How long each side spins before sleeping (milliseconds). */
const SPIN_MS = 2;

/** How long the main worker waits for an answer before it gives up on the helper. */
const GIVE_UP_MS = 30_000;

function views(buffer) {
  return { header: new Int32Array(buffer, 0, HEADER_BYTES / 4), values: new Float32Array(buffer, HEADER_BYTES) };
}

/**
 * Waits while `header[STATE]` is `from`, spinning for SPIN_MS, then sleeping in slices
 * of `sliceMs`; false when `giveUpMs` passed first.
 */
function waitWhile(header, from, sliceMs, giveUpMs = Infinity) {
  const start = performance.now();
  while (Atomics.load(header, STATE) === from) {
    const waited = performance.now() - start;
    if (waited > giveUpMs) return false;
    if (waited > SPIN_MS) Atomics.wait(header, STATE, from, sliceMs);
  }
  return true;
}

/**
 * The main worker's end, as the wasm module calls it (`speculaDenseHelper.post` and
 * `.collect`, specula-wasm's dense_helper.rs). A helper that stops answering is dropped:
 * every later call runs whole here.
 */
export function densePort(buffer) {
  const { header, values } = views(buffer);
  let gone = false;
  const counts = { posted: 0, answered: 0, tooLarge: 0 };
  return {
    counts: () => ({ ...counts }),
    post(layer, gelu, rows, dOut, x) {
      if (gone) return false;
      if (x.length > values.length || rows * dOut > values.length) {
        counts.tooLarge += 1;
        return false;
      }
      counts.posted += 1;
      values.set(x);
      header[LAYER] = layer;
      header[GELU] = gelu ? 1 : 0;
      header[ROWS] = rows;
      header[D_OUT] = dOut;
      header[LENGTH] = x.length;
      Atomics.store(header, STATE, POSTED);
      Atomics.notify(header, STATE);
      return true;
    },
    collect() {
      if (!waitWhile(header, POSTED, 50, GIVE_UP_MS)) {
        gone = true;
        return undefined;
      }
      const answer = Atomics.load(header, STATE) === DONE ? values.slice(0, header[LENGTH]) : undefined;
      Atomics.store(header, STATE, IDLE);
      if (answer) counts.answered += 1;
      return answer;
    },
  };
}

/**
 * The helper's loop, for the rest of its worker's life: answers each posted call with
 * `server` (a DenseServer of the same module build as the main worker's).
 */
export function serveDense(server, buffer) {
  const { header, values } = views(buffer);
  for (;;) {
    // Between calls the main worker may still be reading the last answer (DONE). One read
    // of the state decides: reading it twice could wait on a call posted in between.
    for (let state = Atomics.load(header, STATE); state !== POSTED; state = Atomics.load(header, STATE)) {
      waitWhile(header, state, 1_000);
    }
    let answer;
    try {
      const x = values.subarray(0, header[LENGTH]);
      answer = server.serve(header[LAYER], header[GELU] === 1, header[ROWS], header[D_OUT], x);
    } catch {
      answer = undefined;
    }
    if (answer && answer.length <= values.length) {
      values.set(answer);
      header[LENGTH] = answer.length;
      Atomics.store(header, STATE, DONE);
    } else {
      Atomics.store(header, STATE, FAILED);
    }
    Atomics.notify(header, STATE);
  }
}
