// The package test's table of hostile inputs: every option of generate() at and past both
// ends of its range and with wrong types, plan() with broken vectors, load() with bad
// options and with bad weight files (served from public/weights-bad/, written at test time
// by tests/web-package/bad-weights.mjs). Each row names the call, its options and either
// the SpeculaError it must throw (`code`, fragments of the message and, for code
// "invalid_option", the `field` it names) or, with code null, that it must succeed (and,
// with `expect`, what the result must be). Every generate() row is also put to
// checkOptions(), which must throw the very same error (or succeed where generate()
// succeeds or refuses only the prompt's characters). The limits are LIMITS, generated from
// the engine's (crates/specula-engine/src/options/limits.rs); the messages are the
// engine's (options/error.rs, resolve.rs, plan.rs for plan()), the wasm crate's for
// load() (fields.rs) and the package's own for what cannot reach the worker.
import { LIMITS, Specula, SpeculaError, checkOptions, plan } from "specula";

const PROMPT = "ROMEO:\nBut soft";
/** generate/complete/check rows are merged into this unless they set `raw`. */
const BASE = { prompt: PROMPT, maxTokens: 2, temperature: 0 };
const ROW_TIMEOUT_MS = 30_000;
const OPTION = "invalid_option";
const GENERATE_CALLS = ["generate", "complete", "generate:first"];

/** A generate() row that must throw "invalid_option" naming `field`, with every fragment of `message`. */
const gen = (name, options, field, message) => ({ name, call: "generate", options, code: OPTION, field, message });
/** A generate() row that must throw `code` (another code than "invalid_option", so no field). */
const genFail = (name, options, code, message, field) => ({ name, call: "generate", options, code, message, field });
/** A generate() row whose prompt the tokenizer refuses: code "bad_prompt", field "prompt". */
const badPrompt = (name, options, message) => genFail(name, options, "bad_prompt", message, "prompt");
/** A generate() row that must succeed; `expect(summary, ctx)` returns true or what is wrong. */
const genOk = (name, options, expect) => ({ name, call: "generate", options, code: null, expect });
/** A checkOptions() row that must succeed; `expect(checked, ctx)` as above. */
const checkOk = (name, options, expect) => ({ name, call: "check", options, code: null, expect });

/** The sentence of an option the method does not use (options/error.rs). */
const unused = (field, method, users) =>
  `${field} does not apply to method "${method}" and is refused rather than ignored; it is for ${users}`;
const MULTI_DRAFT = 'methods "spectr" and "multiround"';

/**
 * The rows for one number option: NaN, ±Infinity, just past each end, a fraction where
 * only whole numbers go, wrong types, -0, and (succeeding) both ends of the range. The
 * ends come from LIMITS, so the rows prove that LIMITS is what generate() accepts.
 * `atMax` is the call for the highest value when a whole generate() there costs too much.
 */
function numberRows({ key, min, max, whole = true, minOpen = false, msg, with: extra = {}, call = "generate", atMax }) {
  const rows = [];
  const o = (value) => ({ ...extra, [key]: value });
  const bad = (name, value, message) => gen(name, o(value), key, message);
  for (const [label, value, shown] of [
    ["NaN", NaN, "got NaN"],
    ["Infinity", Infinity, "got Infinity"],
    ["-Infinity", -Infinity, "got -Infinity"],
  ]) {
    rows.push(bad(`${key} ${label}`, value, [msg, shown]));
  }
  if (minOpen) {
    rows.push(bad(`${key} ${min} (excluded)`, min, [msg, `got ${min}`]));
    rows.push(bad(`${key} -0 (excluded like 0)`, -0, [msg, "got 0"]));
    rows.push(genOk(`${key} smallest above ${min}`, o(Number.MIN_VALUE)));
  } else {
    const below = whole ? min - 1 : -Number.MIN_VALUE;
    rows.push(bad(`${key} ${whole ? below : "just below 0"}`, below, [msg, `got ${whole ? below : "-5e-324"}`]));
    rows.push(genOk(`${key} ${min} (lowest)`, o(min)));
    if (min === 0) {
      rows.push(genOk(`${key} -0 accepted as 0`, o(-0), async (r, ctx) => {
        const zero = await ctx.specula.complete({ ...BASE, ...o(0) });
        return r.text === zero.text || `text ${JSON.stringify(r.text)}, with 0: ${JSON.stringify(zero.text)}`;
      }));
    } else {
      rows.push(bad(`${key} -0`, -0, [msg, "got 0"]));
    }
  }
  rows.push({ ...genOk(`${key} ${max} (highest)`, o(max)), call: atMax ?? call });
  const above = whole ? max + 1 : max + 2 ** -52 * max;
  rows.push(bad(`${key} ${above} (above)`, above, [msg, `got ${above}`]));
  if (whole) rows.push(bad(`${key} ${min + 0.5}`, min + 0.5, [msg, `got ${min + 0.5}`]));
  const typeMsg = `${key} must be a number, got`;
  rows.push(bad(`${key} as a string`, String(min + 1), `${typeMsg} the string "${min + 1}"`));
  rows.push(bad(`${key} as a boolean`, true, `${typeMsg} the boolean true`));
  rows.push(bad(`${key} as an array`, [min + 1], `${typeMsg} an array`));
  rows.push(bad(`${key} as a BigInt`, BigInt(min + 1), `${typeMsg} the BigInt ${min + 1}n`));
  return rows;
}

const LONG_LINE = "ROMEO:\nBut soft, what light through yonder window breaks?\nIt is the east, and Juliet is the sun.\n";
const LONG_PROMPT = LONG_LINE.repeat(Math.ceil(100 * 1024 / LONG_LINE.length));
const SPECTR = { method: "spectr", gamma: 1 };
const L = LIMITS;

