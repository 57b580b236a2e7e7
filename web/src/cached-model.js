// cachedModel(): a decode() model over a model that runs new tokens on top of a key/value
// cache, as transformer runtimes do. decode() asks for the logits of the last positions of
// whole token sequences and says, after each round, how many tokens are final
// (rollback); this keeps one cache, reuses it for the longest prefix the next call shares
// with it, and cuts it back to the committed tokens on a rollback, so rejected drafts
// never stay in it. The runtime supplies two functions:
//   step(cache, tokens)    → { logits, cache }: run `tokens` after the `cache`'s positions
//                            (cache null: from the start); `logits` has one row of
//                            vocabSize per token of `tokens`, and `cache` covers them all.
//   truncate(cache, length) → a cache of the first `length` positions (length ≥ 1).
// Either may return a Promise. The model never changes what decode() computes, only how
// much the runtime recomputes: the same tokens come out with or without it.

import { describe } from "./errors.js";

function commonPrefix(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * A {@link decode} model `{ vocabSize, logits, rollback }` over `step` and `truncate`
 * (above). `stats` counts the positions the runtime ran, for measuring the cache's worth.
 */
export function cachedModel({ vocabSize, step, truncate }) {
  for (const [name, f] of [["step", step], ["truncate", truncate]]) {
    if (typeof f !== "function") throw new TypeError(`cachedModel needs ${name} to be a function, got ${describe(f)}`);
  }
  let cache = null;
  let cached = new Int32Array(0); // the tokens `cache` holds, in order
  const stats = { calls: 0, positions: 0, truncations: 0 };

  async function cut(length) {
    if (length >= cached.length) return;
    stats.truncations++;
    cache = length === 0 ? null : await truncate(cache, length);
    cached = cached.slice(0, length);
  }

  return {
    vocabSize,
    stats,
    async logits(tokens, count) {
      // The last `count` positions must run (their logits are not kept), so the cache
      // may cover at most the tokens before them.
      await cut(Math.min(commonPrefix(cached, tokens), tokens.length - count));
      const fresh = tokens.slice(cached.length);
      const out = await step(cache, fresh);
      stats.calls++;
      stats.positions += fresh.length;
      cache = out.cache;
      cached = Int32Array.from(tokens);
      const rows = out.logits;
      return rows.subarray ? rows.subarray((fresh.length - count) * vocabSize) : rows.slice((fresh.length - count) * vocabSize);
    },
    async rollback(committed) {
      await cut(committed);
    },
  };
}
