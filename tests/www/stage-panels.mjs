// Smaller things a student sees on the stage and the panels (used by run.mjs): the
// recorded run handing over to the models once they are ready; SpecTr's
// bonus sentence beside rejected drafts, no all-zero rows of distributions at temperature
// 0, "1 run", no request that fails (the icon), a tree with an empty depth refused, a large
// tree kept within the stage, the prompt's menus within a phone's width, and a settings
// summary that names every setting that changes the run.

export function addStagePanelTests(tests, { browser, open, loaded, check, setControl, playToEnd }) {
  // The recorded run plays while the models load; once they are ready, the models go on
  // from the round on screen (the settings are the recording's), not after the recording.
  tests.recordedHandOver = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=1");
      const first = await page.evaluate(() => window.__speculaPage.source);
      await loaded(page);
      await page.waitForFunction(() => window.__speculaPage.source === "live", null, { timeout: 20_000, polling: 100 }).catch(() => {});
      const taken = await page.evaluate(() => ({ source: window.__speculaPage.source, shown: window.__speculaPage.shownRounds.length, state: document.getElementById("run-state").textContent }));
      check(first === "recorded" && taken.source === "live" && /go on from the recording/.test(taken.state),
        `the models take over from the recorded run once they are ready (${taken.shown} recorded rounds shown; "${taken.state}")`, JSON.stringify({ first, taken }));
      await setControl(page, "speed", 6);
      await page.waitForFunction(() => window.__speculaPage.finished, null, { timeout: 120_000, polling: 100 });
      const end = await page.evaluate(async () => {
        const recorded = await (await fetch("recorded-trace.json")).json();
        const text = [...document.querySelectorAll("#output .otok")].map((s) => s.textContent.replace("↵\n", "\n")).join("");
        return { text, recorded: recorded.summary.text, source: window.__speculaPage.source, summary: window.__speculaPage.summary?.text };
      });
      check(end.source === "live" && end.text === end.recorded && end.summary === end.recorded,
        "after the take-over the output goes on without starting over: the recording's characters, then the live run's, the same text", JSON.stringify(end));
    } finally {
      await b.close();
    }
  };

  tests.stagePanels = async () => {
    const b = await browser();
    try {
      const page = b.context.pages()[0] ?? (await b.context.newPage());
      // Failed requests, as the browser reports them (its own, such as /favicon.ico, too).
      const failed = [];
      page.on("response", (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
      });
      page.on("console", (m) => {
        if (/Failed to load resource/.test(m.text())) failed.push(`${m.text()} ${m.location()?.url ?? ""}`);
      });
      await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=40&seed=2&method=spectr&gamma=3&drafts=3");
      await loaded(page);
      check(failed.length === 0, `loading the page asks for nothing that fails (no /favicon.ico) (${failed.join(", ") || "none"})`);

      // SpecTr: a round whose every position kept one draft ends with the bonus, named for what happened.
      await playToEnd(page);
      const rounds = [...new Set(await page.$$eval("#output .otok.bonus", (ss) => ss.map((s) => s.dataset.round)))];
      const wrong = [];
      let mixed = 0;
      for (const r of rounds) {
        await page.click(`#output .otok.bonus[data-round="${r}"]`);
        const seen = await page.evaluate(() => ({
          rejected: document.querySelectorAll("#stage .cell[data-state='rejected'], #stage .cell[data-state='discarded']").length,
          bonus: [...document.querySelectorAll("#round-notes li.bonus")].map((l) => l.textContent).join(" "),
        }));
        if (seen.rejected > 0) mixed += 1;
        if (seen.rejected > 0 && /All drafts accepted/.test(seen.bonus)) wrong.push(`round ${Number(r) + 1}: ${seen.bonus}`);
      }
      check(mixed > 0 && wrong.length === 0, `SpecTr: ${mixed} rounds with rejected drafts end with a bonus that does not say "All drafts accepted"`, wrong.join(" | "));

      // Temperature 0: the distributions panel draws no row that every series gives 0.
      await setControl(page, "temperature", 0);
      await playToEnd(page);
      await page.click("#output .otok");
      const rows = await page.evaluate(() => {
        const series = document.querySelectorAll("#dist .chart-legend li").length;
        const vals = [...document.querySelectorAll("#dist svg text.val")].map((t) => t.textContent);
        return Array.from({ length: vals.length / series }, (_, i) => vals.slice(i * series, i * series + series));
      });
      check(rows.length > 0 && rows.every((r) => r.some((v) => v !== "0")), `temperature 0: each of the ${rows.length} rows of the distributions has a probability above 0 (${rows.map((r) => r.join(" ")).join(" | ")})`);

      // A tree with an empty depth is refused, naming it; a large tree stays within the stage.
      await setControl(page, "temperature", 0.8);
      await setControl(page, "shape", "tree");
      await setControl(page, "tree", "2,,2");
      await page.click("#play");
      await page.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 10_000 }).catch(() => {});
      const treeError = await page.evaluate(() => ({ text: document.getElementById("error").hidden ? "" : document.getElementById("error").textContent, options: window.__speculaPage.options }));
      check(/no number at depth 2/.test(treeError.text), `tree "2,,2" is refused, naming its empty depth ("${treeError.text}")`, JSON.stringify(treeError.options));
      await setControl(page, "tree", "9,9,9");
      await page.fill("#maxTokens", "4");
      await page.dispatchEvent("#maxTokens", "change");
      await playToEnd(page);
      const tall = await page.evaluate(() => ({ stage: document.getElementById("stage").getBoundingClientRect().height, tree: document.querySelector("#stage .tree").scrollHeight, page: document.documentElement.scrollHeight, view: window.innerHeight }));
      check(tall.tree > tall.stage && tall.stage <= tall.view, `tree 9,9,9: its ${Math.round(tall.tree)} px scroll inside a stage ${Math.round(tall.stage)} px tall (the window: ${tall.view} px)`, JSON.stringify(tall));

      // The summary of the settings names each one that changes the run.
      await setControl(page, "method", "speculative");
      await setControl(page, "topK", 20);
      await setControl(page, "topP", 0.9);
      await setControl(page, "dynamicGamma", true);
      let summary = await page.textContent("#settings-summary");
      check(/top-k 20/.test(summary) && /top-p 0\.9/.test(summary) && /dynamic/.test(summary), `the settings summary names top-k, top-p and dynamic γ ("${summary}")`);
      await setControl(page, "dynamicGamma", false);
      await setControl(page, "parallelDraft", true);
      await setControl(page, "source", "ngram");
      summary = await page.textContent("#settings-summary");
      check(/draft in parallel/.test(summary) && /n-gram pair/.test(summary), `the settings summary names drafting in parallel and the n-gram pair ("${summary}")`);
      await setControl(page, "source", "bundled");

      // Dynamic γ: the measured point stands at the mean γ the rounds drafted, not the slider's.
      await setControl(page, "parallelDraft", false);
      await setControl(page, "topK", 0);
      await setControl(page, "topP", 1);
      await setControl(page, "dynamicGamma", true);
      await page.fill("#maxTokens", "60");
      await page.dispatchEvent("#maxTokens", "change");
      const dyn = await playToEnd(page);
      await page.waitForFunction(() => window.__speculaPage.theoryIdle === true, null, { timeout: 60_000, polling: 100 });
      const meanGamma = dyn.summary.metrics.draftedTokens / dyn.summary.metrics.rounds;
      const point = await page.$eval("#chart-tokens circle.point.m-measured title", (t) => t.textContent);
      check(point.endsWith(` at ${meanGamma.toFixed(3)}`) && /dynamic/.test(point), `dynamic γ: the measured point is at the mean γ drafted, ${meanGamma.toFixed(2)}, not the slider's ${dyn.options.gamma} ("${point}")`);
      await setControl(page, "dynamicGamma", false);

      // Prompt lookup: no draft model, so no assumed cost; position 1 counts the rounds that drafted.
      await page.fill("#prompt", "ROMEO:\nO Romeo, Romeo, wherefore art thou Romeo?\nROMEO:\nO Romeo, Romeo, wherefore art thou Romeo?\nRO");
      await page.dispatchEvent("#prompt", "change");
      await setControl(page, "method", "lookup");
      const look = await playToEnd(page);
      await page.waitForFunction(() => window.__speculaPage.theoryIdle === true, null, { timeout: 60_000, polling: 100 });
      const lm = look.summary.metrics;
      const said = await page.evaluate(() => ({ note: document.getElementById("theory-note").textContent, help: document.querySelector('#metrics dd[data-metric="position-1"]').previousElementSibling.textContent }));
      check(lm.draftCalls === 0 && /c = 0\.000 \(no draft model/.test(said.note) && !/assumed/.test(said.note), `prompt lookup: the theory takes c = 0 (no draft model), not an assumed cost ("${said.note.slice(0, 160)}")`);
      const draftedFirst = lm.draftedPerPosition[0];
      check(draftedFirst === lm.rounds || said.help.includes(`the ${draftedFirst} rounds that drafted (of ${lm.rounds})`), `prompt lookup: "position 1 accepted" says which rounds it counts (${draftedFirst} of ${lm.rounds} drafted: "${said.help}")`);
      check(draftedFirst < lm.rounds, `prompt lookup: some rounds of this run drafted nothing (${draftedFirst} of ${lm.rounds} drafted), so the line above is tested`);

      // The lab: one run is "1 run".
      await page.fill("#lab-runs", "1");
      const before = await page.evaluate(() => window.__speculaPage.lab.finished);
      await page.click("#lab-run");
      await page.waitForFunction((n) => window.__speculaPage.lab.finished > n, before, { timeout: 120_000 });
      const state = await page.textContent("#lab-state");
      check(state === "1 run", `the lab says "${state}" after one run`);

      // A phone: the prompt's menus stay within the settings panel.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.evaluate(() => (document.getElementById("settings-box").open = true));
      const menus = await page.evaluate(() => {
        const panel = document.querySelector(".controls").getBoundingClientRect();
        return ["source", "example"].map((id) => {
          const r = document.getElementById(id).getBoundingClientRect();
          return { id, left: Math.round(r.left), right: Math.round(r.right), panel: [Math.round(panel.left), Math.round(panel.right)] };
        });
      });
      check(menus.every((m) => m.left >= m.panel[0] && m.right <= m.panel[1]), `phone (390 px): the Models and Examples menus stay within the settings panel`, JSON.stringify(menus));
      check(b.problems.length === 0, "stage and panels: no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };
}
