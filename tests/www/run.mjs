// End-to-end tests of the teaching page in headless Chromium (playwright-core with the
// system /usr/bin/chromium). Serves the built page (Trunk's dist/www) on 127.0.0.1 and
// checks what a student sees against the engine's own trace and summary.
// Usage: node tests/www/run.mjs DIST_DIR [--artifacts DIR] [--no-webgpu] [--only NAME,...]
// Exit status 1 when any check fails. Screenshots of each method go to --artifacts.
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "./serve.mjs";
import {
  cachedPairsOf,
  close,
  drawnCurves,
  emittedOf,
  finishedLive,
  hook,
  loaded,
  makeBrowser,
  makeOpen,
  pageFmt,
  planMeans,
  playToEnd,
  reference,
  setControl,
  shown,
} from "./page-helpers.mjs";
import { addWalkTests } from "./walk.mjs";
import { addHostileTests } from "./hostile.mjs";
import { addOptionsTableTests } from "./options-table.mjs";
import { addLabTests } from "./lab.mjs";
import { addLessonTests } from "./lesson.mjs";
import { addParallelTests } from "./parallel.mjs";
import { addGgufTests, ggufMounts } from "./gguf.mjs";
import { addSmollm2PairTests, pairMounts } from "./smollm2-pair.mjs";
import { addBugTests } from "./bugs.mjs";
import { addLabVerdictTests } from "./lab-verdicts.mjs";
import { addLabTableTests } from "./lab-table.mjs";
import { addLongRunTests } from "./long-run.mjs";
import { addStagePanelTests } from "./stage-panels.mjs";
import { addRaceCostTests } from "./race-costs.mjs";
import { addReadableTests } from "./readable.mjs";
import { addRaceNgramTests } from "./race-ngram.mjs";
import { addDistWaitTests } from "./dist-wait.mjs";
import { addReadmeShotTests } from "./readme-shots-check.mjs";
import { addWorkerTests } from "./workers.mjs";

const args = process.argv.slice(2);
const dist = args[0];
if (!dist) {
  console.error("usage: node tests/www/run.mjs DIST_DIR [--artifacts DIR] [--no-webgpu] [--only NAME,...]");
  process.exit(2);
}
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const artifacts = opt("--artifacts") ?? join(tmpdir(), "specula-www-artifacts");
const only = opt("--only")?.split(",");
const webgpu = !args.includes("--no-webgpu");
mkdirSync(artifacts, { recursive: true });

const failures = [];
let checks = 0;
function check(ok, what, detail = "") {
  checks += 1;
  if (ok) console.log(`ok   ${what}`);
  else {
    failures.push(what);
    console.log(`FAIL ${what}${detail ? `\n     ${detail}` : ""}`);
  }
}

// GGUF files for the "Your models" tests are served beside the page (gguf.mjs), the
// SmolLM2 pair under /models/ as scripts/demo.sh serves it (smollm2-pair.mjs).
const server = await serve(dist, { mounts: { ...ggufMounts(), ...pairMounts() } });
const origin = new URL(server.url).origin;
console.log(`serving ${dist} on ${server.url}`);

const browser = makeBrowser(origin);
const open = makeOpen(server.url);

/** Page metrics (what the last round shown reported: the run's metrics so far) == the engine's summary. */
function sameMetrics(h, label) {
  const e = h.summary;
  const p = h.pageMetrics;
  check(
    e && p &&
      p.emittedTokens === e.metrics.emittedTokens &&
      p.targetCalls === e.metrics.targetCalls &&
      p.draftedTokens === e.metrics.draftedTokens &&
      p.acceptedTokens === e.metrics.acceptedTokens &&
      close(p.summary.acceptanceRate, e.summary.acceptanceRate) &&
      close(p.summary.meanAcceptanceLength, e.summary.meanAcceptanceLength) &&
      JSON.stringify(p.acceptedLengthHistogram) === JSON.stringify(e.metrics.acceptedLengthHistogram) &&
      p.summary.perPositionAcceptance.every((x, i) => close(x, e.summary.perPositionAcceptance[i])),
    `${label}: the page's metrics (the last round's report) equal the engine's summary`,
    JSON.stringify({ page: p?.summary, engine: e?.summary }),
  );
}

const tests = {};

