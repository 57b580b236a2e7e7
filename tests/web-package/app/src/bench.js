// Browser benchmark (not in CI): tokens/s of autoregressive, speculative and SpecTr
// decoding in one page run, per backend. Query: ?bench=1&backends=cpu,webgpu&tokens=64&repeat=3
// (backends "cpu-relaxed" and "cpu-simd128": the CPU-only module's two builds;
// "webgpu-cpu-draft": the target on WebGPU, the draft on the CPU inside wasm;
// "webgpu-unfused": both on WebGPU, the draft without its fused pass; the parallel rows'
// draft runs in a worker of its own, on the CPU, whatever the backend).
// GGUF models: &target=URL&draft=URL (the draft defaults to the target's file, which
// measures what a verifying pass of γ + 1 positions costs against one position) and
// &prompt=TEXT; the methods are then autoregressive, prompt lookup and speculative.
// &methods=NAME,NAME keeps the methods whose names start with one of those (a slow
// adapter: &methods=autoregressive), &costs=N sets the calls per position count and
// &positions=1,5 the position counts (given explicitly, the bundled pair's target is
// measured too); on the CPU each count also gets the target's host forward pass stage
// by stage (the model's stage profile, in calls of their own after the timed ones);
// progress goes to the console as "[bench] …" lines.
import { Specula } from "specula";

const PROMPT = "ROMEO:\nBut soft, what light through yonder window breaks?\n";
const METHODS = [
  { name: "autoregressive", method: "autoregressive" },
  { name: "speculative (gamma 2)", method: "speculative", gamma: 2 },
  { name: "speculative (gamma 3)", method: "speculative", gamma: 3 },
  { name: "speculative (gamma 4)", method: "speculative", gamma: 4 },
  { name: "SpecTr (K 2, L 4)", method: "spectr", drafts: 2, gamma: 4 },
  // Parallel drafting: the draft model in a second worker (docs/parallel-draft.md).
  { name: "speculative (gamma 2, parallel)", method: "speculative", gamma: 2, parallelDraft: true },
  { name: "speculative (gamma 3, parallel)", method: "speculative", gamma: 3, parallelDraft: true },
  { name: "speculative (gamma 4, parallel)", method: "speculative", gamma: 4, parallelDraft: true },
];

// With GGUF models: no SpecTr or parallel rows (a draft as large as the target makes
// them slow without telling more than the speculative rows do).
const GGUF_METHODS = [
  { name: "autoregressive", method: "autoregressive" },
  { name: "lookup (gamma 4)", method: "lookup", gamma: 4 },
  { name: "speculative (gamma 2)", method: "speculative", gamma: 2 },
  { name: "speculative (gamma 4)", method: "speculative", gamma: 4 },
];

/**
 * Tokens per target call of speculative decoding at per-position acceptance `a`, draft
 * length `g` and draft cost `c` (in target calls): sequential, or parallel drafting's
 * schedule (docs/parallel-draft.md, "Expected speedup").
 */
function theory(a, g, c, parallel) {
  if (!parallel) return (1 - a ** (g + 1)) / ((1 - a) * (g * c + 1));
  const s = g * c > 1 ? Math.ceil(1 / c) * c - 1 : 0;
  const full = a ** g;
  return (1 - full) / (1 - a) / (full * Math.max(1, g * c) + (1 - full) * (1 + s + g * c));
}

