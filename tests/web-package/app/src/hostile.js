// The package test's table of hostile inputs: every option of generate() at and past both
// ends of its range and with wrong types, plan() with broken vectors, load() with bad
// options and with bad weight files (served from public/weights-bad/, written at test time
// by tests/web-package/bad-weights.mjs). Each row names the call, its options and either
// the SpeculaError it must throw (`code` and fragments of the message) or, with code null,
// that it must succeed (and, with `expect`, what the result must be). The limits and
// messages are the wasm crate's (crates/specula-wasm/src/options.rs, fields.rs, plan.rs).
import { Specula, SpeculaError, plan } from "specula";

const PROMPT = "ROMEO:\nBut soft";
/** generate/complete rows are merged into this unless they set `raw`. */
const BASE = { prompt: PROMPT, maxTokens: 2, temperature: 0 };
const ROW_TIMEOUT_MS = 30_000;
const OPTION = "invalid_option";

/** A generate() row that must throw `code` with every fragment of `message`. */
const gen = (name, options, message, code = OPTION) => ({ name, call: "generate", options, code, message });
/** A generate() row that must succeed; `expect(summary, ctx)` returns true or what is wrong. */
const genOk = (name, options, expect) => ({ name, call: "generate", options, code: null, expect });

/**
 * The rows for one number option: NaN, ±Infinity, just past each end, a fraction where
 * only whole numbers go, wrong types, -0, and (succeeding) both ends of the range.
 */
function numberRows({ key, min, max, whole = true, minOpen = false, msg, with: extra = {}, call = "generate", atMax }) {
  const rows = [];
  const o = (value) => ({ ...extra, [key]: value });
  for (const [label, value, shown] of [
    ["NaN", NaN, "got NaN"],
    ["Infinity", Infinity, "got Infinity"],
    ["-Infinity", -Infinity, "got -Infinity"],
  ]) {
    rows.push(gen(`${key} ${label}`, o(value), [msg, shown]));
  }
  if (minOpen) {
    rows.push(gen(`${key} ${min} (excluded)`, o(min), [msg, `got ${min}`]));
    rows.push(gen(`${key} -0 (excluded like 0)`, o(-0), msg));
    rows.push(genOk(`${key} smallest above ${min}`, o(Number.MIN_VALUE)));
  } else {
    const below = whole ? min - 1 : -Number.MIN_VALUE;
    rows.push(gen(`${key} ${whole ? below : "just below 0"}`, o(below), whole ? [msg, `got ${below}`] : msg));
    rows.push(genOk(`${key} ${min} (lowest)`, o(min)));
    if (min === 0) {
      rows.push(genOk(`${key} -0 accepted as 0`, o(-0), async (r, ctx) => {
        const zero = await ctx.specula.complete({ ...BASE, ...o(0) });
        return r.text === zero.text || `text ${JSON.stringify(r.text)}, with 0: ${JSON.stringify(zero.text)}`;
      }));
    } else {
      rows.push(gen(`${key} -0`, o(-0), msg));
    }
  }
  rows.push({ ...genOk(`${key} ${max} (highest)`, o(max)), call: atMax ?? call });
  if (max !== Number.MAX_VALUE) {
    const above = whole ? max + 1 : max + 2 ** -52 * max;
    rows.push(gen(`${key} ${above} (above)`, o(above), whole ? [msg, `got ${above}`] : msg));
  }
  if (whole) rows.push(gen(`${key} ${min + 0.5}`, o(min + 0.5), [msg, `got ${min + 0.5}`]));
  const typeMsg = `${key} in generate options must be a number, got`;
  rows.push(gen(`${key} as a string`, o(String(min + 1)), `${typeMsg} the string "${min + 1}"`));
  rows.push(gen(`${key} as a boolean`, o(true), `${typeMsg} the boolean true`));
  rows.push(gen(`${key} as an array`, o([min + 1]), `${typeMsg} an array`));
  rows.push(gen(`${key} as a BigInt`, o(BigInt(min + 1)), `${typeMsg} a BigInt`));
  return rows;
}

