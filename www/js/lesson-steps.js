// The lesson's steps (lesson.js shows them). Each step sets the controls it needs, drives
// the transport to a round worth talking about, and explains that round with its own
// numbers: the engine's trace (hook.shownRounds) and the package's closed forms (math.js),
// never a formula restated here. Each returns { body, spot }: what to show, and the
// element of the page it is about. Numbers are kept on the body as data attributes.
import { $, S, h, fmt } from "./state.js";
import { rich } from "./glossary.js";
import { plan, overlap, curves, meanOf } from "./math.js";
import { coinFigure, areaFigure, budgetTable } from "./lesson-figures.js";
import { PRESETS, presetCard } from "./lesson-presets.js";
import { probOf } from "./pieces.js";

/** A paragraph from a template with {term} placeholders (glossary.js). */
const para = (template, cls) => {
  const p = h("p", cls);
  p.append(rich(template));
  return p;
};

/** The step's body: paragraphs and figures, with its numbers as data attributes. */
function body(values, ...children) {
  const div = h("div", "lesson-step");
  for (const [k, v] of Object.entries(values)) div.dataset[k] = typeof v === "string" ? v : JSON.stringify(v);
  div.append(...children.filter(Boolean));
  return div;
}

const quote = (ch, t) => `'${ch(t)}'`;
/** Whether the student's own settings are greedy (temperature 0): the steps then flip coins at 0.8. */
const greedyRun = (ctx) => Number(ctx.own("temperature")) === 0;
const stageCell = (id) => $("stage").querySelector(`.cell[data-node="${id}"]`);
const list = (items) => (items.length > 1 ? `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}` : items[0] ?? "");

/**
 * Steps 1–6 talk about plain speculative sampling, at a temperature where coins are
 * flipped, with no bug planted and a bonus for every fully accepted round.
 */
async function speculative(ctx) {
  await ctx.setControls({ method: "speculative", bug: "", parallelDraft: false, ...(greedyRun(ctx) ? { temperature: 0.8 } : {}) });
}

const noRound = (what) => ({ body: body({ missing: what }, para(`This run has no round ${what} within its characters. Press Reset, change the seed, or raise the tokens, then come back to this step.`)) });

const guesses = {
  id: "draft",
  title: "1. The draft guesses",
  async show(ctx) {
    await speculative(ctx);
    const r = await ctx.round();
    if (!r) return noRound("to show");
    const { trace } = r;
    const g = trace.branching.length;
    const drafts = trace.drafts.map((d) => ({ token: d.token, draftProb: d.draftProb }));
    const listed = list(drafts.map((d) => `draft(${quote(ctx.ch, d.token)}) = ${fmt(d.draftProb, 3)}`));
    // The stage as the text tells it: the guesses only, nothing scored or tested yet.
    await ctx.upTo(r.index, "drafts");
    return {
      spot: $("stage"),
      body: body({ round: String(r.index + 1), gamma: String(g), drafts },
        para(`In round ${r.index + 1} the small draft model ran ${trace.draftCalls} time${trace.draftCalls === 1 ? "" : "s"}, once per position, and guessed {gamma} = ${g} characters: ${drafts.map((d) => quote(ctx.ch, d.token)).join(" ")}.`),
        para(`Each guess is sampled from the draft's own distribution given the text so far, including the guesses before it: ${listed}.`),
        para("Nothing is decided yet: the guesses are cheap, and the target has not looked at them.")),
    };
  },
};

const targetPass = {
  id: "target",
  title: "2. One target pass scores every position",
  async show(ctx) {
    await speculative(ctx);
    const r = await ctx.round();
    if (!r) return noRound("to show");
    const { trace } = r;
    const g = trace.branching.length;
    const scored = trace.steps.flatMap((s) => s.outcome.tests.map((t) => `target(${quote(ctx.ch, t.token)}) = ${fmt(t.targetProb, 3)} against draft ${fmt(t.draftProb, 3)}`));
    // The stage as the text tells it: the guesses scored, none tested yet.
    await ctx.upTo(r.index, "verify");
    return {
      spot: $("stage"),
      body: body({ round: String(r.index + 1), positions: String(g + 1), targetCalls: String(trace.targetCalls) },
        para(`Then the large target model ran once — ${trace.targetCalls} call in this round — on the text plus all ${g} guesses. One pass gives its next-character distribution after every prefix: {gamma} + 1 = ${g + 1} distributions, one to check each guess and one for the character after the last guess.`),
        para(`Its scores for the guesses the next steps test, one by one: ${list(scored)}.`),
        para("That single pass costs about as much as producing one character the ordinary way, which is where the speed-up comes from.")),
    };
  },
};

