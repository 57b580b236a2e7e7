// Records the runs tests/www/stage-model.mjs replays (tests/www/traces/*.json): one short
// run of each kind of rule and round the stage draws, by the real models on the CPU
// backend in headless Chromium, in the shape of www/recorded-trace.json without the
// distributions (the stage's model reads none).
// Usage: node tests/www/record-stage-traces.mjs PACKAGE_DIST_DIR [OUT_DIR]
import { writeFileSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { withRecorder } from "./record-runs.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const dist = process.argv[2];
const out = process.argv[3] ?? join(here, "traces");
if (!dist) {
  console.error("usage: node tests/www/record-stage-traces.mjs PACKAGE_DIST_DIR [OUT_DIR]");
  process.exit(2);
}
const base = { prompt: "ROMEO:\n", seed: 3, maxTokens: 24 };
/** Each run: a file name and its options (greedy argmax tests, typical thresholds, SpecTr's plans, mentored, a bug, parallel drafts). */
const RUNS = {
  greedy: { ...base, method: "speculative", gamma: 4, temperature: 0 },
  "greedy-spectr-tree": { ...base, method: "spectr", tree: [2, 2, 1], temperature: 0 },
  typical: { ...base, method: "typical", gamma: 4, temperature: 0.8 },
  spectr: { ...base, method: "spectr", gamma: 3, drafts: 3, temperature: 0.8 },
  "spectr-race-tree": { ...base, method: "spectr", selection: "race", tree: [2, 2, 1], temperature: 0.8 },
  mentored: { ...base, method: "mentored", gamma: 4, kl: 0.1, temperature: 0.8 },
  "multiround-bug": { ...base, method: "multiround", gamma: 3, drafts: 2, temperature: 0.8, bug: "resample-from-target" },
  parallel: { ...base, method: "speculative", gamma: 3, temperature: 0.8, parallelDraft: true, maxTokens: 40 },
};

await withRecorder(dist, async (run) => {
  mkdirSync(out, { recursive: true });
  for (const [name, options] of Object.entries(RUNS)) {
    const { alphabet, rounds, summary } = await run(options);
    const result = { alphabet, rounds: rounds.map(({ trace }) => ({ trace })), text: summary.text };
    // Timing differs run to run: left out, like the distributions.
    const json = JSON.stringify({ options, ...result }, (key, value) => (key === "timing" ? undefined : typeof value === "number" && !Number.isInteger(value) ? Number(value.toPrecision(4)) : value));
    writeFileSync(join(out, `${name}.json`), json + "\n");
    console.log(`wrote ${name}.json: ${result.rounds.length} rounds, ${json.length} bytes, text ${JSON.stringify(result.text.slice(0, 30))}…`);
  }
});
