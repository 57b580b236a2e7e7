// What the stage shows of one round, as plain data: a pure function of the engine's trace
// and how far the round has been played (no DOM, no page state, no arithmetic of the
// engine's: every number, decision and rule is the trace's). stage-view.js draws a model;
// the player (run.js) advances the step.
//
// A round plays as frames, each a few changes followed by a pause: the drafts appear depth
// by depth, one target pass scores every position, then each test (a coin, the argmax
// check of greedy decoding or typical acceptance's threshold, as the test's `rule` says),
// the accepted / rejected / discarded marks, the replacement (drawn from the residual, or
// the target's argmax) and the bonus token. stageModel(trace, step) is the stage after the
// first `step` frames.
import { showPiece } from "./piece-text.js";
import { bugNote, bugSentence } from "./bug-notes.js";

/** A number as the stage prints it: "–" for none, "∞" for infinities. */
export const fmt = (x, d = 2) => (x === null || x === undefined ? "–" : !Number.isFinite(x) ? "∞" : x.toFixed(d));

/** The residual's name in a sentence, by its kind (the trace's `residual`). */
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

/** The acceptance probability's formula in a coin's sentence, by the step's plan. */
function coinFormula(trace, step, test) {
  const kind = step.plan?.kind;
  if (kind === "kseq") return "min(1, target/(ρ·draft))";
  if (kind === "race") return "min(1, target/{r})";
  if (kind === "mentored") return "the mentored acceptance";
  if (trace.method === "multiround" && test.draftIndex > 0) return "min(1, residual/draft)";
  return "{ratio}";
}

/** The drafts below node `id` (its descendants), by the trace's parents. */
function descendants(trace, id) {
  return trace.drafts.filter((d) => {
    let p = d.parent;
    while (p !== null && p !== undefined) {
      if (p === id) return true;
      p = trace.drafts[p].parent;
    }
    return false;
  });
}

/**
 * The frames of a round: [{ pause, phase, ops }], `pause` the kind of wait after the frame
 * ("draft", "verify", "coin", "residual" or null), `phase` set on the frame that ends the
 * drafts ("drafts") or the target's pass ("verify"). `options`: { alphabet (token texts),
 * unit ("character" or "token"), bug ({ name, description } or null), parallelDraft,
 * dynamicGamma } of the run.
 */
