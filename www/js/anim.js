// Animates one round of the engine's trace on the stage: drafts appear depth by depth on
// the draft tree, the target's single pass lights every position, then each position's
// test (coin flip, or the argmax check at temperature 0), the accepted / rejected /
// discarded marks, the residual draw (drawn as target minus draft) and the bonus token.
// The sentence for the current step is shown under the tree; the round's log is below.
import { h } from "./state.js";
import { rich } from "./glossary.js";
import { buildTree } from "./tree.js";
import { residualChart } from "./residual-view.js";
import { overlap } from "./math.js";
import { argmaxOf, showPiece } from "./pieces.js";
import { bugNote, bugSentence } from "./bugs.js";

export class Cancelled extends Error {}

/** Speed steps of the speed slider; the last is "instant". */
export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, Infinity];

/** Pacing of one animation: respects speed, pause, skip (step) and cancel (reset). */
export class Pacer {
  constructor(getSpeed) {
    this.getSpeed = getSpeed;
    this.paused = false;
    this.skip = false;
    this.cancelled = false;
    this.wakers = new Set();
  }
  wake() {
    for (const w of this.wakers) w();
    this.wakers.clear();
  }
  async wait(ms) {
    if (this.cancelled) throw new Cancelled();
    const speed = this.getSpeed();
    if (!this.skip && Number.isFinite(speed)) {
      await new Promise((resolve) => {
        const t = setTimeout(done, ms / speed);
        const self = this;
        function done() {
          clearTimeout(t);
          self.wakers.delete(done);
          resolve();
        }
        this.wakers.add(done);
      });
    }
    while (this.paused && !this.skip && !this.cancelled) await new Promise((r) => this.wakers.add(r));
    if (this.cancelled) throw new Cancelled();
  }
}

/** A token's text as drawn: a character, or a GGUF token's piece (" the" as "␣the", "\n" as "↵"). */
export const showChar = showPiece;
const fmt = (x, d = 2) => (x === null || x === undefined ? "–" : !Number.isFinite(x) ? "∞" : x.toFixed(d));

/**
 * Builds the stage for a round (all cells hidden) and returns an animator.
 * focus: the box under the tree for the current step's sentence and the residual.
 * options: { dynamicGamma, parallelDraft, greedy } of the run; `pieces` when its tokens are
 * text pieces (a GGUF pair), named in `unit`s ("token" rather than "character"); `bug`, the
 * bug planted in the run ({ name, description }, bugs.js), which every round names first and
 * each sentence it makes false names again, with what it does instead.
 */