const coin = {
  id: "coin",
  title: "3. The coin flip",
  async show(ctx) {
    await speculative(ctx);
    const r = await ctx.round();
    if (!r) return noRound("to show");
    const { trace } = r;
    // The rejected test if the round has one (the next step is about it), else the last.
    const tests = trace.steps.flatMap((s) => s.outcome.tests.map((t) => ({ s, t })));
    if (!tests.length) return noRound("with a tested guess");
    const { s, t } = tests.find((x) => !x.t.accepted) ?? tests[tests.length - 1];
    const where = { round: r.index + 1, position: s.depth, draftIndex: t.draftIndex };
    // The distributions panel at the position the step talks about.
    ctx.pick(r.index, s.depth);
    const ch = ctx.ch;
    const text = `At position ${s.depth} the draft guessed ${quote(ch, t.token)} with draft probability ${fmt(t.draftProb, 3)}; the target gives it ${fmt(t.targetProb, 3)}, so it is kept with probability min(1, ${fmt(t.targetProb, 3)}/${fmt(t.draftProb, 3)}) = ${fmt(t.acceptProb, 3)}.`;
    return {
      spot: stageCell(s.candidates[t.draftIndex]) ?? $("stage"),
      body: body({ round: String(r.index + 1), position: String(s.depth) },
        para(text, "lesson-numbers"),
        para(`The page draws {u} uniform on [0, 1) — the mark on the bar — and keeps the guess when u lands below that probability: here u = ${fmt(t.uniform, 3)}, so it is ${t.accepted ? "accepted" : "rejected"}.`),
        coinFigure(t, where, ch),
        para("A guess the target likes at least as much as the draft is always kept; one it likes less is kept exactly as often as target/draft says. The first rejection ends the round's guesses.")),
    };
  },
};

const residual = {
  id: "residual",
  title: "4. The residual",
  async show(ctx) {
    await speculative(ctx);
    const r = await ctx.findRound((t) => t.steps.some((s) => s.outcome.residual && s.residualProbs));
    if (!r) return noRound("with a rejection");
    const s = r.trace.steps.find((x) => x.outcome.residual && x.residualProbs);
    const ch = ctx.ch;
    const rejected = s.outcome.tests[0];
    const sum = await overlap(s.targetProbs, s.draftProbs);
    const drawn = s.token;
    return {
      spot: $("stage-focus").querySelector(".resview") ?? $("stage-focus"),
      body: body({ round: String(r.index + 1), position: String(s.depth), overlap: String(sum), drawn: String(drawn), residualProb: String(probOf(s.residualProbs, drawn)) },
        para(`Round ${r.index + 1}, position ${s.depth}: the guess ${quote(ch, rejected.token)} was rejected ({u} = ${fmt(rejected.uniform, 3)} ≥ ${fmt(rejected.acceptProb, 3)}). The replacement is not drawn from the target itself — that would give the characters accepted guesses already supply a second share — but from the {residual}.`),
        para(`That is the part of the target the draft leaves uncovered, max(0, target − draft), rescaled to sum to 1. Here it has area 1 − Σ min(target, draft) = 1 − ${fmt(sum, 3)} = ${fmt(1 - sum, 3)} before rescaling.`),
        para(`The page drew ${quote(ch, drawn)}, which has residual probability ${fmt(probOf(s.residualProbs, drawn), 3)} (target ${fmt(probOf(s.targetProbs, drawn), 3)}, draft ${fmt(probOf(s.draftProbs, drawn), 3)}); the orange bars on the stage are the residual.`)),
    };
  },
};

