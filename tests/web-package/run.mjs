// Package test driver, run from the fresh Vite app directory after `vite build`:
// serves dist/ on 127.0.0.1, opens it in headless Chromium (playwright-core, the system
// /usr/bin/chromium with WebGPU enabled) and reports the checks the page made.
// Usage: node run.mjs [--no-webgpu] [--no-isolation]   (exit status 1 when any check fails)
// The page is cross-origin isolated (COOP and COEP headers), as load option threads needs;
// --no-isolation serves it without them and runs only the checks of such a page.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { preview } from "vite";

const webgpu = !process.argv.includes("--no-webgpu");
const isolated = !process.argv.includes("--no-isolation");
// --bench[=QUERY]: run the benchmark page instead of the checks and print its rows as JSON.
const benchArg = process.argv.find((a) => a.startsWith("--bench"));
const timeoutMs = Number(process.env.SPECULA_PAGE_TIMEOUT_MS ?? 900_000);

const server = await preview({
  // A plain static server: a missing file is a 404, not the single-page app's index.html.
  appType: "mpa",
  logLevel: "warn",
  preview: {
    host: "127.0.0.1",
    port: 0,
    strictPort: false,
    open: false,
    headers: isolated ? { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" } : {},
  },
});
const address = server.httpServer.address();
const query = benchArg ? `bench=1&${benchArg.slice("--bench=".length)}` : isolated ? `webgpu=${webgpu ? 1 : 0}` : "isolation=0";
const url = `http://127.0.0.1:${address.port}/?${query}`;

const profile = mkdtempSync(join(tmpdir(), "specula-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--enable-unsafe-webgpu",
  ],
});
let status = 1;
try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") console.log(`[page ${m.type()}] ${m.text()}`);
    // The benchmark's progress, as it happens (a slow adapter may not finish).
    else if (m.text().startsWith("[bench] ")) console.log(m.text());
  });
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
  const started = Date.now();
  await page.goto(url);
  await page.waitForFunction(() => window.__specula?.done === true, null, { timeout: timeoutMs, polling: 500 });
  const state = await page.evaluate(() => window.__specula);
  for (const line of state.log) console.log(line);
  console.log(`page checks took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (state.results) console.log(`RESULTS ${JSON.stringify(state.results)}`);
  if (state.ok) {
    console.log(`package test passed: ${state.log.length} checks`);
    status = 0;
  } else {
    console.log(`package test FAILED: ${state.failures.length} failing checks`);
  }
} finally {
  await context.close();
  await new Promise((resolve) => server.httpServer.close(resolve));
  rmSync(profile, { recursive: true, force: true });
}
process.exit(status);
