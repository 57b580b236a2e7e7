// Theory vs measurement: the closed-form curves (the package's theory()) with the run's
// measured α and c, and the acceptance of each scheme recomputed from the cached
// target/draft distributions (plan() in the package's worker, no model runs) while a slider
// moves; new sampling settings are previewed by re-targeting them (retarget()).
import { lines } from "./charts.js";
import { $, S, hook, fmt, h } from "./state.js";
import { rich } from "./glossary.js";
import { settings, multiDraft } from "./settings.js";
import { curves as theoryCurves, meanOf, overlap, plan, retarget } from "./math.js";
import { pooledPair, sizeOf } from "./pieces.js";
import { walltimeWith } from "./race-costs.js";

let theoryTimer = null;
let theoryBusy = false;
let theoryScheduled = false;
export function scheduleTheory() {
  clearTimeout(theoryTimer);
  theoryScheduled = true;
  hook.theoryIdle = false;
  theoryTimer = setTimeout(renderTheory, 120);
}

/**
 * Target/draft pairs recorded at drafted positions of the rounds shown (the cache). Over a
 * large vocabulary (compacted: pieces.js) each pair is its kept tokens plus one entry
 * pooling the rest, aligned, so that re-targeting treats both alike; `pooled` is the
 * largest pooled mass, `vocab` the vocabulary's size.
 */
function cachedPairs(limit = 24) {
  // From the last round back: a long run's early rounds are never read.
  const pairs = [];
  for (let r = hook.shownRounds.length - 1; r >= 0 && pairs.length < limit; r--) {
    const steps = hook.shownRounds[r].steps;
    for (let i = steps.length - 1; i >= 0 && pairs.length < limit; i--) {
      if (steps[i].targetProbs && steps[i].draftProbs) pairs.push([steps[i].targetProbs, steps[i].draftProbs]);
    }
  }
  return pairs.reverse().map(([t, d]) => ({ ...pooledPair(t, d), vocab: sizeOf(t) }));
}

/** plan()'s acceptance of `options`, averaged over the cached pairs. */
const mean = (pairs, options) => meanOf(pairs, async ({ target, draft }) => (await plan({ ...options, target, draft, normalize: true }))?.acceptance);

/** plan()'s (acceptance, KL(target ‖ output)) of `options`, each averaged over the pairs. */
async function lossyPoint(pairs, options) {
  let acceptance = 0;
  let kl = 0;
  for (const { target, draft } of pairs) {
    const r = await plan({ ...options, target, draft, normalize: true });
    acceptance += r?.acceptance ?? 0;
    kl += r?.klTargetOutput ?? 0;
  }
  return [acceptance / pairs.length, kl / pairs.length];
}

/**
 * The two lossy rules side by side at equal acceptance, from the cached positions:
 * mentored decoding over its budget D, typical acceptance over its threshold τ (ε = τ
 * with δ at its largest, so the threshold is ε whatever the entropy). At each position
 * mentored decoding accepts the most any rule can within its KL (docs/design.md), so its
 * curve runs above typical acceptance's.
 */
async function lossyCurves(pairs, s) {
  const L = S.pkg.LIMITS;
  const mentored = [];
  for (const d of [0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3]) mentored.push(await lossyPoint(pairs, { method: "mentored", kl: d }));
  const typical = [];
  for (const tau of [1, 0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.003, 0.001, 0]) {
    const point = await lossyPoint(pairs, { method: "typical", epsilon: tau, delta: L.maxTypicalDelta });
    // A threshold that accepts every draft token can leave the output without some of the
    // target's tokens: KL is then infinite, off the chart.
    if (Number.isFinite(point[1])) typical.push(point);
  }
  const medusa = await lossyPoint(pairs, { method: "typical", epsilon: L.defaultTypicalEpsilon, delta: L.defaultTypicalDelta });
  // The settings on screen, as a point on their rule's curve.
  const own = s.method === "typical" ? { method: "typical", epsilon: s.epsilon, delta: s.delta } : { method: "mentored", kl: s.kl };
  const here = await lossyPoint(pairs, own);
  const byAcceptance = (points) => points.sort((a, b) => a[0] - b[0]);
  hook.lossy = { mentored: byAcceptance(mentored), typical: byAcceptance(typical), medusa, here };
  // Drawn as acceptance against KL on a log axis (0 at its left, past the break), like the
  // acceptance-vs-D chart beside it; KL below 1e-4 nats would only stretch the axis.
  const drawn = (points) => points.filter(([, kl]) => kl === 0 || kl >= 1e-4).map(([a, kl]) => [kl, a]);
  const mark = (point, cls, name) => (Number.isFinite(point[1]) && (point[1] === 0 || point[1] >= 1e-4) ? [{ x: point[1], y: point[0], cls, name }] : []);
  lines($("chart-lossy"), {
    curves: [
      { points: drawn(hook.lossy.mentored), cls: "c-theory", name: "mentored, D from 0 to 3" },
      { points: drawn(hook.lossy.typical), cls: "c-alt", name: "typical, τ from 1 to 0" },
    ],
    marks: [
      ...mark(here, "m-theory", s.method === "typical" ? `ε ${s.epsilon}, δ ${s.delta}` : `D = ${s.kl}`),
      ...mark(medusa, "m-measured", `Medusa's ε ${L.defaultTypicalEpsilon}, δ ${L.defaultTypicalDelta}`),
    ],
    xLog: true, yMin: 0, yMax: 1, label: "acceptance vs KL from the target, mentored decoding and typical acceptance", xLabel: "KL(target ‖ output), nats (log scale; 0 at the left)", yLabel: "P(accept)",
  });
}

