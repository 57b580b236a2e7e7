// The largest run the page allows (used by run.mjs): 65,536 characters (the engine's
// maxTokens) at "instant". While its rounds arrive faster than they are drawn, the page
// still takes clicks (Pause holds the run before it ends), and its memory stays small:
// rounds far behind the last keep a few entries of each distribution (pieces.js forgetRound).

export function addLongRunTests(tests, { browser, open, loaded, check }) {
  tests.longRun = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&method=speculative&seed=2");
      await loaded(page);
      const max = await page.evaluate(async () => (await import("./specula/index.js")).LIMITS.maxTokens);
      await page.fill("#maxTokens", String(max));
      await page.dispatchEvent("#maxTokens", "change");
      await page.click("#play");
      await page.waitForFunction(() => window.__speculaPage.shownRounds.length >= 600, null, { timeout: 180_000, polling: 200 });
      // A click while the rounds pour in is taken at once: within a few rounds, not after the
      // animation has caught up with the models (a page that never gives the browser its turn).
      const box = await page.$eval("#pause", (el) => {
        const r = el.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      });
      const before = await page.evaluate(() => window.__speculaPage.shownRounds.length);
      await Promise.race([page.mouse.click(box.x, box.y), new Promise((r) => setTimeout(r, 60_000))]);
      await page.waitForFunction(() => document.getElementById("run-state").textContent === "paused", null, { timeout: 60_000 });
      const held = await page.evaluate(async () => {
        const { S } = await import("./js/state.js");
        return { shown: window.__speculaPage.shownRounds.length, arrived: S.run.rounds.length, done: S.run.done };
      });
      await page.waitForTimeout(1000);
      const still = await page.evaluate(() => window.__speculaPage.shownRounds.length);
      check(!held.done && held.shown - before <= 60 && still === held.shown,
        `tokens ${max} at instant: Pause is taken ${held.shown - before} rounds after the click, while the run goes on (${held.shown} rounds shown of ${held.arrived} arrived), and holds it`, JSON.stringify({ before, held, still }));

      // Memory: the rounds far behind keep a few entries per distribution, and the page's
      // heap grows by little per round that arrives.
      const cdp = await page.context().newCDPSession(page);
      const heap = async () => {
        await cdp.send("HeapProfiler.collectGarbage");
        return page.evaluate(async () => {
          const { S } = await import("./js/state.js");
          return { bytes: performance.memory.usedJSHeapSize, rounds: S.run.rounds.length };
        });
      };
      const first = await heap();
      for (let i = 0; i < 240 && (await heap()).rounds < first.rounds + 800; i++) await page.waitForTimeout(500);
      const after = await heap();
      const perRound = (after.bytes - first.bytes) / (after.rounds - first.rounds);
      const old = await page.evaluate(async () => {
        const { S } = await import("./js/state.js");
        const t = S.run.rounds[0].trace;
        const dists = [...t.steps.flatMap((s) => [s.targetProbs, s.draftProbs, s.residualProbs]), t.bonus?.targetProbs].filter(Boolean);
        return { dists: dists.length, cut: dists.every((v) => v.sparse === true && v.ids.length <= 16) && t.drafts.every((d) => !d.draftProbs) };
      });
      check(old.dists > 0 && old.cut, `tokens ${max}: the first round, far behind, keeps a few entries of each of its ${old.dists} distributions`);
      check(perRound < 8 * 1024, `tokens ${max}: the page's heap grows by ${(perRound / 1024).toFixed(1)} KiB per round that arrives (under 8 KiB: ${after.rounds - first.rounds} rounds)`);
      await page.click("#reset");
      check(b.problems.length === 0, "long run: no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };
}
