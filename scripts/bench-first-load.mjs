// First load of the teaching page in headless Chromium (a benchmark, not a test): time
// from navigation to "models ready" and to the first character the models generate
// (Play pressed at ready, instant animation), with a cold HTTP cache (a fresh profile)
// and a warm one (the page loaded again in the same profile; files served with
// `cache-control: max-age=3600`, as a deployment would). Medians over --repeat runs.
// Usage: node scripts/bench-first-load.mjs DIST_DIR [--repeat N] [--backend cpu|auto]
// (DIST_DIR: the Trunk build, e.g. $CARGO_TARGET_DIR/www-dist; set SPECULA_WWW_TEST_DEPS
// as for tests/www/run.mjs).
import { serve } from "../tests/www/serve.mjs";
import { makeBrowser } from "../tests/www/page-helpers.mjs";

const args = process.argv.slice(2);
const dist = args[0];
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
if (!dist) {
  console.error("usage: node scripts/bench-first-load.mjs DIST_DIR [--repeat N] [--backend cpu|auto]");
  process.exit(2);
}
const repeat = Number(opt("--repeat", 5));
const backend = opt("--backend", "cpu");
const server = await serve(dist, { cache: true });
const browser = makeBrowser(new URL(server.url).origin);
const url = `${server.url}?backend=${backend}&autoplay=0&speed=instant&maxTokens=8`;

/** One load of the page: { ready, firstChar } in ms from navigation start. */
async function load(page) {
  await page.goto(url);
  await page.waitForFunction(() => performance.getEntriesByName("specula:ready").length > 0, null, { timeout: 120_000, polling: 20 });
  await page.click("#play");
  await page.waitForFunction(() => performance.getEntriesByName("specula:first-char").length > 0, null, { timeout: 120_000, polling: 20 });
  return page.evaluate(() => ({
    ready: performance.getEntriesByName("specula:ready")[0].startTime,
    firstChar: performance.getEntriesByName("specula:first-char")[0].startTime,
    transferred: performance.getEntriesByType("resource").reduce((a, r) => a + (r.transferSize ?? 0), 0),
  }));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const cold = [];
const warm = [];
try {
  for (let i = 0; i < repeat; i++) {
    const b = await browser();
    try {
      const page = await b.context.newPage();
      cold.push(await load(page));
      warm.push(await load(page));
    } finally {
      await b.close();
    }
  }
} finally {
  await server.close();
}
const show = (name, runs) => {
  const ready = median(runs.map((r) => r.ready));
  const first = median(runs.map((r) => r.firstChar));
  const mb = median(runs.map((r) => r.transferred)) / 1e6;
  console.log(`${name}: ready ${(ready / 1000).toFixed(2)} s, first character ${(first / 1000).toFixed(2)} s (median of ${runs.length}; page's own transfers ${mb.toFixed(1)} MB)`);
  return { ready, first, mb };
};
console.log(`first load, backend=${backend}, ${repeat} runs each:`);
const result = { cold: show("cold cache", cold), warm: show("warm cache", warm) };
console.log(JSON.stringify(result));
