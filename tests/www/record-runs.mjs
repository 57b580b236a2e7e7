// Records runs of the real models on the CPU backend in headless Chromium, for the scripts
// that write the page's recorded traces (record-trace.mjs, record-stage-traces.mjs): serves
// www/ with the package at /specula/, loads it in a fresh profile and hands `record` a
// function that runs one set of generate() options to its end.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "./deps.mjs";
import { serve } from "./serve.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Calls `record(run)` with `run(options)` resolving to `{ alphabet, rounds, summary }`: the
 * bundled pair's rounds of one generation with `options`, each on a freshly loaded engine.
 */
export async function withRecorder(dist, record) {
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
    const run = (options) =>
      page.evaluate(async (options) => {
        const { Specula } = await import("/specula/index.js");
        const s = await Specula.load({ backend: "cpu" });
        try {
          const rounds = [];
          const it = s.generate(options);
          for (;;) {
            const { value, done } = await it.next();
            if (done) return { alphabet: s.alphabet, rounds, summary: value };
            rounds.push(value);
          }
        } finally {
          s.terminate();
        }
      }, options);
    return await record(run);
  } finally {
    await context.close();
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