const GENERATE_ROWS = [
  // The options object itself.
  { name: "options null", call: "generate", raw: true, options: null, code: OPTION, field: "options", message: "options must be an object such as { prompt }, got null" },
  { name: "options a string", call: "generate", raw: true, options: "To be", code: OPTION, field: "options", message: 'options must be an object such as { prompt }, got the string "To be"' },
  { name: "options an array", call: "generate", raw: true, options: [PROMPT], code: OPTION, field: "options", message: "options must be an object such as { prompt }, got an array" },
  // undefined reaches the wasm module as null, and its message says null.
  { name: "options undefined", call: "complete", raw: true, options: undefined, code: OPTION, field: "options", message: "options must be an object such as { prompt }, got" },
  gen("unknown option", { temprature: 1 }, "temprature", ['unknown option "temprature"; the options are: prompt, method, selection, gamma', "recordDistributions, bug"]),
  gen("unknown option in snake case", { max_tokens: 2 }, "max_tokens", 'unknown option "max_tokens"'),
  gen("a function (not plain data)", { stop: [() => 1] }, "stop[0]", "stop[0] must be plain data (strings, numbers, booleans, arrays, objects), got a function"),
  gen("a symbol (not plain data)", { seed: Symbol("seed") }, "seed", "seed must be plain data (strings, numbers, booleans, arrays, objects), got a symbol"),
  genOk("null means not given", { gamma: null, seed: null, stop: null, drafts: null, kl: null, bug: null }),
  // prompt
  gen("prompt missing", { prompt: undefined }, "prompt", "prompt is required: give the text to continue (a non-empty string)"),
  gen("prompt empty", { prompt: "" }, "prompt", "prompt must be at least one character to continue, got an empty string"),
  gen("prompt a number", { prompt: 42 }, "prompt", "prompt must be a string, got the number 42"),
  gen("prompt a String object", { prompt: new String("abc") }, "prompt", "prompt must be a string, got an object"),
  badPrompt("prompt with ï", { prompt: "naïve" }, ["prompt: character 'ï' (U+00EF) at position 2 is not in the vocabulary", "the models know only these characters"]),
  badPrompt("prompt with an emoji", { prompt: "hi 🙂" }, "(U+1F642) at position 3"),
  badPrompt("prompt with a tab", { prompt: "a\tb" }, "(U+0009) at position 1"),
  badPrompt("prompt with NUL", { prompt: "a\0" }, "(U+0000) at position 1"),
  badPrompt("prompt with a lone surrogate", { prompt: "a\ud800" }, "(U+FFFD) at position 1"),
  badPrompt("100 KB prompt, bad last character", { prompt: LONG_PROMPT + "é" }, `(U+00E9) at position ${LONG_PROMPT.length}`),
  genOk(`100 KB prompt (${LONG_PROMPT.length} characters)`, { prompt: LONG_PROMPT, maxTokens: 8, temperature: 1, seed: 7 }, async (r, ctx) => {
    // The window slides: the models read the prompt's last 128 characters (docs/limits.md).
    const tail = await ctx.specula.complete({ ...BASE, prompt: LONG_PROMPT.slice(-128), maxTokens: 8, temperature: 1, seed: 7 });
    return (r.tokens === 8 && r.text === tail.text && r.prompt === LONG_PROMPT) ||
      `${r.tokens} tokens ${JSON.stringify(r.text)}; from the last 128 characters: ${JSON.stringify(tail.text)}`;
  }),
  // method
  gen("unknown method", { method: "beam" }, "method", 'method must be one of autoregressive, speculative, spectr, multiround, mentored, typical, lookup, got "beam"'),
  // The former name of SpecTr with the ratio race: refused, with the way to ask for it now.
  gen("method otm (the former name)", { method: "otm" }, "method",
    ['method must be one of autoregressive, speculative, spectr, multiround, mentored, typical, lookup', 'the optimal selection is method "spectr" with selection "race"', 'got "otm"']),
  gen("method in capitals", { method: "Speculative" }, "method", 'got "Speculative"'),
  gen("method empty", { method: "" }, "method", 'method must be one of autoregressive, speculative, spectr, multiround, mentored, typical, lookup, got ""'),
  gen("method a number", { method: 1 }, "method", "method must be a string, got the number 1"),
  gen("mentored without kl", { method: "mentored" }, "kl", 'kl is required: method "mentored" needs a KL budget D >= 0 in nats (0 is lossless)'),
  ...["autoregressive", "speculative", "spectr", "multiround"].map((method) => genOk(`method ${method}`, { method })),
  genOk("method mentored", { method: "mentored", kl: 0.1 }),
  // selection: SpecTr's rule at each depth, for method "spectr" only.
  genOk("selection race with spectr", { method: "spectr", selection: "race" }),
  genOk("selection kseq with spectr", { method: "spectr", selection: "kseq", tree: [2, 1] }),
  gen("selection with speculative", { selection: "race" }, "selection", unused("selection", "speculative", 'method "spectr"')),
  gen("selection with multiround", { method: "multiround", selection: "kseq" }, "selection", unused("selection", "multiround", 'method "spectr"')),
  gen("selection bogus", { method: "spectr", selection: "bogus" }, "selection", ['selection must be "kseq"', '"race"', 'got "bogus"']),
  gen("selection otm", { method: "spectr", selection: "otm" }, "selection", ['selection must be "kseq"', 'got "otm"']),
  gen("selection a number", { method: "spectr", selection: 1 }, "selection", "selection must be a string, got the number 1"),
  // Options the method does not use are refused, not ignored (null still means not given).
  gen("drafts with speculative", { drafts: 2 }, "drafts", unused("drafts", "speculative", MULTI_DRAFT)),
  gen("drafts with mentored", { method: "mentored", kl: 0.1, drafts: 2 }, "drafts", unused("drafts", "mentored", MULTI_DRAFT)),
  gen("kl with spectr", { method: "spectr", kl: 0.1 }, "kl", unused("kl", "spectr", 'method "mentored"')),
  gen("kl 0 with speculative", { kl: 0 }, "kl", unused("kl", "speculative", 'method "mentored"')),
  gen("gamma with autoregressive", { method: "autoregressive", gamma: 4 }, "gamma", unused("gamma", "autoregressive", 'the drafting methods (every method but "autoregressive")')),
  gen("gamma 0 with autoregressive (unused before range)", { method: "autoregressive", gamma: 0 }, "gamma", 'gamma does not apply to method "autoregressive"'),
  gen("dynamicGamma false with spectr", { method: "spectr", dynamicGamma: false }, "dynamicGamma", unused("dynamicGamma", "spectr", 'methods "speculative", "mentored" and "typical"')),
  gen("dynamicGamma false with autoregressive", { method: "autoregressive", dynamicGamma: false }, "dynamicGamma", 'dynamicGamma does not apply to method "autoregressive"'),
  gen("tree with speculative", { tree: [2] }, "tree", unused("tree", "speculative", MULTI_DRAFT)),
  genOk("unused options given as null", { method: "autoregressive", selection: null, gamma: null, drafts: null, tree: null, kl: null, dynamicGamma: null, bug: null }),
  // bug
  genOk("bug resample-from-target with speculative", { bug: "resample-from-target", temperature: 1, seed: 5 }),
  genOk("bug cache-reset with spectr's race", { method: "spectr", selection: "race", bug: "cache-reset", temperature: 1 }),
  gen("bug with mentored", { method: "mentored", kl: 0.1, bug: "shared-uniform" }, "bug",
    unused("bug", "mentored", 'the lossless drafting methods ("speculative", "spectr" and "multiround")')),
  gen("bug with autoregressive", { method: "autoregressive", bug: "argmax-draft" }, "bug", 'bug does not apply to method "autoregressive"'),
  gen("bug unknown", { bug: "typo" }, "bug",
    'bug must be one of resample-from-target, argmax-draft, shared-uniform, unprocessed-target, filtered-draft, cache-reset, got "typo"'),
  gen("bug a number", { bug: 1 }, "bug", "bug must be a string, got the number 1"),
  // gamma, drafts, tree
  ...numberRows({ key: "gamma", min: 1, max: L.maxGamma, msg: `gamma must be a whole number from 1 to ${L.maxGamma} (draft tokens per round)` }),
  genOk(`gamma ${L.maxGamma} for spectr`, { method: "spectr", gamma: L.maxGamma, drafts: 1 }),
  gen(`gamma ${L.maxGamma + 1} for spectr`, { method: "spectr", gamma: L.maxGamma + 1 }, "gamma", `gamma must be a whole number from 1 to ${L.maxGamma}`),
  // drafts × gamma = 1024 nodes: one target call over all of them costs seconds here, so
  // only checkOptions() takes them (the rows above show it agrees with generate()).
  ...numberRows({ key: "drafts", min: 1, max: L.maxDrafts, with: SPECTR, atMax: "check", msg: `drafts must be a whole number from 1 to ${L.maxDrafts} (draft sequences per round)` }),
  checkOk(`drafts × gamma = ${L.maxRoundNodes} nodes`, { method: "spectr", selection: "race", drafts: L.maxRoundNodes / 16, gamma: 16 }),
  gen(`drafts × gamma past ${L.maxRoundNodes} nodes`, { method: "spectr", drafts: L.maxRoundNodes / 16, gamma: 17 }, "drafts",
    `drafts must be at most ${L.maxRoundNodes} draft nodes per round with gamma (drafts × gamma), got ${L.maxRoundNodes / 16} × 17 = ${(L.maxRoundNodes / 16) * 17}`),
  gen("default drafts × gamma past the nodes", { method: "multiround", gamma: L.maxGamma, drafts: L.maxRoundNodes / L.maxGamma + 1 }, "drafts", "draft nodes per round"),
  gen("tree empty", { ...SPECTR, gamma: undefined, tree: [] }, "tree", `tree must be the branching at each depth, 1 to ${L.maxGamma} depths, got 0 depths`),
  gen(`tree ${L.maxGamma + 1} depths`, { method: "spectr", tree: Array(L.maxGamma + 1).fill(1) }, "tree", `1 to ${L.maxGamma} depths, got ${L.maxGamma + 1} depths`),
  genOk(`tree ${L.maxGamma} depths`, { method: "spectr", tree: Array(L.maxGamma).fill(1) }),
  gen("tree width 0", { method: "spectr", tree: [2, 0] }, "tree[1]", `tree[1] must be a whole number from 1 to ${L.maxDrafts} (children per node), got 0`),
  gen(`tree width ${L.maxDrafts + 1}`, { method: "spectr", selection: "race", tree: [L.maxDrafts + 1] }, "tree[0]", `tree[0] must be a whole number from 1 to ${L.maxDrafts} (children per node), got ${L.maxDrafts + 1}`),
  gen("tree width NaN", { method: "spectr", tree: [NaN] }, "tree[0]", `tree[0] must be a whole number from 1 to ${L.maxDrafts} (children per node), got NaN`),
  gen("tree width 1.5", { method: "spectr", tree: [2, 1.5] }, "tree[1]", "got 1.5"),
  genOk("tree [64] (64 leaves)", { method: "spectr", tree: [64] }),
  checkOk(`tree [${L.maxDrafts}] (${L.maxDrafts} leaves)`, { method: "spectr", tree: [L.maxDrafts] }),
  gen("tree of 2048 leaves", { method: "multiround", tree: [32, 32, 2] }, "tree", `tree must be a tree of at most ${L.maxDrafts} leaves (draft sequences), got [32, 32, 2] with 2048 leaves`),
  gen(`tree of ${L.maxDrafts} leaves but more nodes`, { method: "spectr", selection: "race", tree: [2, L.maxDrafts / 2] }, "tree",
    `tree must be a tree of at most ${L.maxRoundNodes} draft nodes per round, got [2, ${L.maxDrafts / 2}] with ${2 + L.maxDrafts} nodes`),
  gen("tree a string", { method: "spectr", tree: "2,2" }, "tree", 'tree must be an array of whole numbers such as [2, 2, 1], got the string "2,2"'),
  gen("tree with a string", { method: "spectr", tree: [2, "2"] }, "tree[1]", 'tree[1] must be a number, got the string "2"'),
  gen("tree and a different gamma", { method: "spectr", tree: [2, 2], gamma: 4 }, "gamma", "gamma must be the depth of tree [2, 2] (2), or left out, got 4"),
  gen("tree and different drafts", { method: "spectr", tree: [2, 2], drafts: 3 }, "drafts", "drafts must be the number of leaves of tree [2, 2] (4), or left out, got 3"),
  genOk("tree with agreeing gamma and drafts", { method: "spectr", selection: "race", tree: [2, 2], gamma: 2, drafts: 4 }),
  // dynamicGamma, recordDistributions
  gen("dynamicGamma a string", { dynamicGamma: "yes" }, "dynamicGamma", 'dynamicGamma must be true or false, got the string "yes"'),
  gen("dynamicGamma 1", { dynamicGamma: 1 }, "dynamicGamma", "dynamicGamma must be true or false, got the number 1"),
  gen("dynamicGamma for spectr", { method: "spectr", dynamicGamma: true }, "dynamicGamma", unused("dynamicGamma", "spectr", 'methods "speculative", "mentored" and "typical"')),
  genOk("dynamicGamma for speculative", { dynamicGamma: true, gamma: L.maxGamma, maxTokens: 4 }),
  genOk("dynamicGamma false for mentored", { method: "mentored", kl: 0.1, dynamicGamma: false }),
  gen("recordDistributions a string", { recordDistributions: "true" }, "recordDistributions", 'recordDistributions must be true or false, got the string "true"'),
  genOk("recordDistributions", { recordDistributions: true, maxTokens: 1 }),
  // kl, temperature, topK, topP, seed, maxTokens
  ...numberRows({ key: "kl", min: 0, max: L.maxKl, whole: false, with: { method: "mentored", temperature: 1, seed: 3 }, msg: `kl must be a KL budget D from 0 (lossless) to 1e6 nats` }),
  ...numberRows({ key: "temperature", min: 0, max: L.maxTemperature, whole: false, msg: "temperature must be a number from 0 (greedy) to 1e6" }),
  genOk("temperature 1e-300 (tiny)", { temperature: 1e-300 }, (r, ctx) => r.text === ctx.greedy || `${JSON.stringify(r.text)}, greedy: ${JSON.stringify(ctx.greedy)}`),
  // Subnormal: 1 / T overflows, and the limit, greedy, is what it must give (not NaN).
  genOk("temperature 5e-324 (subnormal)", { temperature: Number.MIN_VALUE }, (r, ctx) => r.text === ctx.greedy || `${JSON.stringify(r.text)}, greedy: ${JSON.stringify(ctx.greedy)}`),
  ...numberRows({ key: "topK", min: 1, max: L.maxTopK, with: { temperature: 1 }, msg: `topK must be a whole number from 1 to ${L.maxTopK} (leave it out for no top-k)` }),
  ...numberRows({ key: "topP", min: 0, max: 1, minOpen: true, whole: false, with: { temperature: 1 }, msg: "topP must be a number in (0, 1] (leave it out for no top-p)" }),
  ...numberRows({ key: "seed", min: 0, max: L.maxSeed, with: { temperature: 1, maxTokens: 4 }, msg: `seed must be a whole number from 0 to ${L.maxSeed} (2^53 - 1)` }),
  // maxTokens at the limit succeeds: its first round arrives and the rest is cut short.
  ...numberRows({ key: "maxTokens", min: 1, max: L.maxTokens, atMax: "generate:first", msg: `maxTokens must be a whole number from 1 to ${L.maxTokens} (tokens to generate)` }),
  checkOk(`maxTokens ${L.maxTokens} in checkOptions`, { maxTokens: L.maxTokens }, (r) => r.config.maxNewTokens === L.maxTokens || `maxNewTokens ${r.config.maxNewTokens}`),
  // stop
  gen("stop a string", { stop: "\n" }, "stop", 'stop must be an array of strings, got the string "\\n"'),
  gen("stop an object", { stop: { 0: "a" } }, "stop", "stop must be an array of strings, got an object"),
  gen("stop with a number", { stop: ["a", 1] }, "stop[1]", "stop[1] must be a string, got the number 1"),
  gen("stop with null", { stop: [null] }, "stop[0]", "stop[0] must be a string, got null"),
  gen("stop with an empty string", { stop: ["a", ""] }, "stop[1]", `stop[1] must be a string of 1 to ${L.maxStopChars} characters, got an empty string`),
  gen(`stop with a string of ${L.maxStopChars + 1} characters`, { stop: ["a", "z".repeat(L.maxStopChars + 1)] }, "stop[1]",
    `stop[1] must be a string of 1 to ${L.maxStopChars} characters, got ${L.maxStopChars + 1} characters`),
  genOk(`stop with a string of ${L.maxStopChars} characters`, { stop: ["z".repeat(L.maxStopChars)] }),
  // Characters, not UTF-16 code units: each emoji is two.
  genOk(`stop with ${L.maxStopChars} emoji (${2 * L.maxStopChars} UTF-16 units)`, { stop: ["🙂".repeat(L.maxStopChars)] }),
  gen(`stop with ${L.maxStopStrings + 1} strings`, { stop: Array.from({ length: L.maxStopStrings + 1 }, (_, i) => `z${i}`) }, "stop",
    `stop must be at most ${L.maxStopStrings} stop strings, got ${L.maxStopStrings + 1} strings`),
  genOk(`stop with ${L.maxStopStrings} strings`, { stop: Array.from({ length: L.maxStopStrings }, (_, i) => `z${i}`) }),
  genOk("stop empty list", { stop: [] }),
  genOk("stop at a space", { stop: [" "], maxTokens: 64 }, (r) =>
    (r.finish?.kind === "stop_string" && r.text.endsWith(" ")) || `finish ${JSON.stringify(r.finish)}, text ${JSON.stringify(r.text)}`),
  genOk("stop strings outside the alphabet", { stop: ["ï", "🙂"], maxTokens: 4 }, (r) => r.tokens === 4 || `${r.tokens} tokens`),
];