const bonus = {
  id: "bonus",
  title: "5. The bonus character",
  async show(ctx) {
    await speculative(ctx);
    const r = await ctx.findRound((t) => t.bonus && t.drafts.length > 0 && t.counts.resampled === 0);
    if (!r) return noRound("in which every guess was accepted");
    const { trace } = r;
    const g = trace.branching.length;
    const b = trace.bonus;
    const p = b.targetProbs ? probOf(b.targetProbs, b.token) ?? null : null;
    // Theory for this γ at this round's mean acceptance (the package's closed form).
    const alpha = await meanOf(trace.steps.filter((s) => s.targetProbs && s.draftProbs), (s) => overlap(s.targetProbs, s.draftProbs));
    const theory = alpha === null ? null : await curves(alpha, [g]);
    const expected = theory?.expectedTokens?.[0] ?? null;
    const made = S.metrics?.rounds ? S.metrics.emittedTokens / S.metrics.rounds : null;
    const bonusCell = $("stage").querySelector(".cell.result[data-source='bonus']");
    return {
      spot: bonusCell ?? $("stage"),
      body: body({ round: String(r.index + 1), gamma: String(g), bonusToken: String(b.token), bonusProb: String(p), alpha: String(alpha), expected: String(expected) },
        para(`In round ${r.index + 1} all {gamma} = ${g} guesses were accepted. The target's one pass had already computed the distribution after the last guess, so one more character comes for free: the {bonus} ${quote(ctx.ch, b.token)}, ${b.targetArgmax !== null && b.targetArgmax !== undefined ? "the target's {argmax}" : `sampled from the target with u = ${fmt(b.uniform, 3)}`}${p !== null ? ` (target probability ${fmt(p, 3)})` : ""}.`),
        para("So a round emits between 1 character (the first guess rejected, replaced from the residual) and γ + 1 (everything accepted, plus the bonus)."),
        expected !== null
          ? para(`If every position were accepted with {alpha} = ${fmt(alpha, 3)}, this round's mean Σ min(target, draft), the theory expects (1 − α^(γ+1))/(1 − α) = ${fmt(expected, 2)} characters per round at γ = ${g}; this run has made ${fmt(made, 2)} so far.`)
          : null),
    };
  },
};

/** The position of a round that the area picture uses: its rejection if it has one, else the first. */
const areaPosition = (trace) => trace.steps.find((s) => s.outcome.residual) ?? trace.steps[0];

const area = {
  id: "area",
  title: "6. Why the output is exactly the target",
  async show(ctx) {
    await speculative(ctx);
    const r = await ctx.findRound((t) => t.steps.some((s) => s.outcome.residual && s.targetProbs && s.draftProbs));
    if (!r) return noRound("with a rejection");
    const s = areaPosition(r.trace);
    ctx.pick(r.index, s.depth);
    const report = await plan({ method: "speculative", target: s.targetProbs, draft: s.draftProbs, normalize: true });
    if (!report) return noRound("with the package's analysis (the package is unavailable)");
    // Over a large vocabulary the report's entries are the kept tokens and a pooled rest (math.js plan()).
    const order = [...report.target.keys()].filter((i) => (report.tokens?.[i] ?? 0) >= 0).sort((a, b) => report.target[b] - report.target[a]).slice(0, 6);
    const ch = report.tokens ? (i) => ctx.ch(report.tokens[i]) : ctx.ch;
    const sum = report.acceptance;
    const [x] = order;
    const piece = (t) => `${fmt(Math.min(report.target[t], report.draft[t]), 3)} + ${fmt((1 - sum) * report.residual[t], 3)} = ${fmt(report.target[t], 3)}`;
    return {
      spot: $("dist").closest(".panel") ?? $("dist"),
      body: body({ round: String(r.index + 1), position: String(s.depth) },
        para(`Round ${r.index + 1}, position ${s.depth}. A character x is drafted and kept with probability draft(x)·min(1, target(x)/draft(x)) = min(target(x), draft(x)): accepted guesses emit Σ min(target, draft) = ${fmt(sum, 3)} of the probability.`),
        para(`The other 1 − ${fmt(sum, 3)} = ${fmt(1 - sum, 3)} goes to rejections, each replaced from the {residual}, which adds ${fmt(1 - sum, 3)}·residual(x). The two pieces fill the target exactly, for ${quote(ch, x)}: ${piece(x)}.`),
        areaFigure(report, order, { round: r.index + 1, position: s.depth }, ch),
        para("Every character's bar is filled to the target's height, so every emitted character follows the target's distribution, whatever the draft — a worse draft only means more rejections.")),
    };
  },
};