export function buildStage(stage, focus, notes, trace, alphabet, { dynamicGamma = false, parallelDraft = false, greedy = false, pieces = false, unit = "character", bug = null } = {}) {
  const ch = (t) => showChar(alphabet[t] ?? "?");
  stage.classList.toggle("pieces", pieces);
  stage.replaceChildren();
  focus.replaceChildren();
  notes.replaceChildren();
  stage.dataset.round = String(trace.round);
  stage.dataset.method = trace.method;
  const { cells: byNode, outCells, edge, redraw } = buildTree(stage, trace, ch, fmt);
  const depth = trace.branching.length;
  const leaves = new Set(trace.drafts.map((d) => d.id));
  for (const d of trace.drafts) leaves.delete(d.parent);

  // Under the tree: the current position's scheme (k-Seq, the race, mentored thresholds)
  // and the current step's sentence; the residual beside them when one is drawn.
  const sentences = h("div", "sentences");
  const planted = h("p", "now planted");
  const scheme = h("p", "now scheme");
  const now = h("p", "now");
  now.setAttribute("aria-live", "polite");
  sentences.append(planted, scheme, now);
  focus.append(sentences);
  stage.dataset.bug = bug?.name ?? "";
  /** Shows a sentence under the tree and adds it to the round's log. */
  const say = (template, cls) => {
    if (cls === "bug") {
      planted.replaceChildren(rich(template));
    } else if (cls === "kseq" || cls === "mentored") {
      scheme.replaceChildren(rich(template));
      scheme.className = `now scheme ${cls}`;
    } else {
      now.replaceChildren(rich(template));
      now.className = `now ${cls ?? ""}`;
    }
    const li = h("li", cls);
    li.append(rich(template));
    notes.append(li);
    return li;
  };
  const mark = (id, cls) => {
    const cell = byNode.get(id);
    if (!cell) return;
    const tok = cell.querySelector(".tok");
    tok.classList.remove("draft", "verified");
    tok.classList.add(cls);
    cell.dataset.state = cls;
    edge(id, cls);
  };
  const stateOf = (id) => byNode.get(id)?.dataset.state;
  const descendants = (id) => trace.drafts.filter((d) => {
    let p = d.parent;
    while (p !== null && p !== undefined) {
      if (p === id) return true;
      p = trace.drafts[p].parent;
    }
    return false;
  });
  const emit = (d, token, source, extra) => {
    const c = outCells[d - 1];
    c.replaceChildren(h("span", `tok ${source}`, ch(token)));
    c.dataset.source = source;
    c.dataset.token = String(token);
    if (extra) c.title = extra;
  };

  /** A sentence with the bug's note for `where` after it, when the bug changes that step. */
  const withBug = (sentence, where) => {
    const note = bugNote(bug, where);
    return note ? `${sentence.replace(/\.$/, "")} — ${note}` : sentence;
  };

  /**
   * Plays the round; `until` stops it after a phase: "drafts" (the guesses only) or
   * "verify" (scored by the target, nothing tested yet), as the lesson's first steps show it.
   */
  async function animate(pacer, timing, until = null) {
    const t = timing;
    const rows = Math.max(1, trace.drafts.filter((d) => !trace.drafts.some((e) => e.parent === d.id)).length);
    if (bug) say(`${bugSentence(bug)} Not the correct algorithm: the output need not follow the target.`, "bug");
    if (trace.drafts.length === 0) {
      say(`No drafts: the target runs once and samples the next ${unit}.`);
    } else {
      // 1. Drafts appear one depth at a time (the draft model runs once per depth).
      for (let d = 1; d <= depth; d++) {
        for (const node of trace.drafts.filter((n) => n.depth === d)) {
          byNode.get(node.id)?.classList.remove("hidden");
          edge(node.id, "draft");
        }
        await pacer.wait(t.draft);
      }
      say(withBug(`The draft proposes ${trace.drafts.length} ${unit}${trace.drafts.length > 1 ? "s" : ""}` +
        (rows > 1 ? ` on ${rows} branches (branching ${trace.branching.join("·")}).` : "."), "propose") +
        (trace.earlyDrafts > 0
          ? ` The first ${trace.earlyDrafts} ${trace.earlyDrafts > 1 ? "were" : "was"} {parallel}, while the target verified the last round.`
          : ""));
      if (until === "drafts") return;
      // 2. One target pass scores every position at once.
      stage.classList.add("verifying");
      for (const cell of byNode.values()) cell.querySelector(".tok").classList.add("verified");
      say(`One target pass scores all ${depth + 1} positions at once.`);
      await pacer.wait(t.verify);
      stage.classList.remove("verifying");
      if (until === "verify") return;
    }
    // 3. Position by position: tests, survivors, residual.
    for (const step of trace.steps) {
      const out = step.outcome;
      // Typical acceptance tests without a coin too (target(x) > τ), but is not greedy.
      const typical = !greedy && step.plan?.kind === "typical";
      const stepGreedy = greedy || (!typical && out.tests.length > 0 && out.tests.every((x) => x.uniform === null || x.uniform === undefined));
      const targetArgmax = argmaxOf(step.targetProbs) ?? (out.residual ? step.token : null);
      // The selection rule's parameters at this depth, tagged by kind.
      const plan = stepGreedy ? null : step.plan;
      const drafts = `${step.candidates.length} draft${step.candidates.length > 1 ? "s" : ""}`;
      if (plan?.kind === "kseq") {
        say(`pos ${step.depth}: {kseq} over ${drafts}: {rhoStar} = ${fmt(plan.rhoStar, 3)}, {rho} = ${fmt(plan.rho, 3)}, P(accept one) = ${fmt(plan.acceptance, 3)}`, "kseq");
      } else if (plan?.kind === "race") {
        say(`pos ${step.depth}: ratio race over ${drafts} (the largest {race} wins): P(accept) = ${fmt(plan.acceptance, 3)}, best possible ({otm}) ${fmt(plan.optimum, 3)}`, "kseq");
      } else if (plan?.kind === "mentored") {
        // The lossless acceptance at this position, Σ min(target, draft), from the package.
        const base = step.targetProbs && step.draftProbs ? await overlap(step.targetProbs, step.draftProbs).catch(() => null) : null;
        say(`pos ${step.depth}: mentored {mAlpha} = ${fmt(plan.alpha, 3)}, {mBeta|β} = ${fmt(plan.beta, 3)}, {kl} = ${fmt(plan.kl, 3)} ≤ {D} = ${fmt(plan.klBudget, 3)}; acceptance ${fmt(plan.acceptance, 3)}` +
          (base !== null ? ` vs ${fmt(base, 3)} lossless (the budget bought +${fmt(plan.acceptance - base, 3)})` : "") + " (KL and D in {nats})", "mentored");
      } else if (plan?.kind === "typical") {
        say(`pos ${step.depth}: typical acceptance: threshold τ = min({epsilon}, {delta}·e^(−H)) = min(${fmt(plan.epsilon, 3)}, ${fmt(plan.delta, 3)}·e^(−${fmt(plan.entropy, 3)})) = ${fmt(plan.threshold, 4)}`, "mentored");
      }
      for (const test of out.tests) {
        const id = step.candidates[test.draftIndex];
        const cell = byNode.get(id);
        const limit = test.acceptProb;
        const greedyTest = !typical && (test.uniform === null || test.uniform === undefined);
        if (cell && typical) {
          const c = cell.querySelector(".coin");
          c.replaceChildren(h("span", "", `t ${fmt(test.targetProb, 3)}`), h("span", "", `${test.accepted ? ">" : "≤"} τ`));
          c.title = `typical acceptance: kept when the target's probability ${fmt(test.targetProb, 4)} is above the threshold τ = ${fmt(plan?.threshold, 4)} (no coin)`;
          cell.dataset.acceptProb = String(limit);
        } else if (cell) {
          const c = cell.querySelector(".coin");
          if (greedyTest) c.replaceChildren(h("span", "", test.accepted ? "argmax" : "≠ argmax"), h("span", "", test.accepted ? "✓" : "✗"));
          else c.replaceChildren(h("span", "", `u ${fmt(test.uniform)}`), h("span", "", `${test.accepted ? "<" : "≥"} ${fmt(limit)}`));
          c.title = greedyTest
            ? `greedy: the draft is kept exactly when it is the target's most likely character`
            : `ratio target/draft = ${fmt(test.ratio, 3)} (target ${fmt(test.targetProb, 4)}, draft ${fmt(test.draftProb, 4)}); accept probability ${fmt(limit, 3)}`;
          if (!greedyTest && bugNote(bug, "test")) c.title += ` — planted bug ${bug.name}: ${bug.description}`;
          cell.dataset.uniform = String(test.uniform);
          cell.dataset.acceptProb = String(limit);
        }
        mark(id, test.accepted ? "accepted" : "rejected");
        if (typical) {
          say(`pos ${step.depth}: draft '${ch(test.token)}' — target ${fmt(test.targetProb, 4)} ${test.accepted ? ">" : "≤"} τ = ${fmt(plan?.threshold, 4)} → ${test.accepted ? "accepted" : "rejected"} (no coin: the rule is deterministic)`,
            test.accepted ? "ok" : "no");
        } else if (greedyTest) {
          say(test.accepted
            ? `pos ${step.depth}: draft '${ch(test.token)}' is the target's {argmax} → accepted`
            : `pos ${step.depth}: draft '${ch(test.token)}' is not the target's {argmax}${targetArgmax !== null ? ` ('${ch(targetArgmax)}')` : ""} → rejected`,
          test.accepted ? "ok" : "no");
        } else {
          const kind = step.plan?.kind;
          const rule = kind === "kseq"
            ? "min(1, target/(ρ·draft))"
            : kind === "race"
              ? "min(1, target/{r})"
              : kind === "mentored"
                ? "the mentored acceptance"
                : trace.method === "multiround" && test.draftIndex > 0
                  ? "min(1, residual/draft)"
                  : "{ratio}";
          say(withBug(`pos ${step.depth}: draft '${ch(test.token)}' — {u} = ${fmt(test.uniform, 3)} ${test.accepted ? "<" : "≥"} ${rule} = ${fmt(limit, 3)} → ${test.accepted ? "accepted" : "rejected"}`, "test"),
            test.accepted ? "ok" : "no");
        }
        redraw();
        await pacer.wait(t.coin);
      }
      // Candidates that did not survive, and everything after them, are discarded.
      for (const id of step.candidates) {
        if (!step.survivors.includes(id) && stateOf(id) !== "rejected") mark(id, "discarded");
      }
      for (const id of step.candidates) {
        if (!step.survivors.includes(id)) for (const d of descendants(id)) mark(d.id, "discarded");
      }
      for (const id of step.survivors) if (stateOf(id) !== "accepted") mark(id, "accepted");
      if (out.residual) {
        if (stepGreedy) {
          emit(step.depth, step.token, "resampled", "the target's argmax");
          say(`pos ${step.depth}: greedy decoding takes the target's {argmax} '${ch(step.token)}' instead`, "res");
        } else {
          const fromTarget = bugNote(bug, "residual") && bug.name === "resample-from-target";
          emit(step.depth, step.token, "resampled", fromTarget ? `drawn from the target (planted bug ${bug.name}), u = ${fmt(out.residual.uniform, 3)}` : `drawn from the residual (${out.residual.residual.kind}), u = ${fmt(out.residual.uniform, 3)}`);
          say(fromTarget
            ? `pos ${step.depth}: every draft rejected → '${ch(step.token)}' ({u} = ${fmt(out.residual.uniform, 3)}) ${bugNote(bug, "residual")}`
            : withBug(`pos ${step.depth}: every draft rejected → '${ch(step.token)}' drawn from the {residual} ${typical ? "(typical acceptance draws from the target itself)" : residualName(out.residual.residual)} ({u} = ${fmt(out.residual.uniform, 3)})`, "residual"), "res");
          const chart = residualChart(step, step.token, ch, 3, pieces, fromTarget ? bug : null);
          if (chart) focus.append(chart);
        }
        await pacer.wait(t.residual);
      } else {
        emit(step.depth, step.token, "accepted");
        if (step.survivors.length > 1) say(`pos ${step.depth}: ${step.survivors.length} drafts agree and survive to the next position`);
      }
    }
    if (trace.bonus) {
      const greedyBonus = greedy || trace.bonus.uniform === null || trace.bonus.uniform === undefined;
      emit(trace.steps.length + 1, trace.bonus.token, "bonus", greedyBonus ? "the target's argmax" : `sampled from the target, u = ${fmt(trace.bonus.uniform, 3)}`);
      if (trace.drafts.length) {
        // With several drafts per position, some are rejected on the way: one kept at each.
        const all = trace.drafts.every((d) => stateOf(d.id) === "accepted");
        say(`${all ? "All drafts accepted" : "Every position kept one of its drafts"} → {bonus} '${ch(trace.bonus.token)}' ${greedyBonus ? "(the target's {argmax})" : "sampled"} from the target's last position`, "bonus");
      } else {
        say(greedyBonus ? `The target takes its {argmax} '${ch(trace.bonus.token)}'` : `The target samples '${ch(trace.bonus.token)}' ({u} = ${fmt(trace.bonus.uniform, 3)})`, "bonus");
      }
      await pacer.wait(t.residual);
    }
    // Parallel drafting: a fully accepted round takes no bonus; the next round's drafts,
    // drawn while this one was verified, are tested at that position instead.
    const allAccepted = trace.steps.length === depth && !trace.steps.some((s) => s.outcome?.residual);
    if (parallelDraft && !trace.bonus && depth > 0 && allAccepted && !trace.truncated) {
      say("All drafts accepted → no {bonus}: the next round's drafts, {parallel|drawn in parallel}, are tested from here.", "bonus");
    }
    redraw();
    if (trace.truncated) say(`${trace.truncated} ${unit}(s) after the stop condition dropped.`);
    if (dynamicGamma && trace.nextGamma !== null && trace.nextGamma !== undefined && trace.drafts.length) {
      say(`dynamic {gamma}: the next round drafts ${trace.nextGamma}`);
    }
  }
  return { animate, outCells };
}

function residualName(r) {
  switch (r.kind) {
    case "target_minus_draft":
      return "norm(max(0, target − draft))";
    case "target":
      return "(the target itself: nothing was left after subtracting the draft)";
    case "kseq":
      return `of {kseq} ({rho} = ${fmt(r.rho, 3)})`;
    case "multiround":
      return `after ${r.rounds} rejection${r.rounds > 1 ? "s" : ""}`;
    case "race":
      return "norm(max(0, target − {r}))";
    case "mentored":
      return `∝ max(0, target/{mBeta|β} − draft), β = ${fmt(r.beta, 3)}`;
    default:
      return r.kind;
  }
}
