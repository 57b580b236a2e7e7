// Browser benchmark (not in CI): tokens/s of autoregressive, speculative and SpecTr
// decoding in one page run, per backend. Query: ?bench=1&backends=cpu,webgpu&tokens=64
import { Specula } from "specula";

const PROMPT = "ROMEO:\nBut soft, what light through yonder window breaks?\n";
const METHODS = [
  { name: "autoregressive", method: "autoregressive" },
  { name: "speculative (gamma 4)", method: "speculative", gamma: 4 },
  { name: "SpecTr (K 2, L 4)", method: "spectr", drafts: 2, gamma: 4 },
];

export async function bench(state, note) {
  const params = new URLSearchParams(location.search);
  const tokens = Number(params.get("tokens") ?? 64);
  const backends = (params.get("backends") ?? "cpu,webgpu").split(",");
  state.results = [];
  for (const backend of backends) {
    const s = await Specula.load({ backend });
    note(`backend ${JSON.stringify(s.backend)}`);
    // Warm-up: WebGPU compiles its kernels on first use of each shape.
    for (const { name, ...m } of METHODS) await s.complete({ ...m, prompt: PROMPT, maxTokens: 8, seed: 1 });
    for (const { name, ...m } of METHODS) {
      const started = performance.now();
      const summary = await s.complete({ ...m, prompt: PROMPT, maxTokens: tokens, temperature: 0.8, seed: 1 });
      const seconds = (performance.now() - started) / 1000;
      const row = {
        backend: s.backend.backend,
        adapter: s.backend.adapter,
        method: name,
        tokens: summary.tokens,
        seconds,
        tokensPerSecond: summary.tokens / seconds,
        acceptanceRate: summary.summary.acceptanceRate,
        meanAcceptanceLength: summary.summary.meanAcceptanceLength,
        targetCalls: summary.metrics.targetCalls,
        draftCalls: summary.metrics.draftCalls,
      };
      state.results.push(row);
      note(JSON.stringify(row));
    }
    s.terminate();
  }
}
