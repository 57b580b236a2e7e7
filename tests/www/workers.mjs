// The target's second worker (the package's load option threads): the test server sends
// the cross-origin isolation headers, so the page runs two workers on the CPU and its
// backend badge says so; served without them (serve.mjs drops them for a page requested
// with isolation=0) it runs one, says why, and still generates.

export function addWorkerTests(tests, { browser, open, loaded, hook, check }) {
  tests.workers = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=12");
      await loaded(page);
      const h = await hook(page);
      const badge = await page.textContent("#backend");
      check(h.backend.threads === 2 && /2 workers/.test(badge), "served cross-origin isolated, the target's dense layers run on two workers and the badge says so", badge);
    } finally {
      await b.close();
    }
  };

  tests.unisolated = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&isolation=0&speed=instant&autoplay=0&maxTokens=12");
      await loaded(page);
      const h = await hook(page);
      const badge = await page.textContent("#backend");
      const why = await page.getAttribute("#backend", "title");
      check(h.backend.threads === 1 && /1 worker/.test(badge) && /cross-origin isolated/.test(why ?? ""), "without cross-origin isolation the page runs one worker and says why", `${badge} / ${why}`);
      await page.click("#play");
      await page.waitForFunction(() => window.__speculaPage.shownRounds.length >= 2, null, { timeout: 60_000 });
      const rounds = (await hook(page)).shownRounds.length;
      check(rounds >= 2 && b.problems.length === 0, "one worker generates, without page errors", `${rounds} rounds; ${b.problems.join("; ")}`);
    } finally {
      await b.close();
    }
  };
}
