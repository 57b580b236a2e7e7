// Models that are not ours, played through the package's decode(): a pair of
// character n-gram models built here, in JavaScript, from a short text and the prompt.
// The draft remembers one character of context, the target three; both smooth toward
// shorter contexts, so every character of the alphabet keeps some probability. decode()
// runs the engine on them exactly as generate() runs the bundled pair, and its rounds
// carry the same trace, so the stage, the distributions and the metrics show them alike.

/** The text the two models learn from (Sonnet 18), with the prompt added at run time. */
const TEXT = `Shall I compare thee to a summer's day?
Thou art more lovely and more temperate:
Rough winds do shake the darling buds of May,
And summer's lease hath all too short a date;
Sometime too hot the eye of heaven shines,
And often is his gold complexion dimm'd;
And every fair from fair sometime declines,
By chance or nature's changing course untrimm'd;
But thy eternal summer shall not fade,
Nor lose possession of that fair thou ow'st;
Nor shall death brag thou wander'st in his shade,
When in eternal lines to time thou grow'st:
So long as men can breathe or eyes can see,
So long lives this, and this gives life to thee.
`;

/** A character model with `order` characters of context, interpolated down to order 0 and uniform. */
function ngram(ids, vocab, order) {
  const counts = Array.from({ length: order + 1 }, () => new Map());
  for (let i = 0; i < ids.length; i++) {
    for (let n = 0; n <= order && n <= i; n++) {
      const key = ids.slice(i - n, i).join(",");
      let row = counts[n].get(key);
      if (!row) counts[n].set(key, (row = new Float64Array(vocab + 1)));
      row[ids[i]] += 1;
      row[vocab] += 1; // the total
    }
  }
  const weight = 0.7; // of each order over the shorter ones
  return {
    vocabSize: vocab,
    logits(tokens, count) {
      const out = new Float32Array(count * vocab);
      for (let r = 0; r < count; r++) {
        const end = tokens.length - count + r + 1;
        let probs = new Float64Array(vocab).fill(1 / vocab);
        for (let n = 0; n <= order && n <= end; n++) {
          const row = counts[n].get(Array.from(tokens.subarray(end - n, end)).join(","));
          if (!row) break;
          probs = probs.map((p, t) => (1 - weight) * p + (weight * row[t]) / row[vocab]);
        }
        for (let t = 0; t < vocab; t++) out[r * vocab + t] = Math.log(probs[t]);
      }
      return out;
    },
  };
}

/** The pair for `prompt`: `{ alphabet, draft, target, encode }`, over the text's and the prompt's characters. */
export function ngramPair(prompt) {
  const alphabet = [...new Set(TEXT + prompt)].sort().join("");
  const index = new Map([...alphabet].map((c, i) => [c, i]));
  const encode = (s) => [...s].map((c) => index.get(c));
  const ids = encode(TEXT);
  return { alphabet, draft: ngram(ids, alphabet.length, 1), target: ngram(ids, alphabet.length, 3), encode };
}

/**
 * decode() over the n-gram pair with generate() options (text prompt): yields rounds shaped
 * as generate()'s (with their text), returns the summary likewise.
 */
export async function* ngramRounds(pkg, pair, { prompt, ...options }, signal) {
  const text = (tokens) => tokens.map((t) => pair.alphabet[t]).join("");
  const iterator = pkg.decode({ ...options, draft: pair.draft, target: pair.target, prompt: pair.encode(prompt), signal });
  let all = "";
  for (;;) {
    const { value, done } = await iterator.next();
    if (done) return { ...value, prompt, text: all, tokens: value.tokens.length, backend: "js" };
    all += text(value.tokens);
    yield { ...value, text: text(value.tokens), backend: "js", fallback: null };
  }
}