// The mean, or null when the method has no such figure (autoregressive acceptance).
const mean = (xs) => (xs.some((x) => x === null || x === undefined) ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

/**
 * What one target call costs for 1, 2, 4, 5 and 8 new positions after 100 cached ones
 * (the figure that decides whether verifying γ + 1 drafts can pay): each call rolls the
 * cache back to the 100 and scores the new positions, through the same batched forward
 * decode() uses, with other new tokens each call. Medians of `repeat` calls, in ms. With
 * `profile` (a target on the CPU), `repeat` more calls per count with the host pass's
 * stage profile on give `stages[n]`: `{ callMs, passMs, stagesMs }`, means per call
 * (callMs includes the worker's messages, passMs the forward pass alone).
 */
async function positionCosts(s, repeat, counts, profile) {
  const model = s.models.target;
  // GGUF vocabularies skip their first 300 (special and byte tokens); the bundled
  // alphabet is smaller than that.
  const skip = model.vocabSize > 1000 ? 300 : 0;
  const token = (i) => skip + (((i * 7919) % 20000) % (model.vocabSize - skip));
  const cached = Array.from({ length: 100 }, (_, i) => token(i));
  await model.forward({ committedLen: 0, sequences: [cached], queries: [{ sequence: 0, prefixLen: 100 }] });
  const costs = {};
  const stages = {};
  for (const n of counts) {
    const queries = Array.from({ length: n }, (_, i) => ({ sequence: 0, prefixLen: 101 + i }));
    // New tokens each call: the cache would answer positions it has already scored.
    const call = (r) => model.forward({ committedLen: 100, sequences: [cached.concat(Array.from({ length: n }, (_, i) => token(1000 + 37 * r + i)))], queries });
    const times = [];
    for (let r = 0; r < repeat + 1; r++) {
      const started = performance.now();
      await call(r);
      if (r > 0) times.push(performance.now() - started); // the first warms the shape up
      console.info(`[bench] ${n} new positions: ${(performance.now() - started).toFixed(1)} ms`);
    }
    times.sort((a, b) => a - b);
    costs[n] = times[Math.floor(times.length / 2)];
    if (!profile) continue;
    await model.profileStages(true);
    const started = performance.now();
    for (let r = 0; r < repeat; r++) await call(repeat + 1 + r);
    const callMs = (performance.now() - started) / repeat;
    const t = await model.stageTimes({ reset: true });
    await model.profileStages(false);
    const stagesMs = Object.fromEntries(Object.entries(t.stagesMs).map(([name, ms]) => [name, ms / t.passes]));
    stages[n] = { callMs, passMs: t.totalMs / t.passes, passes: t.passes, stagesMs };
    console.info(`[bench] ${n} new positions by stage: ${JSON.stringify(stages[n])}`);
  }
  return { costs, stages };
}

export async function bench(state, note) {
  const params = new URLSearchParams(location.search);
  const tokens = Number(params.get("tokens") ?? 64);
  const backends = (params.get("backends") ?? "cpu,webgpu").split(",");
  const repeat = Number(params.get("repeat") ?? 3);
  const target = params.get("target");
  const files = target ? { target: { url: target }, draft: { url: params.get("draft") ?? target } } : {};
  const only = params.get("methods")?.split(",");
  const methods = (target ? GGUF_METHODS : METHODS).filter((m) => !only || only.some((o) => m.name.startsWith(o)));
  const prompt = params.get("prompt") ?? (target ? "The capital of France is" : PROMPT);
  const temperature = Number(params.get("temperature") ?? 0.8);
  state.results = [];
  for (const entry of backends) {
    const named = {
      "webgpu-cpu-draft": { backend: "webgpu", draftBackend: "cpu" },
      "webgpu-unfused": { backend: "webgpu", draftBackend: "unfused" },
      // The CPU-only module's two builds, side by side, one worker each (cpu alone: whichever
      // build auto picks, with as many workers as auto starts).
      "cpu-relaxed": { backend: "cpu", cpuSimd: "relaxed-simd", threads: 1 },
      "cpu-simd128": { backend: "cpu", cpuSimd: "simd128", threads: 1 },
      // The target's dense layers on one worker or two (load option threads).
      "cpu-1-worker": { backend: "cpu", threads: 1 },
      "cpu-2-workers": { backend: "cpu", threads: 2 },
    };
    const loadStarted = performance.now();
    const s = await Specula.load({ ...(named[entry] ?? { backend: entry }), ...files });
    console.info(`[bench] ${entry}: loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);
    note(`${entry}: loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s, backend ${JSON.stringify(s.backend)}`);
    if (target || params.has("positions")) {
      const counts = (params.get("positions") ?? "1,2,4,5,8").split(",").map(Number);
      const profile = s.backend.backend === "cpu"; // only the host pass has a stage profile
      const calls = Number(params.get("costs") ?? Math.max(5, repeat * 3));
      const { costs, stages } = await positionCosts(s, calls, counts, profile);
      const row = { entry, backend: s.backend.backend, simd: s.backend.simd, threads: s.backend.threads, adapter: s.backend.adapter, targetMsForNewPositions: costs };
      if (profile) row.targetStagesMsForNewPositions = stages;
      state.results.push(row);
      note(`${entry}: target call for ${counts.join("/")} new positions after 100 cached: ${counts.map((n) => costs[n].toFixed(1)).join(" / ")} ms`);
      for (const n of profile ? counts : []) {
        const { callMs, passMs, stagesMs } = stages[n];
        const parts = Object.entries(stagesMs).map(([name, ms]) => `${name} ${ms.toFixed(2)}`);
        note(`${entry}: target stages for ${n} new positions, ms per call: call ${callMs.toFixed(2)}, pass ${passMs.toFixed(2)} (${parts.join(", ")})`);
      }
    }
    // Warm-up: WebGPU compiles its kernels on first use of each shape.
    for (const { name, ...m } of methods) await s.complete({ ...m, prompt, maxTokens: 8, seed: 1 });
    // Rounds of every method in turn (so drifting machine load hits all alike), one seed
    // per round; the row reports the median tokens/s over the rounds.
    const runs = methods.map(() => []);
    for (let r = 0; r < repeat; r++) {
      for (const [i, { name, ...m }] of methods.entries()) {
        const callsBefore = await s.gpuCalls();
        const started = performance.now();
        const summary = await s.complete({ ...m, prompt, maxTokens: tokens, temperature, seed: 1 + r });
        const seconds = (performance.now() - started) / 1000;
        const callsAfter = await s.gpuCalls();
        const gpu = Object.fromEntries(Object.keys(callsAfter).map((key) => [key, callsAfter[key] - callsBefore[key]]));
        runs[i].push({ summary, seconds, tps: summary.tokens / seconds, gpu });
      }
    }
    for (const [i, { name }] of methods.entries()) {
      const all = runs[i];
      const tps = all.map((x) => x.tps).sort((a, b) => a - b);
      const sum = (f) => all.reduce((a, x) => a + f(x), 0);
      const row = {
        entry,
        backend: s.backend.backend,
        draftBackend: s.backend.draftBackend,
        simd: s.backend.simd,
        threads: s.backend.threads,
        adapter: s.backend.adapter,
        method: name,
        runs: all.length,
        tokensPerRun: tokens,
        medianTokensPerSecond: tps[Math.floor(tps.length / 2)],
        tokensPerSecondRange: [tps[0], tps[tps.length - 1]],
        acceptanceRate: mean(all.map((x) => x.summary.summary.acceptanceRate)),
        meanAcceptanceLength: mean(all.map((x) => x.summary.summary.meanAcceptanceLength)),
        targetCalls: sum((x) => x.summary.metrics.targetCalls),
        draftCalls: sum((x) => x.summary.metrics.draftCalls),
        // The engine's own clock inside wasm (performance.now() around each model call and
        // around its own work), summed over the runs: no worker messages in these.
        targetMsPerCall: sum((x) => x.summary.metrics.timing.targetNanos) / 1e6 / sum((x) => x.summary.metrics.targetCalls),
        draftMsPerCall: sum((x) => x.summary.metrics.draftCalls) ? sum((x) => x.summary.metrics.timing.draftNanos) / 1e6 / sum((x) => x.summary.metrics.draftCalls) : null,
        engineMsPerRound: sum((x) => x.summary.metrics.timing.selectionNanos) / 1e6 / sum((x) => x.summary.metrics.rounds),
        rounds: sum((x) => x.summary.metrics.rounds),
        // The worker's WebGPU calls (s.gpuCalls()), per model call (target and draft) and
        // per round: what decides a call's fixed cost on a real GPU.
        gpuCalls: Object.fromEntries(Object.keys(all[0].gpu).map((key) => [key, sum((x) => x.gpu[key])])),
      };
      const calls = row.targetCalls + row.draftCalls;
      row.gpuCallsPerModelCall = Object.fromEntries(Object.entries(row.gpuCalls).map(([key, n]) => [key, n / calls]));
      row.gpuCallsPerRound = Object.fromEntries(Object.entries(row.gpuCalls).map(([key, n]) => [key, n / row.rounds]));
      state.results.push(row);
      note(JSON.stringify(row));
    }
    // The theoretical factor from the measured α and c beside the measured speedup: c is
    // a draft call over a one-position target call (autoregressive's).
    const rows = state.results.filter((r) => r.entry === entry);
    const base = rows.find((r) => r.method === "autoregressive");
    for (const r of rows) {
      const { gamma, parallelDraft } = methods.find((m) => m.name === r.method) ?? {};
      if (!gamma || !base || r.acceptanceRate === null) continue;
      const a = r.acceptanceRate;
      // Prompt lookup drafts without a model: no draft calls, c = 0.
      r.costRatio = (r.draftMsPerCall ?? 0) / base.targetMsPerCall;
      r.verifyCostRatio = r.targetMsPerCall / base.targetMsPerCall;
      r.theoryFactor = theory(a, gamma, r.costRatio, parallelDraft === true);
      r.measuredSpeedup = r.medianTokensPerSecond / base.medianTokensPerSecond;
      note(`${r.method}: α ${a.toFixed(3)}, c ${r.costRatio.toFixed(3)} (draft ${(r.draftMsPerCall ?? 0).toFixed(2)} / target ${base.targetMsPerCall.toFixed(2)} ms), target γ+1 / 1 position ${r.verifyCostRatio.toFixed(2)}, engine ${r.engineMsPerRound.toFixed(3)} ms/round; theory ${r.theoryFactor.toFixed(2)}×, measured ${r.measuredSpeedup.toFixed(2)}×`);
    }
    s.terminate();
  }
}
