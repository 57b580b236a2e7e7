// GGUF models through the package: `load({ target: { url }, draft: { url } })` with the
// synthetic Llama pair of the wasm tests (crates/specula-wasm/tests/common/gguf.rs),
// written to public/gguf/ at install time by the specula-gguf example synthetic_pair,
// next to expected.json: the prompt, its tokens and the greedy text recorded natively in
// crates/specula-wasm/tests/fixtures/gguf.json. Greedy decoding must give that text by
// every method, on the CPU and on WebGPU, and each refusal must leave the instance as it was.

import { Specula, SpeculaError, decode } from "specula";

const FILES = { target: { url: "/gguf/target.gguf" }, draft: { url: "/gguf/draft.gguf" } };
// The fixture's case: γ = 3 and K = 2 where the method takes them.
const METHODS = [
  { method: "autoregressive" },
  { method: "speculative", gamma: 3 },
  { method: "spectr", gamma: 3, drafts: 2 },
];

async function failure(promise) {
  try {
    await promise;
    return null;
  } catch (error) {
    return error;
  }
}

/** The text of a whole generation, from its rounds, and the summary. */
async function run(specula, options) {
  const rounds = [];
  const it = specula.generate(options);
  for (;;) {
    const { value, done } = await it.next();
    if (done) return { rounds, summary: value, text: rounds.map((r) => r.text).join("") };
    rounds.push(value);
  }
}

const show = (e) => (e ? `${e.code}${e.field === undefined ? "" : ` [${e.field}]`}: ${String(e.message).slice(0, 160)}` : "no error");

/** Every method's greedy text against the recorded one; `where` names the backend. */
async function greedyChecks(specula, expected, where, check) {
  for (const settings of METHODS) {
    const { rounds, summary, text } = await run(specula, { ...expected.greedy, ...settings });
    check(
      text === expected.text && summary.text === text && summary.tokens === expected.tokens,
      `gguf ${where}: ${settings.method} greedy == the native text (${summary.tokens} tokens, ${rounds.length} rounds)`,
    );
    if (where === "webgpu") check(rounds.every((r) => r.backend === "webgpu"), `gguf webgpu: ${settings.method} ran on WebGPU`);
  }
}