export function stageFrames(trace, options = {}) {
  const { alphabet = [], unit = "character", bug = null, parallelDraft = false, dynamicGamma = false } = options;
  const ch = (t) => showPiece(alphabet[t] ?? "?");
  const withBug = (sentence, where) => {
    const note = bugNote(bug, where);
    return note ? `${sentence.replace(/\.$/, "")} — ${note}` : sentence;
  };
  const frames = [];
  let ops = [];
  const flush = (pause, phase = null) => {
    frames.push({ pause, phase, ops });
    ops = [];
  };
  const say = (text, cls = null, extra = {}) => ops.push({ op: "say", text, cls, ...extra });
  // The marks so far, to discard only what is not already marked.
  const state = new Map();
  const mark = (id, cls) => {
    state.set(id, cls);
    ops.push({ op: "mark", id, state: cls });
  };
  const emit = (depth, token, source, title = null) => ops.push({ op: "emit", depth, token, source, title });
  const depth = trace.branching.length;
  const rows = Math.max(1, trace.drafts.filter((d) => !trace.drafts.some((e) => e.parent === d.id)).length);

  if (bug) say(`${bugSentence(bug)} Not the correct algorithm: the output need not follow the target.`, "bug");
  if (trace.drafts.length === 0) {
    say(`No drafts: the target runs once and samples the next ${unit}.`);
  } else {
    // 1. Drafts appear one depth at a time (the draft model runs once per depth).
    for (let d = 1; d <= depth; d++) {
      ops.push({ op: "show", ids: trace.drafts.filter((n) => n.depth === d).map((n) => n.id) });
      flush("draft");
    }
    const n = trace.drafts.length;
    say(withBug(`The draft proposes ${n} ${unit}${n > 1 ? "s" : ""}` + (rows > 1 ? ` on ${rows} branches (branching ${trace.branching.join("·")}).` : "."), "propose") +
      (trace.earlyDrafts > 0 ? ` The first ${trace.earlyDrafts} ${trace.earlyDrafts > 1 ? "were" : "was"} {parallel}, while the target verified the last round.` : ""));
    flush(null, "drafts");
    // 2. One target pass scores every position at once.
    ops.push({ op: "verifying", on: true });
    say(`One target pass scores all ${depth + 1} positions at once.`);
    flush("verify");
    ops.push({ op: "verifying", on: false });
    flush(null, "verify");
  }
  // 3. Position by position: the tests, the survivors, the replacement.
  trace.steps.forEach((step, stepIndex) => {
    const out = step.outcome;
    const plan = step.plan;
    const argmax = step.targetArgmax ?? null;
    const drafts = `${step.candidates.length} draft${step.candidates.length > 1 ? "s" : ""}`;
    if (plan?.kind === "kseq") {
      say(`pos ${step.depth}: {kseq} over ${drafts}: {rhoStar} = ${fmt(plan.rhoStar, 3)}, {rho} = ${fmt(plan.rho, 3)}, P(accept one) = ${fmt(plan.acceptance, 3)}`, "kseq");
    } else if (plan?.kind === "race") {
      say(`pos ${step.depth}: ratio race over ${drafts} (the largest {race} wins): P(accept) = ${fmt(plan.acceptance, 3)}, best possible ({otm}) ${fmt(plan.optimum, 3)}`, "kseq");
    } else if (plan?.kind === "mentored") {
      // The lossless acceptance at this position (Σ min(target, draft)) is the package's
      // to compute: the view adds it after the sentence (`lossless`).
      say(`pos ${step.depth}: mentored {mAlpha} = ${fmt(plan.alpha, 3)}, {mBeta|β} = ${fmt(plan.beta, 3)}, {kl} = ${fmt(plan.kl, 3)} ≤ {D} = ${fmt(plan.klBudget, 3)}; acceptance ${fmt(plan.acceptance, 3)} (KL and D in {nats})`, "mentored", { lossless: { step: stepIndex, acceptance: plan.acceptance } });
    } else if (plan?.kind === "typical") {
      say(`pos ${step.depth}: typical acceptance: threshold τ = min({epsilon}, {delta}·e^(−H)) = min(${fmt(plan.epsilon, 3)}, ${fmt(plan.delta, 3)}·e^(−${fmt(plan.entropy, 3)})) = ${fmt(plan.threshold, 4)}`, "mentored");
    }
    for (const test of out.tests) {
      const id = step.candidates[test.draftIndex];
      const limit = test.acceptProb;
      const yes = test.accepted;
      let coin;
      if (test.rule === "threshold") {
        coin = {
          lines: [`t ${fmt(test.targetProb, 3)}`, `${yes ? ">" : "≤"} τ`],
          title: `typical acceptance: kept when the target's probability ${fmt(test.targetProb, 4)} is above the threshold τ = ${fmt(plan?.threshold, 4)} (no coin)`,
        };
      } else if (test.rule === "argmax") {
        coin = { lines: [yes ? "argmax" : "≠ argmax", yes ? "✓" : "✗"], title: "greedy: the draft is kept exactly when it is the target's most likely character" };
      } else {
        coin = {
          lines: [`u ${fmt(test.uniform)}`, `${yes ? "<" : "≥"} ${fmt(limit)}`],
          title: `ratio target/draft = ${fmt(test.ratio, 3)} (target ${fmt(test.targetProb, 4)}, draft ${fmt(test.draftProb, 4)}); accept probability ${fmt(limit, 3)}` +
            (bugNote(bug, "test") ? ` — planted bug ${bug.name}: ${bug.description}` : ""),
        };
      }
      ops.push({ op: "coin", id, rule: test.rule, accepted: yes, uniform: test.uniform ?? null, acceptProb: limit, ...coin });
      mark(id, yes ? "accepted" : "rejected");
      if (test.rule === "threshold") {
        say(`pos ${step.depth}: draft '${ch(test.token)}' — target ${fmt(test.targetProb, 4)} ${yes ? ">" : "≤"} τ = ${fmt(plan?.threshold, 4)} → ${yes ? "accepted" : "rejected"} (no coin: the rule is deterministic)`, yes ? "ok" : "no");
      } else if (test.rule === "argmax") {
        say(yes
          ? `pos ${step.depth}: draft '${ch(test.token)}' is the target's {argmax} → accepted`
          : `pos ${step.depth}: draft '${ch(test.token)}' is not the target's {argmax}${argmax !== null ? ` ('${ch(argmax)}')` : ""} → rejected`, yes ? "ok" : "no");
      } else {
        say(withBug(`pos ${step.depth}: draft '${ch(test.token)}' — {u} = ${fmt(test.uniform, 3)} ${yes ? "<" : "≥"} ${coinFormula(trace, step, test)} = ${fmt(limit, 3)} → ${yes ? "accepted" : "rejected"}`, "test"), yes ? "ok" : "no");
      }
      flush("coin");
    }
    // Candidates that did not survive, and everything after them, are discarded.
    for (const id of step.candidates) {
      if (!step.survivors.includes(id) && state.get(id) !== "rejected") mark(id, "discarded");
    }
    for (const id of step.candidates) {
      if (!step.survivors.includes(id)) for (const d of descendants(trace, id)) mark(d.id, "discarded");
    }
    for (const id of step.survivors) if (state.get(id) !== "accepted") mark(id, "accepted");
    if (out.residual) {
      if (argmax !== null) {
        emit(step.depth, step.token, "resampled", "the target's argmax");
        say(`pos ${step.depth}: greedy decoding takes the target's {argmax} '${ch(step.token)}' instead`, "res");
      } else {
        const u = fmt(out.residual.uniform, 3);
        const fromTarget = bugNote(bug, "residual") && bug.name === "resample-from-target";
        emit(step.depth, step.token, "resampled", fromTarget ? `drawn from the target (planted bug ${bug.name}), u = ${u}` : `drawn from the residual (${out.residual.residual.kind}), u = ${u}`);
        say(fromTarget
          ? `pos ${step.depth}: every draft rejected → '${ch(step.token)}' ({u} = ${u}) ${bugNote(bug, "residual")}`
          : withBug(`pos ${step.depth}: every draft rejected → '${ch(step.token)}' drawn from the {residual} ${plan?.kind === "typical" ? "(typical acceptance draws from the target itself)" : residualName(out.residual.residual)} ({u} = ${u})`, "residual"), "res");
        ops.push({ op: "residual", step: stepIndex, token: step.token, fromTarget: fromTarget ? bug.name : null });
      }
      flush("residual");
    } else {
      emit(step.depth, step.token, "accepted");
      if (step.survivors.length > 1) say(`pos ${step.depth}: ${step.survivors.length} drafts agree and survive to the next position`);
    }
  });
  const bonus = trace.bonus;
  if (bonus) {
    const argmax = bonus.targetArgmax ?? null;
    emit(trace.steps.length + 1, bonus.token, "bonus", argmax !== null ? "the target's argmax" : `sampled from the target, u = ${fmt(bonus.uniform, 3)}`);
    if (trace.drafts.length) {
      // With several drafts per position, some are rejected on the way: one kept at each.
      const all = trace.drafts.every((d) => state.get(d.id) === "accepted");
      say(`${all ? "All drafts accepted" : "Every position kept one of its drafts"} → {bonus} '${ch(bonus.token)}' ${argmax !== null ? "(the target's {argmax})" : "sampled"} from the target's last position`, "bonus");
    } else {
      say(argmax !== null ? `The target takes its {argmax} '${ch(bonus.token)}'` : `The target samples '${ch(bonus.token)}' ({u} = ${fmt(bonus.uniform, 3)})`, "bonus");
    }
    flush("residual");
  }
  // Parallel drafting: a fully accepted round takes no bonus; the next round's drafts,
  // drawn while this one was verified, are tested at that position instead.
  const allAccepted = trace.steps.length === depth && !trace.steps.some((s) => s.outcome?.residual);
  if (parallelDraft && !bonus && depth > 0 && allAccepted && !trace.truncated) {
    say("All drafts accepted → no {bonus}: the next round's drafts, {parallel|drawn in parallel}, are tested from here.", "bonus");
  }
  if (trace.truncated) say(`${trace.truncated} ${unit}(s) after the stop condition dropped.`);
  if (dynamicGamma && trace.nextGamma !== null && trace.nextGamma !== undefined && trace.drafts.length) {
    say(`dynamic {gamma}: the next round drafts ${trace.nextGamma}`);
  }
  flush(null, "done");
  return frames;
}