const LIMIT_KEYS = [
  "maxGamma", "defaultGamma", "defaultParallelDraft", "maxDrafts", "defaultDrafts", "maxPlanDrafts", "maxRoundNodes", "defaultTypicalEpsilon", "defaultTypicalDelta", "maxTypicalDelta",
  "maxLabRuns", "defaultLabRuns", "defaultNgram", "maxNgram", "maxTokens", "defaultMaxTokens",
  "maxTemperature", "defaultTemperature", "maxTopK", "maxKl", "maxSeed", "defaultSeed", "maxStopStrings", "maxStopChars",
  "maxVocab", "maxTheoryGammas", "maxRetargetProbs",
];
const LIMITS_ROWS = [
  {
    name: "LIMITS is frozen and has every limit", call: "custom", code: null,
    run: () => LIMITS,
    expect: (l) => (Object.isFrozen(l) && JSON.stringify(Object.keys(l)) === JSON.stringify(LIMIT_KEYS) &&
      Object.values(l).every((v) => Number.isSafeInteger(v) || (Number.isFinite(v) && v > 0) || typeof v === "boolean")) || `LIMITS ${JSON.stringify(l)}`,
  },
  // The defaults are what the engine fills in for options left out.
  { ...checkOk("defaults of speculative", null, (r) => {
    const { config: c } = r;
    const got = [c.method.kind, c.method.gamma, c.method.policy?.kind, c.maxNewTokens, c.seed, c.sampling.temperature, c.bug];
    const want = ["speculative", L.defaultGamma, "fixed", L.defaultMaxTokens, L.defaultSeed, L.defaultTemperature, undefined];
    return JSON.stringify(got) === JSON.stringify(want) || `config ${JSON.stringify(c)}`;
  }), raw: true, options: { prompt: PROMPT } },
  checkOk("defaults of spectr", { method: "spectr" }, (r) => {
    const { kind, drafts, selection } = r.config.method;
    return (kind === "spectr" && selection === "kseq" && drafts?.kind === "iid" && drafts.k === L.defaultDrafts && drafts.length === L.defaultGamma) ||
      `method ${JSON.stringify(r.config.method)}`;
  }),
  checkOk("spectr with the race and a tree", { method: "spectr", selection: "race", tree: [2, 2, 1] }, (r) => {
    const { kind, drafts, selection } = r.config.method;
    return (kind === "spectr" && selection === "race" && drafts?.kind === "tree" && drafts.k === 4 && JSON.stringify(drafts.branching) === "[2,2,1]") ||
      `method ${JSON.stringify(r.config.method)}`;
  }),
  checkOk("bug in the checked settings", { method: "multiround", bug: "shared-uniform" }, (r) => r.config.bug === "shared-uniform" || `bug ${r.config.bug}`),
  checkOk("checkOptions leaves the prompt's characters to generate()", { prompt: "naïve" }, (r) => r.prompt === "naïve" || `prompt ${JSON.stringify(r.prompt)}`),
  { name: "checkOptions(null)", call: "check", raw: true, options: null, code: OPTION, field: "options", message: "options must be an object such as { prompt }, got null" },
  { name: "checkOptions with a bad signal", call: "check", options: { signal: {} }, code: OPTION, field: "signal", message: "signal must be an AbortSignal, got an object" },
  { name: "checkOptions drops a good signal", call: "check", options: { signal: new AbortController().signal }, code: null },
];

