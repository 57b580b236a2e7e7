// Records the runs tests/www/stage-model.mjs replays (tests/www/traces/*.json): one short
// run of each kind of rule and round the stage draws, by the real models on the CPU
// backend in headless Chromium, in the shape of www/recorded-trace.json without the
// distributions (the stage's model reads none).
// Usage: node tests/www/record-stage-traces.mjs PACKAGE_DIST_DIR [OUT_DIR]
import { writeFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "./deps.mjs";
import { serve } from "./serve.mjs";

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
  mkdirSync(out, { recursive: true });
  for (const [name, options] of Object.entries(RUNS)) {
    const result = await page.evaluate(async (options) => {
      const { Specula } = await import("/specula/index.js");
      const s = await Specula.load({ backend: "cpu" });
      try {
        const rounds = [];
        const it = s.generate(options);
        for (;;) {
          const { value, done } = await it.next();
          if (done) return { alphabet: s.alphabet, rounds: rounds.map(({ trace }) => ({ trace })), text: value.text };
          rounds.push(value);
        }
      } finally {
        s.terminate();
      }
    }, options);
    // Timing differs run to run: left out, like the distributions.
    const json = JSON.stringify({ options, ...result }, (key, value) => (key === "timing" ? undefined : typeof value === "number" && !Number.isInteger(value) ? Number(value.toPrecision(4)) : value));
    writeFileSync(join(out, `${name}.json`), json + "\n");
    console.log(`wrote ${name}.json: ${result.rounds.length} rounds, ${json.length} bytes, text ${JSON.stringify(result.text.slice(0, 30))}…`);
  }
} finally {
  await context.close();
  await server.close();
  rmSync(profile, { recursive: true, force: true });
}
