// The stage's model (www/js/stage-model.js) in Node, with no browser: over the recorded
// run (www/recorded-trace.json) and one run of each kind of rule (tests/www/traces/: greedy,
// typical, SpecTr, mentored, a planted bug, parallel drafting), what the stage shows at
// each step agrees with the trace: each test's mark and coin are the test's (its `rule`
// decides whether it shows a coin, the argmax check or typical acceptance's threshold),
// the emitted row is the trace's tokens and sources, greedy sentences say "argmax" exactly
// where a test's rule is argmax, and the model is a pure function of (trace, step).
// Usage: node tests/www/stage-model.mjs
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stageFrames, stageModel, phaseStep } from "../../www/js/stage-model.js";

const here = dirname(fileURLToPath(import.meta.url));
const files = [join(here, "../../www/recorded-trace.json"), ...readdirSync(join(here, "traces")).filter((f) => f.endsWith(".json")).sort().map((f) => join(here, "traces", f))];

let checks = 0;
const failures = [];
function check(ok, what, detail = "") {
  checks += 1;
  if (!ok) failures.push(`${what}${detail ? `: ${detail}` : ""}`);
}

const RULES = new Set(["coin", "argmax", "threshold"]);
const seen = { coin: 0, argmax: 0, threshold: 0, residuals: 0, bonus: 0, bug: 0, parallel: 0 };

