// Theory vs measurement: the closed-form curves with the run's measured α and c, and the
// acceptance of each scheme recomputed from the cached target/draft distributions (plan()
// in the worker, no model runs) while a slider moves.
import { lines } from "./charts.js";
import { summarize, expectedTokens, walltimeFactor } from "./metrics.js";
import { retarget, overlap as overlapOf } from "./distributions.js";
import { $, S, hook, fmt, h } from "./state.js";
import { rich } from "./glossary.js";
import { settings, MULTI_DRAFT } from "./settings.js";

let theoryTimer = null;
let theoryBusy = false;
let theoryScheduled = false;
export function scheduleTheory() {
  clearTimeout(theoryTimer);
  theoryScheduled = true;
  hook.theoryIdle = false;
  theoryTimer = setTimeout(renderTheory, 120);
}

/** Target/draft pairs recorded at drafted positions of the rounds shown (the cache). */
function cachedPairs(limit = 24) {
  const pairs = [];
  for (const trace of hook.shownRounds) {
    for (const step of trace.steps) {
      if (step.targetProbs && step.draftProbs) pairs.push({ target: step.targetProbs, draft: step.draftProbs });
    }
  }
  return pairs.slice(-limit);
}

async function mean(pairs, options) {
  let total = 0;
  for (const { target, draft } of pairs) {
    hook.planCalls += 1;
    // The loaded instance's worker when there is one (one copy of the wasm module).
    const r = await (S.specula ?? S.pkg).plan({ ...options, target, draft, normalize: true });
    total += r.acceptance ?? 0;
  }
  return total / pairs.length;
}

/** The formula line: E[tokens] = (1 − α^(γ+1))/(1 − α), with a real superscript. */
function formula() {
  const p = h("p", "formula");
  const sup = h("sup", "", "γ+1");
  p.append("Curves: E[tokens per round] = (1 − α", sup, ")/(1 − α); walltime factor = E/(γ·c + 1).");
  return p;
}

