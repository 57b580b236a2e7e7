// Records the run the page plays while the models load (www/recorded-trace.json): the
// page's default settings, run by the real models on the CPU backend in headless Chromium.
// Usage: node tests/www/record-trace.mjs PACKAGE_DIST_DIR [OUT_JSON]
// (PACKAGE_DIST_DIR: the npm package's dist/, e.g. www/pkg/dist after a build.)
import { writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "./deps.mjs";
import { serve } from "./serve.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const dist = process.argv[2];
const out = process.argv[3] ?? join(here, "../../www/recorded-trace.json");
if (!dist) {
  console.error("usage: node tests/www/record-trace.mjs PACKAGE_DIST_DIR [OUT_JSON]");
  process.exit(2);
}
// The page's defaults (www/index.html): keep these in step.
const options = { prompt: "ROMEO:\n", method: "speculative", gamma: 4, temperature: 0.8, seed: 1, maxTokens: 80, recordDistributions: true };

const server = await serve(join(here, "../../www"), { mounts: { "/specula/": dist } });
const profile = mkdtempSync(join(tmpdir(), "specula-record-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${server.url}recorded-trace.json`); // any same-origin document
  const result = await page.evaluate(async (options) => {
    const { Specula } = await import("/specula/index.js");
    const s = await Specula.load({ backend: "cpu" });
    const rounds = [];
    const it = s.generate(options);
    for (;;) {
      const { value, done } = await it.next();
      if (done) return { alphabet: s.alphabet, rounds, summary: value };
      rounds.push(value);
    }
  }, options);
  // Three significant digits (tiny probabilities as 0) are plenty for bars and keep the file small.
  const round = (key, value) =>
    typeof value === "number" && !Number.isInteger(value) ? (Math.abs(value) < 1e-5 ? 0 : Number(value.toPrecision(3))) : value;
  const json = JSON.stringify({ recorded: new Date().toISOString().slice(0, 10), options, ...result }, round);
  writeFileSync(out, json + "\n");
  console.log(`wrote ${out}: ${result.rounds.length} rounds, ${json.length} bytes, text ${JSON.stringify(result.summary.text.slice(0, 40))}…`);
} finally {
  await context.close();
  await server.close();
  rmSync(profile, { recursive: true, force: true });
}