const LONG_LINE = "ROMEO:\nBut soft, what light through yonder window breaks?\nIt is the east, and Juliet is the sun.\n";
const LONG_PROMPT = LONG_LINE.repeat(Math.ceil(100 * 1024 / LONG_LINE.length));
const SPECTR = { method: "spectr", gamma: 1 };

const GENERATE_ROWS = [
  // The options object itself.
  { name: "options null", call: "generate", raw: true, options: null, code: OPTION, message: "generate options must be an object such as { prompt }, got null" },
  { name: "options a string", call: "generate", raw: true, options: "To be", code: OPTION, message: 'got the string "To be"' },
  { name: "options an array", call: "generate", raw: true, options: [PROMPT], code: OPTION, message: "got an array" },
  { name: "options undefined", call: "complete", raw: true, options: undefined, code: OPTION, message: "got undefined" },
  gen("unknown option", { temprature: 1 }, ['unknown option "temprature" in generate options', "the options are: prompt, method"]),
  gen("unknown option in snake case", { max_tokens: 2 }, 'unknown option "max_tokens"'),
  gen("a function (not plain data)", { stop: [() => 1] }, "options must be plain data"),
  gen("a symbol (not plain data)", { seed: Symbol("seed") }, "options must be plain data"),
  genOk("null means not given", { gamma: null, seed: null, stop: null }),
  // prompt
  gen("prompt missing", { prompt: undefined }, "prompt is required (a non-empty string)"),
  gen("prompt empty", { prompt: "" }, "prompt is empty"),
  gen("prompt a number", { prompt: 42 }, "prompt in generate options must be a string, got the number 42"),
  gen("prompt a String object", { prompt: new String("abc") }, "prompt in generate options must be a string, got an object"),
  gen("prompt with ï", { prompt: "naïve" }, ["prompt: character 'ï' (U+00EF) at position 2 is not in the vocabulary", "the models know only these characters"], "bad_prompt"),
  gen("prompt with an emoji", { prompt: "hi 🙂" }, "(U+1F642) at position 3", "bad_prompt"),
  gen("prompt with a tab", { prompt: "a\tb" }, "(U+0009) at position 1", "bad_prompt"),
  gen("prompt with NUL", { prompt: "a\0" }, "(U+0000) at position 1", "bad_prompt"),
  gen("prompt with a lone surrogate", { prompt: "a\ud800" }, "(U+FFFD) at position 1", "bad_prompt"),
  gen("100 KB prompt, bad last character", { prompt: LONG_PROMPT + "é" }, `(U+00E9) at position ${LONG_PROMPT.length}`, "bad_prompt"),
  genOk(`100 KB prompt (${LONG_PROMPT.length} characters)`, { prompt: LONG_PROMPT, maxTokens: 8, temperature: 1, seed: 7 }, async (r, ctx) => {
    // The window slides: the models read the prompt's last 128 characters (docs/limits.md).
    const tail = await ctx.specula.complete({ ...BASE, prompt: LONG_PROMPT.slice(-128), maxTokens: 8, temperature: 1, seed: 7 });
    return (r.tokens === 8 && r.text === tail.text && r.prompt === LONG_PROMPT) ||
      `${r.tokens} tokens ${JSON.stringify(r.text)}; from the last 128 characters: ${JSON.stringify(tail.text)}`;
  }),
  // method
  gen("unknown method", { method: "beam" }, ['unknown method "beam"', "use one of: autoregressive, speculative, spectr, multiround, otm, mentored"]),
  gen("method in capitals", { method: "Speculative" }, 'unknown method "Speculative"'),
  gen("method empty", { method: "" }, 'unknown method ""'),
  gen("method a number", { method: 1 }, "method in generate options must be a string, got the number 1"),
  gen("mentored without kl", { method: "mentored" }, 'method "mentored" needs kl'),
  ...["autoregressive", "speculative", "spectr", "multiround", "otm"].map((method) => genOk(`method ${method}`, { method })),
  genOk("method mentored", { method: "mentored", kl: 0.1 }),
  // gamma, drafts, tree
  ...numberRows({ key: "gamma", min: 1, max: 32, msg: "gamma must be a whole number from 1 to 32 (draft tokens per round)" }),
  genOk("gamma 32 for spectr", { method: "spectr", gamma: 32, drafts: 1 }),
  gen("gamma 33 for spectr", { method: "spectr", gamma: 33 }, "gamma must be a whole number from 1 to 32"),
  ...numberRows({ key: "drafts", min: 1, max: 16, with: SPECTR, msg: "drafts must be a whole number from 1 to 16 (draft sequences per round)" }),
  gen("tree empty", { ...SPECTR, gamma: undefined, tree: [] }, "tree must list the branching at each depth, 1 to 32 depths, got 0 depths"),
  gen("tree 33 depths", { method: "spectr", tree: Array(33).fill(1) }, "1 to 32 depths, got 33 depths"),
  genOk("tree 32 depths", { method: "spectr", tree: Array(32).fill(1) }),
  gen("tree width 0", { method: "spectr", tree: [2, 0] }, "tree[1] must be a whole number from 1 to 64 (children per node), got 0"),
  gen("tree width 65", { method: "otm", tree: [65] }, "tree[0] must be a whole number from 1 to 64 (children per node), got 65"),
  gen("tree width NaN", { method: "spectr", tree: [NaN] }, "tree[0] must be a whole number from 1 to 64 (children per node), got NaN"),
  gen("tree width 1.5", { method: "spectr", tree: [1.5] }, "got 1.5"),
  genOk("tree [64] (64 leaves)", { method: "spectr", tree: [64] }),
  gen("tree of 128 leaves", { method: "multiround", tree: [8, 8, 2] }, "tree [8, 8, 2] has 128 leaves (draft sequences); at most 64"),
  gen("tree a string", { method: "spectr", tree: "2,2" }, 'tree in generate options must be an array of numbers, got the string "2,2"'),
  gen("tree with a string", { method: "spectr", tree: [2, "2"] }, 'tree[1] in generate options must be a number, got the string "2"'),
  gen("tree and a different gamma", { method: "spectr", tree: [2, 2], gamma: 4 }, "gamma 4 disagrees with tree [2, 2] of depth 2"),
  gen("tree and different drafts", { method: "spectr", tree: [2, 2], drafts: 3 }, "drafts 3 disagrees with tree [2, 2], which has 4 leaves"),
  genOk("tree with agreeing gamma and drafts", { method: "otm", tree: [2, 2], gamma: 2, drafts: 4 }),
  gen("tree for speculative", { tree: [2] }, 'tree is for methods "spectr", "multiround" and "otm", not "speculative"'),
  // dynamicGamma, recordDistributions
  gen("dynamicGamma a string", { dynamicGamma: "yes" }, 'dynamicGamma in generate options must be true or false, got the string "yes"'),
  gen("dynamicGamma 1", { dynamicGamma: 1 }, "dynamicGamma in generate options must be true or false, got the number 1"),
  gen("dynamicGamma for spectr", { method: "spectr", dynamicGamma: true }, 'dynamicGamma is for methods "speculative" and "mentored", not "spectr"'),
  genOk("dynamicGamma for speculative", { dynamicGamma: true, gamma: 32, maxTokens: 4 }),
  genOk("dynamicGamma false for spectr", { method: "spectr", dynamicGamma: false }),
  gen("recordDistributions a string", { recordDistributions: "true" }, 'recordDistributions in generate options must be true or false, got the string "true"'),
  genOk("recordDistributions", { recordDistributions: true, maxTokens: 1 }),
  // kl, temperature, topK, topP, seed, maxTokens
  ...numberRows({ key: "kl", min: 0, max: Number.MAX_VALUE, whole: false, with: { method: "mentored", temperature: 1, seed: 3 }, msg: "kl (the KL budget D of mentored decoding) must be a finite number >= 0 (nats)" }),
  ...numberRows({ key: "temperature", min: 0, max: Number.MAX_VALUE, whole: false, msg: "temperature must be a finite number >= 0 (0 is greedy)" }),
  genOk("temperature 1e-300 (tiny)", { temperature: 1e-300 }, (r, ctx) => r.text === ctx.greedy || `${JSON.stringify(r.text)}, greedy: ${JSON.stringify(ctx.greedy)}`),
  // Subnormal: 1 / T overflows, and the limit, greedy, is what it must give (not NaN).
  genOk("temperature 5e-324 (subnormal)", { temperature: Number.MIN_VALUE }, (r, ctx) => r.text === ctx.greedy || `${JSON.stringify(r.text)}, greedy: ${JSON.stringify(ctx.greedy)}`),
  ...numberRows({ key: "topK", min: 1, max: 2 ** 32 - 1, with: { temperature: 1 }, msg: "topK must be a whole number from 1 to 4294967295 (leave it out for no top-k)" }),
  ...numberRows({ key: "topP", min: 0, max: 1, minOpen: true, whole: false, with: { temperature: 1 }, msg: "topP must be in (0, 1] (leave it out for no top-p)" }),
  ...numberRows({ key: "seed", min: 0, max: 2 ** 53 - 1, with: { temperature: 1, maxTokens: 4 }, msg: "seed must be a whole number from 0 to 2^53 - 1" }),
  // maxTokens 4096 succeeds: its first round arrives and the rest is cut short.
  ...numberRows({ key: "maxTokens", min: 1, max: 4096, atMax: "generate:first", msg: "maxTokens must be a whole number from 1 to 4096" }),
  // stop
  gen("stop a string", { stop: "\n" }, 'stop in generate options must be an array of strings, got the string "\\n"'),
  gen("stop an object", { stop: { 0: "a" } }, "stop in generate options must be an array of strings, got an object"),
  gen("stop with a number", { stop: ["a", 1] }, "stop[1] in generate options must be a string, got the number 1"),
  gen("stop with null", { stop: [null] }, "stop[0] in generate options must be a string, got null"),
  gen("stop with an empty string", { stop: ["a", ""] }, "stop[1] is empty; every stop string needs at least one character"),
  genOk("stop empty list", { stop: [] }),
  genOk("stop at a space", { stop: [" "], maxTokens: 64 }, (r) =>
    (r.finish?.kind === "stop_string" && r.text.endsWith(" ")) || `finish ${JSON.stringify(r.finish)}, text ${JSON.stringify(r.text)}`),
  genOk("stop strings outside the alphabet", { stop: ["ï", "🙂"], maxTokens: 4 }, (r) => r.tokens === 4 || `${r.tokens} tokens`),
];

