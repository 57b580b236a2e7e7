// The README's screenshots of the page, taken with the page tests' own headless Chromium:
// the race with this computer's costs, the walltime chart that takes them, a planted bug on
// the stage, and the lab's verdict on a bug. Each is cropped to its panel and kept under
// 200 KB. Re-run after a change to the page:
//   node tests/www/readme-shots.mjs DIST_DIR [OUT_DIR]
// DIST_DIR is the built page (scripts/test-www.sh builds it into $CARGO_TARGET_DIR/www-dist);
// OUT_DIR defaults to docs/screenshots.
import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "./serve.mjs";
import { loaded, makeBrowser, makeOpen, playToEnd } from "./page-helpers.mjs";
// The limit the page tests hold the README's screenshots to (readme-shots-check.mjs).
import { README_SHOT_BYTES as MAX_BYTES } from "./readme-shots-check.mjs";

const [dist, outArg] = process.argv.slice(2);
if (!dist) {
  console.error("usage: node tests/www/readme-shots.mjs DIST_DIR [OUT_DIR]");
  process.exit(2);
}
const out = outArg ?? join(dirname(fileURLToPath(import.meta.url)), "../../docs/screenshots");
mkdirSync(out, { recursive: true });

const server = await serve(dist, {});
const browser = makeBrowser(new URL(server.url).origin);
const open = makeOpen(server.url);
const idle = (page) => page.waitForFunction(() => window.__speculaPage.theoryIdle, null, { timeout: 60_000, polling: 100 });

/** Screenshots `selector` (its top `maxHeight` px at most) into OUT_DIR/name.png, scrolled to just below the sticky transport bar. */
async function shoot(page, selector, name, maxHeight = 900) {
  const box = await page.$eval(selector, (e) => {
    const bar = document.querySelector(".transport").getBoundingClientRect().height;
    window.scrollTo(0, e.getBoundingClientRect().top + window.scrollY - bar - 8);
    const r = e.getBoundingClientRect();
    return { x: r.left, y: r.top, width: r.width, height: Math.min(r.height, innerHeight - r.top) };
  });
  const path = join(out, `${name}.png`);
  await page.screenshot({ path, clip: { ...box, height: Math.min(box.height, maxHeight) } });
  const bytes = statSync(path).size;
  console.log(`${path}: ${(bytes / 1000).toFixed(0)} KB`);
  if (bytes > MAX_BYTES) throw new Error(`${name}.png is ${bytes} bytes, over ${MAX_BYTES}: crop it smaller`);
}

const b = await browser();
try {
  const page = b.context.pages()[0] ?? (await b.context.newPage());
  await page.setViewportSize({ width: 1100, height: 1000 });

  // The race: three repeats, then the same settings played so the theory charts read them.
  await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=120&seed=1&gamma=4");
  await loaded(page);
  await page.fill("#race-repeats", "3");
  await page.click("#race");
  await page.waitForFunction(() => window.__speculaPage.race, null, { timeout: 600_000, polling: 200 });
  await playToEnd(page);
  await idle(page);
  await shoot(page, ".race-panel", "readme-race");
  await shoot(page, "figure:has(#chart-walltime)", "readme-walltime");

  // A planted bug: a round whose replacement the bug drew from the target, on the stage.
  await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=40&seed=2&method=speculative&bug=resample-from-target");
  await loaded(page);
  await playToEnd(page);
  await page.click("#output .otok.resampled");
  await page.waitForSelector("#stage-focus .resview");
  await shoot(page, ".stage-panel", "readme-bug");

  // The lab's verdict: a thousand runs with the shared-uniform bug against its exact law.
  await open(b.context, "backend=cpu&autoplay=0&method=speculative&gamma=3&temperature=1&seed=1&prompt=ROMEO%3A%0AI&bug=shared-uniform");
  await loaded(page);
  await page.fill("#lab-runs", "1000");
  await page.click("#lab-run");
  await page.waitForFunction(() => window.__speculaPage.lab?.finished > 0, null, { timeout: 600_000, polling: 200 });
  await shoot(page, ".lab-panel", "readme-lab", 560);
} finally {
  await b.close();
  await server.close();
}
