// The package test's page: uses `specula` exactly as an app would (installed from the
// packed tarball, bundled by Vite) and records every check in window.__specula.
import { Specula, SpeculaError, cachedModel, decode, plan, retarget, theory } from "specula";
import { ggufChecks } from "./gguf.js";
import { runHostile } from "./hostile.js";
import { labChecks } from "./lab.js";
import { parallelChecks } from "./parallel.js";
import { simdChecks } from "./simd.js";
import { threadChecks, unisolatedChecks } from "./threads.js";

const PROMPT = "ROMEO:\nBut soft";
const log = [];
const state = { done: false, ok: false, log, failures: [] };
window.__specula = state;

function note(line) {
  log.push(line);
  document.getElementById("log").textContent = log.join("\n");
}

function check(condition, what) {
  if (!condition) {
    state.failures.push(what);
    note(`FAIL ${what}`);
  } else {
    note(`ok   ${what}`);
  }
}

async function text(specula, options) {
  let out = "";
  for await (const round of specula.generate(options)) out += round.text;
  return out;
}

/**
 * The bundled pair behind decode()'s model interface (s.models): decode() with them gives
 * generate()'s text for the same seed and options, for several methods, and so does the
 * same pair through cachedModel(), the adapter pattern of web/examples/transformers-js.js.
 */
async function bundledThroughDecode(specula) {
  const prompt = await specula.tokenize(PROMPT);
  check(prompt instanceof Int32Array && prompt.length === PROMPT.length && (await specula.detokenize(prompt)) === PROMPT, "decode: tokenize/detokenize round-trip");
  for (const options of [
    { method: "speculative", gamma: 4, seed: 7, maxTokens: 30, temperature: 0.8 },
    { method: "spectr", tree: [2, 2], seed: 3, maxTokens: 20, topK: 20 },
    { method: "mentored", kl: 0.2, seed: 5, maxTokens: 20 },
  ]) {
    const generated = await specula.complete({ prompt: PROMPT, ...options });
    const tokens = [];
    for await (const round of decode({ ...specula.models, prompt, ...options })) tokens.push(...round.tokens);
    const decoded = await specula.detokenize(tokens);
    check(decoded === generated.text, `decode: the bundled pair through decode() == generate() for ${options.method} (${JSON.stringify(decoded)} vs ${JSON.stringify(generated.text)})`);
  }
  // The same pair through cachedModel(): its step runs the new tokens as one-row requests.
  const wrap = (model) =>
    cachedModel({
      vocabSize: model.vocabSize,
      step: async (cache, tokens) => {
        const before = cache ?? [];
        const sequence = Int32Array.from([...before, ...tokens]);
        const queries = Array.from(tokens, (_, i) => ({ sequence: 0, prefixLen: before.length + i + 1 }));
        const logits = await model.forward({ committedLen: 0, sequences: [sequence], queries });
        return { logits, cache: Array.from(sequence) };
      },
      truncate: (cache, length) => cache.slice(0, length),
    });
  const options = { method: "speculative", gamma: 3, seed: 11, maxTokens: 20, temperature: 0 };
  const generated = await specula.complete({ prompt: PROMPT, ...options });
  const tokens = [];
  for await (const round of decode({ draft: wrap(specula.models.draft), target: wrap(specula.models.target), prompt, ...options })) tokens.push(...round.tokens);
  check((await specula.detokenize(tokens)) === generated.text, "decode: the bundled pair through cachedModel() == generate() (greedy)");
}

/**
 * One read-back per model call on WebGPU, whatever the position count: each call of the
 * target (1 and 5 new positions, a verification) and of the draft, alone, brings its
 * logits back to the CPU once (counted by s.gpuCalls()).
 */
async function readbacksPerCall(specula) {
  const sequence = Int32Array.from({ length: 30 }, (_, i) => (i * 11 + 5) % specula.models.target.vocabSize);
  for (const [role, positions] of [["target", 1], ["target", 5], ["draft", 1]]) {
    const queries = Array.from({ length: positions }, (_, i) => ({ sequence: 0, prefixLen: 26 + i }));
    const before = await specula.gpuCalls();
    await specula.models[role].forward({ committedLen: 0, sequences: [sequence], queries });
    const after = await specula.gpuCalls();
    const readbacks = after.readbacks - before.readbacks;
    check(readbacks === 1, `webgpu: one read-back for a ${role} call of ${positions} position(s) (${readbacks}; ${after.submits - before.submits} submissions, ${after.dispatches - before.dispatches} dispatches)`);
  }
}