const PLAN_BASE = { method: "speculative", target: [0.5, 0.5], draft: [0.25, 0.75] };
const planRow = (name, options, code, message, expect) => ({ name, call: "plan", options: { ...PLAN_BASE, ...options }, code, message, expect });
const PLAN_ROWS = [
  { name: "options null", call: "plan", options: null, code: OPTION, message: "plan options must be an object such as { method }, got null" },
  planRow("unknown option", { normalise: true }, OPTION, 'unknown option "normalise" in plan options'),
  planRow("method missing", { method: undefined }, OPTION, "method is required: one of"),
  planRow("unknown method", { method: "beam" }, OPTION, 'unknown method "beam"; use one of:'),
  planRow("target missing", { target: undefined }, OPTION, "target is required"),
  planRow("mismatched lengths", { draft: [0.2, 0.3, 0.5] }, OPTION, "target has 2 entries but draft has 3; both must cover the same vocabulary"),
  planRow("target a string", { target: "0.5,0.5" }, OPTION, 'target in plan options must be an array of numbers, got the string "0.5,0.5"'),
  planRow("draft with a string", { draft: [0.5, "0.5"] }, OPTION, 'draft[1] in plan options must be a number, got the string "0.5"'),
  planRow("negative entry", { target: [-0.5, 1.5] }, "invalid_plan", "target: entry 0 is negative (-0.5); probabilities must be >= 0"),
  planRow("NaN entry", { draft: [NaN, 1] }, "invalid_plan", "draft: entry 0 is NaN"),
  planRow("infinite entry", { target: [0, Infinity] }, "invalid_plan", "target: entry 1 is infinite"),
  planRow("empty vectors", { target: [], draft: [] }, "invalid_plan", "target: the distribution is empty"),
  planRow("all zero", { draft: [0, 0] }, "invalid_plan", "draft: every entry is zero"),
  planRow("not normalised", { target: [0.5, 0.6] }, "invalid_plan", ["target: the probabilities sum to", "pass normalize: true"]),
  planRow("not normalised, normalize: true", { target: [1, 3], normalize: true }, null, null, (r) => r.normalized === true || `normalized ${r.normalized}`),
  planRow("-0 entry read as 0", { target: [-0, 1] }, null, null, (r) => Object.is(r.target[0], 0) || `target[0] is ${Object.is(r.target[0], -0) ? "-0" : r.target[0]}`),
  planRow("Float64Array vectors", { target: new Float64Array([0.5, 0.5]), draft: new Float64Array([0.25, 0.75]) }, null, null, (r) => r.acceptance === 0.75 || `acceptance ${r.acceptance}`),
  planRow("drafts for speculative", { drafts: 2 }, OPTION, 'drafts does not apply to method "speculative"; it is only for kseq, multiround, otm and race'),
  planRow("kl for kseq", { method: "kseq", kl: 0.1 }, OPTION, 'kl does not apply to method "kseq"; it is only for mentored'),
  planRow("drafts 0", { method: "kseq", drafts: 0 }, OPTION, "drafts must be a whole number from 1 to 1000000, got 0"),
  planRow("drafts 1000001", { method: "race", drafts: 1_000_001 }, OPTION, "drafts must be a whole number from 1 to 1000000, got 1000001"),
  planRow("drafts 1000000 (highest)", { method: "kseq", drafts: 1_000_000 }, null, null, (r) => r.drafts === 1_000_000 || `drafts ${r.drafts}`),
  planRow("drafts NaN", { method: "kseq", drafts: NaN }, OPTION, "drafts must be a whole number from 1 to 1000000, got NaN"),
  planRow("rho NaN", { method: "kseq", rho: NaN }, OPTION, "rho must be a finite number >= rho* (at least 1), got NaN"),
  planRow("rho below rho*", { method: "kseq", rho: 0.5 }, "invalid_plan", "rho must be at least rho* ="),
  planRow("mentored without kl", { method: "mentored" }, OPTION, 'method "mentored" needs kl'),
  planRow("kl negative", { method: "mentored", kl: -1 }, OPTION, "kl must be a finite number >= 0 (nats), got -1"),
  planRow("kl -0", { method: "mentored", kl: -0 }, null, null),
  planRow("OTM too large", { method: "otm", drafts: 3, target: Array(100).fill(0.01), draft: Array(100).fill(0.01) }, "invalid_plan", ["OTM is too large: vocabulary 100 with k = 3 drafts", "the limit is 262144"]),
  planRow("multi-round too large", { method: "multiround", drafts: 1_000_000, target: Array(200).fill(0.005), draft: Array(200).fill(0.005) }, "invalid_plan", "multi-round is too large: 1000000 drafts over 200 tokens"),
  planRow("vocabulary past the limit", { target: Array(1_048_577).fill(0), draft: Array(1_048_577).fill(0) }, OPTION, "target has 1048577 entries; the limit is 1048576"),
  // The bug lab: the buggy output is the one worked out by hand (crates/specula-cli/tests/plan_bug.rs).
  planRow("bug resample-from-target", { target: [0.1, 0.2, 0.3, 0.4], draft: [0.5, 0.3, 0.15, 0.05], bug: "resample-from-target" }, null, null,
    (r) => (Math.abs(r.tv - 0.15) < 1e-12 && r.bug?.name === "resample-from-target") || `tv ${r.tv}, bug ${JSON.stringify(r.bug)}`),
  planRow("bug unknown", { bug: "typo" }, OPTION, 'unknown bug "typo"; use one of: resample-from-target'),
  planRow("bug cache-reset", { bug: "cache-reset" }, OPTION, "cache-reset acts only over a sequence"),
  planRow("bug on kseq", { method: "kseq", bug: "argmax-draft" }, OPTION, "no token-level plan for kseq"),
  planRow("topK without a bug", { topK: 2 }, OPTION, "topK applies only with bug"),
  planRow("bug with topP 0", { bug: "filtered-draft", topP: 0 }, OPTION, "topP must be in (0, 1]"),
  { name: "in the instance's worker: mismatched lengths", call: "s.plan", options: { ...PLAN_BASE, draft: [1] }, code: OPTION, message: "target has 2 entries but draft has 1" },
];

