// The page with "draft in parallel" ticked: the draft model runs in a second worker,
// drafting the next round while the page's worker verifies. The run completes with the
// settings' text length, the stage says which drafts were drawn early and why a fully
// accepted round takes no bonus, and the same seed gives the same text when replayed.

export function addParallelTests(tests, { browser, open, loaded, check }) {
  tests.parallelDraft = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=40&seed=4&method=speculative&gamma=3&temperature=0.8&parallelDraft=1");
      await loaded(page);
      check(await page.$eval("#parallelDraft", (el) => el.checked && !el.disabled), "parallel: the box is ticked from the URL and enabled for speculative decoding");
      await page.click("#play");
      await page.waitForFunction(() => window.__speculaPage.finished && window.__speculaPage.source === "live", null, { timeout: 120_000 });
      const h = await page.evaluate(() => window.__speculaPage);
      check(h.summary?.tokens === 40 && !h.error, `parallel: 40 characters (${h.summary?.tokens}, error ${h.error})`);
      // A round whose drafts were drawn early follows a fully accepted round with no bonus.
      const rounds = h.shownRounds;
      const early = rounds.filter((r) => r.earlyDrafts > 0);
      const before = rounds.filter((_, i) => rounds[i + 1]?.earlyDrafts > 0);
      check(early.length > 0 && before.every((r) => r.counts.bonus === 0 && r.counts.resampled === 0), `parallel: ${early.length} rounds tested drafts drawn early, after rounds with no bonus token`);
      const first = h.summary.text;
      await page.click("#play");
      await page.waitForFunction((runId) => window.__speculaPage.finished && window.__speculaPage.runId > runId, h.runId, { timeout: 120_000 });
      const again = await page.evaluate(() => window.__speculaPage.summary?.text);
      check(again === first, "parallel: the same seed replays the same text");

      // Step one round at a time until a round with early drafts is on the stage.
      await page.click("#reset");
      let said = [];
      for (let i = 0; i < 40 && !said.some((n) => /drafted in parallel/.test(n)); i++) {
        const shown = await page.evaluate(() => window.__speculaPage.shownRounds.length);
        await page.click("#step");
        await page.waitForFunction((n) => window.__speculaPage.shownRounds.length > n || window.__speculaPage.finished, shown, { timeout: 60_000 });
        said = await page.$$eval("#round-notes li", (ls) => ls.map((l) => l.textContent));
      }
      check(said.some((n) => /drafted in parallel, while the target verified the last round/.test(n)), "parallel: the stage says which drafts were drawn early", said.join(" | "));

      // Dynamic γ is refused with parallel drafting, on the box.
      await page.check("#dynamicGamma");
      await page.click("#play");
      await page.waitForFunction(() => window.__speculaPage.error, null, { timeout: 60_000 });
      const refused = await page.evaluate(() => ({ field: window.__speculaPage.errorField, control: window.__speculaPage.errorControl }));
      check(refused.field === "parallelDraft" && refused.control === "parallelDraft", `parallel: dynamic γ is refused on the box (${JSON.stringify(refused)})`);
      check(b.problems.length === 0, "parallel: no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };
}
