// End-to-end checks from a walk through the teaching page (used by run.mjs): Play is never
// lost and never moves under the pointer; the distributions panel follows the stage; stage,
// output and transport share the screen at 1280×800 and 390×844; every symbol has a
// definition; greedy narration; chart ticks, labels and marked approximations; the draft
// tree's edges; refused inputs; the race's lanes. Each check reads what the student sees.
import { join } from "node:path";

export function addWalkTests(tests, { browser, open, loaded, hook, check, setControl, playToEnd, artifacts }) {
  // ---------- the walk through the page: clicks, layout, definitions, narration, inputs ----------

  /** A box in CSS pixels: [left, top, width, height]. */
  const boxOf = (page, selector) => page.$eval(selector, (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height].map((v) => Math.round(v * 10) / 10); });

  /** Waits for `fn` in the page; false (not a throw) when it does not come true in time. */
  const within = (page, fn, arg, timeout) => page.waitForFunction(fn, arg, { timeout, polling: 100 }).then(() => true, () => false);

  // Play after an error and after Reset always starts playback; nothing moves under the pointer.
  tests.playClicks = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=1&autoplay=0&maxTokens=60&seed=5");
      await loaded(page);
      await page.fill("#prompt", "naïve");
      await page.click("#play");
      await page.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 10_000 });
      const state = await page.textContent("#run-state");
      check(/'ï'/.test(await page.textContent("#error")) && /^not running/.test(state), `a refused prompt: the error names the character and the status says "${state}"`);
      // Fix the prompt (the focus stays in it) and press Play with the pointer: mouse-down
      // blurs the prompt, which starts a new run and clears the error.
      await page.fill("#prompt", "ROMEO:\n");
      const before = await boxOf(page, "#play");
      await page.mouse.move(before[0] + before[2] / 2, before[1] + before[3] / 2);
      await page.mouse.down();
      await page.waitForFunction(() => document.getElementById("error").hidden, null, { timeout: 10_000 }).catch(() => {});
      await page.waitForTimeout(200);
      const during = await boxOf(page, "#play");
      await page.mouse.up();
      check(JSON.stringify(before) === JSON.stringify(during), `Play stays under the pointer between mouse-down and mouse-up (${before} → ${during})`);
      const played = await within(page, () => window.__speculaPage.source === "live" && window.__speculaPage.shownRounds.length >= 1, null, 60_000);
      const h = await hook(page);
      const playing = await page.textContent("#run-state");
      check(played && h.options.prompt === "ROMEO:\n" && /^playing/.test(playing) && (await page.$eval("#error", (e) => e.hidden)),
        `after the error, one click on Play plays the fixed prompt (status "${playing}", ${h.shownRounds.length} rounds)`);
      // Pause, then Reset and Play at once, while the run is still being stopped (as slowly
      // as a round on a software WebGPU adapter: 1.5 s).
      await page.click("#pause");
      const id = (await hook(page)).runId;
      await page.evaluate(() => (window.__speculaPage.stopDelayMs = 1500));
      await page.click("#reset");
      await page.click("#play");
      const again = await within(page, (id) => window.__speculaPage.runId > id && window.__speculaPage.shownRounds.length >= 1, id, 60_000);
      const after = await page.textContent("#run-state");
      check(again && /^playing/.test(after), `Reset then Play at once plays the new run (status "${after}")`);
      await page.evaluate(() => (window.__speculaPage.stopDelayMs = 0));
      // Play while a round is being computed (or animated) is never dropped either.
      await page.click("#pause");
      await page.click("#play");
      const resumed = (await hook(page)).shownRounds.length;
      const more = await within(page, (n) => window.__speculaPage.shownRounds.length > n, resumed, 60_000);
      check(more && /^playing/.test(await page.textContent("#run-state")), "Pause then Play resumes playback");
    } finally {
      await b.close();
    }
  };

  // The distributions panel shows the round on the stage, until a character is picked.
  tests.follow = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=4&autoplay=0&maxTokens=60&seed=3");
      await loaded(page);
      await page.click("#play");
      await page.waitForFunction(() => window.__speculaPage.shownRounds.length >= 1, null, { timeout: 60_000 });
      const seen = new Set();
      const wrong = [];
      for (let i = 0; i < 80 && seen.size < 4; i++) {
        const [stage, dist] = await page.evaluate(() => [document.getElementById("round-label").textContent, document.getElementById("dist-label").dataset.round]);
        const m = /^round (\d+)/.exec(stage);
        if (m) {
          seen.add(m[1]);
          if (m[1] !== dist) wrong.push(`stage ${m[1]} / panel ${dist}`);
        }
        await page.waitForTimeout(150);
      }
      check(seen.size >= 3 && wrong.length === 0, `the distributions panel follows the stage (rounds ${[...seen].join(", ")} seen; ${wrong.length} mismatches)`, wrong.join("; "));
      await page.click("#output .otok");
      const picked = await page.evaluate(() => ({ round: document.getElementById("dist-label").dataset.round, text: document.getElementById("dist-label").textContent }));
      const n = (await hook(page)).shownRounds.length;
      await within(page, (n) => window.__speculaPage.shownRounds.length >= n + 2 || window.__speculaPage.finished, n, 60_000);
      const still = await page.evaluate(() => document.getElementById("dist-label").dataset.round);
      check(picked.round === "1" && /picked/.test(picked.text) && still === "1", `a picked character keeps the panel on its round (round ${still}, "${picked.text}")`);
      await page.click("#dist-follow");
      const back = await page.evaluate(() => [document.getElementById("dist-label").dataset.round, /^round (\d+)/.exec(document.getElementById("round-label").textContent)?.[1]]);
      check(back[0] === back[1] && back[0] !== "1", `"Follow the animation again" returns the panel to the round on the stage (${back[0]}, stage ${back[1]})`);
    } finally {
      await b.close();
    }
  };

  // The stage and the output are on screen with the transport bar, on a laptop and a phone.
  tests.layout = async () => {
    const b = await browser();
    try {
      for (const [width, height, query] of [[1280, 800, "gamma=4"], [390, 844, "gamma=4"], [1280, 800, "method=spectr&shape=tree&tree=2,2,1"], [1280, 800, "method=spectr&selection=race&gamma=4&drafts=3"]]) {
        const page = b.context.pages()[0] ?? (await b.context.newPage());
        await page.setViewportSize({ width, height });
        await open(b.context, `backend=cpu&speed=instant&autoplay=0&maxTokens=40&seed=2&${query}`);
        await loaded(page);
        // A round with a replacement (its residual drawn on the stage) when there is one.
        for (let i = 0; i < 6; i++) {
          await page.click("#step");
          await page.waitForFunction((n) => window.__speculaPage.shownRounds.length === n, i + 1, { timeout: 60_000 });
          if ((await hook(page)).shownRounds[i].sources.includes("resampled")) break;
        }
        await page.evaluate(() => window.scrollTo(0, 0));
        const [, tTop, , tH] = await boxOf(page, ".transport");
        const [, pTop, , pH] = await boxOf(page, "#play");
        const [, sTop, , sH] = await boxOf(page, "#stage");
        const [, fTop, , fH] = await boxOf(page, "#stage-focus");
        const [, oTop] = await boxOf(page, "#output");
        const fits = tTop >= 0 && pTop + pH <= height && sTop >= tTop + tH && sTop + sH <= height && fTop + fH <= height && oTop <= height - 48;
        check(fits, `${width}×${height}, ${query}: transport (Play at y ${pTop}), stage (${Math.round(sTop)}–${Math.round(sTop + sH)}), the step under it (to ${Math.round(fTop + fH)}) and the output (from ${oTop}) are on screen together`);
        await page.evaluate(() => window.scrollTo(0, 900));
        await page.waitForTimeout(100);
        const [, stuck] = await boxOf(page, ".transport");
        check(Math.abs(stuck) <= 1, `${width}×${height}: the transport bar stays at the top while scrolling (y ${stuck})`);
        await page.evaluate(() => window.scrollTo(0, 0));
        if (query === "gamma=4") await page.screenshot({ path: join(artifacts, `layout-${width}.png`) });
      }
    } finally {
      await b.close();
    }
  };

  // Every symbol has a definition on hover and focus; each method says what it adds and whether it is lossless.
  tests.glossary = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=24&seed=2&method=spectr&gamma=3&drafts=3");
      await loaded(page);
      const expectTerms = async (pairs, label) => {
        for (const [key, symbol] of pairs) {
          const found = await page.evaluate(({ key, symbol }) => {
            for (const d of document.querySelectorAll("details")) d.open = true;
            const a = [...document.querySelectorAll(`abbr.term[data-term="${key}"]`)].find((e) => e.offsetParent !== null && e.textContent === symbol);
            if (!a) return null;
            a.focus();
            const tip = document.getElementById("tip");
            const def = document.getElementById(a.getAttribute("aria-describedby"));
            return { focused: document.activeElement === a, tip: tip.hidden ? null : tip.textContent, def: def?.textContent ?? null, tabIndex: a.tabIndex };
          }, { key, symbol });
          check(found && found.focused && found.tabIndex === 0 && found.tip && found.tip === found.def && found.tip.length > 30 && found.tip.includes(symbol === "Σ min(target, draft)" ? "Σ min" : symbol),
            `${label}: '${symbol}' has a focusable definition: "${found?.tip?.slice(0, 70)}…"`, JSON.stringify(found));
        }
      };
      const spectr = await playToEnd(page);
      // Multi-draft acceptance: characters per round and the per-position rate lead, and the
      // vLLM rate's definition is explained in visible text with this run's numbers.
      const m = spectr.summary.metrics;
      const perRound = (m.emittedTokens / m.rounds).toFixed(2);
      const shownMetrics = await page.evaluate(() => ({ first: document.querySelector("#metrics dd")?.dataset.metric, perRound: document.querySelector('#metrics dd[data-metric="tokens-per-round"]').textContent, note: document.getElementById("metrics-note").textContent }));
      check(shownMetrics.first === "tokens-per-round" && shownMetrics.perRound === perRound && shownMetrics.note.includes(`(${spectr.summary.summary.acceptanceRate.toFixed(3)}) while each round emits ${perRound} characters`) && /at most one per position/.test(shownMetrics.note),
        `SpecTr metrics: ${perRound} characters per round first, the vLLM acceptance rate explained in place: "${shownMetrics.note.slice(0, 90)}…"`);
      // The picked character's bars: the panel's text defines Σ min and TV.
      await page.click("#output .otok");
      await page.waitForTimeout(300);
      await expectTerms([["kseq", "k-Seq"], ["rhoStar", "ρ*"], ["sigmaMin", "Σ min(target, draft)"], ["tv", "TV"], ["nats", "nats"]], "SpecTr");
      // Hover shows the same tooltip.
      await page.evaluate(() => document.activeElement.blur());
      await page.hover('abbr.term[data-term="gamma"]');
      const hovered = await page.evaluate(() => (document.getElementById("tip").hidden ? null : document.getElementById("tip").textContent));
      check(hovered?.startsWith("γ (gamma):"), `hovering γ shows its definition: "${hovered}"`);
      await setControl(page, "selection", "race");
      await playToEnd(page);
      await page.click("#output .otok");
      await page.waitForTimeout(300);
      await expectTerms([["race", "w(x)/u"], ["r", "r"]], "the ratio race");
      await setControl(page, "method", "mentored");
      await playToEnd(page);
      await page.click("#output .otok");
      await page.waitForTimeout(300);
      await expectTerms([["mAlpha", "λ"], ["mBeta", "β"], ["D", "D"]], "mentored");
      // One symbol, one meaning: α is the theory's acceptance rate wherever it shows.
      const alphas = await page.$$eval("abbr.term, #glossary dt", (ts) => ts.filter((t) => t.textContent.trim() === "α").map((t) => t.dataset.term ?? t.nextElementSibling?.id));
      check(alphas.length > 0 && alphas.every((k) => k === "alpha" || k === "g-alpha"), `mentored: α means one thing on the page, the acceptance rate (${alphas.join(", ")})`);
      const help = await page.evaluate(() => ({ text: document.getElementById("method-help").textContent, lossless: document.getElementById("method-help").dataset.lossless, lede: document.querySelector(".lede").textContent.replace(/\s+/g, " ") }));
      check(help.lossless === "false" && /not lossless/.test(help.text) && !/follows the target's distribution exactly/.test(help.text) && /except with mentored decoding and typical acceptance/i.test(help.lede),
        `mentored: "${help.text}" (and the header makes no exactness claim for it)`);
      // Every lossless method, SpecTr and multi-round with each draft shape, SpecTr with each selection.
      const variants = [["speculative"], ...["spectr", "multiround"].flatMap((m) => ["iid", "tree"].flatMap((shape) => (m === "spectr" ? ["kseq", "race"] : ["kseq"]).map((sel) => [m, shape, sel])))];
      for (const [method, shape = "iid", selection = "kseq"] of variants) {
        await setControl(page, "method", method);
        await setControl(page, "shape", shape);
        await setControl(page, "selection", selection);
        const t = await page.evaluate(() => ({ text: document.getElementById("method-help").textContent, lossless: document.getElementById("method-help").dataset.lossless }));
        const says = { tree: /draft tree/, iid: /independent draft sequences/ }[shape];
        const rule = method !== "spectr" || (selection === "race" ? /ratio race w\(x\)\/u/ : /k-Seq tests them/).test(t.text);
        check(t.lossless === "true" && /^lossless Adds /.test(t.text) && /follows the target's distribution exactly/.test(t.text) && (method === "speculative" || says.test(t.text)) && rule,
          `${[method, method === "speculative" ? "" : shape, method === "spectr" ? selection : ""].filter(Boolean).join(", ")}: "${t.text}"`);
      }
    } finally {
      await b.close();
    }
  };

  // Temperature 0: the narration is the argmax check, not a coin flip.
  tests.greedy = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=80&seed=1&method=speculative&gamma=4&temperature=0");
      await loaded(page);
      const h = await playToEnd(page);
      const r = h.shownRounds.findIndex((t) => t.sources.includes("resampled"));
      check(r >= 0, `temperature 0: a round with a rejection to narrate (round ${r + 1})`);
      if (r < 0) return;
      const trace = h.shownRounds[r];
      const at = trace.sources.indexOf("resampled");
      const first = h.shownRounds.slice(0, r).reduce((n, t) => n + t.emitted.length, 0);
      await page.click(`#output .otok[data-i="${first + at}"]`);
      await page.waitForFunction((r) => document.getElementById("stage").dataset.round === String(r) && document.querySelector('#stage .cell.result[data-source="resampled"]'), trace.round, { timeout: 10_000 });
      const notes = await page.$$eval("#round-notes li", (ls) => ls.map((l) => l.textContent));
      const alphabet = await page.evaluate(() => window.__speculaPage.alphabet);
      const shownChar = (t) => (alphabet[t] === "\n" ? "↵" : alphabet[t] === " " ? "␣" : alphabet[t]);
      const rejected = trace.steps[at].outcome.tests[0].token;
      const taken = trace.emitted[at];
      const wantReject = `pos ${at + 1}: draft '${shownChar(rejected)}' is not the target's argmax ('${shownChar(taken)}') → rejected`;
      const wantTake = `pos ${at + 1}: greedy decoding takes the target's argmax '${shownChar(taken)}' instead`;
      const wantAccepted = trace.sources.slice(0, at).map((_, i) => `pos ${i + 1}: draft '${shownChar(trace.emitted[i])}' is the target's argmax → accepted`);
      check(notes.includes(wantReject) && notes.includes(wantTake) && wantAccepted.every((w) => notes.includes(w)),
        `temperature 0 narration: "${wantReject}", "${wantTake}"`, JSON.stringify(notes));
      check(!notes.some((n) => /u = –|the target itself|min\(1, target\/draft\)/.test(n)), "temperature 0: no coin flip (u = –) and no residual in the narration", JSON.stringify(notes));
      const coins = await page.$$eval("#stage .coin", (cs) => cs.map((c) => c.textContent).filter(Boolean));
      check(coins.length === at + 1 && coins.slice(0, at).every((c) => c === "argmax✓") && coins[at] === "≠ argmax✗", `temperature 0 coins: ${coins.join(" | ")}`);
    } finally {
      await b.close();
    }
  };

  /** Text boxes of every chart's labels, and the rendered font size of each (px). */
  const chartTexts = (page, selector) =>
    page.$$eval(`${selector} svg.chart`, (svgs) =>
      svgs.filter((s) => s.getBoundingClientRect().width > 0).map((s) => {
        const scale = s.getBoundingClientRect().width / s.viewBox.baseVal.width;
        return [...s.querySelectorAll("text")].filter((t) => t.textContent.trim()).map((t) => {
          const r = t.getBoundingClientRect();
          return { text: t.textContent, cls: t.getAttribute("class"), x: t.dataset.x ?? null, px: parseFloat(getComputedStyle(t).fontSize) * scale, box: [r.left, r.top, r.right, r.bottom] };
        });
      }));

  /** Pairs of overlapping labels in one chart (more than 1 px² in common). */
  const overlaps = (texts) => {
    const out = [];
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const [a, b] = [texts[i].box, texts[j].box];
        const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
        const hgt = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
        if (w > 1 && hgt > 1 && w * hgt > 1) out.push(`${texts[i].text} × ${texts[j].text}`);
      }
    }
    return out;
  };

  /** The y tick labels of a line chart: evenly spaced, each printed exactly. */
  const evenTicks = (labels) => {
    const v = labels.map(Number);
    const d = (labels[1]?.split(".")[1] ?? "").length;
    const step = v[1] - v[0];
    return v.length >= 3 && v.every((x, i) => Math.abs(x - (v[0] + i * step)) < 1e-9 && labels[i] === x.toFixed(d));
  };

  // Charts: integer ticks for integer variables, exact y ticks, D = 0 at 0, a real
  // superscript, readable non-overlapping text, approximations marked, assumptions said.
  tests.charts = async () => {
    const b = await browser();
    try {
      for (const [method, query, chart] of [["speculative", "method=speculative&gamma=5", "#chart-tokens"], ["spectr-tree", "method=spectr&shape=tree&tree=2,2,1", "#chart-k"], ["mentored", "method=mentored&gamma=4&kl=0.05", "#chart-kl"]]) {
        const page = await open(b.context, `backend=cpu&speed=instant&autoplay=0&maxTokens=40&seed=2&${query}`);
        await loaded(page);
        await playToEnd(page);
        await page.waitForTimeout(200);
        await page.waitForFunction(() => window.__speculaPage.theoryIdle === true, null, { timeout: 60_000, polling: 100 });
        const all = await chartTexts(page, "main");
        const small = all.flat().filter((t) => t.px < 10.95);
        const clashes = all.flatMap(overlaps);
        check(all.length >= 4 && small.length === 0, `${method}: every chart label is at least 11 px (smallest ${Math.min(...all.flat().map((t) => t.px)).toFixed(1)} px over ${all.flat().length} labels)`, JSON.stringify(small.slice(0, 5)));
        check(clashes.length === 0, `${method}: no chart labels overlap`, clashes.join("; "));
        const [tokens] = await chartTexts(page, "#chart-tokens");
        const xs = tokens.filter((t) => t.x !== null).map((t) => t.text);
        const ys = tokens.filter((t) => t.x === null && /^-?\d+(\.\d+)?$/.test(t.text)).map((t) => t.text);
        check(xs.length >= 3 && xs.every((x) => /^\d+$/.test(x)) && evenTicks(ys), `${method}: γ ticks are whole numbers (${xs.join(" ")}), y ticks exact and even (${ys.join(" ")})`);
        const note = await page.evaluate(() => ({ sup: document.querySelector("#theory-note sup")?.textContent, text: document.getElementById("theory-note").textContent, wall: document.getElementById("walltime-note").textContent }));
        check(note.sup === "γ+1" && !/\^\{/.test(note.text) && /c = \d\.\d{3}/.test(note.wall) && /no overhead/.test(note.wall),
          `${method}: the formula's exponent is a superscript (α${note.sup}) and the walltime curve says what it assumes: "${note.wall.slice(0, 80)}…"`);
        if (method === "spectr-tree") {
          const [k] = await chartTexts(page, "#chart-k");
          const kx = k.filter((t) => t.x !== null).map((t) => t.text);
          const approx = await page.evaluate(() => ({ note: document.querySelector("#theory-note .approx")?.textContent ?? "", curve: document.querySelectorAll("#chart-tokens path.curve.c-approx").length, legend: document.getElementById("chart-tokens").textContent }));
          check(JSON.stringify(kx) === JSON.stringify(["1", "2", "3", "4", "5", "6", "7", "8"]), `spectr-tree: k ticks are 1 to 8 (${kx.join(" ")})`);
          check(/^Approximation/.test(approx.note) && approx.curve === 1 && /approx/.test(approx.legend), `spectr-tree: the tokens-per-round curve is drawn dashed and labelled an approximation: "${approx.note.slice(0, 90)}…"`);
        }
        if (method === "speculative") {
          const exact = await page.evaluate(() => ({ approx: document.querySelectorAll("#theory-note .approx").length, curve: document.querySelectorAll("#chart-tokens path.curve.c-theory").length }));
          check(exact.approx === 0 && exact.curve === 1, "speculative: the closed form is exact, drawn solid with no approximation note");
        }
        if (method === "mentored") {
          const [kl] = await chartTexts(page, "#chart-kl");
          const kx = kl.filter((t) => t.x !== null).map((t) => t.text);
          check(kx[0] === "0" && !kl.some((t) => t.text.includes("0.0005")) && kx.slice(1).every((x) => ["0.001", "0.01", "0.1", "1", "10"].includes(x)),
            `mentored: the D axis starts at 0 past a break, then decades (${kx.join(" ")})`);
        }
      }
    } finally {
      await b.close();
    }
  };

  // Quarter steps print as quarters (0.25, not 0.3): the page's chart module on a 0–1.25 axis.
  tests.chartTicks = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0");
      const ticks = await page.evaluate(async () => {
        const { lines } = await import("./js/charts.js");
        const div = document.createElement("div");
        document.body.append(div);
        lines(div, { curves: [{ points: [[1, 0.1], [16, 1.25]], cls: "c-theory", name: "test" }], yMax: 1.25, xInteger: true, label: "test" });
        const texts = [...div.querySelectorAll("text")].map((t) => [t.textContent, t.dataset.x ?? null]);
        div.remove();
        return { y: texts.filter(([t, x]) => x === null && /^[\d.]+$/.test(t)).map(([t]) => t), x: texts.filter(([, x]) => x !== null).map(([t]) => t) };
      });
      check(ticks.y.join(" ") === "0.00 0.25 0.50 0.75 1.00 1.25" && ticks.x.join(" ") === "1 5 10 15", `a 0–1.25 axis prints ${ticks.y.join(" ")}; γ from 1 to 16 prints ${ticks.x.join(" ")}`);
    } finally {
      await b.close();
    }
  };

  // Tree drafts are drawn as a tree: one cell per node, an edge from each parent to each child.
  tests.tree = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=24&seed=4&method=spectr&shape=tree&tree=2,2,1");
      await loaded(page);
      await page.click("#step");
      await page.waitForFunction(() => window.__speculaPage.shownRounds.length === 1, null, { timeout: 60_000 });
      const trace = (await hook(page)).shownRounds[0];
      const drawn = await page.evaluate(() => {
        const grid = document.querySelector("#stage .tree").getBoundingClientRect();
        const mid = (el, side) => { const r = el.getBoundingClientRect(); return [(side === "right" ? r.right : r.left) - grid.left, r.top + r.height / 2 - grid.top]; };
        const cell = (id) => (id === "root" ? document.querySelector("#stage .root") : document.querySelector(`#stage .cell[data-node="${id}"] .tok`));
        return {
          cells: document.querySelectorAll("#stage .cell[data-node]").length,
          edges: [...document.querySelectorAll("#stage svg.edges path.edge")].map((p) => {
            const n = p.getAttribute("d").match(/-?[\d.]+/g).map(Number);
            return { from: p.dataset.from, to: p.dataset.to, start: n.slice(0, 2), end: n.slice(-2), parent: mid(cell(p.dataset.from), "right"), child: mid(cell(p.dataset.to), "left"), visible: getComputedStyle(p).opacity !== "0" };
          }),
        };
      });
      const near = (a, b) => Math.abs(a[0] - b[0]) < 2 && Math.abs(a[1] - b[1]) < 2;
      const parentOf = (id) => trace.drafts[id].parent;
      check(drawn.cells === trace.drafts.length && drawn.edges.length === trace.drafts.length &&
          drawn.edges.every((e) => e.from === String(parentOf(Number(e.to)) ?? "root") && near(e.start, e.parent) && near(e.end, e.child) && e.visible),
        `tree 2,2,1: ${drawn.cells} nodes and ${drawn.edges.length} edges, each from its parent's cell to its child's`, JSON.stringify(drawn.edges.slice(0, 3)));
      // Each parent sits between its children (vertically), children of one parent apart.
      const y = new Map(drawn.edges.map((e) => [e.to, e.child[1]]));
      const kids = new Map();
      for (const e of drawn.edges) kids.set(e.from, [...(kids.get(e.from) ?? []), y.get(e.to)]);
      const between = [...kids].every(([from, ys]) => from === "root" || (Math.min(...ys) - 2 <= y.get(from) && y.get(from) <= Math.max(...ys) + 2)) &&
        [...kids].every(([, ys]) => new Set(ys.map((v) => Math.round(v))).size === ys.length);
      check(between && trace.branching.join(",") === "2,2,1", "tree 2,2,1: each parent is drawn between its children, siblings apart");
      await page.screenshot({ path: join(artifacts, "tree.png") });
    } finally {
      await b.close();
    }
  };

  // Inputs: out-of-range values refused with the package's message, their field marked;
  // the package's limits and defaults on the controls; controls that do not apply are
  // disabled; the prompt is shown; menus and coins fit.
  tests.inputs = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=20&seed=1");
      await loaded(page);
      // (Once the page has made its first live run: its options are the base of the verdicts.)
      await page.waitForFunction(() => window.__speculaPage.source === "live" && window.__speculaPage.queued === 0, null, { timeout: 30_000, polling: 50 });
      // The package's verdict on the page's options with one changed (checkOptions).
      const verdict = (change) =>
        page.evaluate(async (change) => {
          const { checkOptions } = await import("./specula/index.js");
          try {
            await checkOptions({ ...window.__speculaPage.options, ...change });
            return null;
          } catch (error) {
            return { code: error.code, field: error.field, message: error.message };
          }
        }, change);
      const refuse = async (id, value, change, label) => {
        const runs = (await hook(page)).modelRuns;
        const expected = await verdict(change);
        await page.fill(`#${id}`, value);
        await page.click("#play");
        await page.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 10_000 }).catch(() => {});
        const seen = await page.evaluate((id) => ({ error: document.getElementById("error").hidden ? null : document.getElementById("error").textContent, state: document.getElementById("run-state").textContent, value: document.getElementById(id).value, invalid: document.getElementById(id).getAttribute("aria-invalid") }), id);
        const h = await hook(page);
        check(expected && seen.error === expected.message && h.errorCode === expected.code && h.errorField === expected.field && /^not running/.test(seen.state) && seen.value === value && seen.invalid === "true" && h.modelRuns === runs,
          `${label}: refused with the package's message "${seen.error}", ${h.errorField} marked (status "${seen.state}")`, JSON.stringify({ seen, expected, field: h.errorField }));
      };
      const limits = await page.evaluate(async () => (await import("./specula/index.js")).LIMITS);
      // (The address sets neither γ nor k.)
      const initial = await page.evaluate(() => ({ gamma: document.getElementById("gamma").value, drafts: document.getElementById("drafts").value, out: document.getElementById("drafts-out").textContent }));
      await refuse("maxTokens", String(limits.maxTokens + 1), { maxTokens: limits.maxTokens + 1 }, `tokens ${limits.maxTokens + 1}`);
      await refuse("maxTokens", "0", { maxTokens: 0 }, "tokens 0");
      await page.fill("#maxTokens", "20");
      await page.keyboard.press("Tab"); // leaving the field runs with 20 tokens
      await page.waitForTimeout(300);
      await refuse("seed", "-5", { seed: -5 }, "seed −5");
      await refuse("seed", "1.5", { seed: 1.5 }, "seed 1.5");
      await page.fill("#seed", "1");
      const range = await page.textContent("#maxTokens-range");
      await page.fill("#prompt", "ROMEO:\nWhat say you?\n");
      const longer = await page.textContent("#maxTokens-range");
      const controls = await page.evaluate(() => ({ seedRange: document.getElementById("seed-range").textContent, max: document.getElementById("maxTokens").max, seedMax: document.getElementById("seed").max }));
      check(range === `1–${limits.maxTokens}` && longer === range && controls.max === String(limits.maxTokens) && controls.seedMax === String(limits.maxSeed) && controls.seedRange === "0–253−1",
        `the tokens and seed ranges are the package's LIMITS, whatever the prompt: the context window slides (${range}, then ${longer}; seed ${controls.seedRange})`, JSON.stringify(controls));
      check(initial.gamma === String(limits.defaultGamma) && initial.drafts === String(limits.defaultDrafts) && initial.out === initial.drafts,
        `γ and k start at the package's defaults (${initial.gamma}, ${initial.drafts})`, JSON.stringify({ initial, limits }));
      const h = await playToEnd(page);
      const prompt = await page.evaluate(() => {
        const p = document.querySelector("#output .prompt-text");
        const o = document.querySelector("#output .otok");
        return { text: p?.textContent, first: document.querySelector("#output span") === p, color: p && getComputedStyle(p).color, style: p && getComputedStyle(p).fontStyle, otok: o && getComputedStyle(o).color };
      });
      check(h.summary.text.length === 20 && prompt.text === "ROMEO:\nWhat say you?\n" && prompt.first && prompt.color !== prompt.otok && prompt.style === "italic" && (await page.$eval("#error", (e) => e.hidden)),
        `the output starts with the prompt, set apart (${prompt.color}, ${prompt.style}), then the ${h.summary.text.length} characters`, JSON.stringify(prompt));
      await setControl(page, "method", "autoregressive");
      const disabled = await page.evaluate(() => ["gamma", "drafts", "shape", "tree", "selection", "kl", "dynamicGamma"].map((id) => { const el = document.getElementById(id); el.focus(); return [id, el.disabled, document.activeElement === el]; }));
      check(disabled.every(([, d, f]) => d && !f), `autoregressive: γ, k, the draft shape, tree, selection, D and dynamic γ are disabled and cannot take focus (${JSON.stringify(disabled)})`);
      // Each control is enabled exactly where its option applies (a tree fixes γ and k).
      const enabled = async (settings) => {
        for (const [id, value] of Object.entries(settings)) await setControl(page, id, value);
        return page.evaluate(() => ["gamma", "drafts", "shape", "tree", "selection", "kl", "dynamicGamma"].filter((id) => !document.getElementById(id).disabled).join(" "));
      };
      for (const [settings, want] of [
        [{ method: "speculative" }, "gamma dynamicGamma"],
        [{ method: "spectr", shape: "iid" }, "gamma drafts shape selection"],
        [{ method: "spectr", shape: "tree" }, "shape tree selection"],
        [{ method: "multiround", shape: "tree" }, "shape tree"],
        [{ method: "multiround", shape: "iid" }, "gamma drafts shape"],
        [{ method: "mentored" }, "gamma kl dynamicGamma"],
      ]) {
        const got = await enabled(settings);
        check(got === want, `${JSON.stringify(settings)}: the controls enabled are ${got}`, `expected ${want}`);
      }
      await setControl(page, "method", "speculative");
      for (const [width, height] of [[1280, 800], [390, 844]]) {
        await page.setViewportSize({ width, height });
        const fit = await page.evaluate(() => {
          const sel = document.getElementById("method");
          const cs = getComputedStyle(sel);
          const ctx = document.createElement("canvas").getContext("2d");
          ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
          const room = sel.clientWidth - parseFloat(cs.paddingLeft) - 24;
          return [...sel.options].map((o) => [o.textContent, Math.ceil(ctx.measureText(o.textContent).width), Math.floor(room)]);
        });
        check(fit.every(([, w, room]) => w <= room), `${width} px: the Method menu shows every option whole (${fit.map(([t, w, r]) => `${w}/${r}`).join(", ")})`, JSON.stringify(fit));
      }
      // The coin labels and tokens keep apart: under the cells on a phone (γ = 6), beside
      // them on a laptop (γ = 16).
      for (const [width, height, gamma] of [[390, 844, 6], [1280, 800, 16]]) {
        await page.setViewportSize({ width, height });
        await setControl(page, "gamma", gamma);
        await page.click("#step");
        await page.waitForFunction(() => window.__speculaPage.shownRounds.length === 1, null, { timeout: 60_000 });
        const labels = await page.$$eval("#stage .coin, #stage .cell[data-node] .tok", (cs) => cs.filter((c) => c.textContent).map((c) => { const r = c.getBoundingClientRect(); return { text: c.textContent, box: [r.left, r.top, r.right, r.bottom] }; }));
        const coins = labels.filter((l) => /u |argmax/.test(l.text));
        check(coins.length >= 1 && overlaps(labels).length === 0, `${width} px, γ = ${gamma}: ${coins.length} coin labels and ${labels.length - coins.length} tokens, none overlapping (${coins.map((c) => c.text).join(" | ")})`, overlaps(labels).join("; "));
      }
    } finally {
      await b.close();
    }
  };

  // The race: the lanes run one after the other; at temperature 0 they write the same text.
  tests.raceLanes = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=24&seed=1&temperature=0&gamma=3");
      await loaded(page);
      await page.fill("#race-repeats", "1");
      await page.click("#race");
      await page.waitForFunction(() => window.__speculaPage.race, null, { timeout: 180_000 });
      const race = (await hook(page)).race;
      const verdict = await page.textContent("#race-verdict");
      check(race.same && race.ar.text === race.spec.text && race.ar.text.length === 24 && /^The two texts are identical: at temperature 0/.test(verdict), `temperature 0: both lanes write the same text and the page says so: "${verdict}"`);
      check(race.sequential && (race.ar.endedAt <= race.spec.startedAt || race.spec.endedAt <= race.ar.startedAt),
        `the lanes run one after the other, each clock its own (autoregressive ${race.ar.startedAt.toFixed(0)}–${race.ar.endedAt.toFixed(0)} ms, speculative ${race.spec.startedAt.toFixed(0)}–${race.spec.endedAt.toFixed(0)} ms)`);
      await setControl(page, "temperature", 0.8);
      await page.fill("#race-repeats", "2");
      await page.click("#race");
      await page.waitForFunction(() => window.__speculaPage.race?.temperature === 0.8, null, { timeout: 180_000 });
      const r2 = (await hook(page)).race;
      const v2 = await page.textContent("#race-verdict");
      const result = await page.textContent("#race-result");
      check((r2.same ? /^The two texts are identical\.$/.test(v2) : /^The texts differ, and that is expected: both lanes follow the same distribution/.test(v2)) && r2.same === (r2.ar.text === r2.spec.text),
        `temperature 0.8: the page explains the texts (${r2.same ? "same" : "different"}): "${v2.slice(0, 80)}…"`);
      check(r2.count === 2 && result.startsWith(`2 races of 24 characters with these settings: speculative is ${r2.meanSpeedup.toFixed(2)}× as fast on average`), `repeated races are averaged: "${result}"`);
    } finally {
      await b.close();
    }
  };
}
