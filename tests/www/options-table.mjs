// The shared options table (tests/options/table.json) through the teaching page: the same
// verdicts, with the same code and field, as the CLI (crates/specula-cli/tests/
// options_table.rs) and the npm package (tests/web-package/options-table.mjs). Run by
// run.mjs after the hostile table (one browser, one page).
//
// Each row's options are set through the page's own inputs, as a student sets them: the
// prompt typed into its box, the menus, sliders, tree field and the dynamic-γ and draft-in-parallel boxes set (input +
// change), the seed and tokens typed into their number fields; then Play. A row the table
// accepts must generate, and the page must have sent each of the row's options with the
// row's value. A row the table refuses must be refused with the row's code and field: the
// banner shows, the field's control is marked (and only it), the status says "not running",
// no model ran, and the page would have sent the row's options (its own generateOptions()).
//
// A row the page's inputs cannot express is skipped, with its reason printed: pageCannot()
// below says which and why. Options a row leaves out take the page's base settings (BASE,
// all valid; where it matters the package's defaults: γ 4, k 4, k-Seq, temperature 1,
// seed 0), and tokens are 4 where the row names none (the package's default is 64; any
// valid count gives the same verdict), to keep the table fast.
import { readFileSync } from "node:fs";

const TABLE = JSON.parse(readFileSync(new URL("../options/table.json", import.meta.url), "utf8"));

/** The page's settings for the options a row leaves out (controls set without events). */
const BASE = { prompt: "ROMEO:", method: "speculative", shape: "iid", selection: "kseq", gamma: 4, drafts: 4, tree: "2,2,1", kl: 34, temperature: 1, topK: 0, topP: 1, seed: "0", maxTokens: "4", dynamicGamma: false, parallelDraft: false, epsilon: 0.09, delta: 0.3, ngram: 3, bug: "", speed: 6 };

/**
 * The sliders (no typed field: the browser clamps a slider and snaps it to its steps), the
 * menus, the typed number fields: each control's id is the option it sets.
 */
const byName = (names) => Object.fromEntries(names.map((n) => [n, n]));
const SLIDER = byName(["gamma", "drafts", "temperature", "topK", "topP", "epsilon", "delta", "ngram"]);
const MENU = byName(["method", "selection", "bug"]);
const TYPED = byName(["seed", "maxTokens"]);
/** The control an error's field is about: the control whose id is the option's name. */
const controlOf = (field) => String(field).replace(/\[\d+\]$/, "");
/** The order a student sets the controls in: the method (and shape) first, since they enable the others. */
const ORDER = ["method", "shape", "selection", "bug", "gamma", "drafts", "tree", "kl", "epsilon", "delta", "ngram", "temperature", "topK", "topP", "dynamicGamma", "parallelDraft"];

const NOT_RUN = /^not running: fix /;
const eq = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const onSlider = (v, { min, max, step }) => typeof v === "number" && v >= min && v <= max && Math.abs((v - min) / step - Math.round((v - min) / step)) < 1e-9;

/**
 * Why the page's inputs cannot express the row's `options`: [kind, reason], or null when they
 * can. The page expresses a row when a student can set its controls so that the page sends
 * every option of the row with the row's value. It cannot when the row names
 *   "no control":  an option no control sets ("bug", "stop", a misspelt name);
 *   "off the control": a value the control cannot hold: a number off a slider (γ, k, D,
 *                  temperature, top-k and top-p are sliders with no typed field), a method
 *                  or selection not on its menu, another type than the control's (a string
 *                  for γ), recordDistributions other than true;
 *   "not sent":    an option the page does not send with the row's other settings: its
 *                  control is disabled (γ for autoregressive or a tree, k for one draft or
 *                  a tree, a tree or a selection for a method that takes none, dynamic γ but
 *                  for speculative and mentored), a value that means "off" (top-k 0, top-p 1,
 *                  dynamic γ unticked: the option is left out), or mentored without kl (the
 *                  D slider always sends one).
 * The page always sends recordDistributions: true, so a row with it is the page's own.
 * `page` is what the controls hold, read from the page: each slider's min, max and step,
 * each menu's values, and the kl each position of the D slider sends.
 */