// First paint: the recorded run plays while the models load; nothing leaves the origin.
tests.firstPaint = async () => {
  const b = await browser();
  try {
    const page = await open(b.context, "backend=cpu&speed=8");
    const first = await hook(page);
    check(first.source === "recorded", "first paint plays the recorded run while the models load");
    await page.waitForFunction(() => document.querySelectorAll("#output .otok").length > 0, null, { timeout: 15_000 });
    // What appears is the recorded engine run (www/recorded-trace.json, as served), in order:
    // each character with its token and source.
    const recorded = await (await fetch(`${server.url}recorded-trace.json`)).json();
    const expected = emittedOf(recorded.rounds);
    const spans = await page.$$eval("#output .otok", (ss) => ss.map((s) => ({ token: Number(s.dataset.token), source: s.dataset.source, text: s.textContent })));
    const showsChar = (sp, e) => sp.text.replace("↵\n", "\n") === recorded.alphabet[e.token];
    check(spans.length > 0 && spans.length <= expected.length && spans.every((sp, i) => sp.token === expected[i].token && sp.source === expected[i].source && showsChar(sp, expected[i])),
      `the first characters shown are the recorded run's (${spans.length} of ${expected.length}: tokens, sources and text)`,
      JSON.stringify({ shown: spans.slice(0, 12), recorded: expected.slice(0, 12) }));
    await loaded(page);
    const h = await hook(page);
    check(h.backend?.backend === "cpu", "backend=cpu loads the CPU backend", JSON.stringify(h.backend));
    check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
  } finally {
    await b.close();
  }
};

