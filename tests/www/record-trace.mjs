// Records the run the page plays while the models load (www/recorded-trace.json): the
// page's default settings, run by the real models on the CPU backend in headless Chromium.
// Usage: node tests/www/record-trace.mjs PACKAGE_DIST_DIR [OUT_JSON]
// (PACKAGE_DIST_DIR: the npm package's dist/, e.g. www/pkg/dist after a build.)
import { writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { withRecorder } from "./record-runs.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const dist = process.argv[2];
const out = process.argv[3] ?? join(here, "../../www/recorded-trace.json");
if (!dist) {
  console.error("usage: node tests/www/record-trace.mjs PACKAGE_DIST_DIR [OUT_JSON]");
  process.exit(2);
}
// The page's defaults (www/index.html): keep these in step.
const options = { prompt: "ROMEO:\n", method: "speculative", gamma: 4, temperature: 0.8, seed: 1, maxTokens: 80, recordDistributions: true };

await withRecorder(dist, async (run) => {
  const result = await run(options);
  // Three significant digits (tiny probabilities as 0) are plenty for bars and keep the file small.
  const round = (key, value) =>
    typeof value === "number" && !Number.isInteger(value) ? (Math.abs(value) < 1e-5 ? 0 : Number(value.toPrecision(3))) : value;
  const json = JSON.stringify({ recorded: new Date().toISOString().slice(0, 10), options, ...result }, round);
  writeFileSync(out, json + "\n");
  console.log(`wrote ${out}: ${result.rounds.length} rounds, ${json.length} bytes, text ${JSON.stringify(result.summary.text.slice(0, 40))}…`);
});