/**
 * The stage profile of a model on the CPU: on, a forward call adds one pass with every
 * stage named and within the pass; off, nothing; misuse rejects with a named option.
 */
async function stageProfile(specula) {
  const model = specula.models.target;
  // Tokens no earlier call scored: a cached prefix is answered without a pass.
  const sequence = Int32Array.from({ length: 37 }, (_, i) => (i * 29 + 17) % model.vocabSize);
  await model.profileStages(true);
  await model.forward({ committedLen: 0, sequences: [sequence], queries: [{ sequence: 0, prefixLen: sequence.length }] });
  const t = await model.stageTimes({ reset: true });
  const names = ["embed", "norms", "qkv", "attention", "attnOut", "mlpIn", "mlpOut", "head"];
  const sum = Object.values(t.stagesMs).reduce((a, b) => a + b, 0);
  check(
    t.enabled &&
      t.passes >= 1 &&
      t.positions >= 1 &&
      JSON.stringify(Object.keys(t.stagesMs).sort()) === JSON.stringify([...names].sort()) &&
      Object.values(t.stagesMs).every((ms) => ms >= 0) &&
      sum > 0 &&
      sum <= t.totalMs + 1e-6,
    `stages: the target's profile times every stage (${JSON.stringify(t)})`,
  );
  await model.profileStages(false);
  const after = await model.stageTimes();
  check(!after.enabled && after.passes === 0, `stages: reset and off (${JSON.stringify(after)})`);
  try {
    await model.profileStages("yes");
    check(false, "stages: a non-boolean is refused");
  } catch (error) {
    check(error instanceof SpeculaError && error.code === "invalid_option" && error.field === "on", `stages: ${error.code} ${error.field}: ${error.message}`);
  }
}

async function abortMidRound(specula) {
  const iterator = specula.generate({ prompt: PROMPT, maxTokens: 40, temperature: 0, gamma: 3 });
  const first = await iterator.next();
  check(!first.done && first.value.text.length > 0, "abort: a first round arrives");
  // Abort while the second round is in flight.
  const pending = iterator.next();
  specula.abort();
  try {
    for (let r = await pending; !r.done; r = await iterator.next()) {
      // Rounds already finished before the abort may still arrive.
    }
    check(false, "abort: the iterator throws");
  } catch (error) {
    check(error instanceof SpeculaError && error.code === "aborted", `abort: ${error.code}: ${error.message}`);
    check(error.summary?.aborted === true && error.summary.text.startsWith(first.value.text), "abort: summary keeps the text");
  }
}

/**
 * A sampled SpecTr run's summary (from `complete`) against the engine's trace of the same
 * run (from `generate`, same seed): the text is the rounds' texts, and every figure is
 * counted here from the traces.
 */