export function pageCannot(options, page) {
  const method = options.method ?? BASE.method;
  const multi = method === "spectr" || method === "multiround";
  const tree = options.tree !== undefined;
  // Whether the page sends each option with the row's settings (settings.js generateOptions).
  const sends = {
    prompt: true, method: true, temperature: true, seed: true, maxTokens: true, recordDistributions: true, topK: true, topP: true,
    gamma: method !== "autoregressive" && !(multi && tree),
    drafts: multi && !tree,
    tree: multi,
    selection: method === "spectr",
    kl: method === "mentored",
    dynamicGamma: ["speculative", "mentored", "typical"].includes(method),
    parallelDraft: method === "speculative",
    epsilon: method === "typical",
    delta: method === "typical",
    ngram: method === "lookup",
    bug: ["speculative", "spectr", "multiround"].includes(method),
  };
  for (const key of Object.keys(options)) if (!Object.hasOwn(sends, key)) return ["no control", `no control of the page sets "${key}"`];
  for (const [key, v] of Object.entries(options)) {
    if (key === "prompt" && typeof v !== "string") return ["off the control", `the prompt box holds text, not ${JSON.stringify(v)}`];
    if (MENU[key] && !page.menus[key].includes(v)) return ["off the control", `${JSON.stringify(v)} is not on the ${key} menu (${page.menus[key].join(", ")})`];
    if (SLIDER[key] && typeof v !== "number") return ["off the control", `${key} ${JSON.stringify(v)} is a ${typeof v}: its slider sends numbers`];
    if (SLIDER[key]) {
      const s = page.sliders[SLIDER[key]];
      if (!onSlider(v, s)) return ["off the control", `${key} ${JSON.stringify(v)} is off its slider (${s.min}–${s.max} in steps of ${s.step}), which has no typed field`];
    }
    if (TYPED[key] && (typeof v !== "number" || !Number.isFinite(v))) return ["off the control", `${key} ${JSON.stringify(v)} is not a number the ${TYPED[key]} field can hold`];
    if (key === "tree" && !(Array.isArray(v) && v.every((x) => typeof x === "number" && Number.isFinite(x)))) return ["off the control", `the tree field holds numbers, not ${JSON.stringify(v)}`];
    if (key === "kl" && !page.kls.includes(v)) return ["off the control", `kl ${JSON.stringify(v)} is not a value of the D slider (0, then 0.001 to 5 on a log grid)`];
    if (key === "dynamicGamma" && typeof v !== "boolean") return ["off the control", `dynamic γ is a box: true or false, not ${JSON.stringify(v)}`];
    if (key === "parallelDraft" && typeof v !== "boolean") return ["off the control", `"draft in parallel" is a box: true or false, not ${JSON.stringify(v)}`];
    if (key === "recordDistributions" && v !== true) return ["off the control", "the page always sends recordDistributions: true"];
  }
  for (const [key, v] of Object.entries(options)) {
    if (!sends[key]) return ["not sent", `the page sends no ${key} with method ${method}${tree && multi ? " drafting a tree" : ""}: its control is disabled`];
    if (key === "topK" && v === 0) return ["not sent", "top-k 0 is the slider's \"off\": the page then sends no topK"];
    if (key === "topP" && v === 1) return ["not sent", "top-p 1 is the slider's \"off\": the page then sends no topP"];
    if (key === "dynamicGamma" && v === false) return ["not sent", "dynamic γ unticked sends no dynamicGamma (the page sends it only when ticked)"];
    if (key === "parallelDraft" && v === false) return ["not sent", "\"draft in parallel\" unticked sends no parallelDraft (the page sends it only when ticked)"];
  }
  if (method === "mentored" && options.kl === undefined) return ["not sent", "the D slider always sends a kl with mentored: the page cannot leave it out"];
  for (const [key, m] of [["epsilon", "typical"], ["delta", "typical"], ["ngram", "lookup"]]) {
    if (method === m && options[key] === undefined) return ["not sent", `the ${key} slider always sends ${key} with ${m}: the page cannot leave it out`];
  }
  if (options.bug === "") return ["not sent", "the bug menu's \"none\" sends no bug"];
  return null;
}