// A speculative run, live on the CPU, against the engine.
tests.speculative = async () => {
  const b = await browser();
  try {
    // The page's timers run on Playwright's clock (natural time until paused), so that the
    // pause check below advances the page's time deterministically instead of waiting.
    await b.context.clock.install();
    const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&method=speculative&gamma=4&maxTokens=48&seed=7&temperature=0.8");
    await loaded(page);
    // One step: one round on the stage, cells agree with the trace.
    await page.click("#step");
    await page.waitForFunction(() => window.__speculaPage.shownRounds.length === 1, null, { timeout: 60_000 });
    const one = await hook(page);
    const t0 = one.shownRounds[0];
    const cells = await page.$$eval("#stage .cell[data-node]", (cs) => cs.map((c) => ({ node: Number(c.dataset.node), state: c.dataset.state ?? "" })));
    const results = await page.$$eval("#stage .cell.result[data-source]", (cs) => cs.map((c) => ({ source: c.dataset.source, token: Number(c.dataset.token) })));
    check(cells.length === t0.drafts.length, "step: one cell per draft token on the stage", `${cells.length} vs ${t0.drafts.length}`);
    const expectState = (id) => {
      for (const step of t0.steps) {
        const i = step.candidates.indexOf(id);
        if (i < 0) continue;
        const test = step.outcome.tests.find((t) => t.draftIndex === i);
        if (test) return test.accepted ? "accepted" : "rejected";
        return step.survivors.includes(id) ? "accepted" : "discarded";
      }
      return "discarded";
    };
    check(cells.every((c) => c.state === expectState(c.node)), "step: accept / reject / discard marks match the trace's tests",
      JSON.stringify(cells) + " " + JSON.stringify(t0.steps.map((s) => s.outcome.tests)));
    check(JSON.stringify(results.map((r) => r.source)) === JSON.stringify(t0.sources) && results.every((r, i) => r.token === t0.emitted[i]),
      "step: the emitted row shows the trace's tokens and sources (accepted / resampled / bonus)", JSON.stringify({ results, sources: t0.sources }));
    // The residual a replacement was drawn from is drawn on the stage, the drawn token marked.
    const drawnBars = await page.$$eval(".resbars .resbar.drawn", (bs) => bs.map((b) => Number(b.dataset.token)));
    const resampledTokens = t0.emitted.filter((_, i) => t0.sources[i] === "resampled");
    check(JSON.stringify(drawnBars) === JSON.stringify(resampledTokens),
      `step: the residual is drawn on the stage for each replacement (${resampledTokens.length} in this round)`, JSON.stringify({ drawnBars, resampledTokens }));
    // Its numbers are the engine's: the step's residualProbs (recorded with the distributions).
    const residualSteps = t0.steps.filter((st) => st.outcome.residual);
    const barValues = await page.$$eval(".resview", (vs) => vs.map((v) => [...v.querySelectorAll(".resbar")].map((b) => [Number(b.dataset.token), b.querySelector(".val").textContent])));
    check(barValues.length === residualSteps.length && residualSteps.every((st, i) => st.residualProbs && barValues[i].every(([t, v]) => v === st.residualProbs[t].toFixed(2))),
      "step: the residual's bars show the step's residualProbs from the engine", JSON.stringify({ barValues, residual: residualSteps.map((st) => st.residualProbs?.slice(0, 8)) }));
    const coins = await page.$$eval("#stage .coin", (cs) => cs.map((c) => c.textContent).filter(Boolean));
    check(coins.length === t0.steps.reduce((n, s) => n + s.outcome.tests.length, 0), "step: one coin flip (u vs min(1, target/draft)) per test");
    // Pause holds the animation; play resumes it.
    await setControl(page, "speed", 4); // 4×
    await page.click("#play");
    await page.waitForFunction(() => window.__speculaPage.shownRounds.length >= 2, null, { timeout: 60_000 });
    await page.click("#pause");
    const paused = (await hook(page)).shownRounds.length;
    // Every round of the run available to the animation, then ten seconds of page time
    // (every timer due fires): a paused page shows no further round.
    await page.waitForFunction(() => window.__speculaPage.generating === false, null, { timeout: 60_000, polling: 100 });
    await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1000);
    await page.clock.runFor(10_000);
    const still = (await hook(page)).shownRounds.length;
    const runState = await page.textContent("#run-state");
    check(still === paused && runState === "paused", `pause holds the animation (${paused} → ${still} rounds over 10 s of page time; state "${runState}")`);
    await page.clock.resume();
    await setControl(page, "speed", 6); // instant
    // Play to the end.
    const h = await playToEnd(page);
    const out = await shown(page);
    const emitted = h.shownRounds.flatMap((t) => t.emitted);
    const sources = h.shownRounds.flatMap((t) => t.sources);
    check(out.length === emitted.length && out.every((o, i) => o.token === emitted[i] && o.source === sources[i]),
      "output characters and their sources are the trace's");
    const text = await page.$$eval("#output .otok", (s) => s.map((x) => x.textContent.replace("↵\n", "\n")).join(""));
    check(text === h.summary.text, "the output text is the engine's text", JSON.stringify({ text, engine: h.summary.text }));
    sameMetrics(h, "speculative");
    const dd = Object.fromEntries(await page.$$eval("#metrics dd", (ds) => ds.map((d) => [d.dataset.metric, d.textContent])));
    check(dd["acceptance-rate"] === h.summary.summary.acceptanceRate.toFixed(3) && dd["target-calls"] === String(h.summary.metrics.targetCalls),
      "the metrics panel shows the engine's acceptance rate and target calls", JSON.stringify(dd));
    const ref = await reference(page, h.options);
    check(ref.summary.text === h.summary.text && JSON.stringify(ref.rounds.map((r) => r.sources)) === JSON.stringify(h.shownRounds.map((r) => r.sources)),
      "an independent run of the package with the same options gives the same rounds");
    // Clicking a resampled character shows target, draft and residual bars.
    const resampled = await page.$("#output .otok.resampled");
    if (resampled) {
      await resampled.click();
      const series = await page.$$eval("#dist svg rect.bar", (rs) => [...new Set(rs.map((r) => r.getAttribute("class")))]);
      check(["s-target", "s-draft", "s-residual"].every((c) => series.some((s) => s.includes(c))), "a resampled character shows target, draft and residual bars", JSON.stringify(series));
    }
    // Keyboard: arrows move the selection in the output.
    await page.focus("#output .otok[tabindex='0']");
    const before = await page.$eval("#output .otok.selected", (s) => s.dataset.i);
    await page.keyboard.press("ArrowLeft");
    const after = await page.$eval("#output .otok.selected", (s) => s.dataset.i);
    check(Number(after) === Math.max(0, Number(before) - 1), "keyboard: ArrowLeft selects the previous character");
    // Theory curves carry the measured point: the engine's block efficiency (emitted tokens
    // per round, counted here from the trace) at the run's γ.
    await page.waitForFunction(() => window.__speculaPage.theoryIdle === true, null, { timeout: 60_000, polling: 100 });
    const points = await page.$$eval("#chart-tokens circle.point.m-measured", (cs) => cs.map((c) => c.querySelector("title")?.textContent));
    const perRound = emitted.length / h.shownRounds.length;
    check(points.length === 1 && points[0] === `measured: ${pageFmt(perRound, 3)} at ${pageFmt(h.options.gamma, 3)}` && close(perRound, h.summary.summary.blockEfficiency),
      `theory chart: the measured point is the engine's block efficiency ${pageFmt(perRound, 3)} at γ = ${h.options.gamma}`, JSON.stringify({ points, perRound, engine: h.summary.summary.blockEfficiency }));
    // Reset replays exactly with the same seed (driven from the keyboard).
    await page.focus("#reset");
    await page.keyboard.press("Enter");
    await page.waitForFunction((id) => window.__speculaPage.runId > id, h.runId);
    await page.focus("#play");
    await page.keyboard.press("Enter");
    await finishedLive(page);
    const again = await hook(page);
    check(again.summary.text === h.summary.text && again.runId > h.runId, "reset + play (keyboard only) replays the same text with the same seed");
    await page.screenshot({ path: join(artifacts, "speculative-laptop.png"), fullPage: true });
    check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
  } finally {
    await b.close();
  }
};