async function spectrAgainstTrace(specula, options, summary) {
  const rounds = [];
  const it = specula.generate(options);
  let again;
  for (;;) {
    const { value, done } = await it.next();
    if (done) {
      again = value;
      break;
    }
    rounds.push(value);
  }
  const traces = rounds.map((r) => r.trace);
  const sum = (f) => traces.reduce((a, t) => a + f(t), 0);
  const emitted = sum((t) => t.emitted.length);
  const accepted = sum((t) => t.counts.accepted);
  const drafted = sum((t) => t.drafts.length);
  const positions = Math.max(...traces.map((t) => t.branching.length));
  const perPos = Array.from({ length: positions }, (_, i) => traces.filter((t) => t.counts.accepted > i).length);
  const m = summary.metrics;
  const figures = {
    text: [summary.text, rounds.map((r) => r.text).join("")],
    tokens: [summary.tokens, emitted],
    rounds: [m.rounds, traces.length],
    targetCalls: [m.targetCalls, sum((t) => t.targetCalls)],
    draftCalls: [m.draftCalls, sum((t) => t.draftCalls)],
    draftedTokens: [m.draftedTokens, drafted],
    acceptedTokens: [m.acceptedTokens, accepted],
    resampledTokens: [m.resampledTokens, sum((t) => t.counts.resampled)],
    bonusTokens: [m.bonusTokens, sum((t) => t.counts.bonus)],
    acceptedPerPosition: [JSON.stringify(m.acceptedPerPosition), JSON.stringify(perPos)],
    acceptanceRate: [summary.summary.acceptanceRate, accepted / drafted],
    blockEfficiency: [summary.summary.blockEfficiency, emitted / traces.length],
  };
  const wrong = Object.entries(figures).filter(([, [a, b]]) => !(a === b || (typeof a === "number" && Math.abs(a - b) < 1e-12)));
  check(
    emitted === 16 && again.text === summary.text && wrong.length === 0,
    `cpu: SpecTr sampling ${JSON.stringify(summary.text)}: text and metrics are the trace's` +
      (wrong.length ? ` — differ: ${JSON.stringify(wrong)}` : ""),
  );
  // Each round's report carries the run's metrics so far: the last one is its summary's.
  let so = 0;
  const cumulative = rounds.every((r, i) => (so += r.tokens.length) === r.metrics.emittedTokens && r.metrics.rounds === i + 1);
  const last = rounds[rounds.length - 1];
  check(
    cumulative && JSON.stringify(last.metrics) === JSON.stringify(again.metrics) && JSON.stringify(last.summary) === JSON.stringify(again.summary),
    "cpu: each round reports the metrics so far, and the last round's are the summary's",
  );
  // Each round drafts 2 sequences of 3, and each depth's rule runs over the drafts still alive.
  const kind = options.selection ?? "kseq";
  check(
    traces.every((t) => t.method === "spectr" && JSON.stringify(t.branching) === JSON.stringify([2, 1, 1].slice(0, t.branching.length)) &&
      t.steps.every((s) => s.plan?.kind === kind && s.plan.k === s.candidates.length)),
    `cpu: SpecTr rounds have the asked shape and a ${kind} plan over the live candidates at every depth`,
  );
}

/** theory() and retarget(), module functions and an instance's, against their closed forms. */
async function mathChecks(specula) {
  const options = { alpha: 0.8, gammas: [1, 4], costRatio: 0.1 };
  const curves = await theory(options);
  const tokens = (g) => (1 - 0.8 ** (g + 1)) / 0.2;
  const near = (a, b) => Math.abs(a - b) < 1e-12;
  check(
    JSON.stringify(curves.gammas) === "[1,4]" && curves.gammas.every((g, i) => near(curves.expectedTokens[i], tokens(g)) && near(curves.walltimeFactor[i], tokens(g) / (g * 0.1 + 1))),
    `theory: expected tokens ${curves.expectedTokens.map((x) => x.toFixed(4))} and walltime factors at γ = 1, 4`,
  );
  check(JSON.stringify(await specula.theory(options)) === JSON.stringify(curves), "theory: s.theory() in the instance's worker == theory()");
  check((await theory({ alpha: 0.5, gammas: [2] })).walltimeFactor === null, "theory: no walltime factor without costRatio");
  const squared = [0.25, 0.09, 0.04].map((x) => x / 0.38);
  const hot = await retarget({ probs: [0.5, 0.3, 0.2], from: 1, temperature: 0.5 });
  check(hot.every((x, i) => Math.abs(x - squared[i]) < 1e-12), `retarget: temperature 1 → 0.5 squares and renormalises (${hot.map((x) => x.toFixed(4))})`);
  const same = await specula.retarget({ probs: [0.2, 0.5, 0.3], from: 1, temperature: 0 });
  check(JSON.stringify(same) === "[0,1,0]", `retarget: temperature 0 is the argmax (${same})`);
  for (const [name, call, options, field] of [
    ["theory", theory, { alpha: 1.5, gammas: [1] }, "alpha"],
    ["theory", theory, { alpha: 0.5, gammas: [1, 0] }, "gammas[1]"],
    ["retarget", retarget, { probs: [0.5, 0.5], from: 0 }, "from"],
    ["retarget", retarget, { probs: [0.5, 0.5], from: 1, topP: 2 }, "topP"],
  ]) {
    const what = `${name}(${JSON.stringify(options)})`;
    try {
      await call(options);
      check(false, `${what} is refused`);
    } catch (error) {
      check(error instanceof SpeculaError && error.code === "invalid_option" && error.field === field, `${what}: ${error.code} on ${error.field}: ${error.message}`);
    }
  }
}

