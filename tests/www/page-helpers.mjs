// Helpers of the page's end-to-end tests (run.mjs, walk.mjs): launching Chromium, opening
// the page and waiting on it, driving its controls, and reading what it shows or runs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "./deps.mjs";

export const BASE_FLAGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"];
export const close = (a, b, eps = 1e-9) => (a === null && b === null) || (typeof a === "number" && typeof b === "number" && Math.abs(a - b) <= eps);

/** A browser launcher for pages served from `origin`: a fresh profile, requests off the origin and page errors collected in `problems`. */
export function makeBrowser(origin) {
  return async function browser({ gpu = false } = {}) {
    const profile = mkdtempSync(join(tmpdir(), "specula-www-"));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
      headless: true,
      args: gpu ? [...BASE_FLAGS, "--enable-unsafe-webgpu"] : BASE_FLAGS,
      viewport: { width: 1280, height: 900 },
    });
    const problems = [];
    context.on("request", (r) => {
      const u = new URL(r.url());
      if (!["data:", "blob:"].includes(u.protocol) && u.origin !== origin) problems.push(`off-origin request ${r.url()}`);
    });
    context.on("page", (p) => watch(p, problems));
    for (const p of context.pages()) watch(p, problems);
    return {
      context,
      problems,
      async close() {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  };
}

export function watch(page, problems) {
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    const text = m.text();
    if (/Content Security Policy|Refused to/.test(text)) problems.push(`CSP: ${text}`);
    if (m.type() === "error" && !/favicon|404 \(Not Found\)/.test(text)) console.log(`     [page error] ${text}`);
  });
}

/** A page opener for the page served at `url`: opens `?query` and waits until it is ready. */
export function makeOpen(url) {
  return async function open(context, query) {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${url}?${query}`);
    await page.waitForFunction(() => window.__speculaPage?.ready === true, null, { timeout: 30_000 });
    return page;
  };
}

export const loaded = (page, timeout = 120_000) => page.waitForFunction(() => window.__speculaPage?.loaded === true, null, { timeout, polling: 100 });
export const finishedLive = (page, timeout = 120_000) =>
  page.waitForFunction(() => window.__speculaPage.finished && window.__speculaPage.source === "live" && !window.__speculaPage.error, null, { timeout, polling: 100 });
export const hook = (page) => page.evaluate(() => window.__speculaPage);

/** Sets a control's value as a user would, firing input and change. */
export async function setControl(page, id, value) {
  await page.evaluate(
    ({ id, value }) => {
      const el = document.getElementById(id);
      if (el.type === "checkbox") el.checked = value;
      else el.value = String(value);
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    },
    { id, value },
  );
}

/** Presses Play and waits for the live run to finish; returns the hook. */
export async function playToEnd(page) {
  await page.click("#play");
  await finishedLive(page);
  return hook(page);
}

/** What the page shows: output characters with their sources and tokens. */
export const shown = (page) =>
  page.$$eval("#output .otok", (spans) => spans.map((s) => ({ token: Number(s.dataset.token), source: s.dataset.source })));

/** Runs `options` straight through the package in the page (a second worker): the reference. */
export const reference = (page, options) =>
  page.evaluate(async (options) => {
    const { Specula } = await import("./specula/index.js");
    const s = await Specula.load({ backend: "cpu" });
    const rounds = [];
    const it = s.generate(options);
    let summary;
    for (;;) {
      const { value, done } = await it.next();
      if (done) {
        summary = value;
        break;
      }
      rounds.push(value.trace);
    }
    s.terminate();
    return { rounds, summary };
  }, options);
/** The page's number format (www/js/stage-model.js): "–" for none, "∞" for infinities. */
export const pageFmt = (x, d = 2) => (x === null || x === undefined ? "–" : !Number.isFinite(x) ? "∞" : x.toFixed(d));

/** Emitted characters of rounds (the package's round objects or bare traces), in order. */
export const emittedOf = (rounds) =>
  rounds.flatMap((r) => {
    const t = r.trace ?? r;
    return t.emitted.map((token, i) => ({ token, source: t.sources[i] }));
  });

/** The target/draft pairs the page caches for its theory charts: the last 24 recorded steps. */
export const cachedPairsOf = (traces) =>
  traces.flatMap((t) => t.steps.filter((s) => s.targetProbs && s.draftProbs).map((s) => ({ target: s.targetProbs, draft: s.draftProbs }))).slice(-24);

/**
 * plan() of the package (a fresh import in the page), averaged over `pairs` for each k:
 * `schemes` maps a name to its plan options ({ method: "spectr", selection: "race" }).
 */
export const planMeans = (page, pairs, schemes, ks) =>
  page.evaluate(
    async ({ pairs, schemes, ks }) => {
      const { plan } = await import("./specula/index.js");
      const out = {};
      for (const [name, scheme] of Object.entries(schemes)) {
        out[name] = [];
        for (const k of ks) {
          let total = 0;
          for (const { target, draft } of pairs) total += (await plan({ ...scheme, drafts: k, target, draft, normalize: true })).acceptance ?? 0;
          out[name].push(total / pairs.length);
        }
      }
      return out;
    },
    { pairs, schemes, ks },
  );

/** A line chart's curves as drawn: title → [[x px, y px]] (www/js/charts.js `lines`). */
export const drawnCurves = (page, selector) =>
  page.$$eval(`${selector} path.curve`, (paths) =>
    paths.map((p) => ({
      name: p.querySelector("title")?.textContent,
      points: [...p.getAttribute("d").matchAll(/[ML](-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]),
    })),
  );

/**
 * Sets the lab's runs and position, presses Run many and waits until the runs end; what
 * the lab shows: its hook state, the verdict, the stats by name (`stats`) and how many
 * (`statCount`), the chart's bars and its legend (each series' name and swatch colour).
 */
export async function labRunMany(page, runs, position = 1) {
  await page.fill("#lab-runs", String(runs));
  await page.selectOption("#lab-position", String(position));
  const before = await page.evaluate(() => window.__speculaPage.lab.finished);
  await page.click("#lab-run");
  await page.waitForFunction((before) => window.__speculaPage.lab.finished > before, before, { timeout: 300_000, polling: 200 });
  return page.evaluate(() => {
    const stats = [...document.querySelectorAll("#lab-stats dd")];
    return {
      ...window.__speculaPage.lab,
      verdict: document.getElementById("lab-verdict").textContent,
      stats: Object.fromEntries(stats.map((d) => [d.dataset.stat, d.textContent])),
      statCount: stats.length,
      bars: document.querySelectorAll("#lab-chart rect.bar").length,
      legend: [...document.querySelectorAll("#lab-chart .chart-legend li")].map((li) => ({ name: li.textContent.trim(), colour: getComputedStyle(li.querySelector(".swatch")).backgroundColor })),
    };
  });
}