const PLAN_BASE = { method: "speculative", target: [0.5, 0.5], draft: [0.25, 0.75] };
/** A plan() row; `field` is what an "invalid_option" error names. */
const planRow = (name, options, code, message, expect, field) => ({ name, call: "plan", options: { ...PLAN_BASE, ...options }, code, message, expect, field });
const planBad = (name, options, field, message) => planRow(name, options, OPTION, message, undefined, field);
const PLAN_ROWS = [
  { name: "options null", call: "plan", options: null, code: OPTION, field: "options", message: "options must be an object such as { method, target, draft }, got null" },
  planBad("unknown option", { normalise: true }, "normalise", 'unknown option "normalise"; the options are: method, selection, target, draft'),
  planBad("method missing", { method: undefined }, "method", "method is required: one of speculative, spectr"),
  planBad("unknown method", { method: "beam" }, "method", 'method must be one of speculative, spectr, multiround, mentored, typical, got "beam"'),
  planBad("former method kseq", { method: "kseq" }, "method", '(SpecTr k-Seq is method "spectr", whose default selection is "kseq"), got "kseq"'),
  planBad("former method race", { method: "race" }, "method", '(the ratio race is method "spectr" with selection "race"), got "race"'),
  planBad("former method otm", { method: "otm" }, "method", '(the exact OTM linear program is method "spectr" with selection "otm"), got "otm"'),
  planBad("former method greedy", { method: "greedy" }, "method", '(greedy verification is method "speculative" with temperature 0), got "greedy"'),
  planBad("decoding's lookup", { method: "lookup" }, "method", 'plan method "speculative" with a one-hot draft'),
  // Greedy verification: the draft's argmax (token 1) kept iff it is the target's.
  planRow("greedy: speculative at temperature 0, argmaxes differ", { temperature: 0, target: [0.6, 0.4] }, null, null,
    (r) => (r.method === "speculative" && r.temperature === 0 && r.acceptance === 0 && r.output[0] === 1) || `${r.method} at ${r.temperature}: acceptance ${r.acceptance}, output ${r.output}`),
  planRow("greedy: speculative at temperature 0, argmaxes agree", { temperature: 0, target: [0.4, 0.6] }, null, null,
    (r) => (r.method === "speculative" && r.acceptance === 1 && r.output[1] === 1 && r.acceptedMass[1] === 1) || `${r.method} at ${r.temperature}: acceptance ${r.acceptance}, output ${r.output}`),
  planBad("temperature 0 for spectr", { method: "spectr", temperature: 0 }, "temperature", 'temperature must be above 0 for method "spectr": at temperature 0 every method is greedy verification'),
  planBad("selection bogus", { method: "spectr", selection: "best" }, "selection", ['selection must be "kseq" (k-Seq, the default), "race"', 'got "best"']),
  planBad("selection for multiround", { method: "multiround", selection: "race" }, "selection", 'selection does not apply to method "multiround" and is refused rather than ignored; it is for method "spectr"'),
  planRow("selection otm", { method: "spectr", selection: "otm", drafts: 2 }, null, null, (r) => (r.method === "spectr" && r.selection === "otm" && r.upperBound > 0) || `${r.method} ${r.selection}`),
  planBad("target missing", { target: undefined }, "target", "target is required: the target probabilities, one per token"),
  planBad("mismatched lengths", { draft: [0.2, 0.3, 0.5] }, "draft", "draft must be as many entries as target (2), got 3 entries"),
  planBad("target a string", { target: "0.5,0.5" }, "target", 'target must be an array of numbers, got the string "0.5,0.5"'),
  planBad("draft with a string", { draft: [0.5, "0.5"] }, "draft[1]", 'draft[1] must be a number, got the string "0.5"'),
  planBad("negative entry", { target: [-0.5, 1.5] }, "target[0]", "target[0] must be a finite probability >= 0, got -0.5"),
  planBad("NaN entry", { draft: [NaN, 1] }, "draft[0]", "draft[0] must be a probability >= 0, got NaN"),
  planBad("infinite entry", { target: [0, Infinity] }, "target[1]", "target[1] must be a finite probability >= 0, got Infinity"),
  planBad("empty vectors", { target: [], draft: [] }, "target", "target must be probabilities: finite, >= 0 and not all zero, got no entries"),
  planBad("all zero", { draft: [0, 0] }, "draft", "draft must be probabilities: finite, >= 0 and not all zero, got only zeros"),
  planBad("not normalised", { target: [0.5, 0.6] }, "target", ["target must be probabilities that sum to 1", "set normalize to rescale them, got a sum of 1.1"]),
  planRow("not normalised, normalize: true", { target: [1, 3], normalize: true }, null, null, (r) => r.normalized === true || `normalized ${r.normalized}`),
  planRow("-0 entry read as 0", { target: [-0, 1] }, null, null, (r) => Object.is(r.target[0], 0) || `target[0] is ${Object.is(r.target[0], -0) ? "-0" : r.target[0]}`),
  planRow("Float64Array vectors", { target: new Float64Array([0.5, 0.5]), draft: new Float64Array([0.25, 0.75]) }, null, null, (r) => r.acceptance === 0.75 || `acceptance ${r.acceptance}`),
  planBad("drafts for speculative", { drafts: 2 }, "drafts", 'drafts does not apply to method "speculative" and is refused rather than ignored; it is for methods "spectr" and "multiround"'),
  planBad("kl for spectr", { method: "spectr", kl: 0.1 }, "kl", 'kl does not apply to method "spectr" and is refused rather than ignored; it is for method "mentored"'),
  planBad("drafts 0", { method: "spectr", drafts: 0 }, "drafts", "drafts must be a whole number from 1 to 1000000, got 0"),
  planBad("drafts 1000001", { method: "spectr", selection: "race", drafts: 1_000_001 }, "drafts", "drafts must be a whole number from 1 to 1000000, got 1000001"),
  planRow("drafts 1000000 (highest)", { method: "spectr", drafts: 1_000_000 }, null, null, (r) => r.drafts === 1_000_000 || `drafts ${r.drafts}`),
  planRow("drafts left out: the decoding default", { method: "spectr", selection: "race" }, null, null, (r) => r.drafts === L.defaultDrafts || `drafts ${r.drafts}`),
  planBad("drafts NaN", { method: "spectr", drafts: NaN }, "drafts", "drafts must be a whole number from 1 to 1000000, got NaN"),
  planBad("rho NaN", { method: "spectr", rho: NaN }, "rho", "rho must be a finite number >= rho* (at least 1), got NaN"),
  planBad("rho below rho*", { method: "spectr", rho: 0.5 }, "rho", "rho must be at least rho* ="),
  planBad("rho with the race", { method: "spectr", selection: "race", rho: 2 }, "rho", 'rho must be left out with selection "race"'),
  planBad("mentored without kl", { method: "mentored" }, "kl", 'kl is required: method "mentored" needs the KL budget D >= 0, in nats'),
  planBad("kl negative", { method: "mentored", kl: -1 }, "kl", "kl must be a finite number >= 0 (nats), got -1"),
  planRow("kl -0", { method: "mentored", kl: -0 }, null, null),
  planBad("OTM too large", { method: "spectr", selection: "otm", drafts: 3, target: Array(100).fill(0.01), draft: Array(100).fill(0.01) }, "drafts", ["drafts must be small enough for the OTM linear program", "at most 262144 variables", "got 3, which over 100 tokens needs 100000000"]),
  planBad("multi-round too large", { method: "multiround", drafts: 1_000_000, target: Array(200).fill(0.005), draft: Array(200).fill(0.005) }, "drafts", "drafts must be at most 671088 for a multi-round plan over 200 tokens"),
  planBad("vocabulary past the limit", { target: Array(1_048_577).fill(0), draft: Array(1_048_577).fill(0) }, "target", "target must be at most 1048576 entries, got 1048577 entries"),
  // The bug lab: the buggy output is the one worked out by hand (crates/specula-cli/tests/plan_bug.rs).
  planRow("bug resample-from-target", { target: [0.1, 0.2, 0.3, 0.4], draft: [0.5, 0.3, 0.15, 0.05], bug: "resample-from-target" }, null, null,
    (r) => (Math.abs(r.tv - 0.15) < 1e-12 && r.bug?.name === "resample-from-target") || `tv ${r.tv}, bug ${JSON.stringify(r.bug)}`),
  planBad("bug unknown", { bug: "typo" }, "bug", 'bug must be one of resample-from-target'),
  planBad("bug cache-reset", { bug: "cache-reset" }, "bug", "cache-reset acts only over a sequence"),
  planBad("bug on spectr", { method: "spectr", bug: "argmax-draft" }, "bug", 'bug does not apply to method "spectr"'),
  planBad("topK at temperature 0", { temperature: 0, topK: 2 }, "topK", "topK must be left out at temperature 0"),
  planBad("bug with topP 0", { bug: "filtered-draft", topP: 0 }, "topP", "topP must be a number in (0, 1] (leave it out for no top-p), got 0"),
  planBad("bug with temperature past the limit", { bug: "filtered-draft", temperature: L.maxTemperature * 2 }, "temperature", "temperature must be a number from 0 (greedy) to 1e6, got 2000000"),
  { name: "in the instance's worker: mismatched lengths", call: "s.plan", options: { ...PLAN_BASE, draft: [1] }, code: OPTION, field: "draft", message: "draft must be as many entries as target (2), got 1 entry" },
];