const spectr = {
  id: "spectr",
  title: "7. SpecTr: several drafts and ρ*",
  async show(ctx) {
    await ctx.live();
    const k = Math.max(2, Number(ctx.own("drafts")));
    const changed = await ctx.setControls({ method: "spectr", shape: "iid", selection: "kseq", drafts: k, bug: "", ...(greedyRun(ctx) ? { temperature: 0.8 } : {}) });
    if (changed || S.run?.options?.method !== "spectr") await ctx.stepRound();
    const r = await ctx.round();
    const s = r?.trace.steps.find((x) => x.plan?.kind === "kseq");
    if (!s) return noRound("with a k-Seq test");
    const p = s.plan;
    const single = s.targetProbs && s.draftProbs ? await overlap(s.targetProbs, s.draftProbs) : null;
    return {
      spot: $("stage-focus").querySelector(".scheme") ?? $("stage"),
      body: body({ round: String(r.index + 1), position: String(s.depth), k: String(p.k), rhoStar: String(p.rhoStar), rho: String(p.rho), acceptance: String(p.acceptance), single: String(single) },
        para(`Method SpecTr now drafts {k} = ${p.k} sequences at once. At position ${s.depth} of round ${r.index + 1} there were ${s.candidates.length} guesses, and {kseq} tests them in turn, each with min(1, target/(ρ·draft)).`),
        para(`With ρ = 1, ${p.k} tries would accept some characters more often than the target emits them; the engine uses the smallest ρ that never does, {rhoStar} = ${fmt(p.rhoStar, 3)}. Then some guess is accepted with probability ${fmt(p.acceptance, 3)}${single !== null ? `, against Σ min(target, draft) = ${fmt(single, 3)} with a single draft` : ""}.`),
        para("When all of them are rejected, k-Seq's own residual makes up the difference, so the output is still exactly the target.")),
    };
  },
};

const mentored = {
  id: "mentored",
  title: "8. Mentored decoding: a budget D",
  async show(ctx) {
    await ctx.live();
    const changed = await ctx.setControls({ method: "mentored", ...(Number(ctx.own("kl")) === 0 ? { kl: 0.1 } : {}), ...(greedyRun(ctx) ? { temperature: 0.8 } : {}) });
    if (changed || S.run?.options?.method !== "mentored") await ctx.stepRound();
    const r = await ctx.round();
    const steps = (r?.trace.steps ?? []).filter((x) => x.plan?.kind === "mentored");
    if (!steps.length) return noRound("with a mentored test");
    const lossless = await Promise.all(steps.map((s) => (s.targetProbs && s.draftProbs ? overlap(s.targetProbs, s.draftProbs) : null)));
    const p = steps[0].plan;
    return {
      spot: $("stage-focus").querySelector(".scheme") ?? $("stage"),
      body: body({ round: String(r.index + 1), budget: String(p.klBudget) },
        para(`Mentored decoding gives up exactness on purpose: at every position the distribution it samples may differ from the target's by at most {D} = ${fmt(p.klBudget, 3)} {nats} of {kl}(target ‖ output).`),
        para(p.acceptsAll
          ? `At position 1 of round ${r.index + 1} even the draft's own distribution is within the budget (KL(target ‖ draft) = ${fmt(p.kl, 3)} ≤ D), so every guess is kept: acceptance ${fmt(p.acceptance, 3)}${lossless[0] !== null ? ` instead of ${fmt(lossless[0], 3)} (lossless)` : ""}.`
          : `At position 1 of round ${r.index + 1} it keeps a guess whose target/draft ratio is at least {mAlpha} = ${fmt(p.alpha, 3)} and replaces from max(0, target/{mBeta|β} − draft) with β = ${fmt(p.beta, 3)}: KL = ${fmt(p.kl, 3)} ≤ D, and a guess is accepted with probability ${fmt(p.acceptance, 3)}${lossless[0] !== null ? ` instead of ${fmt(lossless[0], 3)} (lossless)` : ""}.`),
        budgetTable(steps, lossless),
        para("The budget buys acceptance, and so speed; the price is that the text no longer follows the target exactly.")),
    };
  },
};

const questions = {
  id: "questions",
  title: "Questions to try",
  async show(ctx) {
    const div = body({}, para("Each button sets the controls; press Play, look, and answer the question before opening the answer."));
    for (const preset of PRESETS) div.append(presetCard(preset, ctx));
    return { body: div, spot: null };
  },
};

export const STEPS = [guesses, targetPass, coin, residual, bonus, area, spectr, mentored, questions];
