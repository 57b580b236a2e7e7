// Speculative decoding in Node with Specula's decode(), over two small models defined
// here: a character trigram model (the target) and a bigram model (the draft), both counted
// from Shakespeare's Sonnet 18 below. They stand in for models of your own; the package's
// bundled Shakespeare transformers run only in a browser's Web Worker (Specula.load()).
// Any object with `vocabSize` and `logits(tokens, count)` plugs in the same way: a
// transformer runtime, an ONNX session, a server behind fetch() (logits may return a
// Promise).
//
// After `npm install /path/to/specula-0.1.0.tgz` (Node 20 or later):
//
//   node node_modules/specula/examples/node-decode.mjs ["prompt"]
//
// prints the text speculative decoding drew and how many target calls it took beside
// autoregressive decoding of the same length. Both follow the target's distribution
// exactly; speculative decoding needs fewer target calls because each call verifies
// several drafted characters.

import { decode } from "specula";

const SONNET = `Shall I compare thee to a summer's day?
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

// The vocabulary: one token per character of the text.
const alphabet = [...new Set(SONNET)].sort();
const V = alphabet.length;
const idOf = new Map(alphabet.map((c, i) => [c, i]));
const encode = (text) => [...text].map((c) => idOf.get(c));
const textOf = (tokens) => tokens.map((t) => alphabet[t]).join("");
const corpus = encode(SONNET);

/**
 * An n-gram table: a function from a context (the last `order - 1` token ids) to the
 * next character's log-probabilities (a Float32Array of V), counted from the sonnet with
 * add-`k` smoothing over the shorter context's distribution (`backoff`), so every
 * character stays possible.
 */
function ngram(order, k, backoff) {
  const counts = new Map();
  for (let i = order - 1; i < corpus.length; i++) {
    const key = corpus.slice(i - order + 1, i).join(",");
    if (!counts.has(key)) counts.set(key, new Float64Array(V));
    counts.get(key)[corpus[i]]++;
  }
  const rows = new Map();
  for (const [key, row] of counts) {
    const context = key === "" ? [] : key.split(",").map(Number);
    const prior = backoff(context.slice(1));
    const total = row.reduce((a, b) => a + b, 0);
    rows.set(key, Float32Array.from(row, (c, t) => Math.log((c + k * Math.exp(prior[t])) / (total + k))));
  }
  // A context shorter than the order's (the text's first characters) backs off whole.
  return (context) =>
    context.length < order - 1 ? backoff(context) : (rows.get(context.join(",")) ?? backoff(context.slice(1)));
}

const uniform = new Float32Array(V).fill(-Math.log(V));
const unigram = ngram(1, 1, () => uniform);
const bigram = ngram(2, 2, unigram);
const trigram = ngram(3, 1, bigram);

/**
 * A decode() model over an n-gram table: row i of the answer is the next-token logits after
 * tokens[0 .. tokens.length - count + i] (inclusive), which for an n-gram model depend only
 * on the last order - 1 of them.
 */
function model(order, table) {
  return {
    vocabSize: V,
    logits(tokens, count) {
      const out = new Float32Array(count * V);
      for (let i = 0; i < count; i++) {
        const end = tokens.length - count + i + 1;
        out.set(table(Array.from(tokens.subarray(Math.max(0, end - order + 1), end))), i * V);
      }
      return out;
    },
  };
}

/** Runs decode() to the end, handing each round to `onRound`; resolves to the summary. */
async function run(options, onRound = () => {}) {
  const rounds = decode(options);
  for (;;) {
    const { done, value } = await rounds.next();
    if (done) return value; // the summary: { prompt, tokens, finish, aborted, metrics, summary }
    onRound(value); // a round: { round, tokens, counts, finish, trace, metrics, summary }
  }
}

const promptText = process.argv[2] ?? "Shall I ";
const unknown = [...promptText].filter((c) => !idOf.has(c));
if (promptText.length === 0 || unknown.length > 0) {
  console.error(`the prompt must be made of the sonnet's characters; not in it: ${JSON.stringify(unknown.join(""))}`);
  process.exit(2);
}
const common = { prompt: encode(promptText), temperature: 0.7, seed: 7, maxTokens: 240 };

// Speculative decoding: the bigram draft proposes 4 characters per round and the trigram
// target checks them in one call. Each round's characters are printed as it is decided.
const target = model(3, trigram);
const draft = model(2, bigram);
process.stdout.write(promptText);
const spec = await run({ target, draft, method: "speculative", gamma: 4, ...common }, (round) =>
  process.stdout.write(textOf(round.tokens)),
);
console.log(
  `\n\nspeculative (γ = 4): ${spec.tokens.length} characters in ${spec.metrics.targetCalls} target calls, ` +
    `acceptance ${spec.summary.acceptanceRate.toFixed(2)}, ` +
    `${spec.summary.blockEfficiency.toFixed(2)} characters per target call`,
);

// The same length autoregressively: one target call per character, no draft.
const auto = await run({ target: model(3, trigram), method: "autoregressive", ...common });
console.log(`autoregressive: ${auto.tokens.length} characters in ${auto.metrics.targetCalls} target calls`);
