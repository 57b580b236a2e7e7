// The "Your models" panel (www/js/gguf.js) with GGUF pairs served beside the page: the
// synthetic pair of specula-gguf (tiny random-weight Llama models, a 267-token byte-level
// BPE vocabulary), loaded by URL and through the file input, run, drawn as token pieces,
// counted by the lab, compacted as a large vocabulary would be, and refused with the
// package's typed errors; then SmolLM2-135M-Instruct when SPECULA_SMOLLM2_GGUF names it
// (required with SPECULA_REQUIRE_REAL_MODELS).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";

// Where the synthetic pair is written (SPECULA_GGUF_PAIR: an already written one).
const PAIR_DIR = process.env.SPECULA_GGUF_PAIR ?? join(tmpdir(), `specula-www-gguf-${process.pid}`);
const SMOLLM2 = process.env.SPECULA_SMOLLM2_GGUF || null;

/** The server's mounts for these tests: the pair at /gguf/, SmolLM2's directory at /smollm2/. */
export function ggufMounts() {
  const mounts = { "/gguf/": PAIR_DIR };
  if (SMOLLM2) mounts["/smollm2/"] = dirname(SMOLLM2);
  return mounts;
}

/** Writes the synthetic pair (target.gguf, draft.gguf) once, with the workspace's example. */
function ensurePair() {
  if (existsSync(join(PAIR_DIR, "target.gguf")) && existsSync(join(PAIR_DIR, "draft.gguf"))) return;
  mkdirSync(PAIR_DIR, { recursive: true });
  const root = join(dirname(new URL(import.meta.url).pathname), "..", "..");
  execFileSync("cargo", ["run", "--release", "--locked", "-q", "-p", "specula-gguf", "--example", "synthetic_pair", "--", PAIR_DIR], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
}

/** A token's text as the output shows it (www/js/view.js): newlines kept and marked, other controls drawn. */
const outputText = (t) => t.replace(/\n/g, "↵\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => (c === "\r" ? "␍" : "·"));
/** As the stage shows it (www/js/pieces.js showPiece). */
const stageText = (t) => (t === "" ? "∅" : t.replace(/ /g, "␣").replace(/\n/g, "↵").replace(/\t/g, "⇥").replace(/\r/g, "␍").replace(/[\u0000-\u001f\u007f]/g, "·"));

const PAIR = { target: "gguf/target.gguf", draft: "gguf/draft.gguf" };

/** Runs `options` through the package in the page with a fresh instance of the pair `urls`: rounds' traces and summary. */
const ggufReference = (page, urls, runs) =>
  page.evaluate(
    async ({ urls, runs }) => {
      const { Specula } = await import("./specula/index.js");
      const s = await Specula.load({ backend: "cpu", target: { url: urls.target }, draft: { url: urls.draft } });
      const out = [];
      try {
        for (const options of runs) {
          const emitted = [];
          const it = s.generate(options);
          let summary;
          for (;;) {
            const { value, done } = await it.next();
            if (done) {
              summary = value;
              break;
            }
            emitted.push(...value.trace.emitted);
          }
          out.push({ emitted, text: summary.text, metrics: summary.metrics, tokenTexts: s.tokenTexts.slice() });
        }
      } finally {
        s.terminate();
      }
      return out;
    },
    { urls, runs },
  );

export function addGgufTests(tests, { browser, open, loaded, hook, check, setControl, playToEnd, artifacts }) {
  const ggufLoaded = (page, timeout = 120_000) =>
    page.waitForFunction(() => window.__speculaPage.gguf.state === "loaded" && window.__speculaPage.models === "gguf" && window.__speculaPage.queued === 0, null, { timeout, polling: 100 });
  const sameAsEngine = (h, label) => {
    const p = h.pageMetrics;
    const e = h.summary?.metrics;
    check(p && e && p.emittedTokens === e.emittedTokens && p.targetCalls === e.targetCalls && p.acceptedTokens === e.acceptedTokens && h.shownRounds.length === e.rounds,
      `${label}: every round animated, the page's metrics the engine's (${e?.emittedTokens} tokens, ${e?.rounds} rounds)`, JSON.stringify({ p, e }));
  };
  /** The output's spans against the run's tokens: ids, and each token's text piece. */
  const outputPieces = async (page, h, label) => {
    const spans = await page.$$eval("#output .otok", (ss) => ss.map((s) => ({ token: Number(s.dataset.token), text: s.textContent })));
    const emitted = h.shownRounds.flatMap((t) => t.emitted);
    check(spans.length === emitted.length && spans.every((s, i) => s.token === emitted[i] && s.text === outputText(h.alphabet[s.token])),
      `${label}: the output shows each generated token's text piece (${spans.length} tokens)`, JSON.stringify(spans.slice(0, 8)));
    return spans;
  };
  /**
   * The distributions panel's rows: the 8 likeliest tokens (fewer when a compacted
   * distribution kept fewer: at temperature 0 it is one token) and the pooled rest, the
   * target's bars summing to 1.
   */
  const pooledRows = async (page, vocab, label, shown = 8) => {
    const rows = await page.$$eval("#dist svg text.tick", (ts) => ts.map((t) => ({ text: t.textContent, pooled: t.classList.contains("pooled") })));
    const target = await page.$$eval("#dist svg rect.bar.s-target title", (ts) => ts.map((t) => Number(t.textContent.split(": ").pop())));
    const sum = target.reduce((a, b) => a + b, 0);
    const last = rows[rows.length - 1];
    check(rows.length === shown + 1 && rows.slice(0, -1).every((r) => !r.pooled) && last.pooled && last.text === `other ${(vocab - shown).toLocaleString("en")}` && Math.abs(sum - 1) < 2e-3,
      `${label}: the distributions show the ${shown} likeliest tokens and a pooled "${last?.text}" row (target bars sum to ${sum.toFixed(4)})`, JSON.stringify({ rows, target }));
  };

  // Load by URL (?target=…&draft=…), run, read the pieces, the lab, the compaction.
  tests.ggufUrl = async () => {
    ensurePair();
    const b = await browser();
    try {
      const base = "backend=cpu&speed=instant&autoplay=0&maxTokens=32&temperature=0.8&method=speculative&gamma=4";
      // A seed whose run emits a token with a space in it (the pair's weights are random:
      // " t", " the", " a", " s" and " " are 5 of its 267 tokens), found through the package.
      const probe = await open(b.context, "backend=cpu&autoplay=0");
      const runs = Array.from({ length: 30 }, (_, i) => ({ prompt: "ROMEO:\n", method: "speculative", gamma: 4, temperature: 0.8, seed: i + 1, maxTokens: 32 }));
      const refs = await ggufReference(probe, PAIR, runs);
      const found = refs.findIndex((r) => r.emitted.some((t) => r.tokenTexts[t].includes(" ")));
      const seed = found + 1;
      const ref = refs[found];
      check(found >= 0, `a seed whose run emits a token with a space: ${seed}`);

      const page = await open(b.context, `${base}&seed=${seed}&target=${PAIR.target}&draft=${PAIR.draft}`);
      await ggufLoaded(page);
      await loaded(page);
      let h = await hook(page);
      const progress = await page.textContent("#gguf-progress");
      const size = (role) => statSync(join(PAIR_DIR, `${role}.gguf`)).size;
      const mb = (role) => (size(role) / 1e6).toFixed(1);
      check(progress.includes(`target.gguf ${mb("target")} / ${mb("target")} MB`) && progress.includes(`draft.gguf ${mb("draft")} / ${mb("draft")} MB`) && /total [\d.]+ \/ [\d.]+ MB$/.test(progress) &&
          h.gguf.progress["target.gguf"][0] === size("target") && h.gguf.progress["draft.gguf"][0] === size("draft"),
        `?target=&draft= loads the pair with progress per file and in total: "${progress}"`, JSON.stringify(h.gguf.progress));
      const option = await page.$eval("#source", (s) => ({ value: s.value, text: s.selectedOptions[0].textContent, title: s.selectedOptions[0].title }));
      check(option.value === "gguf" && option.text === "your GGUF pair" && option.title === "target.gguf + draft.gguf" && h.gguf.vocab === h.alphabet.length && h.gguf.vocab > 128,
        `once loaded, Models is "your GGUF pair" (${option.title}, ${h.gguf.vocab} tokens) beside the trained pair`, JSON.stringify(option));
      // The pair's vocabulary (267 tokens), over the pooled-row threshold, under the compaction one.
      const vocab = h.gguf.vocab;
      h = await playToEnd(page);
      sameAsEngine(h, "GGUF pair by URL");
      check(h.summary.text === ref.text && JSON.stringify(h.shownRounds.flatMap((t) => t.emitted)) === JSON.stringify(ref.emitted),
        "the page's run is the package's for the same options (tokens and text)", JSON.stringify({ page: h.summary.text, ref: ref.text }));
      const spans = await outputPieces(page, h, "GGUF pair by URL");
      const state = await page.textContent("#run-state");
      const metricNames = await page.$$eval("#metrics dt", (ds) => ds.map((d) => d.firstChild.textContent));
      check(/^finished: \d+ tokens in \d+ rounds/.test(state) && metricNames[0] === "tokens per round" && metricNames.includes("tokens"),
        `the run state and metrics count tokens, not characters: "${state}"`, JSON.stringify(metricNames));
      // The token with a space: its round on the stage shows the space as ␣.
      const i = spans.findIndex((s) => h.alphabet[s.token].includes(" "));
      await page.click(`#output .otok[data-i="${i}"]`);
      const token = spans[i].token;
      await page.waitForFunction((t) => document.querySelector(`#stage .cell.result[data-token="${t}"]`), token, { timeout: 10_000 });
      const cell = await page.$eval(`#stage .cell.result[data-token="${token}"] .tok`, (t) => t.textContent);
      check(cell === stageText(h.alphabet[token]) && cell.includes("␣"), `the stage draws the token ${JSON.stringify(h.alphabet[token])} as "${cell}"`);
      const drafts = await page.$$eval("#stage .cell[data-node] .tok", (ts) => ts.map((t) => t.textContent));
      const round = h.shownRounds[Number(await page.$eval(`#output .otok[data-i="${i}"]`, (s) => s.dataset.round))];
      check(drafts.length === round.drafts.length && drafts.every((d, j) => d === stageText(h.alphabet[round.drafts[j].token])), "the stage's drafts are their text pieces");
      await pooledRows(page, vocab, "GGUF pair");
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.waitForFunction(() => window.__speculaPage.theoryIdle === true, null, { timeout: 60_000 });
      await page.screenshot({ path: join(artifacts, "gguf.png"), fullPage: true });

      // The lab at the first position: the likeliest 12 tokens and the rest in one bar.
      await page.fill("#lab-runs", "400");
      const labs = h.lab.finished;
      await page.click("#lab-run");
      await page.waitForFunction((n) => window.__speculaPage.lab.finished > n, labs, { timeout: 120_000 });
      h = await hook(page);
      const ticks = await page.$$eval("#lab-chart svg text.tick", (ts) => ts.map((t) => t.textContent));
      const r = h.lab.result;
      check(h.lab.state === "done" && r.done === 400 && r.counts.length === vocab && r.kind === "target" && r.pValue > 1e-4 && ticks.length === 13 && ticks[12] === `other ${vocab - 12}`,
        `the lab counts the first token over 400 runs against the target (p = ${r?.pValue?.toFixed(3)}), drawn as 12 tokens and "${ticks[12]}"`, JSON.stringify({ state: h.lab.state, message: h.lab.message, ticks }));

      // A large vocabulary's rounds are compacted (the threshold lowered to this pair's):
      // the same run, the same pictures, sparse distributions.
      await page.evaluate(() => (window.__speculaPage.largeVocab = 64));
      await page.click("#reset");
      h = await playToEnd(page);
      const dists = h.shownRounds.flatMap((t) => t.steps.flatMap((s) => [s.targetProbs, s.draftProbs]));
      check(h.summary.text === ref.text && dists.length > 0 && dists.every((d) => d.sparse === true && d.ids.length <= 256 + 16 && d.size === vocab && Math.abs(d.p.reduce((a, x) => a + x, d.rest) - 1) < 1e-6),
        `compacted on arrival: ${dists.length} distributions kept sparse (≤ 256 tokens and those named, the rest pooled), the same run`);
      await page.click("#output .otok[data-i='0']");
      await pooledRows(page, vocab, "compacted");
      await page.waitForFunction(() => window.__speculaPage.theoryIdle === true, null, { timeout: 60_000 });
      const note = await page.textContent("#theory-note .pooled-note").catch(() => null);
      check(note?.includes(`${vocab}-token vocabulary`) && (await page.$$("#chart-tokens circle.point.m-measured")).length === 1,
        "theory: the measured point drawn, and a note on what the pooled cache means", note);
      await page.evaluate(() => (window.__speculaPage.largeVocab = 4096));

      // The race runs the GGUF pair: each lane's text is the package's for its method, its
      // rate in tokens; one of the race's copies stays loaded as the pair.
      await page.fill("#race-repeats", "1");
      await page.click("#race");
      await page.waitForFunction(() => window.__speculaPage.race && window.__speculaPage.queued === 0 && window.__speculaPage.gguf.state === "loaded", null, { timeout: 120_000, polling: 100 });
      h = await hook(page);
      const { prompt, temperature, seed: raceSeed, maxTokens, gamma } = h.options;
      const [arRef, specRef] = await ggufReference(page, PAIR, [
        { prompt, temperature, seed: raceSeed, maxTokens, method: "autoregressive" },
        { prompt, temperature, seed: raceSeed, maxTokens, method: "speculative", gamma },
      ]);
      const lanes = [await page.textContent("#race-ar"), await page.textContent("#race-spec")];
      check(h.race.unit === "tokens" && lanes[0] === arRef.text && lanes[1] === specRef.text && h.race.ar.tokens === arRef.emitted.length && h.race.spec.tokens === specRef.emitted.length &&
          /tokens\/s/.test(await page.textContent("#race-ar-time")) && /× (faster|slower)$/.test(await page.textContent("#race-spec-time")),
        `the race runs the GGUF pair: both lanes write the package's text, counted in tokens (${h.race.ar.tokens} and ${h.race.spec.tokens})`, JSON.stringify({ lanes, ar: arRef.text, spec: specRef.text }));
      check(h.models === "gguf" && (await page.inputValue("#source")) === "gguf" && h.gguf.loads === 1, "after the race the GGUF pair is still the one on stage");

      // The trained pair still runs beside it.
      await setControl(page, "source", "bundled");
      h = await playToEnd(page);
      check(h.models === "bundled" && h.summary.metrics.emittedTokens === 32 && typeof h.alphabet === "string", "switching back, the trained pair runs (its characters, 32 of them)");
      check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };

  // The file input, the menu before loading, and the typed errors.
  tests.ggufFile = async () => {
    ensurePair();
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=16&seed=5&temperature=0.8");
      await loaded(page);
      // The first live run once the models are ready (main.js), before the menu is touched.
      await page.waitForFunction(() => window.__speculaPage.source === "live" && window.__speculaPage.queued === 0, null, { timeout: 60_000 });
      // "your GGUF pair" before loading: the panel opens and says what to do; no run starts.
      const runId = (await hook(page)).runId;
      await page.selectOption("#source", "gguf");
      const before = await page.evaluate(() => ({ source: document.getElementById("source").value, open: document.getElementById("gguf-box").open, focus: document.activeElement?.id, state: document.getElementById("gguf-state").textContent, runId: window.__speculaPage.runId }));
      check(before.source === "bundled" && before.open && before.focus === "gguf-target-url" && /not loaded yet/.test(before.state) && before.runId === runId,
        "choosing your GGUF pair before loading opens the panel, focuses the target's URL and says what to do", JSON.stringify(before));

      // A 404 and a file that is not GGUF: the package's typed error in the banner.
      await page.fill("#gguf-target-url", "gguf/missing.gguf");
      await page.fill("#gguf-draft-url", PAIR.draft);
      await page.click("#gguf-load");
      await page.waitForFunction(() => window.__speculaPage.gguf.state === "error", null, { timeout: 60_000 });
      let h = await hook(page);
      check(h.errorCode === "download_failed" && /^Could not load your models: .*missing\.gguf/.test(h.error) && !(await page.$eval("#error", (e) => e.hidden)),
        `a 404 shows the package's error (code ${h.errorCode}) in the banner`, h.error);
      // A file dropped on the zone is picked like a chosen one.
      const dropped = await page.evaluateHandle(() => {
        const d = new DataTransfer();
        d.items.add(new File([new Uint8Array(1500)], "dropped.gguf"));
        return d;
      });
      await page.dispatchEvent("#gguf-draft-zone", "drop", { dataTransfer: dropped });
      const droppedText = await page.textContent("#gguf-draft-picked");
      check(droppedText === "dropped.gguf · 0.0 MB (from this computer)" && (await page.inputValue("#gguf-draft-url")) === "", `a file dropped on the zone is picked: "${droppedText}"`);
      const junk = { name: "notes.gguf", mimeType: "application/octet-stream", buffer: Buffer.from("these are notes, not a model") };
      await page.setInputFiles("#gguf-target-file", junk);
      await page.setInputFiles("#gguf-draft-file", junk);
      const pickedText = await page.textContent("#gguf-target-picked");
      await page.click("#gguf-load");
      await page.waitForFunction(() => window.__speculaPage.gguf.state === "error" && /GGUF/.test(window.__speculaPage.error ?? ""), null, { timeout: 60_000 });
      h = await hook(page);
      check(h.errorCode === "bad_weights" && /not a readable GGUF file/.test(h.error) && /^notes\.gguf · 0\.0 MB/.test(pickedText),
        `a file that is not GGUF shows the package's error (code ${h.errorCode}) in the banner`, h.error);
      await page.click("#reset");
      h = await playToEnd(page);
      check(h.models === "bundled" && h.summary.metrics.emittedTokens === 16 && !h.error, "after both errors the trained pair still runs");

      // The pair through the file input (blob: URLs): the same run as by URL.
      await page.setInputFiles("#gguf-target-file", join(PAIR_DIR, "target.gguf"));
      await page.setInputFiles("#gguf-draft-file", join(PAIR_DIR, "draft.gguf"));
      await page.click("#gguf-load");
      await ggufLoaded(page);
      const options = (await hook(page)).options;
      h = await playToEnd(page);
      const [ref] = await ggufReference(page, PAIR, [options]);
      check(h.models === "gguf" && h.summary.text === ref.text && h.gguf.name === "target.gguf + draft.gguf",
        "files picked in the file input load and run the same text as the same files by URL", JSON.stringify({ page: h.summary.text, ref: ref.text }));
      sameAsEngine(h, "GGUF pair from files");
      await outputPieces(page, h, "GGUF pair from files");
      check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };

  // SmolLM2-135M-Instruct as target and draft: greedy, "The capital of France is" → " Paris".
  tests.ggufSmollm2 = async () => {
    if (!SMOLLM2) {
      if (process.env.SPECULA_REQUIRE_REAL_MODELS) check(false, "SPECULA_SMOLLM2_GGUF is required (SPECULA_REQUIRE_REAL_MODELS is set)");
      else console.log("skip SmolLM2 in the page: SPECULA_SMOLLM2_GGUF is not set (eval \"$(bash scripts/smollm2-reference.sh)\" sets it)");
      return;
    }
    const b = await browser();
    try {
      const url = `smollm2/${encodeURIComponent(basename(SMOLLM2))}`;
      const t0 = Date.now();
      const page = await open(b.context, `backend=cpu&speed=instant&autoplay=0&method=speculative&gamma=3&maxTokens=6&temperature=0&seed=1&prompt=${encodeURIComponent("The capital of France is")}&target=${url}&draft=${url}`);
      await ggufLoaded(page, 180_000);
      const loadedIn = (Date.now() - t0) / 1000;
      let h = await playToEnd(page);
      const text = await page.$$eval("#output .otok", (ss) => ss.map((s) => s.textContent.replaceAll("↵\n", "\n")).join(""));
      check(text.startsWith(" Paris") && h.summary.text.startsWith(" Paris") && h.shownRounds.length >= 2 && h.gguf.vocab === 49_152,
        `SmolLM2 (loaded in ${loadedIn.toFixed(1)} s): greedy "The capital of France is" →${JSON.stringify(text)} in ${h.shownRounds.length} rounds`, JSON.stringify(h.summary.text));
      // The wasm CPU pass against the independent numpy reference of
      // scripts/smollm2-reference.sh (SPECULA_SMOLLM2_REF): logits at every position of
      // its first prompt, within the native tests' 1e-3.
      const refDir = process.env.SPECULA_SMOLLM2_REF;
      if (refDir) {
        const meta = JSON.parse(readFileSync(join(refDir, "logits.json"), "utf8"));
        const prompt = meta.prompts[0];
        const bytes = readFileSync(join(refDir, "logits.f32"));
        const n = prompt.length * meta.vocab;
        const want = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 4 * n));
        const got = await page.evaluate(
          (p) => window.__speculaPage.ggufTargetForward({ committedLen: 0, sequences: [p], queries: p.map((_, i) => ({ sequence: 0, prefixLen: i + 1 })) }),
          prompt,
        );
        let diff = got.length === want.length ? 0 : Infinity;
        for (let i = 0; i < want.length && diff < Infinity; i++) diff = Math.max(diff, Math.abs(got[i] - want[i]));
        check(diff < 1e-3, `SmolLM2 in the page's wasm: logits at all ${prompt.length} positions within 1e-3 of the numpy reference (largest difference ${diff.toExponential(1)})`);
      } else if (process.env.SPECULA_REQUIRE_REAL_MODELS) {
        check(false, "SPECULA_SMOLLM2_REF is required (SPECULA_REQUIRE_REAL_MODELS is set)");
      }
      const first = h.shownRounds[0].steps[0]?.targetProbs;
      check(first?.sparse === true && first.size === 49_152 && first.ids.length <= 256 + 16, `its 49,152-token distributions are kept compacted (${first?.ids?.length} tokens of the first)`);
      await page.click("#output .otok[data-i='0']");
      // Greedy: the target's and the draft's recorded distributions are the one token each
      // takes (the same token: the file drafts for itself), and the page draws no row that
      // is zero in both, so one bar and the pooled rest.
      await pooledRows(page, 49_152, "SmolLM2 at temperature 0", 1);
      // The lab's second position needs a small top-k over this vocabulary when sampling
      // (greedy rows are one token each): the package says so.
      await setControl(page, "temperature", 0.8);
      await page.selectOption("#lab-position", "2");
      const labs = h.lab.finished;
      await page.click("#lab-run");
      await page.waitForFunction((n) => window.__speculaPage.lab.finished > n, labs, { timeout: 60_000 });
      h = await hook(page);
      check(h.lab.state === "error" && h.errorCode === "invalid_option" && h.errorField === "topK" && h.errorControl === "topK",
        "the lab's second position without top-k: the package's invalid_option on topK, marked on the top-k slider", JSON.stringify({ lab: h.lab.message, error: h.error }));
      // Sampled at 0.8: the likeliest 8 of the 49,152 and the rest pooled (Reset: the lab stopped the run).
      await page.click("#reset");
      h = await playToEnd(page);
      await page.click("#output .otok[data-i='0']");
      await pooledRows(page, 49_152, `SmolLM2 at temperature 0.8 ("${h.summary.text}")`);
      await page.waitForFunction(() => window.__speculaPage.theoryIdle === true, null, { timeout: 60_000 });
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(artifacts, "gguf-smollm2.png"), fullPage: true });
      check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  };
}