const weights = (name) => `/weights-bad/${name}/`;
/** A load() row that must throw "invalid_option" naming `field`. */
const loadOption = (name, options, field, message) => ({ name, call: "Specula.load", options, code: OPTION, field, message });
const loadBad = (name, code, message) => ({ name: `weights ${name}`, call: "s.load", options: { backend: "cpu", weightsUrl: weights(name) }, code, message });
const LOAD_ROWS = [
  loadOption("options null", null, "options", "load options must be an object, got null"),
  loadOption("options a string", "cpu", "options", 'load options must be an object, got the string "cpu"'),
  loadOption("unknown option", { backends: "cpu" }, "backends", 'unknown option "backends" in load options'),
  loadOption("unknown backend", { backend: "metal" }, "backend", 'unknown backend "metal"; use "auto", "webgpu" or "cpu"'),
  loadOption("backend a number", { backend: 1 }, "backend", "unknown backend the number 1"),
  loadOption("unknown draftBackend", { draftBackend: "gpu" }, "draftBackend", 'unknown draftBackend "gpu"'),
  loadOption("onProgress not a function", { onProgress: "log" }, "onProgress", 'onProgress must be a function, got the string "log"'),
  loadOption("weightsUrl a number", { weightsUrl: 42 }, "weightsUrl", "weightsUrl must be a string or URL, got the number 42"),
  loadOption("weightsUrl not a URL", { weightsUrl: "http://[" }, "weightsUrl", 'weightsUrl "http://[" is not a URL'),
  loadOption("weightsUrl a data: URL", { weightsUrl: "data:,x" }, "weightsUrl", 'weightsUrl "data:,x" is not a URL'),
  loadOption("wasmUrl not a URL", { wasmUrl: "http://[" }, "wasmUrl", 'wasmUrl "http://[" is not a URL'),
  loadOption("wasmUrl an object", { wasmUrl: {} }, "wasmUrl", "wasmUrl must be a string or URL, got an object"),
  { name: "wasmUrl missing (404)", call: "Specula.load", options: { backend: "cpu", wasmUrl: "/weights-bad/nothing.wasm" }, code: "download_failed", message: ["cannot download specula_wasm_bg.wasm", "HTTP 404"] },
  { name: "wasmUrl not wasm", call: "Specula.load", options: { backend: "cpu", wasmUrl: weights("manifest-lies") + "manifest.json" }, code: "download_failed", message: ["specula_wasm_bg.wasm from", "is not the specula WebAssembly module"] },
  { name: "weightsUrl unreachable", call: "Specula.load", options: { backend: "cpu", weightsUrl: "http://127.0.0.1:9/" }, code: "download_failed", message: ["cannot download", "http://127.0.0.1:9/"] },
  { name: "weights missing-target (404)", call: "Specula.load", options: { backend: "cpu", weightsUrl: weights("missing-target") }, code: "download_failed", message: ["cannot download target.bpk from", "/weights-bad/missing-target/target.bpk: HTTP 404"] },
  // The probe instance first loads good files under a lying manifest, then every bad set.
  {
    name: "weights manifest-lies (sizes only feed progress)", call: "s.load", options: { backend: "cpu", weightsUrl: new URL(weights("manifest-lies").slice(0, -1), location.href) }, code: null,
    expect: (r, ctx) => {
      const last = ctx.progress.filter((p) => p.file === "target.bpk").at(-1);
      return (r.backend === "cpu" && last?.loaded === last?.total && last.total > 1e6) || `last target.bpk progress ${JSON.stringify(last)}`;
    },
  },
  loadBad("truncated-target", "bad_weights", "target model: checksum mismatch for target weights"),
  loadBad("empty-target", "bad_weights", "target model: checksum mismatch for target weights"),
  loadBad("html-target", "bad_weights", "target model: checksum mismatch for target weights"),
  loadBad("oversized-target", "bad_weights", ["target model: cannot load weights: the weights are", "bytes, more than the", "a model of this shape needs"]),
  loadBad("mislabelled-target", "bad_weights", "target model: these weights are for the draft model"),
  loadBad("swapped", "bad_weights", "draft model: these weights are for the target model"),
  loadBad("target-json-not-json", "bad_weights", ["target model: invalid model description:", "at line 1 column"]),
  loadBad("target-json-huge", "bad_weights", ["target.json from", "bytes or more, above the limit of 1048576 bytes"]),
  loadBad("target-json-max-seq", "bad_weights", "target model: checksum mismatch for the target description"),
  loadBad("target-json-steps", "bad_weights", "target model: checksum mismatch for the target description"),
  loadBad("missing-target", "download_failed", ["cannot download target.bpk", "HTTP 404"]),
];

