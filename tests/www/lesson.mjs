// The guided lesson (www/js/lesson.js) end to end (used by run.mjs): every step walked with
// the keyboard only, each step's numbers read from the data attributes of what it draws and
// checked against the round it names in the page's trace (hook.shownRounds) and against the
// controls it set; the presets and their questions; Esc and the focus; a phone's width.
import { join } from "node:path";

export function addLessonTests(tests, { browser, open, loaded, hook, check, artifacts, close, pageFmt }) {
  const fmt3 = (x) => pageFmt(x, 3);
  const sumMin = (t, d) => t.reduce((a, x, i) => a + Math.min(x, d[i]), 0);

  /** Waits for step i (1-based) to be drawn; returns what the lesson and the page show. */
  async function stepShown(page, i) {
    await page.waitForFunction((i) => {
      const l = document.getElementById("lesson");
      return !l.hidden && l.dataset.step === String(i) && l.dataset.state === "ready";
    }, i, { timeout: 120_000, polling: 100 });
    return page.evaluate(() => {
      const body = document.getElementById("lesson-body");
      const spot = document.querySelector(".lesson-spot");
      const num = (v) => (v === undefined || v === "" || v === "null" ? null : v === "true" ? true : v === "false" ? false : Number(v));
      const nums = (d) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v.startsWith("[") ? JSON.parse(v) : num(v)]));
      return {
        id: document.getElementById("lesson").dataset.stepId,
        title: document.getElementById("lesson-title").textContent,
        focused: document.activeElement?.id ?? null,
        text: body.textContent,
        data: nums({ ...(body.querySelector(".lesson-step")?.dataset ?? {}) }),
        coin: body.querySelector(".lesson-coin") ? nums({ ...body.querySelector(".lesson-coin").dataset }) : null,
        area: body.querySelector(".lesson-area") ? { ...nums({ ...body.querySelector(".lesson-area").dataset }), rows: [...body.querySelectorAll(".arearow")].map((r) => nums({ ...r.dataset })) } : null,
        budget: [...body.querySelectorAll(".lesson-budget tbody tr")].map((r) => nums({ ...r.dataset })),
        spot: spot ? { id: spot.id, cls: spot.className, node: spot.dataset.node ?? null, source: spot.dataset.source ?? null } : null,
        controls: Object.fromEntries(["method", "gamma", "drafts", "shape", "selection", "temperature", "kl"].map((id) => [id, document.getElementById(id).value])),
        dOut: document.getElementById("kl-out").textContent,
        dist: { ...document.getElementById("dist-label").dataset },
        // The stage as drawn: each draft cell's state and coin, the emitted row.
        stage: {
          states: [...document.querySelectorAll("#stage .cell[data-node]")].map((c) => c.dataset.state ?? ""),
          verified: [...document.querySelectorAll("#stage .cell[data-node] .tok")].map((t) => t.classList.contains("verified")),
          coins: [...document.querySelectorAll("#stage .cell[data-node] .coin")].map((c) => c.textContent).join(""),
          emitted: [...document.querySelectorAll("#stage .cell.result")].map((c) => c.textContent).join(""),
        },
        distText: document.getElementById("dist").textContent,
      };
    });
  }

  /** The checks of each step, by its id: `s` is what stepShown read, `h` the page's hook. */
  const CHECKS = {
    draft(s, h) {
      const t = h.shownRounds[s.data.round - 1];
      check(s.controls.method === "speculative" && h.options.method === "speculative" && t.method === "speculative", `lesson draft: method set to speculative (control ${s.controls.method}, run ${h.options.method})`);
      const ok = s.data.gamma === t.branching.length && s.data.gamma === Number(s.controls.gamma) && s.data.drafts.length === t.drafts.length &&
        s.data.drafts.every((d, i) => d.token === t.drafts[i].token && d.draftProb === t.drafts[i].draftProb && (!t.drafts[i].draftProbs || d.draftProb === t.drafts[i].draftProbs[d.token]) && s.text.includes(`= ${fmt3(d.draftProb)}`));
      check(ok, `lesson draft: round ${s.data.round}'s γ = ${s.data.gamma} guesses and their draft probabilities are the trace's, in the text`, JSON.stringify({ data: s.data, text: s.text }));
      check(s.spot?.id === "stage", "lesson draft: the stage is marked");
      check(s.stage.states.length === t.drafts.length && s.stage.states.every((x) => x === "") && s.stage.verified.every((x) => !x) && s.stage.coins === "" && s.stage.emitted === "" && s.dist.position === "" && !/resampled|accepted|bonus/.test(s.dist.round ? s.distText : ""),
        "lesson draft: the stage shows the guesses only, as the text says (nothing scored, tested or emitted; no distributions giving the result away)", JSON.stringify({ stage: s.stage, dist: s.dist }));
    },
    target(s, h) {
      const t = h.shownRounds[s.data.round - 1];
      const tests = t.steps.flatMap((x) => x.outcome.tests);
      check(s.data.positions === t.branching.length + 1 && s.data.targetCalls === t.targetCalls && t.targetCalls === 1 && tests.every((x) => s.text.includes(`= ${fmt3(x.targetProb)} against draft ${fmt3(x.draftProb)}`)),
        `lesson target: one target call scores γ + 1 = ${s.data.positions} positions; each tested guess's target and draft probabilities in the text`, JSON.stringify({ data: s.data, text: s.text }));
      check(s.stage.verified.length === t.drafts.length && s.stage.verified.every(Boolean) && s.stage.states.every((x) => x === "") && s.stage.coins === "" && s.stage.emitted === "",
        "lesson target: the stage shows the guesses scored by the target and none tested yet, as the text says", JSON.stringify(s.stage));
    },
    coin(s, h) {
      const c = s.coin;
      const step = h.shownRounds[c.round - 1].steps[c.position - 1];
      const test = step.outcome.tests.find((x) => x.draftIndex === c.draftIndex);
      const target = step.targetProbs[test.token];
      const draft = step.draftProbs[test.token];
      check(c.token === test.token && c.target === target && c.draft === draft && close(c.ratio, target / draft, 1e-9) && c.ratio === test.ratio && close(c.acceptProb, Math.min(1, target / draft), 1e-9) &&
          c.uniform === test.uniform && c.accepted === test.accepted && c.accepted === c.uniform < c.acceptProb,
        `lesson coin: round ${c.round}, position ${c.position}: ratio ${c.ratio.toFixed(4)} = target/draft = ${target.toFixed(4)}/${draft.toFixed(4)}; u ${c.uniform.toFixed(3)} ${c.accepted ? "<" : "≥"} ${c.acceptProb.toFixed(3)}`, JSON.stringify({ c, test }));
      check(s.text.includes(`min(1, ${fmt3(target)}/${fmt3(draft)}) = ${fmt3(c.acceptProb)}`) && s.text.includes(`u = ${fmt3(c.uniform)}`), "lesson coin: the text quotes the ratio and u of that test", s.text);
      check(s.spot?.node === String(step.candidates[c.draftIndex]), `lesson coin: the stage cell of the tested guess is marked (node ${s.spot?.node})`);
      check(s.dist.round === String(c.round) && s.dist.position === String(c.position) && s.stage.coins !== "",
        `lesson coin: the distributions panel shows the position the step talks about (round ${s.dist.round}, position ${s.dist.position}; the step: ${c.round}, ${c.position})`);
    },
    residual(s, h) {
      const step = h.shownRounds[s.data.round - 1].steps[s.data.position - 1];
      check(step.outcome.residual && step.source === "resampled" && s.data.drawn === step.token && s.data.residualProb === step.residualProbs[step.token] && close(s.data.overlap, sumMin(step.targetProbs, step.draftProbs), 1e-9) &&
          s.text.includes(`= ${fmt3(1 - s.data.overlap)}`) && s.text.includes(fmt3(step.residualProbs[step.token])),
        `lesson residual: round ${s.data.round}, position ${s.data.position}: the drawn character, its residual probability and the area 1 − Σ min = ${fmt3(1 - s.data.overlap)} are the trace's`, JSON.stringify({ data: s.data, text: s.text }));
      check(/resview/.test(s.spot?.cls ?? ""), "lesson residual: the residual chart on the stage is marked");
    },
    bonus(s, h) {
      const t = h.shownRounds[s.data.round - 1];
      const g = t.branching.length;
      const a = s.data.alpha;
      const alpha = t.steps.reduce((x, st) => x + sumMin(st.targetProbs, st.draftProbs), 0) / t.steps.length;
      check(t.bonus && t.bonus.token === s.data.bonusToken && t.counts.resampled === 0 && t.steps.every((st) => st.outcome.tests.every((x) => x.accepted)) && s.data.bonusProb === t.bonus.targetProbs[t.bonus.token] && s.data.gamma === g,
        `lesson bonus: round ${s.data.round} accepted all ${g} guesses and its bonus is the trace's`, JSON.stringify(s.data));
      check(close(a, alpha, 1e-9) && close(s.data.expected, (1 - a ** (g + 1)) / (1 - a), 1e-9) && s.text.includes(pageFmt(s.data.expected, 2)),
        `lesson bonus: the theory's ${pageFmt(s.data.expected, 2)} characters per round at α = ${fmt3(a)}, the round's mean Σ min`, JSON.stringify(s.data));
      check(s.spot?.source === "bonus", "lesson bonus: the bonus cell is marked");
    },
    area(s, h) {
      const a = s.area;
      const step = h.shownRounds[a.round - 1].steps[a.position - 1];
      const sum = a.rows.every((r) => Math.abs(r.min + r.share - r.target) <= 1e-9);
      const real = a.rows.every((r) => close(r.target, step.targetProbs[r.token], 1e-6) && close(r.min, Math.min(step.targetProbs[r.token], step.draftProbs[r.token]), 1e-6));
      check(a.rows.length >= 3 && sum && a.gap <= 1e-9 && real && close(a.overlap, sumMin(step.targetProbs, step.draftProbs), 1e-6),
        `lesson area: round ${a.round}, position ${a.position}: min(target, draft) + (1 − Σ min)·residual = target within 1e-9 for each of ${a.rows.length} characters (over the vocabulary, the report's TV(target, output): ${a.gap.toExponential(1)})`, JSON.stringify(a));
      check(s.dist.round === String(a.round) && s.dist.position === String(a.position) && /dist-panel/.test(s.spot?.cls ?? ""), "lesson area: the distributions panel shows that position and is marked", JSON.stringify(s.dist));
    },
    spectr(s, h) {
      const t = h.shownRounds[s.data.round - 1];
      const p = t.steps[s.data.position - 1].plan;
      const st = t.steps[s.data.position - 1];
      check(s.controls.method === "spectr" && s.controls.selection === "kseq" && s.controls.shape === "iid" && h.options.method === "spectr" && h.options.drafts === s.data.k && Number(s.controls.drafts) === s.data.k,
        `lesson SpecTr: the controls say SpecTr, k-Seq, k = ${s.data.k} sequences, and the run uses them`, JSON.stringify({ controls: s.controls, options: h.options }));
      check(p.kind === "kseq" && p.k === s.data.k && s.data.rhoStar === p.rhoStar && s.data.acceptance === p.acceptance && p.rhoStar >= 1 && close(s.data.single, sumMin(st.targetProbs, st.draftProbs), 1e-9) &&
          s.text.includes(`ρ* = ${fmt3(p.rhoStar)}`) && s.text.includes(fmt3(p.acceptance)),
        `lesson SpecTr: ρ* = ${fmt3(p.rhoStar)} and acceptance ${fmt3(p.acceptance)} (one draft: ${fmt3(s.data.single)}) are the step plan's`, JSON.stringify({ data: s.data, p }));
    },
    mentored(s, h) {
      const t = h.shownRounds[s.data.round - 1];
      const plans = t.steps.map((x) => x.plan);
      check(s.controls.method === "mentored" && h.options.method === "mentored" && h.options.kl === s.data.budget && s.dOut === String(s.data.budget),
        `lesson mentored: the controls say mentored with D = ${s.dOut}, and the run uses it`, JSON.stringify({ controls: s.controls, options: h.options, data: s.data }));
      check(s.budget.length === plans.length && s.budget.every((r, i) => r.kl === plans[i].kl && r.budget === plans[i].klBudget && r.budget === s.data.budget && r.kl <= r.budget + 1e-12 && r.acceptance === plans[i].acceptance),
        `lesson mentored: KL ≤ D = ${s.data.budget} at each of the ${s.budget.length} positions of round ${s.data.round}, the step plans' numbers`, JSON.stringify(s.budget));
    },
    questions() {},
  };

  /** The presets: each button (keyboard) sets its controls, and its question shows. */
  async function presets(page) {
    const want = {
      greedy: (c, o) => c.temperature === "0" && c.method === "speculative" && o.temperature === 0,
      gamma16: (c, o) => c.gamma === "16" && c.method === "speculative" && c.temperature === "0.8" && o.gamma === 16 && o.temperature === 0.8,
      budget5: (c, o, d) => c.method === "mentored" && c.gamma === "4" && c.temperature === "0.8" && d === "5" && o.kl === 5 && o.gamma === 4,
    };
    for (const [id, ok] of Object.entries(want)) {
      await page.focus(`#lesson-preset-${id}`);
      await page.keyboard.press("Enter");
      await page.waitForFunction((id) => document.querySelector(`.lesson-preset[data-preset="${id}"]`)?.dataset.state === "set", id, { timeout: 60_000 });
      await page.waitForFunction(() => window.__speculaPage.queued === 0, null, { timeout: 60_000 });
      const seen = await page.evaluate((id) => {
        const card = document.querySelector(`.lesson-preset[data-preset="${id}"]`);
        const q = card.querySelector(".lesson-question");
        const a = card.querySelector("details.lesson-answer");
        return {
          controls: Object.fromEntries(["method", "gamma", "temperature"].map((c) => [c, document.getElementById(c).value])),
          d: document.getElementById("kl-out").textContent,
          question: q.hidden ? null : q.textContent,
          answerOpen: a.open,
          answerShown: !a.hidden,
          spot: document.querySelector(".lesson-spot")?.className ?? null,
          // The chart a question asks about: marked, on screen between the transport bar and the lesson.
          chart: (() => {
            const el = document.querySelector(".lesson-spot");
            const r = el?.getBoundingClientRect();
            const sheet = document.getElementById("lesson").getBoundingClientRect();
            const bar = document.querySelector(".transport").getBoundingClientRect();
            const covered = r && !(r.right <= sheet.left || r.left >= sheet.right || r.bottom <= sheet.top || r.top >= sheet.bottom);
            return el && { holds: el.querySelector("#chart-position") !== null, covered, seen: r.top >= bar.bottom - 1 && r.bottom <= window.innerHeight };
          })(),
        };
      }, id);
      const h = await hook(page);
      const spotOk = id === "gamma16" ? seen.chart?.holds && !seen.chart.covered && seen.chart.seen : /field/.test(seen.spot ?? "");
      check(spotOk, `lesson preset ${id}: it marks ${id === "gamma16" ? "the per-position chart its question asks about, on screen and not under the lesson" : "the control it set"}`, JSON.stringify(seen.chart));
      check(ok(seen.controls, h.options, seen.d) && /\?/.test(seen.question ?? "") && seen.answerShown && !seen.answerOpen,
        `lesson preset ${id}: sets ${JSON.stringify(seen.controls)} (D ${seen.d}) and asks "${seen.question?.slice(0, 60)}…", the answer folded`, JSON.stringify({ seen, options: h.options }));
      await page.focus(`.lesson-preset[data-preset="${id}"] summary`);
      await page.keyboard.press("Enter");
      const opened = await page.$eval(`.lesson-preset[data-preset="${id}"] details`, (d) => d.open && d.textContent.length > 80);
      check(opened, `lesson preset ${id}: the answer opens on demand`);
    }
  }

  tests.lesson = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=60&seed=2");
      await loaded(page);
      // The student's settings, which the lesson must leave as it found them.
      const settingsOf = () => page.evaluate(() => Object.fromEntries(["method", "shape", "selection", "gamma", "drafts", "kl", "temperature", "dynamicGamma", "parallelDraft", "bug"].map((id) => {
        const el = document.getElementById(id);
        return [id, el.type === "checkbox" ? el.checked : el.value];
      })));
      const own = await settingsOf();
      const ownD = Number(await page.textContent("#kl-out"));
      // Keyboard only: Enter on the Lesson button, → through the steps, Esc.
      await page.focus("#lesson-open");
      await page.keyboard.press("Enter");
      const role = await page.evaluate(() => {
        const l = document.getElementById("lesson");
        return { role: l.getAttribute("role"), labelled: l.getAttribute("aria-labelledby"), live: document.getElementById("lesson-body").getAttribute("aria-live"), expanded: document.getElementById("lesson-open").getAttribute("aria-expanded") };
      });
      check(role.role === "dialog" && role.labelled === "lesson-title" && role.live === "polite" && role.expanded === "true", "lesson: a dialog labelled by its step's heading, its text in an aria-live region", JSON.stringify(role));
      const titles = [];
      for (let i = 1; ; i++) {
        const s = await stepShown(page, i);
        titles.push(s.title);
        check(s.focused === "lesson-title" && s.title.length > 5, `lesson step ${i} "${s.title}": its heading has the focus`);
        const code = /\b[a-z]\w*\(\)/.exec(s.text);
        check(!code, `lesson step ${i}: no code names in the text for students${code ? ` ("${code[0]}")` : ""}`);
        const h = await hook(page);
        CHECKS[s.id](s, h);
        if (s.id === "area") await page.screenshot({ path: join(artifacts, "lesson.png") });
        if (s.id === "questions") {
          await presets(page);
          break;
        }
        await page.keyboard.press("ArrowRight");
      }
      check(titles.length === 9, `lesson: ${titles.length} steps walked with → (${titles.join(" · ")})`);
      // ← goes back, from wherever the focus is in the lesson.
      await page.keyboard.press("ArrowLeft");
      const back = await stepShown(page, 8);
      check(back.id === "mentored" && back.focused === "lesson-title", "lesson: ← goes back a step (and focuses its heading)");
      check(back.data.budget === ownD && back.dOut === String(ownD), `lesson: back at step 8 after the D = 5 question, it teaches with the student's D = ${ownD} (budget ${back.data.budget})`);
      await page.keyboard.press("Escape");
      await page.evaluate(() => window.__speculaPage.lessonRestored?.());
      await page.waitForFunction(() => window.__speculaPage.queued === 0, null, { timeout: 60_000 });
      const after = await settingsOf();
      check(JSON.stringify(after) === JSON.stringify(own), "lesson: closing it gives back the student's settings as they were", JSON.stringify({ own, after }));
      const closed = await page.evaluate(() => ({ hidden: document.getElementById("lesson").hidden, focused: document.activeElement?.id, spots: document.querySelectorAll(".lesson-spot").length, expanded: document.getElementById("lesson-open").getAttribute("aria-expanded") }));
      check(closed.hidden && closed.focused === "lesson-open" && closed.spots === 0 && closed.expanded === "false", "lesson: Esc closes it, unmarks the page and gives the focus back to the Lesson button", JSON.stringify(closed));
      check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
    await phone();
  };

  // A phone: ?lesson=1 opens the lesson as a bottom sheet that neither scrolls sideways nor covers what it marks.
  async function phone() {
    const b = await browser();
    try {
      const page = b.context.pages()[0] ?? (await b.context.newPage());
      await page.setViewportSize({ width: 390, height: 844 });
      await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=60&seed=2&lesson=1");
      await loaded(page);
      for (let i = 1; i <= 8; i++) {
        const s = await stepShown(page, i);
        const fit = await page.evaluate(() => {
          const l = document.getElementById("lesson");
          const sheet = l.getBoundingClientRect();
          const bar = document.querySelector(".transport").getBoundingClientRect();
          const spot = document.querySelector(".lesson-spot")?.getBoundingClientRect();
          return {
            page: document.documentElement.scrollWidth - window.innerWidth,
            sheet: l.scrollWidth - l.clientWidth,
            left: sheet.left,
            right: window.innerWidth - sheet.right,
            height: sheet.height,
            spot: spot && { top: Math.round(spot.top), bar: Math.round(bar.bottom), sheet: Math.round(sheet.top) },
          };
        });
        check(fit.page <= 1 && fit.sheet <= 0 && fit.left >= 0 && fit.right >= 0 && fit.height <= 844 * 0.5,
          `phone (390 px), lesson step ${i}: the sheet fits the width (no horizontal scrolling) and takes ${Math.round(fit.height)} px of 844`, JSON.stringify(fit));
        check(fit.spot && fit.spot.top >= fit.spot.bar - 1 && fit.spot.top + 24 <= fit.spot.sheet,
          `phone, lesson step ${i} "${s.title}": what it marks shows between the transport bar and the sheet (${JSON.stringify(fit.spot)})`);
        await page.keyboard.press("ArrowRight");
      }
      // A preset marks the control it set (in the settings, unfolded) above the sheet too.
      await stepShown(page, 9);
      await page.focus("#lesson-preset-budget5");
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => document.querySelector('.lesson-preset[data-preset="budget5"]')?.dataset.state === "set", null, { timeout: 60_000 });
      const control = await page.evaluate(() => {
        const spot = document.querySelector(".lesson-spot");
        const r = spot?.getBoundingClientRect();
        return spot && { contains: spot.contains(document.getElementById("kl")), top: Math.round(r.top), bottom: Math.round(r.bottom), barTop: Math.round(document.querySelector(".transport").getBoundingClientRect().top), bar: Math.round(document.querySelector(".transport").getBoundingClientRect().bottom), sheet: Math.round(document.getElementById("lesson").getBoundingClientRect().top) };
      });
      check(control?.contains && control.top >= 0 && (control.top >= control.bar - 1 || control.bottom <= control.barTop + 1) && control.bottom <= control.sheet,
        `phone: the D = 5 preset marks the D slider, on screen above the sheet (${JSON.stringify(control)})`);
      await page.screenshot({ path: join(artifacts, "lesson-phone.png") });
      check(b.problems.length === 0, "no CSP violations, page errors or off-origin requests", b.problems.join("; "));
    } finally {
      await b.close();
    }
  }
}

