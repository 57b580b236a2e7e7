// The distributions panel during normal playback (used by run.mjs): while the stage draws a
// round's drafts, the panel must not show that round's bars (they give its result away); it
// shows them once the round is drawn. The lesson's paused phases are checked in lesson.mjs.

export function addDistWaitTests(tests, { browser, open, loaded, check }) {
  tests.distWaits = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=8&autoplay=0&maxTokens=40&seed=3&method=speculative&gamma=4");
      await loaded(page);
      // Watches every change of the stage and the panel; whenever the stage shows drafts and
      // nothing scored or tested yet, notes what the panel shows.
      await page.evaluate(() => {
        const log = (window.__distWait = { drafts: 0, rounds: new Set(), given: [], followed: 0 });
        const stage = document.getElementById("stage");
        const label = document.getElementById("dist-label");
        const look = () => {
          const round = /^round (\d+)/.exec(document.getElementById("round-label").textContent)?.[1];
          const cells = [...stage.querySelectorAll(".cell[data-node]")];
          const drawn = cells.some((c) => c.dataset.node !== "root" && !c.classList.contains("hidden"));
          const scored = stage.classList.contains("verifying") || !!stage.querySelector(".tok.verified") || cells.some((c) => c.dataset.state);
          if (round && label.dataset.round === round && label.dataset.position) log.followed += 1;
          if (!round || !drawn || scored) return;
          log.drafts += 1;
          log.rounds.add(round);
          // A position set: the panel shows a character's bars, not the wait note.
          if (label.dataset.round === round && label.dataset.position) log.given.push(`round ${round}: ${label.textContent}`);
        };
        const watch = new MutationObserver(look);
        for (const el of [stage, label, document.getElementById("dist")]) watch.observe(el, { childList: true, subtree: true, attributes: true, characterData: true });
      });
      await page.click("#play");
      await page.waitForFunction(() => window.__speculaPage.finished, null, { timeout: 120_000, polling: 100 });
      const log = await page.evaluate(() => ({ ...window.__distWait, rounds: window.__distWait.rounds.size }));
      check(log.rounds >= 3 && log.given.length === 0,
        `playback: while the stage draws a round's drafts the distributions panel never shows that round (${log.drafts} looks in the drafts phase of ${log.rounds} rounds)`, log.given.slice(0, 3).join(" | "));
      check(log.followed > 0, `playback: the panel shows each round's bars once it is drawn (${log.followed} looks)`);
      check(b.problems.length === 0, "distributions during playback: no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };
}