const CUSTOM_ROWS = [
  {
    name: "generate before load", call: "custom", code: "not_loaded", message: "call load() first",
    run: () => {
      const fresh = new Specula();
      try {
        return fresh.generate({ prompt: PROMPT });
      } finally {
        fresh.terminate();
      }
    },
  },
  {
    name: "load after terminate", call: "custom", code: "terminated", message: "terminated",
    run: () => {
      const gone = new Specula();
      gone.terminate();
      return gone.load({ backend: "cpu" });
    },
  },
  {
    name: "plan after terminate", call: "custom", code: "terminated", message: "terminated",
    run: () => {
      const gone = new Specula();
      gone.terminate();
      return gone.plan(PLAN_BASE);
    },
  },
  {
    name: "generate and load while a generation runs", call: "custom", code: "busy", message: "a generation is already running",
    run: async ({ specula }) => {
      const first = specula.generate({ prompt: PROMPT, maxTokens: 40, temperature: 0 });
      await first.next();
      try {
        const load = await specula.load({ backend: "cpu" }).then(() => "resolved", (e) => e.code);
        if (load !== "busy") throw new Error(`load() during a generation: ${load}`);
        return specula.generate({ prompt: PROMPT });
      } finally {
        await first.return();
      }
    },
  },
  { name: "signal not an AbortSignal", call: "generate", options: { signal: "stop" }, code: OPTION, field: "signal", message: 'signal must be an AbortSignal, got the string "stop"' },
  { name: "signal already aborted", call: "custom", code: "aborted", message: "aborted", run: ({ specula }) => specula.complete({ ...BASE, maxTokens: 40, signal: AbortSignal.abort() }) },
];

