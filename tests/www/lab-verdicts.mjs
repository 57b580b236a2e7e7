// The lab's verdicts and labels (used by run.mjs): each exact law named for what it is (a
// lossy rule is not a bug), a setting that makes a bug harmless or mentored decoding
// lossless said to be so (no "more runs"), one run's no-verdict naming the runs a test
// needs, an error clearing the chart and verdict of the press before it, the runs field
// labelled with the engine's own limit, and one colour per meaning in the chart.
import { labRunMany } from "./page-helpers.mjs";

export function addLabVerdictTests(tests, { browser, open, loaded, check, setControl }) {
  tests.labVerdicts = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&autoplay=0&method=typical&gamma=3&temperature=1&seed=1&prompt=ROMEO%3A%0AI");
      await loaded(page);

      // The runs field: the engine's limit on its label and on the field, and more refused.
      const LIMITS = await page.evaluate(async () => (await import("./specula/index.js")).LIMITS);
      const field = await page.evaluate(() => ({ label: document.querySelector("label[for='lab-runs'] .range").textContent, max: document.getElementById("lab-runs").max, value: document.getElementById("lab-runs").value }));
      check(field.label === `1–${LIMITS.maxLabRuns.toLocaleString("en")}` && Number(field.max) === LIMITS.maxLabRuns && Number(field.value) === LIMITS.defaultLabRuns,
        `lab: the runs field is labelled and bounded by the engine's limit (${field.label}, max ${field.max}, default ${field.value})`, JSON.stringify({ field, max: LIMITS.maxLabRuns }));

      // Typical acceptance: its own closed form, never a bug's.
      const typical = await labRunMany(page, 300);
      const typicalNames = typical.legend.map((l) => l.name).join(" | ");
      check(typical.result?.kind === "typical" && /typical acceptance's closed form/.test(typicalNames) && !/bug/i.test(typicalNames + typical.verdict) && /typical acceptance/.test(typical.verdict),
        `lab: typical acceptance's law is named as its own, not a bug's ("${typicalNames}"; "${typical.verdict}")`);

      // One colour, one meaning: the target's series has the same colour whether it is the exact law or beside another.
      const targetColour = typical.legend.find((l) => l.name === "the target")?.colour;
      const lawColour = typical.legend.find((l) => /^exact:/.test(l.name))?.colour;
      await setControl(page, "method", "speculative");
      const fair = await labRunMany(page, 300);
      const exactTarget = fair.legend.find((l) => l.name === "exact: the target")?.colour;
      check(targetColour && exactTarget === targetColour && lawColour !== targetColour,
        `lab: the target is drawn in one colour (${exactTarget} as the exact law, ${targetColour} beside typical's ${lawColour})`, JSON.stringify({ typical: typical.legend, fair: fair.legend }));

      // A bug the settings make harmless: its law equals the target, and the verdict says so.
      await setControl(page, "bug", "filtered-draft");
      const harmless = await labRunMany(page, 300);
      check(harmless.result?.kind === "filtered-draft" && harmless.result.tvFromTarget < 1e-9 && /harmless/.test(harmless.verdict) && !/more runs:/.test(harmless.verdict),
        `lab: filtered-draft without top-k or top-p equals the target (TV ${harmless.result?.tvFromTarget}) and the verdict says the bug is harmless here: "${harmless.verdict}"`);

      // An error clears the chart and the verdict of the press before it.
      await setControl(page, "bug", "shared-uniform");
      const refused = await labRunMany(page, 300, 2);
      check(refused.state === "error" && refused.bars === 0 && refused.statCount === 0 && refused.verdict === "" && refused.result === null,
        `lab: an error (shared-uniform at the second character) leaves no chart or verdict of the runs before it (${refused.bars} bars, "${refused.verdict}")`, refused.message);

      // More runs than the engine allows: refused on the field, nothing drawn.
      await page.selectOption("#lab-position", "1");
      const over = await labRunMany(page, LIMITS.maxLabRuns + 1);
      const invalid = await page.$eval("#lab-runs", (el) => el.getAttribute("aria-invalid"));
      check(over.state === "error" && invalid === "true" && over.bars === 0, `lab: ${LIMITS.maxLabRuns + 1} runs are refused on the runs field (${over.message})`);

      // Mentored decoding at D = 0: its exact law is the target, so it loses nothing here.
      await setControl(page, "bug", "");
      await setControl(page, "method", "mentored");
      await setControl(page, "kl", 0);
      const zero = await labRunMany(page, 300);
      check(zero.result?.kind === "mentored" && zero.result.tvFromTarget < 1e-9 && /mentored decoding loses nothing in this setting/.test(zero.verdict) && !/more runs:/.test(zero.verdict),
        `lab: mentored at D = 0 equals the target (TV ${zero.result?.tvFromTarget}) and the verdict says it loses nothing, not "more runs": "${zero.verdict}"`);

      // One run: no test, and the verdict says how many runs a test needs (the likeliest
      // character expecting 5 counts).
      const one = await labRunMany(page, 1);
      const needed = one.result ? Math.ceil(5 / Math.max(...one.result.expected)) : null;
      check(needed > 1 && /^No verdict: 1 run is too few/.test(one.verdict) && one.verdict.includes(`at least ${needed} runs`),
        `lab: one run gives no verdict and says at least ${needed} runs are needed: "${one.verdict}"`);
      check(b.problems.length === 0, "lab verdicts: no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };
}
