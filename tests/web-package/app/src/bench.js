// Browser benchmark (not in CI): tokens/s of autoregressive, speculative and SpecTr
// decoding in one page run, per backend. Query: ?bench=1&backends=cpu,webgpu&tokens=64&repeat=3
// (backend "webgpu-cpu-draft": the target on WebGPU, the draft on the CPU inside wasm).
import { Specula } from "specula";

const PROMPT = "ROMEO:\nBut soft, what light through yonder window breaks?\n";
const METHODS = [
  { name: "autoregressive", method: "autoregressive" },
  { name: "speculative (gamma 2)", method: "speculative", gamma: 2 },
  { name: "speculative (gamma 3)", method: "speculative", gamma: 3 },
  { name: "speculative (gamma 4)", method: "speculative", gamma: 4 },
  { name: "SpecTr (K 2, L 4)", method: "spectr", drafts: 2, gamma: 4 },
];

// The mean, or null when the method has no such figure (autoregressive acceptance).
const mean = (xs) => (xs.some((x) => x === null || x === undefined) ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

export async function bench(state, note) {
  const params = new URLSearchParams(location.search);
  const tokens = Number(params.get("tokens") ?? 64);
  const backends = (params.get("backends") ?? "cpu,webgpu").split(",");
  const repeat = Number(params.get("repeat") ?? 3);
  state.results = [];
  for (const entry of backends) {
    const [backend, draftBackend] = entry === "webgpu-cpu-draft" ? ["webgpu", "cpu"] : [entry, "same"];
    const s = await Specula.load({ backend, draftBackend });
    note(`backend ${JSON.stringify(s.backend)}`);
    // Warm-up: WebGPU compiles its kernels on first use of each shape.
    for (const { name, ...m } of METHODS) await s.complete({ ...m, prompt: PROMPT, maxTokens: 8, seed: 1 });
    // Rounds of every method in turn (so drifting machine load hits all alike), one seed
    // per round; the row reports the median tokens/s over the rounds.
    const runs = METHODS.map(() => []);
    for (let r = 0; r < repeat; r++) {
      for (const [i, { name, ...m }] of METHODS.entries()) {
        const started = performance.now();
        const summary = await s.complete({ ...m, prompt: PROMPT, maxTokens: tokens, temperature: 0.8, seed: 1 + r });
        const seconds = (performance.now() - started) / 1000;
        runs[i].push({ summary, seconds, tps: summary.tokens / seconds });
      }
    }
    for (const [i, { name }] of METHODS.entries()) {
      const all = runs[i];
      const tps = all.map((x) => x.tps).sort((a, b) => a - b);
      const sum = (f) => all.reduce((a, x) => a + f(x), 0);
      const row = {
        backend: s.backend.backend,
        draftBackend: s.backend.draftBackend,
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
      };
      state.results.push(row);
      note(JSON.stringify(row));
    }
    s.terminate();
  }
}