const weights = (name) => `/weights-bad/${name}/`;
const loadBad = (name, code, message) => ({ name: `weights ${name}`, call: "s.load", options: { backend: "cpu", weightsUrl: weights(name) }, code, message });
const LOAD_ROWS = [
  { name: "options null", call: "Specula.load", options: null, code: OPTION, message: "load options must be an object, got null" },
  { name: "options a string", call: "Specula.load", options: "cpu", code: OPTION, message: 'load options must be an object, got the string "cpu"' },
  { name: "unknown option", call: "Specula.load", options: { backends: "cpu" }, code: OPTION, message: 'unknown option "backends" in load options' },
  { name: "unknown backend", call: "Specula.load", options: { backend: "metal" }, code: OPTION, message: 'unknown backend "metal"; use "auto", "webgpu" or "cpu"' },
  { name: "backend a number", call: "Specula.load", options: { backend: 1 }, code: OPTION, message: "unknown backend the number 1" },
  { name: "unknown draftBackend", call: "Specula.load", options: { draftBackend: "gpu" }, code: OPTION, message: 'unknown draftBackend "gpu"' },
  { name: "onProgress not a function", call: "Specula.load", options: { onProgress: "log" }, code: OPTION, message: 'onProgress must be a function, got the string "log"' },
  { name: "weightsUrl a number", call: "Specula.load", options: { weightsUrl: 42 }, code: OPTION, message: "weightsUrl must be a string or URL, got the number 42" },
  { name: "weightsUrl not a URL", call: "Specula.load", options: { weightsUrl: "http://[" }, code: OPTION, message: 'weightsUrl "http://[" is not a URL' },
  { name: "weightsUrl a data: URL", call: "Specula.load", options: { weightsUrl: "data:,x" }, code: OPTION, message: 'weightsUrl "data:,x" is not a URL' },
  { name: "wasmUrl not a URL", call: "Specula.load", options: { wasmUrl: "http://[" }, code: OPTION, message: 'wasmUrl "http://[" is not a URL' },
  { name: "wasmUrl an object", call: "Specula.load", options: { wasmUrl: {} }, code: OPTION, message: "wasmUrl must be a string or URL, got an object" },
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
  loadBad("target-json-not-json", "bad_weights", ["target model: cannot load weights:", "at line 1 column"]),
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
  { name: "signal not an AbortSignal", call: "generate", options: { signal: "stop" }, code: OPTION, message: 'signal must be an AbortSignal, got the string "stop"' },
  { name: "signal already aborted", call: "custom", code: "aborted", message: "aborted", run: ({ specula }) => specula.complete({ ...BASE, maxTokens: 40, signal: AbortSignal.abort() }) },
];