/** The formula line: E[tokens] = (1 − α^(γ+1))/(1 − α), with a real superscript. */
function formula() {
  const p = h("p", "formula");
  const sup = h("sup", "", "γ+1");
  p.append("Curves: E[tokens per round] = (1 − α", sup, ")/(1 − α); walltime factor = E/((γ·c + 1)·v), v the cost of the verifying call in one-position target calls.");
  return p;
}

/** What the run drafted, for the approximation note. */
function drafting(ran) {
  const method = ran.method === "spectr" ? `SpecTr (${ran.selection === "race" ? "ratio race" : "k-Seq"})` : "multi-round";
  return `${method}${ran.tree ? " with a draft tree" : ""}`;
}

/**
 * The sampling settings on screen when they differ from the run's and the run's recorded
 * distributions can be re-targeted to them: { to } (null when they are the run's), or
 * { cannot: true } when the run used top-k, top-p or greedy decoding.
 */
function previewOf(s, ran) {
  const to = { temperature: s.temperature, topK: s.topK || undefined, topP: s.topP < 1 ? s.topP : undefined };
  if (!ran || (to.temperature === ran.temperature && to.topK === ran.topK && to.topP === ran.topP)) return null;
  return ran.temperature > 0 && ran.topK === undefined && ran.topP === undefined ? { to } : { cannot: true };
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
    const m = S.metrics;
    const sum = S.summary;
    const pairs = cachedPairs();
    const ran = S.run?.options;
    const multi = multiDraft(ran?.method);
    // α per position: the engine's accepted ÷ tested positions (the vLLM acceptance rate
    // also counts the drafts after a rejection, which are never tested).
    const measuredAlpha = sum?.testedAcceptance ?? null;
    const overlapMean = await meanOf(pairs, ({ target, draft }) => overlap(target, draft));
    const alpha = measuredAlpha ?? overlapMean;
    const measuredC = sum?.costRatio ?? null;
    // Drafts with no draft call (prompt lookup copies them from the context) cost nothing;
    // otherwise c is the engine's measurement, and without one there is no walltime curve
    // (no number is assumed for it).
    const noDraftModel = m?.draftCalls === 0 && m?.draftedTokens > 0;
    const c = measuredC ?? (noDraftModel ? 0 : null);
    // The curves span the sliders' ranges, and the run's γ (a tree may be deeper). With
    // dynamic γ the rounds drafted different numbers: the run is marked at their mean.
    const gammas = Array.from({ length: Number($("gamma").max) }, (_, i) => i + 1);
    const meanDrafted = m?.rounds > 0 ? m.draftedTokens / m.rounds : null;
    const dynamic = !!ran?.dynamicGamma && meanDrafted !== null;
    const runGamma = ran?.tree ? ran.tree.length : dynamic ? meanDrafted : ran?.gamma ?? s.gamma;
    const note = $("theory-note");
    const wallNote = $("walltime-note");
    // The closed forms take whole γs: a dynamic run's walltime mark stands at its rounded mean.
    const theoryGamma = Math.max(1, Math.round(runGamma));
    const theory = alpha === null ? null : await theoryCurves(alpha, [...gammas, theoryGamma], c ?? undefined);
    if (!theory) {
      note.replaceChildren(alpha === null ? "Run a method with drafts to measure α and c." : "The theory curves need the package, which did not load.");
      wallNote.textContent = "";
      lines($("chart-tokens"), { curves: [], label: "expected tokens per round" });
      lines($("chart-walltime"), { curves: [], label: "walltime factor" });
    } else {
      const points = (values) => gammas.map((g, i) => [g, values[i]]);
      note.replaceChildren(
        rich(`{alpha} = ${fmt(alpha, 3)} (accepted ÷ tested positions, measured${overlapMean !== null ? `; {sigmaMin} on the cached distributions gives ${fmt(overlapMean, 3)}` : ""}), ${c === null ? "{c} not measured yet (the run's timing has no draft and target calls to compare)" : `{c} = ${fmt(c, 3)}${measuredC !== null ? " (measured)" : " (no draft model: its guesses are copied)"}`}${dynamic ? `; dynamic {gamma}: the rounds drafted ${fmt(meanDrafted, 2)} on average, where the run is marked` : ""}.`),
        formula(),
      );
      const pooled = pairs.some((p) => p.tokens);
      if (pooled) {
        // Kept exact: the measured α and c and the engine's block efficiency; only what is
        // recomputed from the cache stands on the kept tokens.
        const most = Math.max(...pairs.map((p) => p.pooled));
        const vocab = pairs[0].vocab.toLocaleString("en");
        note.append(h("p", "pooled-note", `With a ${vocab}-token vocabulary the page keeps, of each recorded distribution, its most likely tokens and the tokens the round names, and pools the rest into one entry (at most ${fmt(most, 4)} of the probability here): what is recomputed from the cached positions (Σ min, the preview, the curves over D and k) is computed on that, within about that much of the exact value.`));
      }
      if (multi) {
        const approx = h("p", "approx");
        approx.dataset.approx = "true";
        approx.append(rich(`Approximation for ${drafting(ran)}: the curve treats the measured per-position acceptance {alpha} as the same, independent chance at every depth. With several drafts the first positions have many candidates and deeper ones fewer (only drafts agreeing with what was kept survive)${ran.tree ? ", and a tree's depth is fixed by its branching, so only the measured point at its depth is real" : ""}. Read the dashed curve as a trend, not an exact prediction.`));
        note.append(approx);
      }
      const theoryCls = multi ? "c-approx" : "c-theory";
      const theoryName = multi ? "approx.: same α at every depth" : "theory, measured α";
      const curves = [{ points: points(theory.expectedTokens), cls: theoryCls, name: theoryName }];
      if (overlapMean !== null && measuredAlpha !== null && !multi) {
        const alt = await theoryCurves(overlapMean, gammas);
        curves.push({ points: points(alt.expectedTokens), cls: "c-alt", name: "theory, cached Σ min" });
      }
      // Sampling settings moved since the run: re-target the cached distributions
      // (exact for a run without top-k/top-p at a temperature above 0) — no model runs.
      const preview = pairs.length ? previewOf(s, ran) : null;
      hook.preview = null;
      if (preview?.to) {
        const { to } = preview;
        const previewAlpha = await meanOf(pairs, async ({ target, draft }) =>
          overlap(await retarget(target, ran.temperature, to), await retarget(draft, ran.temperature, to)));
        const shifted = await theoryCurves(previewAlpha, gammas);
        hook.preview = { alpha: previewAlpha, settings: to, positions: pairs.length };
        curves.push({ points: points(shifted.expectedTokens), cls: "c-preview", name: `preview T=${s.temperature}${to.topK ? ` k=${to.topK}` : ""}${to.topP ? ` p=${to.topP}` : ""}` });
        note.append(h("p", "", `Preview for the new sampling settings from the ${pairs.length} cached positions (no model run): Σ min(target, draft) = ${fmt(previewAlpha, 3)}; release the slider to run the models.`));
      } else if (preview?.cannot) {
        note.append(h("p", "", "The run used top-k/top-p or greedy decoding, so the cached distributions cannot be re-targeted: release the slider to run the models."));
      }
      const measured = sum?.blockEfficiency ?? null;
      lines($("chart-tokens"), {
        curves,
        marks: measured !== null && m.draftedTokens > 0 ? [{ x: runGamma, y: measured, cls: "m-measured", name: dynamic ? "measured (dynamic γ, at the mean drafted)" : "measured" }] : [],
        label: "expected tokens per round vs gamma", xLabel: "γ", yLabel: "tokens", xInteger: true,
      });
      // The last race of the pair on screen: another pair's says nothing of this one (the
      // n-gram pair is never raced: race.js).
      const pair = s.source === "gguf" ? `gguf ${hook.gguf?.name}` : s.source === "bundled" ? "bundled" : null;
      const best = S.races.findLast((r) => r.models === pair) ?? null;
      // With a race of this pair, this machine's costs (race-costs.js); else verifying is
      // taken to cost one call (v = 1), as on a device that scores many positions at once.
      const costs = best?.costs ?? null;
      const measuredWall = costs && (await walltimeWith(costs, alpha, [...gammas, theoryGamma]));
      // Without a measured c (nor a race's costs) there is no walltime curve to draw.
      const wall = measuredWall ?? theory.walltimeFactor ?? gammas.map(() => null).concat([null]);
      const wallPoints = gammas.map((g, i) => [g, wall[i]]).filter(([, y]) => y !== null);
      hook.walltime = { gammas, values: wall.slice(0, gammas.length), alpha, measured: !!measuredWall, costs: measuredWall ? costs : null, costRatio: measuredWall ? costs.c : c };
      lines($("chart-walltime"), {
        curves: [{ points: wallPoints, cls: multi ? "c-approx" : "c-theory", name: `${multi ? "approx. theory" : "theory"}, ${measuredWall ? "this computer's costs (race)" : "v = 1 assumed"}` }],
        marks: [
          ...(m?.draftedTokens && wall[gammas.length] !== null ? [{ x: theoryGamma, y: wall[gammas.length], cls: "m-theory", name: dynamic ? "this run's γ (rounded mean)" : "this γ" }] : []),
          ...(best ? [{ x: best.gamma, y: best.meanSpeedup, cls: "m-measured", name: `race, measured (${best.count} run${best.count > 1 ? "s" : ""})` }] : []),
        ],
        label: "walltime factor vs gamma", xLabel: "γ", yLabel: "× faster", xInteger: true,
      });
      wallNote.replaceChildren(rich(measuredWall
        ? `Measured by the last race (γ = ${costs.gamma}): the target's verifying call of γ + 1 = ${costs.gamma + 1} positions took ${fmt(costs.verifyMs, 2)} ms against ${fmt(costs.oneMs, 2)} ms for one position, so verifying costs v = ${fmt(costs.v, 2)} one-position calls here, not 1; a draft call costs {c} = ${fmt(costs.c, 3)} of the verifying call. At other γs the curve takes each position past the first to cost what it did there (${fmt((costs.v - 1) / costs.gamma, 3)} of a call). {alpha} is the run's on screen; time outside the model calls is left out (no overhead: no worker messages, no page work), which the race's clocks include.`
        : c === null
          ? `No walltime curve yet: it needs {c}, the cost of a draft call against a target call, and this run's timing has not measured it. ${pair ? "Start a race below: it measures the costs on this computer." : "The race does not run the n-gram pair (it has no worker), so nothing measures it here."}`
          : `The curve takes a draft call to cost {c} = ${fmt(c, 3)} of a target call and that the target verifies γ drafts in the time of one call (v = 1), as a device that scores many positions at once nearly does; on a CPU verifying costs more, and nothing else takes time (no overhead: no worker messages, no page work). ${pair ? "Start a race below: it measures v on this computer and the curve takes it." : "The race does not run the n-gram pair (it has no worker), so nothing measures v for it here."}`));
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
          ...(sum?.acceptanceRate != null && ran?.method === "mentored" ? [{ x: ran.kl, y: sum.acceptanceRate, cls: "m-measured", name: "measured" }] : []),
        ],
        xLog: true, yMin: 0, yMax: 1, label: "acceptance vs KL budget D", xLabel: "D (nats, log scale; 0 at the left)", yLabel: "P(accept)",
      });
    }
    if (s.method === "mentored" || s.method === "typical") await lossyCurves(pairs, s);
    if (multiDraft(s.method)) {
      const ks = Array.from({ length: Number($("drafts").max) }, (_, i) => i + 1);
      const kseq = [];
      const multiRound = [];
      const race = [];
      for (const k of ks) {
        kseq.push([k, await mean(pairs, { method: "spectr", selection: "kseq", drafts: k })]);
        multiRound.push([k, await mean(pairs, { method: "multiround", drafts: k })]);
        race.push([k, await mean(pairs, { method: "spectr", selection: "race", drafts: k })]);
      }
      // The settings' own rule marked at their k (the curves are for i.i.d. drafts).
      const own = s.method === "multiround" ? multiRound : s.selection === "race" ? race : kseq;
      lines($("chart-k"), {
        curves: [
          { points: kseq, cls: "c-theory", name: "k-Seq (SpecTr)" },
          { points: multiRound, cls: "c-alt", name: "multi-round" },
          { points: race, cls: "c-best", name: "ratio race (optimal selection)" },
        ],
        marks: s.shape === "tree" ? [] : [{ x: s.drafts, y: own[s.drafts - 1][1], cls: "m-theory", name: `k = ${s.drafts}` }],
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