/** Every row, by table. */
export const HOSTILE = {
  generate: GENERATE_ROWS,
  limits: LIMITS_ROWS,
  plan: PLAN_ROWS,
  load: LOAD_ROWS,
  misuse: CUSTOM_ROWS,
};

/** The options a row passes: generate-like and check rows are merged into BASE. */
function optionsOf(row) {
  return row.raw || ![...GENERATE_CALLS, "check"].includes(row.call) ? row.options : { ...BASE, ...row.options };
}

async function invoke(row, ctx) {
  const options = optionsOf(row);
  switch (row.call) {
    case "generate": {
      let summary;
      const it = ctx.specula.generate(options);
      for (let r = await it.next(); ; r = await it.next()) {
        if (r.done) {
          summary = r.value;
          break;
        }
      }
      return summary;
    }
    case "generate:first": {
      const it = ctx.specula.generate(options);
      const first = await it.next();
      await it.return();
      return first.value;
    }
    case "complete":
      return ctx.specula.complete(options);
    case "check":
      return checkOptions(options);
    case "plan":
      return plan(options);
    case "s.plan":
      return ctx.specula.plan(options);
    case "Specula.load": {
      const s = await Specula.load(options);
      s.terminate();
      return s.backend;
    }
    case "s.load":
      ctx.progress = [];
      return ctx.probe.load({ ...options, onProgress: (p) => ctx.progress.push(p) });
    case "custom":
      return row.run(ctx);
    default:
      throw new Error(`unknown call ${row.call}`);
  }
}