/** The step at which `phase` ("drafts", "verify") has been shown, or the last step. */
export function phaseStep(frames, phase) {
  const i = frames.findIndex((f) => f.phase === phase);
  return i < 0 ? frames.length : i + 1;
}

/** The stage before any frame: every draft hidden, nothing tested, nothing emitted. */
function emptyModel(trace, options) {
  const { alphabet = [], bug = null, pieces = false } = options;
  const ch = (t) => showPiece(alphabet[t] ?? "?");
  const depth = trace.branching.length;
  return {
    round: trace.round,
    method: trace.method,
    bug: bug?.name ?? "",
    pieces,
    depth,
    verifying: false,
    nodes: trace.drafts.map((d) => ({
      id: d.id,
      parent: d.parent ?? null,
      depth: d.depth,
      token: d.token,
      text: ch(d.token),
      draftProb: d.draftProb,
      visible: false,
      verified: false,
      state: null,
      coin: null,
    })),
    out: Array.from({ length: depth + 1 }, (_, i) => ({ depth: i + 1, token: null, text: "", source: null, title: null })),
    notes: [],
    now: { planted: null, scheme: null, line: null },
    residuals: [],
  };
}

/**
 * The stage of round `trace` after its first `step` frames (all of them when `step` is
 * null or past the end): plain data. `nodes[i]` is draft i (visible, verified, its mark
 * `state`, its `coin`: { rule, accepted, uniform, acceptProb, lines, title }), `out[d − 1]`
 * the token emitted at position d, `notes` every sentence so far ({ text, cls }, text
 * with glossary.js's {term} marks), `now` the sentences under the tree, `residuals` the
 * replacements drawn from a residual ({ step, token, fromTarget }).
 */