export async function ggufChecks(check, wantGpu) {
  const expected = await (await fetch("/gguf/expected.json")).json();
  expected.greedy = { prompt: expected.prompt, temperature: 0, maxTokens: expected.maxTokens };
  const sizes = {};
  for (const name of ["target.gguf", "draft.gguf"]) sizes[name] = (await (await fetch(`/gguf/${name}`)).arrayBuffer()).byteLength;

  const progress = [];
  const started = performance.now();
  const s = await Specula.load({ backend: "cpu", ...FILES, onProgress: (p) => progress.push(p) });
  const seconds = (performance.now() - started) / 1000;
  check(s.backend.backend === "cpu" && s.backend.module === "cpu", `gguf cpu: loaded in ${seconds.toFixed(1)} s, ${JSON.stringify(s.backend)}`);
  for (const name of Object.keys(sizes)) {
    const reports = progress.filter((p) => p.file === name);
    const last = reports[reports.length - 1];
    check(last?.loaded === sizes[name] && last.total === sizes[name], `gguf cpu: progress of ${name} to its ${sizes[name]} bytes (${reports.length} reports)`);
  }
  check(s.alphabet === "", `gguf cpu: no alphabet (${JSON.stringify(s.alphabet)})`);
  const texts = s.tokenTexts;
  check(Array.isArray(texts) && Object.isFrozen(texts) && texts.length === s.models.target.vocabSize, `gguf cpu: tokenTexts has one text per token (${texts?.length})`);
  const prompt = await s.tokenize(expected.prompt);
  check(JSON.stringify(Array.from(prompt)) === JSON.stringify(expected.promptTokens), `gguf cpu: the prompt's BPE tokens are the native ones (${prompt.length})`);
  check((await s.detokenize(prompt)) === expected.prompt, "gguf cpu: detokenize gives the prompt back");
  check(Array.from(prompt).map((t) => texts[t]).join("") === expected.prompt, "gguf cpu: the prompt's tokens' texts spell the prompt");
  await greedyChecks(s, expected, "cpu", check);
  // The lab over the BPE vocabulary (a wiring check: its statistics are tested in Rust,
  // crates/specula-cli/tests/gguf_compare.rs): position 2 reads rows for top-k 4's tokens.
  // Top-k 4 gives the 100 runs bins that expect 5 or more counts (over all 267 tokens
  // none would, and the lab would rightly report no test).
  for (const position of [1, 2]) {
    const lab = await s.sample({ prompt: expected.prompt, method: "speculative", gamma: 3, seed: 5, topK: 4 }, { runs: 100, position });
    const counted = lab.counts.reduce((a, b) => a + b, 0);
    check(
      lab.expected.length === texts.length && counted + lab.unreached === 100 && lab.kind === "target" && lab.pValue > 1e-4,
      `gguf cpu: sample() at position ${position} counts BPE tokens (${counted} of 100, ${lab.unreached} unreached, p = ${lab.pValue?.toFixed(3)})`,
    );
  }
  const none = await s.sample({ prompt: expected.prompt, seed: 5 }, { runs: 3 });
  check(none.pValue === null && /too few/.test(none.noTest), `gguf cpu: three runs over 267 tokens are no test (${none.noTest})`);
  // The loaded pair behind decode()'s model interface: its vocabulary is the BPE one.
  const vocab = s.models.target.vocabSize;
  const viaDecode = [];
  for await (const round of decode({ ...s.models, ...expected.greedy, prompt, method: "speculative", gamma: 3 })) viaDecode.push(...round.tokens);
  check(
    vocab > 256 && (await s.detokenize(viaDecode)) === expected.text,
    `gguf cpu: decode() over s.models (vocabulary ${vocab}) gives the native text`,
  );
  // Parallel drafting: the draft in a second worker, the target here; the same text.
  const parallel = await run(s, { ...expected.greedy, method: "speculative", gamma: 3, parallelDraft: true });
  check(
    parallel.text === expected.text && parallel.rounds.some((r) => r.trace.earlyDrafts > 0),
    `gguf cpu: parallelDraft greedy == the native text, drafting ahead (${parallel.rounds.length} rounds)`,
  );
  const works = async () => (await s.complete({ ...expected.greedy, method: "speculative", gamma: 3 })).text === expected.text;

  // Each refusal, then the same greedy text from the same instance.
  const missing = `/gguf/missing-${Date.now()}.gguf`;
  const notGguf = "data:application/octet-stream,not%20a%20GGUF%20file";
  for (const [name, call, code, field, fragments] of [
    ["target without draft", () => s.load({ backend: "cpu", target: FILES.target }), "invalid_option", "draft", ["draft is required with target"]],
    ["draft without target", () => s.load({ backend: "cpu", draft: FILES.draft }), "invalid_option", "target", ["target is required with draft"]],
    ["target with weightsUrl", () => s.load({ backend: "cpu", ...FILES, weightsUrl: "/weights-bad/missing-target/" }), "invalid_option", "weightsUrl", ["weightsUrl cannot be given with target and draft"]],
    ["target a string", () => s.load({ backend: "cpu", target: FILES.target.url, draft: FILES.draft }), "invalid_option", "target", ["target must be an object { url }", 'the string "/gguf/target.gguf"']],
    ["an unknown key in draft", () => s.load({ backend: "cpu", ...FILES, draft: { ...FILES.draft, sha256: "00" } }), "invalid_option", "draft.sha256", ['unknown option "sha256" in draft']],
    ["target.url a number", () => s.load({ backend: "cpu", ...FILES, target: { url: 7 } }), "invalid_option", "target.url", ["target.url must be a string or URL, got the number 7"]],
    ["target.url not a URL", () => s.load({ backend: "cpu", ...FILES, target: { url: "http://[" } }), "invalid_option", "target.url", ['target.url "http://[" is not a URL']],
    ["a target URL that is a 404", () => s.load({ backend: "cpu", ...FILES, target: { url: missing } }), "download_failed", undefined, [`cannot download ${missing.slice(6)} from`, "HTTP 404"]],
    ["a draft that is not GGUF", () => s.load({ backend: "cpu", ...FILES, draft: { url: notGguf } }), "bad_weights", undefined, ["draft model:"]],
  ]) {
    const error = await failure(Promise.resolve().then(call));
    const right = error instanceof SpeculaError && error.code === code && error.field === field && fragments.every((f) => error.message.includes(f));
    check(right, `gguf refusal: ${name} -> ${show(error)}`);
    check(await works(), `gguf refusal: after ${name}, the GGUF pair still generates the native text`);
  }

  // Back to the bundled pair on the same instance: characters again, and parallel drafting.
  await s.load({ backend: "cpu" });
  const bundled = await s.complete({ prompt: "ROMEO:", maxTokens: 6, temperature: 0, method: "speculative", gamma: 3, parallelDraft: true });
  check(s.alphabet.length > 0 && bundled.tokens === 6, `gguf: the bundled pair loaded after the GGUF one, parallelDraft works again (${JSON.stringify(bundled.text)})`);
  s.terminate();

  if (wantGpu) {
    const gpu = await Specula.load({ backend: "webgpu", ...FILES });
    check(gpu.backend.backend === "webgpu" && gpu.backend.module === "full", `gguf webgpu: backend ${JSON.stringify(gpu.backend)}`);
    await greedyChecks(gpu, expected, "webgpu", check);
    gpu.terminate();
  }
}