async function main() {
  const report = await plan({ method: "spectr", target: [0.1, 0.2, 0.3, 0.4], draft: [0.5, 0.3, 0.15, 0.05], drafts: 3 });
  check(report.method === "spectr" && report.selection === "kseq" && report.drafts === 3 && report.rhoStar >= 1 && report.klTargetOutput !== undefined, "plan: k-Seq report in camelCase");

  const wantGpu = new URLSearchParams(location.search).get("webgpu") !== "0";
  const cpuProgress = [];
  const cpu = await Specula.load({ backend: "cpu", onProgress: (p) => cpuProgress.push(p) });
  check(cpu.backend.backend === "cpu", `cpu: backend ${JSON.stringify(cpu.backend)}`);
  // backend "cpu" loads the CPU-only module (dist/wasm-cpu/), not the full one.
  check(cpu.backend.module === "cpu", `cpu: the CPU-only module ${JSON.stringify(cpu.backend)}`);
  check(cpuProgress.some((p) => p.file === "target.bpk" && p.loaded === p.total && p.total > 0), "cpu: weight download progress reported");

  const greedy = { prompt: PROMPT, maxTokens: 8, temperature: 0 };
  const cpuAr = await text(cpu, { ...greedy, method: "autoregressive" });
  const cpuSpec = await text(cpu, { ...greedy, method: "speculative", gamma: 3 });
  check(cpuAr.length === 8 && cpuSpec === cpuAr, `cpu: speculative greedy == autoregressive greedy (${JSON.stringify(cpuAr)})`);
  const cpuCalls = await cpu.gpuCalls();
  check(Object.keys(cpuCalls).length === 6 && Object.values(cpuCalls).every((n) => n === 0), `cpu: no WebGPU calls (${JSON.stringify(cpuCalls)})`);
  await simdChecks(cpu, check, greedy);
  await threadChecks(check, { prompt: PROMPT, maxTokens: 32, temperature: 1, seed: 7 });
  const spectr = { prompt: PROMPT, maxTokens: 16, method: "spectr", drafts: 2, gamma: 3, seed: 1 };
  await spectrAgainstTrace(cpu, spectr, await cpu.complete(spectr));
  const race = { ...spectr, selection: "race" };
  await spectrAgainstTrace(cpu, race, await cpu.complete(race));
  await mathChecks(cpu);
  await bundledThroughDecode(cpu);
  await stageProfile(cpu);
  const labSeconds = await labChecks(cpu, check);
  note(`lab: 600 runs in ${labSeconds.toFixed(1)} s`);
  await parallelChecks(cpu, check);
  const own = await cpu.plan({ method: "spectr", target: [0.1, 0.2, 0.3, 0.4], draft: [0.5, 0.3, 0.15, 0.05], drafts: 3 });
  check(JSON.stringify(own) === JSON.stringify(report), "cpu: s.plan() in the instance's worker == plan()");
  const tree = await cpu.complete({ prompt: PROMPT, maxTokens: 12, method: "spectr", tree: [2, 2, 1], seed: 3 });
  check(tree.tokens === 12, `cpu: SpecTr with tree drafts ${JSON.stringify(tree.text)}`);
  // The hostile-input table (./hostile.js): one check per row, then the same greedy text.
  const hostile = await runHostile(cpu, check, { options: { ...greedy, method: "speculative" }, text: cpuAr });
  // Its time is reported, not limited: speed belongs to the benchmarks, and a row that
  // hangs fails its own check at the row's hang guard.
  note(`hostile table: ${hostile.rows} rows in ${hostile.seconds.toFixed(1)} s`);
  await abortMidRound(cpu);
  check((await text(cpu, { ...greedy, method: "speculative" })) === cpuAr, "cpu: usable after bad inputs and abort");

  if (wantGpu) {
    const gpu = await Specula.load({ backend: "webgpu" });
    check(gpu.backend.backend === "webgpu" && gpu.backend.adapter, `webgpu: backend ${JSON.stringify(gpu.backend)}`);
    check(gpu.backend.module === "full", `webgpu: the full module ${JSON.stringify(gpu.backend)}`);
    const gpuSpec = [];
    const callsBefore = await gpu.gpuCalls();
    let gpuSummary;
    const rounds = gpu.generate({ ...greedy, method: "speculative", gamma: 3 });
    for (let step = await rounds.next(); ; step = await rounds.next()) {
      if (step.done) {
        gpuSummary = step.value;
        break;
      }
      gpuSpec.push(step.value);
    }
    const callsAfter = await gpu.gpuCalls();
    const used = Object.fromEntries(Object.keys(callsAfter).map((key) => [key, callsAfter[key] - callsBefore[key]]));
    const modelCalls = gpuSummary.metrics.targetCalls + gpuSummary.metrics.draftCalls;
    check(
      used.dispatches >= modelCalls && used.submits > 0 && used.readbacks >= gpuSummary.metrics.targetCalls,
      `webgpu: gpuCalls() counts the generation's WebGPU calls ${JSON.stringify(used)} over ${modelCalls} model calls in ${gpuSpec.length} rounds`,
    );
    await readbacksPerCall(gpu);
    check(gpuSpec.every((r) => r.backend === "webgpu"), "webgpu: every round ran on WebGPU");
    check(gpuSpec.map((r) => r.text).join("") === cpuAr, "webgpu: speculative greedy == CPU greedy");
    await abortMidRound(gpu);
    check((await text(gpu, { ...greedy, method: "speculative", gamma: 3 })) === cpuAr, "webgpu: usable after abort");
    try {
      await gpu.models.target.profileStages(true);
      check(false, "webgpu: a model on WebGPU has no stage profile");
    } catch (error) {
      check(error instanceof SpeculaError && error.code === "invalid_option" && error.field === "role", `webgpu: stage profile: ${error.code} ${error.field}: ${error.message}`);
    }
    // Parallel drafting: the target on WebGPU here, the draft in its own worker on the CPU.
    const gpuParallel = [];
    for await (const round of gpu.generate({ ...greedy, method: "speculative", gamma: 3, parallelDraft: true })) gpuParallel.push(round);
    check(gpuParallel.every((r) => r.backend === "webgpu"), "webgpu: parallel drafting verifies on WebGPU");
    check(gpuParallel.map((r) => r.text).join("") === cpuAr, "webgpu: parallel drafting greedy == CPU greedy");
    // decode() over the WebGPU pair with both models' requests in flight at once: the
    // worker answers them in turn (a read-back is awaited), none is refused as busy.
    const tokens = [];
    const prompt = await gpu.tokenize(PROMPT);
    for await (const round of decode({ ...gpu.models, ...greedy, prompt, method: "speculative", gamma: 3, parallelDraft: true })) tokens.push(...round.tokens);
    check((await gpu.detokenize(tokens)) === cpuAr, "webgpu: decode() with parallel drafting over the bundled pair == CPU greedy");
    gpu.terminate();

    const hybrid = await Specula.load({ backend: "webgpu", draftBackend: "cpu" });
    check(
      hybrid.backend.backend === "webgpu" && hybrid.backend.draftBackend === "cpu",
      `webgpu + cpu draft: backend ${JSON.stringify(hybrid.backend)}`,
    );
    check(
      (await text(hybrid, { ...greedy, method: "speculative", gamma: 3 })) === cpuAr,
      "webgpu + cpu draft: speculative greedy == CPU greedy",
    );
    hybrid.terminate();

    // "auto" with an adapter: the worker's probe finds it and loads the full module.
    const auto = await Specula.load({ backend: "auto" });
    check(
      auto.backend.backend === "webgpu" && auto.backend.module === "full" && auto.backend.requested === "auto",
      `auto with an adapter: WebGPU in the full module ${JSON.stringify(auto.backend)}`,
    );
    auto.terminate();
  }
  await ggufChecks(check, wantGpu);
  cpu.terminate();
  state.ok = state.failures.length === 0;
}

const query = new URLSearchParams(location.search);
const run = query.has("bench")
  ? import("./bench.js").then(({ bench }) => bench(state, note)).then(() => {
      state.ok = true;
    })
  : query.get("isolation") === "0"
    ? unisolatedChecks(check).then(() => {
        state.ok = state.failures.length === 0;
      })
    : main();
run
  .catch((error) => {
    state.failures.push(`uncaught: ${error?.name} ${error?.code}: ${error?.message}`);
    note(`FAIL uncaught ${error?.stack ?? error}`);
  })
  .finally(() => {
    state.done = true;
  });