/** Every row, by table. */
export const HOSTILE = {
  generate: GENERATE_ROWS,
  plan: PLAN_ROWS,
  load: LOAD_ROWS,
  misuse: CUSTOM_ROWS,
};

async function invoke(row, ctx) {
  const options = row.raw || !["generate", "complete", "generate:first"].includes(row.call) ? row.options : { ...BASE, ...row.options };
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

/** Runs one row; returns [passed, line]. */
async function runRow(table, row, ctx) {
  const label = `${table}: ${row.name} [${row.call}]`;
  let result;
  try {
    result = await withTimeout(Promise.resolve().then(() => invoke(row, ctx)));
  } catch (error) {
    const fragments = [row.message ?? []].flat();
    const good = row.code !== null && error instanceof SpeculaError && error.code === row.code &&
      fragments.every((f) => String(error.message).includes(f));
    const want = row.code === null ? "success" : `${row.code} ${fragments.map(show).join(" + ")}`;
    const got = `${error?.name} ${error?.code}: ${String(error?.message).slice(0, 300)}`;
    return [good, good ? `${label} -> ${row.code}: ${String(error.message).slice(0, 160)}` : `${label}: expected ${want}, got ${got}`];
  }
  if (row.code !== null) return [false, `${label}: expected ${row.code}, but it succeeded`];
  const verdict = row.expect ? await withTimeout(Promise.resolve(row.expect(result, ctx))).catch((e) => `expect threw ${e?.code} ${e?.message}`) : true;
  return [verdict === true, verdict === true ? `${label} -> succeeds` : `${label}: succeeded but ${verdict}`];
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
