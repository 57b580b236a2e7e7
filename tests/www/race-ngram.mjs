// The race and the n-gram pair (used by run.mjs): with the n-gram pair under Models the race
// refuses, saying why on its panel, rather than timing the trained pair in its place; and
// the walltime chart of the n-gram pair takes no costs from a race of the trained pair.

export function addRaceNgramTests(tests, { browser, open, loaded, hook, check, setControl, playToEnd }) {
  tests.raceNgram = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=24&seed=1&gamma=3");
      await loaded(page);
      // A race of the trained pair first: its costs are this computer's for that pair only.
      await page.fill("#race-repeats", "1");
      await page.click("#race");
      await page.waitForFunction(() => window.__speculaPage.race || window.__speculaPage.error, null, { timeout: 180_000, polling: 200 });
      const first = await hook(page);
      check(!!first.race, "race: the trained pair races", first.error ?? "");

      // The n-gram pair on screen: its theory charts use v = 1, not the trained pair's race.
      await setControl(page, "source", "ngram");
      await playToEnd(page);
      await page.waitForFunction(() => window.__speculaPage.theoryIdle, null, { timeout: 60_000, polling: 100 });
      const wall = (await hook(page)).walltime;
      const note = await page.textContent("#walltime-note");
      check(wall && !wall.measured && /does not run the n-gram pair/.test(note),
        `n-gram pair: the walltime chart takes no costs from the trained pair's race ("${note.slice(-110)}")`, JSON.stringify(wall));

      // Start race with the n-gram pair: refused on the race panel, nothing raced.
      await page.evaluate(() => (window.__speculaPage.race = null));
      await page.click("#race");
      await page.waitForFunction(() => window.__speculaPage.race || /^Not raced/.test(document.getElementById("race-verdict").textContent), null, { timeout: 180_000, polling: 200 });
      const after = await hook(page);
      const verdict = await page.textContent("#race-verdict");
      check(!after.race && /^Not raced: /.test(verdict) && /n-gram pair/.test(verdict) && /trained pair/.test(verdict) && after.errorCode === "invalid_option",
        `race with the n-gram pair: refused on the race panel, naming the pairs it races ("${verdict.slice(0, 140)}…")`, JSON.stringify({ race: after.race?.spec?.text, code: after.errorCode }));
      check(b.problems.length === 0, "race and n-gram pair: no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };
}
