// The shared lab table (tests/options/lab-table.json) through the page's lab panel: the
// same verdicts as `specula sample --compare` (crates/specula-cli/tests/lab_table.rs) and
// the package's sample() (tests/web-package/app/src/lab.js). Each row's options are set
// through the page's inputs (the prompt typed, the menus and sliders set, the seed typed),
// its runs and position through the lab's own; then Run many. A "no misfit" row must be
// tested against the row's exact kind with a verdict that is not a misfit: a wiring check
// (the lab runs N draws and reports a verdict), with no power against a near miss at a few
// hundred runs (the table's about); the claim of fit, with power, is
// crates/specula-cli/tests/sample_compare.rs and crates/specula-engine/tests/lab.rs.
// "no test" must give no p-value and a verdict that says why, never "Consistent"; every
// run is counted or reported. A row the page cannot express is skipped with its reason
// printed (labCannot).
import { readFileSync } from "node:fs";
import { labRunMany } from "./page-helpers.mjs";

const TABLE = JSON.parse(readFileSync(new URL("../options/lab-table.json", import.meta.url), "utf8"));

/** The sliders and menus that set a row's options (the seed is typed). */
const SLIDER = { gamma: "gamma", temperature: "temperature" };
const MENU = { method: "method", bug: "bug" };

/** Why the page's lab cannot express `options`, or null. `sliders` are the page's {min, max, step}. */
export function labCannot(options, sliders) {
  for (const [key, v] of Object.entries(options)) {
    if (key === "maxTokens") return "the lab always draws the tokens its position needs: it sends no maxTokens (the tokens field is the player's)";
    if (key === "stop") return "the page has no stop control";
    if (SLIDER[key]) {
      const { min, max, step } = sliders[SLIDER[key]];
      const on = v >= min && v <= max && Math.abs((v - min) / step - Math.round((v - min) / step)) < 1e-9;
      if (!on) return `${key} ${v} is off its slider (${min}–${max} in steps of ${step})`;
    } else if (!MENU[key] && key !== "prompt" && key !== "seed") return `no control of the page sets "${key}"`;
  }
  return null;
}


export function addLabTableTests(tests, { browser, open, loaded, check, setControl }) {
  tests.labTable = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&autoplay=0");
      await loaded(page);
      const sliders = await page.evaluate((ids) => Object.fromEntries(ids.map((id) => {
        const el = document.getElementById(id);
        return [id, { min: Number(el.min), max: Number(el.max), step: Number(el.step) }];
      })), Object.values(SLIDER));
      let ran = 0;
      for (const row of TABLE.rows) {
        const why = labCannot(row.options, sliders);
        if (why) {
          console.log(`  lab table: ${row.name} skipped: ${why}`);
          continue;
        }
        // The page's settings for what the row leaves out: the package's defaults.
        const o = { method: "speculative", gamma: 4, bug: "", temperature: 1, seed: 0, ...row.options };
        await page.fill("#prompt", o.prompt);
        for (const id of ["method", "bug", "gamma", "temperature"]) await setControl(page, id, o[id]);
        await page.fill("#seed", String(o.seed));
        const lab = await labRunMany(page, row.lab.runs, row.lab.position);
        const r = lab.result;
        const counted = r ? r.counts.reduce((a, c) => a + c, 0) : null;
        const all = r?.done === row.lab.runs && counted + r.unreached === r.done;
        const what = `lab table: ${row.name}`;
        if (row.field) {
          check(lab.state === "error" && r === null, `${what}: refused`, lab.message);
        } else if (row.verdict === "no misfit") {
          check(all && r.kind === row.exact && r.pValue > 1e-4 && /^Consistent with the target/.test(lab.verdict),
            `${what}: ${row.lab.runs} runs tested against ${r?.kind}, no misfit (a wiring check; p ${r?.pValue}; "${lab.verdict}")`, lab.message);
        } else {
          check(all && r.pValue === null && r.targetPValue === null && /^No verdict: .*too few/.test(lab.verdict) && !/Consistent/.test(lab.verdict) && lab.stats["χ² p-value vs exact"] === "no test",
            `${what}: no test, and the verdict says why ("${lab.verdict}")`, lab.message);
        }
        ran += 1;
      }
      check(ran >= 4, `lab table: ${ran} of ${TABLE.rows.length} rows run through the page`);
      // The runs field as typed: a decimal that reads as a whole number is refused quoting it.
      const typed = await labRunMany(page, "4.0000000000000001", 1);
      const invalid = await page.$eval("#lab-runs", (el) => el.getAttribute("aria-invalid"));
      check(typed.state === "error" && invalid === "true" && typed.result === null && /"4\.0000000000000001", which a JavaScript number cannot hold exactly/.test(typed.message),
        `lab: runs typed as 4.0000000000000001 are refused as typed (${typed.message})`);
      check(b.problems.length === 0, "lab table: no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };
}