for (const file of files) {
  const name = file.slice(file.lastIndexOf("/") + 1);
  const run = JSON.parse(readFileSync(file, "utf8"));
  const o = run.options;
  const bug = o.bug ? { name: o.bug, description: "a planted bug" } : null;
  const options = { alphabet: [...run.alphabet], unit: "character", bug, parallelDraft: !!o.parallelDraft, dynamicGamma: !!o.dynamicGamma };
  check(run.rounds.length > 0, `${name}: has rounds`);
  run.rounds.forEach(({ trace }, r) => {
    const at = `${name} round ${r + 1}`;
    const before = JSON.stringify(trace);
    const frames = stageFrames(trace, options);
    const end = stageModel(trace, null, options);
    check(JSON.stringify(trace) === before, `${at}: the model leaves the trace as it was`);
    check(JSON.stringify(stageModel(trace, frames.length, options)) === JSON.stringify(end), `${at}: the same (trace, step) gives the same model`);
    check(JSON.parse(JSON.stringify(end)) !== null && end.step === frames.length, `${at}: the model is plain data at its last step`);

    // Each test: its mark and coin, by the rule the trace names.
    const tested = new Map();
    for (const step of trace.steps) {
      for (const test of step.outcome.tests) {
        check(RULES.has(test.rule), `${at}: every test names its rule`, JSON.stringify(test.rule));
        seen[test.rule] = (seen[test.rule] ?? 0) + 1;
        const id = step.candidates[test.draftIndex];
        tested.set(id, test);
        const node = end.nodes[id];
        check(node.coin?.rule === test.rule && node.coin.accepted === test.accepted, `${at}, position ${step.depth}: the coin is the test's`, JSON.stringify({ coin: node.coin, test }));
        // By the end a rejected draft that carries the kept token survives, marked accepted.
        const survives = step.survivors.includes(id);
        check(node.state === (test.accepted || survives ? "accepted" : "rejected"), `${at}, position ${step.depth}: the mark is the test's decision (or the draft survives)`, `${node.state} for accepted=${test.accepted}`);
        const shown = node.coin.lines.join(" ");
        const says = { argmax: /argmax/.test(shown), threshold: /τ/.test(shown), coin: /^u /.test(shown) };
        check(Object.entries(says).every(([rule, yes]) => yes === (rule === test.rule)), `${at}, position ${step.depth}: the coin shows the ${test.rule} rule only`, shown);
        if (test.rule === "coin") check(node.coin.uniform === test.uniform && node.coin.acceptProb === test.acceptProb, `${at}: a coin shows the test's u and accept probability`);
        if (test.rule === "argmax") check(step.targetArgmax !== null && step.targetArgmax !== undefined && test.accepted === (test.token === step.targetArgmax), `${at}: an argmax test is decided by the trace's targetArgmax`);
      }
    }
    // Every mark the stage shows: accepted only where a test accepted or the draft survived,
    // rejected only where a test rejected; every draft is drawn by the end.
    const survivors = new Set(trace.steps.flatMap((s) => s.survivors));
    for (const node of end.nodes) {
      check(node.visible, `${at}: draft ${node.id} is drawn by the end`);
      if (node.state === "accepted") check(tested.get(node.id)?.accepted === true || survivors.has(node.id), `${at}: draft ${node.id} is marked accepted only for an accepted test or a survivor`);
      if (node.state === "rejected") check(tested.get(node.id)?.accepted === false && !survivors.has(node.id), `${at}: draft ${node.id} is marked rejected only for a rejected test`);
      if (!tested.has(node.id)) check(node.coin === null, `${at}: untested draft ${node.id} shows no coin`);
    }
    // The emitted row: the trace's tokens and sources.
    trace.emitted.forEach((token, i) => {
      check(end.out[i].token === token && end.out[i].source === trace.sources[i], `${at}: position ${i + 1} shows the trace's token and source`, JSON.stringify({ out: end.out[i], token, source: trace.sources[i] }));
    });
    // Greedy sentences: "argmax" exactly where the trace's rule is argmax, and the
    // replacement and bonus named the target's argmax exactly where the trace says so.
    const testNotes = end.notes.filter((n) => n.cls === "ok" || n.cls === "no");
    const tests = trace.steps.flatMap((s) => s.outcome.tests);
    check(testNotes.length === tests.length, `${at}: one sentence per test`, `${testNotes.length} for ${tests.length}`);
    testNotes.forEach((n, i) => check(/\{argmax\}/.test(n.text) === (tests[i].rule === "argmax"), `${at}: a test's sentence says argmax exactly when its rule is argmax`, n.text));
    const replacements = end.notes.filter((n) => n.cls === "res");
    const replaced = trace.steps.filter((s) => s.outcome.residual);
    check(replacements.length === replaced.length, `${at}: one sentence per replacement`);
    replacements.forEach((n, i) => {
      const argmax = replaced[i].targetArgmax !== null && replaced[i].targetArgmax !== undefined;
      check(/\{argmax\}/.test(n.text) === argmax, `${at}: a replacement is the target's argmax exactly when the trace names it`, n.text);
    });
    check(end.residuals.length === replaced.filter((s) => s.targetArgmax === null || s.targetArgmax === undefined).length, `${at}: a residual is drawn for each sampled replacement`);
    seen.residuals += end.residuals.length;
    end.residuals.forEach((res) => check(trace.steps[res.step].token === res.token && trace.steps[res.step].outcome.residual, `${at}: the residual drawn is the step's`));
    if (trace.bonus) {
      seen.bonus += 1;
      const note = end.notes.find((n) => n.cls === "bonus");
      const argmax = trace.bonus.targetArgmax !== null && trace.bonus.targetArgmax !== undefined;
      check(!!note && /\{argmax\}/.test(note.text) === argmax, `${at}: the bonus is the target's argmax exactly when the trace names it`, note?.text);
    }
    if (bug) {
      seen.bug += 1;
      check(end.now.planted?.text.includes(bug.name), `${at}: the planted bug is named first`);
    }
    if (trace.earlyDrafts > 0) {
      seen.parallel += 1;
      check(end.notes.some((n) => n.text.includes("{parallel}")), `${at}: the drafts drawn in parallel are named`);
    }

    // Step by step: the stage only grows, and the lesson's phases show what they say.
    let last = stageModel(trace, 0, options);
    check(last.nodes.every((n) => !n.visible && !n.coin && !n.state) && last.out.every((c) => c.token === null), `${at}: step 0 shows nothing yet`);
    for (let step = 1; step <= frames.length; step++) {
      const m = stageModel(trace, step, options, frames);
      const grew = m.notes.length >= last.notes.length && last.notes.every((n, i) => n.text === m.notes[i].text) &&
        m.nodes.every((n, i) => (!last.nodes[i].visible || n.visible) && (!last.nodes[i].coin || n.coin)) && m.out.every((c, i) => last.out[i].token === null || c.token === last.out[i].token);
      check(grew, `${at}: step ${step} keeps what step ${step - 1} showed`);
      // The step that shows a test marks the draft as the test decided.
      m.nodes.forEach((n, i) => {
        if (n.coin && !last.nodes[i].coin) check(n.state === (n.coin.accepted ? "accepted" : "rejected"), `${at}, step ${step}: draft ${n.id} is marked as its test decided`, `${n.state} for accepted=${n.coin.accepted}`);
      });
      last = m;
    }
    if (trace.drafts.length) {
      const drafts = stageModel(trace, phaseStep(frames, "drafts"), options);
      check(drafts.nodes.every((n) => n.visible && !n.verified && !n.coin && !n.state) && drafts.out.every((c) => c.token === null), `${at}: the "drafts" phase shows the guesses only`);
      const verify = stageModel(trace, phaseStep(frames, "verify"), options);
      check(verify.nodes.every((n) => n.visible && n.verified && !n.coin && !n.state) && !verify.verifying && verify.out.every((c) => c.token === null), `${at}: the "verify" phase shows them scored, nothing tested`);
    }
  });
}

// The runs cover every rule, a residual, a bonus, a planted bug and parallel drafting.
for (const [what, n] of Object.entries(seen)) check(n > 0, `the traces include ${what}`, JSON.stringify(seen));

console.log(`== stage model: ${checks - failures.length}/${checks} checks passed over ${files.length} runs (${JSON.stringify(seen)})`);
for (const f of failures.slice(0, 20)) console.log(`FAIL ${f}`);
if (failures.length > 20) console.log(`… and ${failures.length - 20} more`);
process.exit(failures.length ? 1 : 0);