function withTimeout(promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ROW_TIMEOUT_MS / 1000} s`)), ROW_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const show = (x) => (typeof x === "string" ? JSON.stringify(x.length > 60 ? `${x.slice(0, 60)}…` : x) : x);

/** What a row's error must be, or why it is not that; null when it is. */
function wrongError(row, error) {
  const fragments = [row.message ?? []].flat();
  if (row.code === null) return "success";
  if (!(error instanceof SpeculaError) || error.code !== row.code || !fragments.every((f) => String(error.message).includes(f))) {
    return `${row.code} ${fragments.map(show).join(" + ")}`;
  }
  // Every option error names its option, and so does a refused prompt ("prompt"); no
  // other error names one.
  const field = row.code === OPTION || row.code === "bad_prompt" ? row.field : undefined;
  if (row.code === OPTION && !("field" in row)) return "a row that says which field (test bug)";
  if (error.field !== field) return `field ${JSON.stringify(field)}`;
  return null;
}

const describeError = (e) => `${e?.name} ${e?.code}${e?.field === undefined ? "" : ` [${e.field}]`}: ${String(e?.message).slice(0, 300)}`;

/**
 * checkOptions() on a generate() row's options against what generate() did: the same
 * "invalid_option" error (message and field), or success where generate() succeeded or
 * refused only the prompt's characters. null when they agree, otherwise what differs.
 */
async function checkAgrees(row, outcome) {
  let checked;
  try {
    checked = { value: await withTimeout(Promise.resolve().then(() => checkOptions(optionsOf(row)))) };
  } catch (error) {
    checked = { error };
  }
  const e = outcome.error;
  if (e?.code === OPTION) {
    const c = checked.error;
    const same = c instanceof SpeculaError && c.code === e.code && c.message === e.message && c.field === e.field;
    return same ? null : `checkOptions() gave ${c ? describeError(c) : "success"}`;
  }
  if (e && e.code !== "bad_prompt") return null; // aborted, busy …: not about the options
  return checked.error ? `checkOptions() refused what generate() took: ${describeError(checked.error)}` : null;
}

/** Runs one row; returns [passed, line]. */
async function runRow(table, row, ctx) {
  const label = `${table}: ${row.name} [${row.call}]`;
  const agreement = (outcome) => (GENERATE_CALLS.includes(row.call) ? checkAgrees(row, outcome) : null);
  let result;
  try {
    result = await withTimeout(Promise.resolve().then(() => invoke(row, ctx)));
  } catch (error) {
    const want = wrongError(row, error);
    if (want !== null) return [false, `${label}: expected ${want}, got ${describeError(error)}`];
    const differs = await agreement({ error });
    if (differs !== null) return [false, `${label}: ${differs}; generate() gave ${describeError(error)}`];
    const field = error.field === undefined ? "" : ` [${error.field}]`;
    return [true, `${label} -> ${row.code}${field}: ${String(error.message).slice(0, 160)}`];
  }
  if (row.code !== null) return [false, `${label}: expected ${row.code}, but it succeeded`];
  const verdict = row.expect ? await withTimeout(Promise.resolve(row.expect(result, ctx))).catch((e) => `expect threw ${e?.code} ${e?.message}`) : true;
  if (verdict !== true) return [false, `${label}: succeeded but ${verdict}`];
  const differs = await agreement({ value: result });
  return differs === null ? [true, `${label} -> succeeds`] : [false, `${label}: ${differs}`];
}

/**
 * Runs the whole table against `specula` (a loaded CPU instance), recording one check per
 * row, then checks that the instance still makes `before.text` from `before.options`.
 * Returns the seconds it took.
 */
export async function runHostile(specula, check, before) {
  const started = performance.now();
  const greedy = (await specula.complete({ ...BASE })).text;
  const probe = new Specula();
  const ctx = { specula, probe, greedy, progress: [] };
  let rows = 0;
  try {
    for (const [table, list] of Object.entries(HOSTILE)) {
      for (const row of list) {
        const [passed, line] = await runRow(table, row, ctx);
        check(passed, line);
        rows += 1;
      }
    }
    // The probe loaded good weights first: every bad set after them left them in place.
    const probeText = await withTimeout(probe.complete(before.options)).then((s) => s.text, (e) => `${e.code}: ${e.message}`);
    check(probeText === before.text, `load: after ${LOAD_ROWS.length} loads, the good models are still loaded (${JSON.stringify(probeText)})`);
  } finally {
    probe.terminate();
  }
  const after = await specula.complete(before.options).then((s) => s.text, (e) => `${e.code}: ${e.message}`);
  check(after === before.text, `hostile table: the instance generates as before (${JSON.stringify(after)})`);
  return { rows, seconds: (performance.now() - started) / 1000 };
}
