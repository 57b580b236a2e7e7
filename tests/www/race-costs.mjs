// The race against this computer's costs (used by run.mjs): the lanes' clocks never
// overlap, the costs the page states are the engine's timings of each lane's calls, the
// theory it shows is the walltime factor with those costs (the verifying call's measured
// cost v, not one call), the measured speed-up agrees with it, and the replay side by side
// keeps the lanes' measured proportions at a pace one can watch.

export function addRaceCostTests(tests, { browser, open, loaded, hook, check, playToEnd }) {
  tests.raceCosts = async () => {
    const b = await browser();
    try {
      const gamma = 4;
      const page = await open(b.context, `backend=cpu&speed=instant&autoplay=0&maxTokens=96&seed=1&gamma=${gamma}`);
      await loaded(page);
      await page.fill("#race-repeats", "1");
      await page.click("#race");
      const raced = await page.waitForFunction(() => window.__speculaPage.race || window.__speculaPage.error, null, { timeout: 180_000, polling: 200 }).then(() => true, () => false);
      const seen = await page.evaluate(() => ({ error: window.__speculaPage.error, verdict: document.getElementById("race-verdict").textContent }));
      if (!raced || !(await hook(page)).race) {
        check(false, "race: the race ends with a result", JSON.stringify(seen));
        return;
      }
      // The race's settings played on the stage (the run the theory charts read), and the charts.
      await playToEnd(page);
      await page.waitForFunction(() => window.__speculaPage.theoryIdle, null, { timeout: 60_000, polling: 100 });
      const race = (await hook(page)).race;
      const { ar, spec } = race;

      // Each lane's clock is its own: one lane runs while the other waits.
      const apart = ar.endedAt <= spec.startedAt || spec.endedAt <= ar.startedAt;
      check(apart, `race: the lanes' timed sections do not overlap (autoregressive ${ar.startedAt?.toFixed(0)}–${ar.endedAt?.toFixed(0)} ms, speculative ${spec.startedAt?.toFixed(0)}–${spec.endedAt?.toFixed(0)} ms)`);

      // The costs, from the engine's timings of each lane (nanoseconds per call).
      if (!ar.metrics || !spec.metrics) {
        check(false, "race: each lane reports the engine's metrics and timings, the costs it measured");
        return;
      }
      const perCall = (nanos, calls) => nanos / calls / 1e6;
      const oneMs = perCall(ar.metrics.timing.targetNanos, ar.metrics.targetCalls);
      const verifyMs = perCall(spec.metrics.timing.targetNanos, spec.metrics.targetCalls);
      const draftMs = perCall(spec.metrics.timing.draftNanos, spec.metrics.draftCalls);
      const alpha = spec.metrics.acceptedTokens / (spec.metrics.acceptedTokens + spec.metrics.resampledTokens);
      const c = race.costs;
      const near = (x, y) => typeof x === "number" && Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(y));
      check(!!c && near(c.oneMs, oneMs) && near(c.verifyMs, verifyMs) && near(c.draftMs, draftMs) && near(c.alpha, alpha) && near(c.v, verifyMs / oneMs),
        `race: the costs are the engine's timings: one position ${oneMs.toFixed(2)} ms, γ + 1 = ${gamma + 1} positions ${verifyMs.toFixed(2)} ms (v = ${(verifyMs / oneMs).toFixed(2)}), a draft call ${draftMs.toFixed(3)} ms, α = ${alpha.toFixed(3)}`,
        JSON.stringify({ page: c, engine: { oneMs, verifyMs, draftMs, alpha } }));

      // The theory with those costs, from the package's own closed form: E/(γc + 1) with c
      // per verifying call, over v (one autoregressive token costs one one-position call).
      const expected = await page.evaluate(async ({ alpha, gamma, c, v }) => {
        const { theory } = await import("./specula/index.js");
        return (await theory({ alpha, gammas: [gamma], costRatio: c })).walltimeFactor[0] / v;
      }, { alpha, gamma, c: draftMs / verifyMs, v: verifyMs / oneMs });
      const words = await page.textContent("#race-theory").catch(() => "");
      check(near(race.theory, expected) && words.includes(`v = ${(verifyMs / oneMs).toFixed(2)}`) && words.includes(`expects ${expected.toFixed(2)}×`),
        `race: the theory it shows is the walltime factor with the measured v and c: ${expected.toFixed(2)}× ("${words.slice(0, 100)}…")`, JSON.stringify({ shown: race.theory, expected }));

      // Measured against theory. The theory leaves out (a) the time outside the model calls
      // (worker messages, page work), which the page reports per lane (a few to 20 % here,
      // in both lanes, so mostly cancelling), and (b) the run's own tokens per round, which
      // over 96 tokens (about 30 rounds) stay within about 10 % of α's expectation. 30 %
      // covers both; the theory that takes verifying to cost one call misses by a factor of
      // v (about 2 on the CPU).
      const TOLERANCE = 0.3;
      const off = Math.abs(race.speedup / expected - 1);
      check(off <= TOLERANCE, `race: measured ${race.speedup.toFixed(2)}× is within ${100 * TOLERANCE}% of the theory ${expected.toFixed(2)}× (off by ${(100 * off).toFixed(0)}%; outside the model calls: ${JSON.stringify(race.outside)})`);

      // The walltime chart over γ takes the same costs: at the race's γ, the same number.
      const wall = (await hook(page)).walltime;
      const note = await page.textContent("#walltime-note");
      check(wall?.measured && near(wall.values[gamma - 1], expected) && note.includes(`v = ${(verifyMs / oneMs).toFixed(2)}`),
        `theory chart: the walltime curve uses the race's measured costs (at γ = ${gamma}: ${wall?.values?.[gamma - 1]?.toFixed(2)}; "${note.slice(0, 90)}…")`, JSON.stringify(wall));

      // The replay: both lanes start together, keep their measured proportions, and the
      // slower takes long enough to watch (at least 4 s).
      const replay = await page.evaluate(() => new Promise((resolve) => {
        const want = { ar: window.__speculaPage.race.ar.text.length, spec: window.__speculaPage.race.spec.text.length };
        const at = {};
        const t0 = performance.now();
        document.getElementById("race-replay").click();
        const poll = () => {
          const now = performance.now() - t0;
          for (const key of ["ar", "spec"]) if (at[key] === undefined && document.getElementById(`race-${key}`).textContent.length === want[key]) at[key] = now;
          if ((at.ar !== undefined && at.spec !== undefined) || now > 60_000) resolve(at);
          else requestAnimationFrame(poll);
        };
        requestAnimationFrame(poll);
      }));
      const last = (lane) => lane.timeline[lane.timeline.length - 1][0];
      const ratio = replay.ar / replay.spec;
      const measuredRatio = last(ar) / last(spec);
      check(Math.max(replay.ar, replay.spec) >= 4000 && Math.abs(ratio / measuredRatio - 1) <= 0.1,
        `race replay: the slower lane takes ${(Math.max(replay.ar, replay.spec) / 1000).toFixed(1)} s (at least 4 s) and the lanes finish in their measured proportion (${ratio.toFixed(2)} against ${measuredRatio.toFixed(2)})`, JSON.stringify(replay));
    } finally {
      await b.close();
    }
  };
}