async function renderTheory() {
  theoryScheduled = false;
  if (theoryBusy) {
    scheduleTheory();
    return;
  }
  theoryBusy = true;
  try {
    const s = settings();
    const sum = summarize(S.metrics);
    const pairs = cachedPairs();
    const ran = S.run?.options;
    const runMethod = ran?.method === "spectr" && ran.tree ? "spectr-tree" : ran?.method === "otm" ? "spectr-otm" : ran?.method;
    const multi = MULTI_DRAFT.includes(runMethod);
    // α per position: accepted positions / tested positions (the vLLM acceptance rate also
    // counts the drafts after a rejection, which are never tested).
    let tested = 0;
    let acceptedSteps = 0;
    for (const trace of hook.shownRounds) {
      for (const step of trace.steps) {
        tested += 1;
        if (step.outcome.acceptedDraft !== null && step.outcome.acceptedDraft !== undefined) acceptedSteps += 1;
      }
    }
    const measuredAlpha = tested > 0 ? acceptedSteps / tested : null;
    const overlap = pairs.length ? pairs.reduce((a, { target, draft }) => a + target.reduce((x, t, i) => x + Math.min(t, draft[i]), 0), 0) / pairs.length : null;
    const alpha = measuredAlpha ?? overlap;
    const c = sum.costRatio ?? 0.1;
    // The curves span the sliders' ranges.
    const gammas = Array.from({ length: Number($("gamma").max) }, (_, i) => i + 1);
    const runGamma = ran?.tree ? ran.tree.length : ran?.gamma ?? s.gamma;
    const note = $("theory-note");
    const wallNote = $("walltime-note");
    if (alpha === null) {
      note.replaceChildren("Run a method with drafts to measure α and c.");
      wallNote.textContent = "";
      lines($("chart-tokens"), { curves: [], label: "expected tokens per round" });
      lines($("chart-walltime"), { curves: [], label: "walltime factor" });
    } else {
      note.replaceChildren(
        rich(`{alpha} = ${fmt(alpha, 3)} (accepted ÷ tested positions, measured${overlap !== null ? `; {sigmaMin} on the cached distributions gives ${fmt(overlap, 3)}` : ""}), {c} = ${fmt(c, 3)}${sum.costRatio === null ? " (assumed)" : " (measured)"}.`),
        formula(),
      );
      if (multi) {
        const approx = h("p", "approx");
        approx.dataset.approx = "true";
        approx.append(rich(`Approximation for ${runMethod}: the curve treats the measured per-position acceptance {alpha} as the same, independent chance at every depth. With several drafts the first positions have many candidates and deeper ones fewer (only drafts agreeing with what was kept survive)${runMethod === "spectr-tree" ? ", and a tree's depth is fixed by its branching, so only the measured point at its depth is real" : ""}. Read the dashed curve as a trend, not an exact prediction.`));
        note.append(approx);
      }
      const theoryCls = multi ? "c-approx" : "c-theory";
      const theoryName = multi ? "approx.: same α at every depth" : "theory, measured α";
      const curves = [{ points: gammas.map((g) => [g, expectedTokens(alpha, g)]), cls: theoryCls, name: theoryName }];
      if (overlap !== null && measuredAlpha !== null && !multi) curves.push({ points: gammas.map((g) => [g, expectedTokens(overlap, g)]), cls: "c-alt", name: "theory, cached Σ min" });
      // Sampling settings moved since the run: re-target the cached distributions
      // (exact for a run without top-k/top-p at a temperature above 0) — no model runs.
      const changed = ran && (s.temperature !== ran.temperature || (s.topK || undefined) !== ran.topK || (s.topP < 1 ? s.topP : undefined) !== ran.topP);
      hook.preview = null;
      if (changed && pairs.length) {
        if (ran.temperature > 0 && ran.topK === undefined && ran.topP === undefined) {
          const to = { temperature: s.temperature, topK: s.topK || undefined, topP: s.topP < 1 ? s.topP : undefined };
          const previewAlpha = pairs.reduce((a, { target, draft }) => a + overlapOf(retarget(target, ran.temperature, to), retarget(draft, ran.temperature, to)), 0) / pairs.length;
          hook.preview = { alpha: previewAlpha, settings: to, positions: pairs.length };
          curves.push({ points: gammas.map((g) => [g, expectedTokens(previewAlpha, g)]), cls: "c-preview", name: `preview T=${s.temperature}${to.topK ? ` k=${to.topK}` : ""}${to.topP ? ` p=${to.topP}` : ""}` });
          note.append(h("p", "", `Preview for the new sampling settings from the ${pairs.length} cached positions (no model run): Σ min(target, draft) = ${fmt(previewAlpha, 3)}; release the slider to run the models.`));
        } else {
          note.append(h("p", "", "The run used top-k/top-p or greedy decoding, so the cached distributions cannot be re-targeted: release the slider to run the models."));
        }
      }
      const measured = sum.blockEfficiency;
      lines($("chart-tokens"), {
        curves,
        marks: measured !== null && S.metrics.draftedTokens > 0 ? [{ x: runGamma, y: measured, cls: "m-measured", name: "measured" }] : [],
        label: "expected tokens per round vs gamma", xLabel: "γ", yLabel: "tokens", xInteger: true,
      });
      const best = S.races.length ? S.races[S.races.length - 1] : null;
      lines($("chart-walltime"), {
        curves: [{ points: gammas.map((g) => [g, walltimeFactor(alpha, g, c)]), cls: multi ? "c-approx" : "c-theory", name: multi ? "approx. theory" : "theory (no overhead)" }],
        marks: [
          ...(S.metrics.draftedTokens ? [{ x: runGamma, y: walltimeFactor(alpha, runGamma, c), cls: "m-theory", name: "this γ" }] : []),
          ...(best ? [{ x: best.gamma, y: best.meanSpeedup, cls: "m-measured", name: `race, measured (${best.count} run${best.count > 1 ? "s" : ""})` }] : []),
        ],
        label: "walltime factor vs gamma", xLabel: "γ", yLabel: "× faster", xInteger: true,
      });
      wallNote.replaceChildren(rich(`The curve assumes a draft call costs {c} = ${fmt(c, 3)} of a target call, the target scores all γ drafts in the time of one call, and nothing else takes time (no overhead: no worker messages, no selection, no page work). Real runs pay that overhead; the race below measures it.`));
    }
    if (!S.pkg || pairs.length === 0) return;
    if (s.method === "mentored") {
      const ds = [0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3];
      const pts = [];
      for (const d of ds) pts.push([d, await mean(pairs, { method: "mentored", kl: d })]);
      lines($("chart-kl"), {
        curves: [{ points: pts, cls: "c-theory", name: "acceptance (cached)" }],
        marks: [
          { x: s.kl, y: await mean(pairs, { method: "mentored", kl: s.kl }), cls: "m-theory", name: `D = ${s.kl}` },
          ...(sum.acceptanceRate !== null && S.run?.options?.method === "mentored" ? [{ x: S.run.options.kl, y: sum.acceptanceRate, cls: "m-measured", name: "measured" }] : []),
        ],
        xLog: true, yMin: 0, yMax: 1, label: "acceptance vs KL budget D", xLabel: "D (nats, log scale; 0 at the left)", yLabel: "P(accept)",
      });
    }
    if (MULTI_DRAFT.includes(s.method)) {
      const ks = Array.from({ length: Number($("drafts").max) }, (_, i) => i + 1);
      const kseq = [];
      const multiRound = [];
      let race = [];
      for (const k of ks) {
        kseq.push([k, await mean(pairs, { method: "kseq", drafts: k })]);
        multiRound.push([k, await mean(pairs, { method: "multiround", drafts: k })]);
      }
      try {
        for (const k of ks) race.push([k, await mean(pairs, { method: "race", drafts: k })]);
      } catch {
        race = []; // an older package without the race
      }
      lines($("chart-k"), {
        curves: [
          { points: kseq, cls: "c-theory", name: "k-Seq (SpecTr)" },
          { points: multiRound, cls: "c-alt", name: "multi-round" },
          ...(race.length === ks.length ? [{ points: race, cls: "c-best", name: "optimal selection (OTM)" }] : []),
        ],
        marks: [{ x: s.drafts, y: kseq[s.drafts - 1][1], cls: "m-theory", name: `k = ${s.drafts}` }],
        yMin: 0, yMax: 1, label: "acceptance vs number of drafts k", xLabel: "k", yLabel: "P(accept)", xInteger: true,
      });
    }
  } catch (error) {
    console.warn("theory:", error);
  } finally {
    theoryBusy = false;
    // Tests wait for this before screenshots: every chart drawn, none pending.
    hook.theoryIdle = !theoryScheduled;
  }
}
