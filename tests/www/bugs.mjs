// A planted bug as the page tells it (used by run.mjs): the settings' badge, the lab's words
// beside its bug menu, every round on the stage and each sentence the bug makes false say
// that a bug is planted and what it does instead; nothing calls the bugged run lossless or
// explains its replacement draw as the residual.
import { join } from "node:path";

export function addBugTests(tests, { browser, open, loaded, check, setControl, playToEnd, artifacts }) {
  /** The settings' method sentence and its badge. */
  const badge = (page) =>
    page.evaluate(() => {
      const box = document.getElementById("method-help");
      const b = box.querySelector(".lossless");
      return { text: box.textContent, badge: b?.textContent, yes: b?.classList.contains("yes") };
    });
  /** The lab's sentence about the bug menu, and whether it shows as text on the page. */
  const bugHelp = (page) =>
    page.evaluate(() => {
      const p = document.getElementById("bug-help");
      return { text: p?.textContent ?? "", visible: !!p && p.checkVisibility() && p.getBoundingClientRect().height > 0 };
    });
  /** The sentences of the round on the stage: the log, the planted line, the residual chart's key. */
  const stageText = (page) =>
    page.evaluate(() => ({
      notes: [...document.querySelectorAll("#round-notes li")].map((l) => ({ cls: l.className, text: l.textContent })),
      planted: document.querySelector("#stage-focus .now.planted")?.textContent ?? "",
      key: document.querySelector("#stage-focus .reskey")?.textContent ?? null,
      dist: document.getElementById("dist").textContent,
    }));

  tests.bugPlanted = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=40&seed=2&method=speculative&bug=resample-from-target");
      await loaded(page);
      const BUGS = await page.evaluate(async () => (await import("./specula/index.js")).BUGS);
      const described = (name) => BUGS.find((x) => x.name === name).description;

      // Every bug of the engine: the badge and the lab's visible sentence name it and say what it does.
      for (const { name, description } of BUGS) {
        await setControl(page, "bug", name);
        const m = await badge(page);
        const help = await bugHelp(page);
        check(!m.yes && m.badge !== "lossless" && m.text.includes(description) && !/follows the target's distribution exactly/.test(m.text),
          `bug ${name}: the settings' badge says "${m.badge}", not lossless, and the sentence says what the bug does`, JSON.stringify(m));
        check(help.visible && help.text.includes(name) && help.text.includes(description), `bug ${name}: the lab says in visible text what the bug does ("${help.text}")`, JSON.stringify(help));
      }
      await setControl(page, "bug", "");
      const none = await badge(page);
      const noneHelp = await bugHelp(page);
      check(none.yes && none.badge === "lossless" && /No bug/.test(noneHelp.text), `no bug: the badge says lossless and the lab says there is no bug ("${noneHelp.text}")`);

      // resample-from-target: every round names the bug, and the replacement is never called the residual.
      await setControl(page, "bug", "resample-from-target");
      const run = await playToEnd(page);
      const rounds = [...new Set(await page.$$eval("#output .otok", (ss) => ss.map((s) => Number(s.dataset.round))))];
      let named = 0;
      let falseResidual = [];
      let residualNotes = 0;
      for (const r of rounds) {
        await page.click(`#output .otok[data-round="${r}"]`);
        const s = await stageText(page);
        if (s.notes[0]?.cls.includes("bug") && s.notes[0].text.includes(described("resample-from-target")) && s.planted.includes("resample-from-target")) named += 1;
        for (const n of s.notes.filter((x) => x.cls.includes("res"))) {
          residualNotes += 1;
          if (!/drawn from the target itself by the planted bug resample-from-target/.test(n.text) || /nothing was left/.test(n.text)) falseResidual.push(n.text);
        }
        if (s.key !== null && !/planted bug resample-from-target/.test(s.key)) falseResidual.push(`chart key: ${s.key}`);
        if (!/Planted bug resample-from-target/.test(s.dist)) falseResidual.push(`distributions: ${s.dist.slice(-160)}`);
      }
      check(run.options.bug === "resample-from-target" && named === rounds.length, `resample-from-target: each of the ${rounds.length} rounds names the bug first on the stage and in its log (${named})`);
      check(residualNotes > 0 && falseResidual.length === 0, `resample-from-target: each of ${residualNotes} replacements says the bug drew it from the target, never "the residual" (chart key and distributions too)`, falseResidual.join(" | "));
      await page.click("#output .otok.resampled");
      await page.evaluate(() => window.scrollTo(0, document.querySelector(".stage-panel").offsetTop - 80));
      await page.screenshot({ path: join(artifacts, "bug.png") });

      // shared-uniform: each coin flip says its u also drew the guess.
      await setControl(page, "bug", "shared-uniform");
      await playToEnd(page);
      await page.click("#output .otok[data-round='0']");
      const shared = await stageText(page);
      const tests = shared.notes.filter((n) => /u = /.test(n.text) && /→ (accepted|rejected)/.test(n.text));
      check(tests.length > 0 && tests.every((n) => /planted bug shared-uniform/.test(n.text)), `shared-uniform: each of the ${tests.length} tests of round 1 says its u also drew the guess`, JSON.stringify(tests));

      // The other bugs, where each acts: every round names the bug first, each sentence of
      // the step it changes says what it does instead, and nothing on the stage or in the
      // distributions calls the run lossless.
      const WHERE = { "argmax-draft": "propose", "unprocessed-target": "test", "filtered-draft": "test", "cache-reset": "residual" };
      const STEP = { propose: (n) => /^The draft proposes/.test(n.text), test: (n) => /u = /.test(n.text) && /→ (accepted|rejected)/.test(n.text), residual: (n) => n.cls.includes("res") && /every draft rejected/.test(n.text) };
      await setControl(page, "temperature", 0.8);
      await setControl(page, "topK", 12);
      for (const [name, where] of Object.entries(WHERE)) {
        await setControl(page, "bug", name);
        await playToEnd(page);
        const played = [...new Set(await page.$$eval("#output .otok", (ss) => ss.map((s) => Number(s.dataset.round))))];
        let first = 0;
        let changed = 0;
        const wrong = [];
        for (const r of played) {
          await page.click(`#output .otok[data-round="${r}"]`);
          const s = await stageText(page);
          if (s.notes[0]?.cls.includes("bug") && s.notes[0].text.includes(described(name)) && s.planted.includes(name)) first += 1;
          for (const n of s.notes.filter(STEP[where])) {
            changed += 1;
            if (!n.text.includes(`the planted bug ${name}`)) wrong.push(n.text);
          }
          const all = [s.planted, s.dist, s.key ?? "", ...s.notes.map((n) => n.text)].join(" | ");
          if (/lossless|follows the target('s distribution)? exactly/i.test(all)) wrong.push(`round ${r + 1} claims losslessness: ${all.slice(0, 200)}`);
        }
        check(first === played.length && changed > 0 && wrong.length === 0,
          `${name}: each of the ${played.length} rounds names the bug first, each of ${changed} ${where} sentences says what the bug does instead, none claims losslessness`, wrong.slice(0, 3).join(" | "));
      }

      // A method the bug does not apply to: it runs without it, and the page says so.
      await setControl(page, "method", "typical");
      const typical = await badge(page);
      const off = await bugHelp(page);
      check(typical.badge === "not lossless" && /runs without it/.test(off.text), `typical: the bug menu does not apply, and the lab says the method runs without it ("${off.text}")`);

      // The lesson explains the correct algorithm: it runs without the bug.
      await page.goto(page.url().replace(/\?.*$/, "?backend=cpu&speed=instant&autoplay=0&maxTokens=40&seed=2&method=speculative&bug=resample-from-target&lesson=1"));
      await loaded(page);
      await page.waitForFunction(() => document.getElementById("lesson").dataset.state === "ready", null, { timeout: 120_000, polling: 100 });
      const lesson = await page.evaluate(() => ({ bug: window.__speculaPage.options?.bug ?? null, planted: document.querySelector("#stage-focus .now.planted")?.textContent ?? "", badge: document.querySelector("#method-help .lossless")?.textContent }));
      check(lesson.bug === null && lesson.planted === "" && lesson.badge === "lossless", "the lesson's rounds run without the planted bug, and the page says lossless while they do", JSON.stringify(lesson));
      check(b.problems.length === 0, "bugs: no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };
}