/** The row's options as the page's inputs: the prompt typed, the controls set (in ORDER), the number fields typed. */
function inputsOf(options, page) {
  const controls = {};
  const typed = {};
  for (const [key, v] of Object.entries(options)) {
    if (MENU[key]) controls[MENU[key]] = v;
    else if (SLIDER[key]) controls[SLIDER[key]] = v;
    else if (TYPED[key]) typed[TYPED[key]] = String(v);
    else if (key === "tree") Object.assign(controls, { shape: "tree", tree: v.join(",") });
    else if (key === "kl") controls.kl = page.kls.indexOf(v);
    else if (key === "dynamicGamma" || key === "parallelDraft") controls[key] = v;
  }
  return { prompt: options.prompt, controls: ORDER.filter((id) => id in controls).map((id) => [id, controls[id]]), typed };
}

export function addOptionsTableTests(tests, { browser, open, loaded, hook, check }) {
  tests.optionsTable = async () => {
    const b = await browser();
    const consoleErrors = [];
    try {
      const started = Date.now();
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=4&seed=0");
      page.on("console", (msg) => {
        if (msg.type() === "error" && !/favicon|404 \(Not Found\)/.test(msg.text())) consoleErrors.push(msg.text());
      });
      await loaded(page);
      // What the controls can hold: the sliders' ranges and steps, the menus' values, and the
      // kl each position of the D slider sends (the page's own settings(), position by position).
      const controls = await page.evaluate(async (sliders) => {
        const { settings } = await import("./js/settings.js");
        const kl = document.getElementById("kl");
        const was = kl.value;
        const kls = [];
        for (let i = Number(kl.min); i <= Number(kl.max); i += Number(kl.step)) {
          kl.value = String(i);
          kls[i] = settings().kl;
        }
        kl.value = was;
        return {
          sliders: Object.fromEntries(sliders.map((id) => { const el = document.getElementById(id); return [id, { min: Number(el.min), max: Number(el.max), step: Number(el.step) }]; })),
          menus: Object.fromEntries(["method", "selection", "bug"].map((id) => [id, [...document.getElementById(id).options].map((o) => o.value)])),
          kls,
        };
      }, Object.values(SLIDER));
      const idle = () => page.waitForFunction(() => window.__speculaPage.queued === 0, null, { timeout: 60_000, polling: 50 });
      const outputText = () => page.$$eval("#output .otok", (s) => s.map((x) => x.textContent.replace("↵\n", "\n")).join(""));

      const skipped = [];
      let ran = 0;
      for (const [i, row] of TABLE.rows.entries()) {
        const t = Date.now();
        const label = `options table #${i + 1} ${JSON.stringify(row.options)}`;
        const cannot = pageCannot(row.options, controls);
        if (cannot) {
          skipped.push({ n: i + 1, kind: cannot[0], why: cannot[1] });
          console.log(`skip ${label}: ${cannot[0]}: ${cannot[1]}`);
          continue;
        }
        const input = inputsOf(row.options, controls);
        await idle();
        const before = await hook(page);
        // The base settings, without events (nothing runs), then the row's, as a student sets them.
        await page.evaluate((base) => {
          for (const [id, v] of Object.entries(base)) {
            const el = document.getElementById(id);
            if (el.type === "checkbox") el.checked = v;
            else el.value = String(v);
          }
          document.getElementById("method").dispatchEvent(new Event("input", { bubbles: true }));
        }, BASE);
        const typeInto = async (id, text) => {
          await page.focus(`#${id}`);
          await page.keyboard.press("Control+A");
          await page.keyboard.press("Backspace");
          if (text) await page.keyboard.type(text);
        };
        if (input.prompt !== undefined) await typeInto("prompt", input.prompt);
        for (const [id, v] of input.controls) {
          await page.evaluate(({ id, v }) => {
            const el = document.getElementById(id);
            if (el.type === "checkbox") el.checked = v;
            else el.value = String(v);
            el.dispatchEvent(new Event("input", { bubbles: true }));
            el.dispatchEvent(new Event("change", { bubbles: true }));
          }, { id, v });
        }
        for (const [id, text] of Object.entries(input.typed)) await typeInto(id, text);
        await idle();
        // What the page would send with the settings on screen (its own generateOptions()).
        const wouldSend = await page.evaluate(async () => {
          const { settings, generateOptions } = await import("./js/settings.js");
          try {
            return generateOptions(settings());
          } catch (error) {
            return { error: error.message };
          }
        });
        const runsBefore = (await hook(page)).modelRuns;
        const errorsBefore = b.problems.length + consoleErrors.length;
        const problems = [];
        const notSent = (sent) => Object.entries(row.options).filter(([k, v]) => !eq(sent?.[k], v)).map(([k, v]) => `${k} ${JSON.stringify(sent?.[k])} for ${JSON.stringify(v)}`);
        if (notSent(wouldSend).length) problems.push(`the controls set would send ${notSent(wouldSend).join(", ")}`);
        await page.click("#play");
        await idle();
        let what;
        if (!row.ok) {
          await page.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 10_000, polling: 50 }).catch(() => {});
          const control = controlOf(row.field);
          const seen = await page.evaluate((control) => ({
            error: document.getElementById("error").hidden ? null : document.getElementById("error").textContent,
            state: document.getElementById("run-state").textContent,
            invalid: document.getElementById(control)?.getAttribute("aria-invalid") ?? null,
            marked: [...document.querySelectorAll("[aria-invalid='true']")].map((e) => e.id),
            code: window.__speculaPage.errorCode,
            field: window.__speculaPage.errorField,
            errorControl: window.__speculaPage.errorControl,
            modelRuns: window.__speculaPage.modelRuns,
          }), control);
          if (!seen.error) problems.push("no error shown");
          if (seen.code !== row.code) problems.push(`code ${seen.code}, the table's ${row.code}`);
          if (seen.field !== row.field) problems.push(`field ${seen.field}, the table's ${row.field}`);
          if (seen.errorControl !== control || seen.invalid !== "true" || seen.marked.length !== 1) problems.push(`marked ${seen.marked.join(", ") || "nothing"} (error control ${seen.errorControl}), expected #${control} alone`);
          if (!NOT_RUN.test(seen.state)) problems.push(`status "${seen.state}"`);
          if (seen.modelRuns !== runsBefore) problems.push(`Play ran the models ${seen.modelRuns - runsBefore} times`);
          what = `refused, ${seen.code} on ${seen.field}, #${seen.marked.join(", #")} marked: "${(seen.error ?? "").slice(0, 90)}${(seen.error ?? "").length > 90 ? "…" : ""}"`;
        } else {
          let timedOut = false;
          await page
            .waitForFunction((id) => {
              const h = window.__speculaPage;
              return !!h.error || (h.runId > id && h.source === "live" && h.finished);
            }, before.runId, { timeout: 30_000, polling: 50 })
            .catch(() => (timedOut = true));
          const h = await hook(page);
          if (timedOut) problems.push("no result within 30 s");
          if (h.error) problems.push(`error "${h.error}" (${h.errorCode} on ${h.errorField})`);
          if (!h.finished || h.runId <= before.runId || h.source !== "live") problems.push("did not run");
          if (notSent(h.options).length) problems.push(`sent ${notSent(h.options).join(", ")}`);
          const text = await outputText();
          if (!problems.length && (h.summary?.text.length !== h.options.maxTokens || text !== h.summary.text)) problems.push(`the output ${JSON.stringify(text)}, the engine's text ${JSON.stringify(h.summary?.text)} for maxTokens ${h.options.maxTokens}`);
          what = `accepted, generates ${JSON.stringify(h.summary?.text ?? "")}`;
        }
        await page.waitForFunction(() => window.__speculaPage.theoryIdle === true, null, { timeout: 20_000, polling: 50 }).catch(() => problems.push("the theory charts were not drawn within 20 s"));
        if (b.problems.length + consoleErrors.length > errorsBefore) problems.push(`errors: ${[...b.problems, ...consoleErrors].slice(-3).join("; ")}`);
        check(problems.length === 0, `${label}: ${what} (${Date.now() - t} ms)`, problems.join("; "));
        ran += 1;
      }
      const kinds = {};
      for (const s of skipped) (kinds[s.kind] ??= []).push(s.n);
      check(ran > 0 && ran + skipped.length === TABLE.rows.length, `options table: ${ran} of ${TABLE.rows.length} rows ran through the page's controls, ${skipped.length} skipped (${Object.entries(kinds).map(([k, ns]) => `${k}: ${ns.length}, #${ns.join(" #")}`).join("; ")})`);
      check(b.problems.length === 0 && consoleErrors.length === 0, "options table: no page errors, console errors, CSP violations or off-origin requests", [...b.problems, ...consoleErrors].join("; "));
      console.log(`   options table: ${ran} rows run, ${skipped.length} skipped, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    } finally {
      await b.close();
    }
  };
}