export function stageModel(trace, step = null, options = {}, frames = stageFrames(trace, options)) {
  const model = emptyModel(trace, options);
  const ch = (t) => showPiece((options.alphabet ?? [])[t] ?? "?");
  const last = step === null ? frames.length : Math.max(0, Math.min(step, frames.length));
  for (const frame of frames.slice(0, last)) {
    for (const op of frame.ops) {
      switch (op.op) {
        case "show":
          for (const id of op.ids) model.nodes[id].visible = true;
          break;
        case "verifying":
          model.verifying = op.on;
          if (op.on) for (const n of model.nodes) n.verified = true;
          break;
        case "coin": {
          const { rule, accepted, uniform, acceptProb, lines, title } = op;
          model.nodes[op.id].coin = { rule, accepted, uniform, acceptProb, lines, title };
          break;
        }
        case "mark":
          model.nodes[op.id].state = op.state;
          break;
        case "emit":
          model.out[op.depth - 1] = { depth: op.depth, token: op.token, text: ch(op.token), source: op.source, title: op.title };
          break;
        case "residual":
          model.residuals.push({ step: op.step, token: op.token, fromTarget: op.fromTarget });
          break;
        case "say": {
          const note = { text: op.text, cls: op.cls, ...(op.lossless ? { lossless: op.lossless } : {}) };
          model.notes.push(note);
          if (op.cls === "bug") model.now.planted = note;
          else if (op.cls === "kseq" || op.cls === "mentored") model.now.scheme = note;
          else model.now.line = note;
          break;
        }
        default:
          throw new Error(`unknown stage op ${op.op}`);
      }
    }
  }
  model.step = last;
  model.steps = frames.length;
  return model;
}