// Moving γ, k and D changes what runs; D and k previews come from cached distributions.
tests.sliders = async () => {
  const b = await browser();
  try {
    const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=24&seed=3");
    await loaded(page);
    await setControl(page, "method", "speculative");
    await setControl(page, "gamma", 7);
    let h = await playToEnd(page);
    check(h.options.gamma === 7 && h.shownRounds[0].branching.length === 7, "γ = 7 drafts 7 tokens per round", JSON.stringify(h.shownRounds[0].branching));
    await setControl(page, "method", "spectr");
    await setControl(page, "gamma", 3);
    await setControl(page, "drafts", 4);
    h = await playToEnd(page);
    check(h.options.method === "spectr" && h.options.selection === "kseq" && h.options.drafts === 4 && h.shownRounds[0].drafts.length === 12 && h.shownRounds[0].steps[0].plan?.kind === "kseq",
      "k = 4 SpecTr drafts: 4 rows of 3, k-Seq with ρ*", JSON.stringify({ o: h.options, n: h.shownRounds[0].drafts.length }));
    sameMetrics(h, "spectr");
    await page.waitForFunction(() => document.querySelectorAll("#chart-k path.curve").length >= 3 && window.__speculaPage.theoryIdle === true, null, { timeout: 60_000, polling: 100 });
    // The three curves as drawn (y from the chart's fixed 0–1 axis: 130 px high, bottom at
    // 148 px) against plan() over the trace's last 24 recorded positions, and at k = 1 against
    // Σ min(target, draft) summed here from the trace.
    const curves = await drawnCurves(page, "#chart-k");
    const ks = [1, 2, 3, 4, 5, 6, 7, 8];
    const pairs = cachedPairsOf(h.shownRounds);
    const means = await planMeans(page, pairs, {
      kseq: { method: "spectr", selection: "kseq" },
      multiround: { method: "multiround" },
      race: { method: "spectr", selection: "race" },
    }, ks);
    const overlap1 = pairs.reduce((a, { target, draft }) => a + target.reduce((x, t, i) => x + Math.min(t, draft[i]), 0), 0) / pairs.length;
    const drawnValues = (c) => c.points.map(([, y]) => (148 - y) / 130);
    const names = ["k-Seq (SpecTr)", "multi-round", "ratio race (optimal selection)"];
    const want = [means.kseq, means.multiround, means.race];
    check(curves.length === 3 && curves.every((c, i) => c.name === names[i] && c.points.length === ks.length && drawnValues(c).every((v, j) => Math.abs(v - want[i][j]) < 1e-3)) &&
        want.every((m) => Math.abs(m[0] - overlap1) < 1e-9),
      `acceptance vs k: the k-Seq, multi-round and optimal-selection curves are plan() over the ${pairs.length} cached positions (all ${overlap1.toFixed(3)} at k = 1)`,
      JSON.stringify({ drawn: curves.map((c) => [c.name, drawnValues(c).map((v) => v.toFixed(3))]), want: want.map((m) => m.map((v) => v.toFixed(3))), overlap1 }));
    await setControl(page, "selection", "race");
    h = await playToEnd(page);
    const race = h.shownRounds[0].steps[0].plan;
    check(h.options.method === "spectr" && h.options.selection === "race" && h.options.drafts === 4 && h.shownRounds[0].drafts.length === 12 &&
        race?.kind === "race" && race.acceptance <= race.optimum + 1e-9 && race.selection.length > 0,
      "SpecTr with the ratio race: 4 rows of 3, the fitted race's acceptance within the optimum", JSON.stringify({ o: h.options, plan: race && { kind: race.kind, acc: race.acceptance, opt: race.optimum } }));
    sameMetrics(h, "spectr race");
    await setControl(page, "method", "mentored");
    await setControl(page, "gamma", 4);
    await setControl(page, "kl", 45); // slider position → D
    h = await playToEnd(page);
    const d1 = h.options.kl;
    // α, β and the budget of every step of the last round, against plan() on the step's
    // recorded distributions, and as the round's notes on the stage show them.
    const last = h.shownRounds[h.shownRounds.length - 1];
    const planned = await page.evaluate(async ({ steps, kl }) => {
      const { plan } = await import("./specula/index.js");
      return Promise.all(steps.map((s) => plan({ method: "mentored", kl, target: s.targetProbs, draft: s.draftProbs, normalize: true })));
    }, { steps: last.steps, kl: d1 });
    const notes = await page.$$eval("#round-notes li.mentored", (ls) => ls.map((l) => l.textContent));
    const noteOf = (s) => `pos ${s.depth}: mentored λ = ${pageFmt(s.plan.alpha, 3)}, β = ${pageFmt(s.plan.beta, 3)}, KL = ${pageFmt(s.plan.kl, 3)} ≤ D = ${pageFmt(d1, 3)}; acceptance ${pageFmt(s.plan.acceptance, 3)}`;
    const finite = (x) => (x === null || x === undefined ? Infinity : x); // JSON writes ∞ as null
    const sameParam = (a, b) => finite(a) === finite(b) || Math.abs(finite(a) - finite(b)) <= 1e-9 * Math.max(1, Math.abs(finite(b)));
    check(d1 > 0 && last.steps.length > 0 && last.steps.every((s, i) => s.plan?.kind === "mentored" && sameParam(s.plan.alpha, planned[i].alpha) && sameParam(s.plan.beta, planned[i].beta) && close(s.plan.klBudget, d1, 1e-12)) &&
        notes.length === last.steps.length && notes.every((n, i) => n.startsWith(noteOf(last.steps[i]))),
      `D = ${d1}: each mentored step's α, β and budget are plan()'s for its distributions, and the stage's notes show them`,
      JSON.stringify({ notes, planned: planned.map((p) => [p.alpha, p.beta, p.klTargetOutput]), trace: last.steps.map((s) => s.plan) }));
    sameMetrics(h, "mentored");
    await page.waitForFunction(() => document.querySelectorAll("#chart-kl path.curve").length >= 1, null, { timeout: 60_000 });
    // Dragging D (input events only) recomputes from the cache without running the models.
    const runs = h.modelRuns;
    const calls = h.planCalls;
    await page.evaluate(() => {
      const el = document.getElementById("kl");
      el.value = "20";
      el.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await page.waitForFunction((calls) => window.__speculaPage.planCalls > calls, calls, { timeout: 30_000 });
    const moved = await hook(page);
    check(moved.modelRuns === runs, "moving D recomputes acceptance from cached distributions (plan()) without running the models");
    await page.evaluate(() => document.getElementById("kl").dispatchEvent(new Event("change", { bubbles: true })));
    h = await playToEnd(page);
    check(h.options.kl < d1 && h.modelRuns > runs, `releasing D runs the models again with the new budget (${h.options.kl} < ${d1})`);
    // Dragging the temperature re-targets the cached distributions (no model run).
    await setControl(page, "method", "speculative");
    await setControl(page, "gamma", 4);
    h = await playToEnd(page);
    const before = h.modelRuns;
    await page.evaluate(() => {
      const el = document.getElementById("temperature");
      el.value = "0.4";
      el.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await page.waitForFunction(() => window.__speculaPage.preview?.settings.temperature === 0.4, null, { timeout: 10_000 });
    const preview = await hook(page);
    check(preview.modelRuns === before && preview.preview.alpha > 0 && preview.preview.alpha <= 1 && (await page.$$("#chart-tokens path.c-preview")).length === 1,
      `moving the temperature previews acceptance from cached distributions without a model run (Σmin at T=0.4: ${preview.preview.alpha.toFixed(3)})`);
    await page.evaluate(() => document.getElementById("temperature").dispatchEvent(new Event("change", { bubbles: true })));
    h = await playToEnd(page);
    check(h.options.temperature === 0.4 && h.modelRuns > before, "releasing the temperature slider runs the models at the new temperature");
    // Tree drafts and dynamic γ.
    await setControl(page, "method", "spectr");
    await setControl(page, "selection", "kseq");
    await setControl(page, "shape", "tree");
    await setControl(page, "tree", "2,2,1");
    h = await playToEnd(page);
    check(JSON.stringify(h.options.tree) === "[2,2,1]" && h.options.gamma === undefined && h.options.drafts === undefined && JSON.stringify(h.shownRounds[0].branching) === "[2,2,1]",
      "SpecTr tree 2,2,1: the trace has that branching", JSON.stringify({ o: h.options, branching: h.shownRounds[0].branching }));
    sameMetrics(h, "spectr tree");
    await setControl(page, "method", "speculative");
    await setControl(page, "dynamicGamma", true);
    h = await playToEnd(page);
    check(h.options.dynamicGamma === true && h.shownRounds.some((t) => t.nextGamma !== h.shownRounds[0].branching.length), "dynamic γ changes γ between rounds");
    check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
  } finally {
    await b.close();
  }
};

// Bad input shows an error in the page, and the page keeps working.
tests.badInput = async () => {
  const b = await browser();
  try {
    const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=12");
    await loaded(page);
    await page.fill("#prompt", "naïve café ©");
    await page.click("#play");
    await page.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 10_000 });
    const message = await page.textContent("#error");
    check(message.includes("'ï'") && message.includes("'©'"), "a character outside the alphabet shows an error naming it", message);
    await page.fill("#prompt", "ROMEO:\n");
    await setControl(page, "tree", "2,a");
    await setControl(page, "method", "spectr");
    await setControl(page, "shape", "tree");
    await page.click("#play");
    await page.waitForFunction(() => /tree/.test(document.getElementById("error").textContent), null, { timeout: 10_000 }).catch(() => {});
    const treeMessage = await page.textContent("#error");
    check(/tree branching/.test(treeMessage), "a malformed tree shows an error", treeMessage);
    await page.fill("#prompt", "naïve");
    await setControl(page, "method", "speculative");
    // Typing without leaving the field, then Play: the page must run what is on screen.
    await page.fill("#prompt", "ROMEO:\n");
    await page.focus("#prompt");
    await page.keyboard.press("Tab");
    const h = await playToEnd(page);
    check(h.summary.text.length === 12 && (await page.$eval("#error", (e) => e.hidden)), "after fixing the prompt the page runs again and the error is gone");
  } finally {
    await b.close();
  }
};

// The CPU fallback when WebGPU is absent (no --enable-unsafe-webgpu); race mode.
tests.cpuFallback = async () => {
  const b = await browser({ gpu: false });
  try {
    const page = await open(b.context, "backend=auto&speed=instant&autoplay=0&maxTokens=32");
    await loaded(page);
    const h = await hook(page);
    const badge = await page.textContent("#backend");
    const notice = await page.textContent("#notice");
    check(h.backend.backend === "cpu" && /CPU/.test(badge), "without WebGPU, auto falls back to the CPU and says so", badge);
    check(/CPU/.test(notice) && !(await page.$eval("#notice", (n) => n.hidden)), "a notice explains why WebGPU is not used", notice);
    const done = await playToEnd(page);
    sameMetrics(done, "CPU fallback");
    await page.click("#race");
    await page.waitForFunction(() => window.__speculaPage.race, null, { timeout: 120_000 });
    const race = (await hook(page)).race;
    // The lanes against the engine: the speculative lane is the live run just played (same
    // settings), the autoregressive one an independent run of the package with them.
    const { gamma: _gamma, dynamicGamma: _dynamic, ...shared } = done.options;
    const arRef = await reference(page, { ...shared, method: "autoregressive" });
    check(race.ar.tokens === 32 && race.spec.tokens === 32 && race.ar.text === arRef.summary.text && race.spec.text === done.summary.text,
      "race: both lanes write the engine's text (autoregressive and speculative runs with the same settings)", JSON.stringify({ race: [race.ar.text, race.spec.text], engine: [arRef.summary.text, done.summary.text] }));
    check(race.ar.targetCalls === arRef.summary.metrics.targetCalls && race.ar.targetCalls === 32 && race.spec.targetCalls === done.summary.metrics.targetCalls && race.spec.targetCalls < race.ar.targetCalls,
      `race: target calls are the engine's (speculative ${race.spec.targetCalls}, autoregressive ${race.ar.targetCalls})`);
    // The clocks show the lanes' own recorded figures (how long they took is not checked).
    const laneSummary = (lane) => `${lane.seconds.toFixed(2)} s · ${(lane.tokens / lane.seconds).toFixed(1)} chars/s · ${lane.targetCalls} target calls`;
    const speedup = race.ar.seconds / race.spec.seconds;
    const specSummary = `${laneSummary(race.spec)} · ${speedup.toFixed(2)}× ${speedup >= 1 ? "faster" : "slower"}`;
    const clocks = async () => [await page.textContent("#race-ar-time"), await page.textContent("#race-spec-time")];
    const after = await clocks();
    check(after[0] === laneSummary(race.ar) && after[1] === specSummary, "race: each clock shows its lane's recorded time, rate and target calls", JSON.stringify({ after, race: [laneSummary(race.ar), specSummary] }));
    await page.click("#race-replay");
    await page.waitForFunction((n) => document.getElementById("race-spec").textContent.length === n && /faster|slower/.test(document.getElementById("race-spec-time").textContent) && /chars\/s/.test(document.getElementById("race-ar-time").textContent), race.spec.text.length, { timeout: 30_000 });
    const replayed = [await page.textContent("#race-ar"), await page.textContent("#race-spec")];
    check(replayed[0] === race.ar.text && replayed[1] === race.spec.text && JSON.stringify(await clocks()) === JSON.stringify(after),
      "race: the replay ends with both lanes' texts and figures as recorded", JSON.stringify({ replayed, clocks: await clocks() }));
    await page.evaluate(() => window.scrollTo(0, 0)); // the sticky transport bar in its place
    await page.screenshot({ path: join(artifacts, "race.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await playToEnd(page);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(200);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 1, "phone width (390 px): no horizontal scrolling of the page", `overflow ${overflow}px`);
    await page.screenshot({ path: join(artifacts, "phone.png"), fullPage: false });
  } finally {
    await b.close();
  }
};

// One screenshot per method (CPU), each run checked against the engine's summary.
tests.screenshots = async () => {
  const b = await browser();
  try {
    for (const [name, query] of [
      ["autoregressive", "method=autoregressive"],
      ["speculative", "method=speculative&gamma=5"],
      ["spectr-iid", "method=spectr&gamma=4&drafts=3"],
      ["spectr-tree", "method=spectr&shape=tree&tree=2,2,1"],
      ["multiround", "method=multiround&gamma=4&drafts=3"],
      ["spectr-race", "method=spectr&selection=race&gamma=4&drafts=3"],
      ["mentored", "method=mentored&gamma=4&kl=0.049"], // a D on the slider's log grid
      ["typical", "method=typical&gamma=4&epsilon=0.09&delta=0.3"],
      ["lookup", "method=lookup&gamma=4&ngram=3&prompt=ROMEO%3A%0AO%20Romeo%2C%20Romeo%2C%20wherefore%20art%20thou%20Romeo%3F%0A"],
    ]) {
      const page = await open(b.context, `backend=cpu&speed=instant&autoplay=0&maxTokens=40&seed=2&${query}`);
      await loaded(page);
      const h = await playToEnd(page);
      sameMetrics(h, name);
      // Show a round with a rejection on the stage where there is one.
      const resampled = await page.$("#output .otok.resampled");
      if (resampled) await resampled.click();
      // The theory charts are debounced and call plan() many times: wait until drawn.
      await page.waitForTimeout(200);
      await page.waitForFunction(() => window.__speculaPage.theoryIdle === true, null, { timeout: 60_000 });
      await page.evaluate(() => window.scrollTo(0, 0)); // the sticky transport bar in its place
      await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
    }
    check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
  } finally {
    await b.close();
  }
};

// Models that are not ours: the page's n-gram pair (www/js/ngram.js) through decode().
tests.ngramSource = async () => {
  const b = await browser();
  try {
    const query = "backend=cpu&speed=instant&autoplay=0&models=ngram&method=spectr&shape=tree&tree=2,2&maxTokens=40&seed=4&temperature=0.9";
    const page = await open(b.context, query);
    await loaded(page);
    const h = await playToEnd(page);
    check(h.models === "ngram" && h.source === "live", "models=ngram: the run came from decode() over the page's n-gram pair", JSON.stringify({ models: h.models, source: h.source }));
    sameMetrics(h, "n-gram pair");
    check(h.shownRounds.length === h.summary.metrics.rounds && h.shownRounds.every((t) => t.method === "spectr"),
      "n-gram pair: every round of the run is animated from its trace", `${h.shownRounds.length} vs ${h.summary.metrics.rounds}`);
    // The same options straight through decode() in the page give the same characters.
    const again = await page.evaluate(async () => {
      const { ngramPair, ngramRounds } = await import("./js/ngram.js");
      const pkg = await import("./specula/index.js");
      const prompt = document.getElementById("prompt").value;
      const pair = ngramPair(prompt);
      const options = { prompt, method: "spectr", tree: [2, 2], seed: 4, maxTokens: 40, temperature: 0.9, recordDistributions: true };
      let text = "";
      for await (const round of ngramRounds(pkg, pair, options)) text += round.text;
      return { text, alphabet: pair.alphabet };
    });
    const spans = await page.$$eval("#output .otok", (ss) => ss.map((s) => s.textContent.replace("↵\n", "\n")));
    check(spans.join("") === again.text && spans.length === 40, "n-gram pair: the output is decode()'s text for the same seed", JSON.stringify({ page: spans.join(""), decode: again.text }));
    check(h.alphabet === again.alphabet, "n-gram pair: the stage names tokens with the pair's own alphabet");
    await page.screenshot({ path: join(artifacts, "ngram.png"), fullPage: true });
    check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
  } finally {
    await b.close();
  }
};

// One short run on WebGPU (SwiftShader in headless Chromium: slow, so few tokens).
tests.webgpu = async () => {
  if (!webgpu) {
    console.log("skip WebGPU (--no-webgpu)");
    return;
  }
  const b = await browser({ gpu: true });
  try {
    const page = await open(b.context, "backend=webgpu&speed=instant&autoplay=0&maxTokens=6&gamma=2&temperature=0&seed=1");
    await loaded(page, 240_000);
    const h0 = await hook(page);
    const badge = await page.textContent("#backend");
    check(h0.backend.backend === "webgpu" && /WebGPU/.test(badge), `WebGPU backend shown with its adapter: ${badge}`);
    const h = await playToEnd(page);
    sameMetrics(h, "WebGPU");
    const ref = await reference(page, h.options);
    check(ref.summary.text === h.summary.text, "greedy on WebGPU gives the CPU's text", JSON.stringify({ gpu: h.summary.text, cpu: ref.summary.text }));
    await page.screenshot({ path: join(artifacts, "webgpu.png"), fullPage: true });

    // ?draft=cpu: the target on WebGPU, the draft on the CPU, the same greedy text.
    const hybrid = await open(b.context, "backend=webgpu&draft=cpu&speed=instant&autoplay=0&maxTokens=6&gamma=2&temperature=0&seed=1");
    await loaded(hybrid, 240_000);
    const hh0 = await hook(hybrid);
    const hybridBadge = await hybrid.textContent("#backend");
    check(
      hh0.backend.backend === "webgpu" && hh0.backend.draftBackend === "cpu" && /draft on the CPU/.test(hybridBadge),
      `draft=cpu puts the draft on the CPU beside WebGPU: ${hybridBadge}`,
    );
    const hh = await playToEnd(hybrid);
    check(hh.summary.text === ref.summary.text, "greedy with the draft on the CPU gives the CPU's text", JSON.stringify({ hybrid: hh.summary.text, cpu: ref.summary.text }));
  } finally {
    await b.close();
  }
};

// The walk through the page (clicks, layout, definitions, narration, charts, tree, inputs, race).
addWalkTests(tests, { browser, open, loaded, hook, check, setControl, playToEnd, artifacts });

// The hostile-input table: what a student types, pastes or links, refused or run faithfully.
addHostileTests(tests, { browser, open, loaded, hook, check });

// The shared options table (tests/options/table.json) through the page's controls: its verdicts, codes and fields.
addOptionsTableTests(tests, { browser, open, loaded, hook, check });

// The lab: many runs against the exact distribution, the bug switches, the lossy curves, the soak.
addLabTests(tests, { browser, open, loaded, check, artifacts });
addLabVerdictTests(tests, { browser, open, loaded, check, setControl });
addLabTableTests(tests, { browser, open, loaded, check, setControl });
addLongRunTests(tests, { browser, open, loaded, check });
addStagePanelTests(tests, { browser, open, loaded, check, setControl, playToEnd });
addDistWaitTests(tests, { browser, open, loaded, check });
// The race against this computer's measured costs: lanes apart, theory with v, the replay.
addRaceCostTests(tests, { browser, open, loaded, hook, check, playToEnd });
// The n-gram pair: the race refuses it rather than race another pair; no trained pair's costs on its chart.
addRaceNgramTests(tests, { browser, open, loaded, hook, check, setControl, playToEnd });
// What a student must read: the residual chart's one scale, a phone's header, an error that hides nothing.
addReadableTests(tests, { browser, open, loaded, check, playToEnd });
// A planted bug: the badge, the lab's words and every round on the stage say so.
addBugTests(tests, { browser, open, loaded, check, setControl, playToEnd, artifacts });
addParallelTests(tests, { browser, open, loaded, check });
// The guided lesson: each step's numbers against the round it names, the presets, the keyboard, a phone.
addLessonTests(tests, { browser, open, loaded, hook, check, artifacts, close, pageFmt });
// Your models: a GGUF pair by URL and by file, its pieces, the lab, compaction, typed errors; SmolLM2 when given.
addGgufTests(tests, { browser, open, loaded, hook, check, setControl, playToEnd, artifacts });
// The SmolLM2 pair in one click: loaded, run in its chat form, raced; and what it says without its target.
addSmollm2PairTests(tests, { dist, browser, open, loaded, hook, check, setControl, playToEnd, artifacts });
// The README's screenshots: shown, present and small (files only).
addReadmeShotTests(tests, { check });
// The target's second worker: on where the page is cross-origin isolated, one worker and why where not.
addWorkerTests(tests, { browser, open, loaded, hook, check });

const started = Date.now();
try {
  for (const [name, test] of Object.entries(tests)) {
    if (only && !only.includes(name)) continue;
    const t = Date.now();
    console.log(`== ${name}`);
    try {
      await test();
    } catch (error) {
      check(false, `${name} threw`, error.stack ?? String(error));
    }
    console.log(`   ${name}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
} finally {
  await server.close();
}
console.log(`== ${checks - failures.length}/${checks} checks passed in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${artifacts}`);
if (failures.length) {
  console.log(`FAILED:\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
