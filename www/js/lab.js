// The lab panel: the settings on screen run many times (the package's sample(), in the
// worker, seeds seed, seed + 1, …), the first or second generated character counted and
// drawn beside its exact distribution, which the engine works out from the models at the
// prompt (the target's for a lossless method; mentored decoding's closed form; a planted
// bug's). TV and the chi-square p-value update live; docs/lab.md has the
// closed forms. Over a GGUF pair's large vocabulary the histogram shows the likeliest
// tokens and pools the rest into one bar.
import { $, S, active, fmt, h, hook } from "./state.js";
import { checked, controlOf, generateOptions, readNumber, settings, showError } from "./settings.js";
import { groupedBars } from "./charts.js";
import { enqueue, setRunState, stopRun } from "./run.js";
import { POOLED_ROW_VOCAB, shortPiece, topIndicesBy } from "./pieces.js";
import { plantedBug } from "./bugs.js";

// The most characters the histogram shows: the likeliest under any of its series; of a
// large vocabulary, the most tokens, beside one bar pooling the others.
const SHOWN = 14;
const SHOWN_TOKENS = 12;
let controller = null; // the AbortController of the runs in flight

// `finished` counts the presses of Run many that have ended (the tests wait on it).
hook.lab = { state: "idle", result: null, reports: 0, finished: 0, message: "" };
// For the soak test: the worker's wasm memory and JS heap.
hook.memory = () => active()?.memory();

/** The options of every run: the settings' generate options, less what sample() fixes. */
function labOptions(s) {
  const options = generateOptions(s);
  delete options.maxTokens;
  delete options.recordDistributions;
  return options;
}

// Where the exact distribution comes from (the result's kind): the target, a lossy rule's
// closed form, or a planted bug's (the package's BUGS name them).
const RULES = { mentored: "mentored decoding", typical: "typical acceptance" };
const isBug = (kind) => (S.pkg?.BUGS ?? []).some((b) => b.name === kind);
const ownName = (kind) => (kind === "target" ? "the target" : RULES[kind] ? `${RULES[kind]}'s closed form` : isBug(kind) ? `bug ${kind}'s closed form` : `${kind}'s closed form`);
const kindName = (kind) => `exact: ${ownName(kind)}`;
// Below this TV the exact distribution is the target's (rounding aside): nothing to tell apart.
const SAME = 1e-9;

/** Empties the chart, the numbers and the verdict (a new press of Run many, or an error). */
function clearResult() {
  hook.lab.result = null;
  $("lab-chart").replaceChildren();
  $("lab-stats").replaceChildren();
  $("lab-verdict").textContent = "";
  $("lab-progress").value = 0;
}

/** The histogram: runs, the exact distribution and (when it differs) the target's; `names` each token's text. */
function draw(result, names) {
  // Runs a GGUF model's end token ended before the position are not counted (the exact
  // distribution is conditioned alike): the frequencies are of the runs counted.
  const n = Math.max(1, result.done - (result.unreached ?? 0));
  const empirical = result.counts.map((c) => c / n);
  const differs = result.kind !== "target";
  const weight = (i) => Math.max(empirical[i], result.expected[i], differs ? result.target[i] : 0);
  const large = result.expected.length > POOLED_ROW_VOCAB;
  const shown = large ? topIndicesBy(result.expected.length, weight, SHOWN_TOKENS) : [...result.expected.keys()].sort((a, b) => weight(b) - weight(a)).slice(0, SHOWN);
  // One colour, one meaning: the target's bars are always the target's colour; another
  // law (a lossy rule's, a bug's) has its own.
  const series = [
    { name: `runs (${result.done})`, cls: "bar-accent" },
    { name: kindName(result.kind), cls: differs ? "bar-exact" : "bar-target" },
    ...(differs ? [{ name: "the target", cls: "bar-target" }] : []),
  ];
  const rows = shown.map((i) => ({
    label: large ? shortPiece(names?.[i] ?? "?", 10) : shortName(names?.[i] ?? "?"),
    values: [empirical[i], result.expected[i], ...(differs ? [result.target[i]] : [])],
  }));
  if (large) {
    // What each series gives the other tokens, together.
    const rest = (v) => Math.max(0, 1 - shown.reduce((a, i) => a + v[i], 0));
    rows.push({ label: `other ${(result.expected.length - shown.length).toLocaleString("en")}`, values: [rest(empirical), rest(result.expected), ...(differs ? [rest(result.target)] : [])], pooled: true });
  }
  groupedBars($("lab-chart"), { rows, series, label: `position ${result.position}: runs against the exact distribution`, fitLabels: large });
  const stats = [
    ["runs", `${result.done} of ${result.runs}`],
    // Reported, never dropped: how many runs ended before the position.
    ...(result.unreached > 0 ? [["ended before the position", `${result.unreached} (not counted)`]] : []),
    ["TV(runs, exact)", fmt(result.tv, 3)],
    ["χ² p-value vs exact", pValue(result.pValue)],
    ["χ² p-value vs target", pValue(result.targetPValue)],
    ["TV(exact, target)", fmt(result.tvFromTarget, 3)],
  ];
  $("lab-stats").replaceChildren(
    ...stats.flatMap(([k, v]) => {
      const dd = h("dd", "", v);
      dd.dataset.stat = k;
      return [h("dt", "", k), dd];
    }),
  );
  $("lab-verdict").textContent = verdict(result);
}

/** A character as a bar's label: visible, one glyph wide. */
const shortName = (c) => ({ " ": "␣", "\n": "↵" })[c] ?? c;

// No p-value (null) when the runs leave fewer than two bins: no test, no verdict.
const pValue = (p) => (p === null || p === undefined ? "no test" : p >= 1e-3 ? p.toFixed(3) : p.toExponential(1));

/** One sentence reading the two p-values. */
function verdict(r) {
  if (r.pValue === null || r.pValue === undefined) return `No verdict: ${r.noTest}`;
  const fits = r.pValue > 1e-3;
  const own = ownName(r.kind);
  if (r.kind === "target") {
    return fits
      ? `Consistent with the target (p = ${pValue(r.pValue)}): the output follows the target exactly, whatever the draft.`
      : `Not consistent with the target (p = ${pValue(r.pValue)}): with a correct decoder this happens about once in a thousand tries.`;
  }
  const said = `${fits ? "Consistent with" : "Not consistent with"} ${own} (p = ${pValue(r.pValue)})`;
  if (r.tvFromTarget < SAME) {
    // No number of runs can tell two equal distributions apart.
    const what = isBug(r.kind) ? `the bug ${r.kind} is harmless in this setting` : `${RULES[r.kind] ?? r.kind} loses nothing in this setting`;
    return `${said}, which here equals the target (TV ${fmt(r.tvFromTarget, 3)}): ${what}, and more runs cannot tell them apart. ${isBug(r.kind) ? "Change the settings where the bug acts (see its sentence above) to see it." : ""}`.trim();
  }
  const away = r.targetPValue !== null && r.targetPValue < 1e-3 ? `and told apart from the target (p = ${pValue(r.targetPValue)})` : "not yet told apart from the target: more runs";
  return `${said}, ${away}; the exact distribution is TV ${fmt(r.tvFromTarget, 3)} from the target.`;
}

const runsOf = (n) => `${n.toLocaleString("en")} run${n === 1 ? "" : "s"}`;

function setState(state, text) {
  hook.lab.state = state;
  hook.lab.message = text;
  $("lab-state").textContent = text;
  $("lab-run").disabled = state === "running";
  $("lab-cancel").disabled = state !== "running";
}

/** Runs the settings on screen `runs` times (the field) and draws the counts as they come. */
export async function runLab() {
  try {
    await labRun();
  } finally {
    hook.lab.finished += 1;
  }
}

async function labRun() {
  const instance = active();
  if (!instance) {
    setState("idle", settings().source === "gguf"
      ? "The lab runs your GGUF pair once it has loaded: load it under Your models."
      : "The lab runs the trained pair: choose it under Models and wait for it to load.");
    return;
  }
  // Each token's text: the bundled pair's characters, or a GGUF pair's pieces.
  const names = instance === S.gguf ? instance.tokenTexts : instance.alphabet;
  // Through the transport queue, so a generation it has queued (the first live run after
  // the models load) has started before it is stopped: the worker runs one thing at a time.
  await enqueue(stopRun);
  setRunState("the lab runs the models here; press Play to animate a run again");
  const s = settings();
  const { options, refused } = await checked(s, labOptions);
  if (refused) {
    clearResult();
    showError(refused.message, refused.field, refused.code);
    setState("error", `not running: fix ${controlOf(refused.field)?.label ?? "the settings"}`);
    return;
  }
  showError("");
  // The runs as typed: "" or "4.0000000000000001" is refused quoting the text, not read
  // as 0 or 4 (the package checks the range).
  const read = readNumber("lab-runs", "runs");
  if (read.problem) {
    clearResult();
    $("lab-runs").setAttribute("aria-invalid", "true");
    setState("error", `${read.problem}.`);
    return;
  }
  const runs = read.value;
  const position = Number($("lab-position").value);
  controller = new AbortController();
  hook.lab.reports = 0;
  clearResult();
  setState("running", "running…");
  $("lab-progress").max = runs;
  const onProgress = (r) => {
    hook.lab.reports += 1;
    hook.lab.result = r;
    $("lab-progress").value = r.done;
    draw(r, names);
  };
  try {
    const result = await instance.sample(options, { runs, position, signal: controller.signal, onProgress });
    onProgress(result);
    setState("done", runsOf(result.done));
  } catch (error) {
    if (error.code === "aborted" && error.result) {
      onProgress(error.result);
      setState("aborted", `cancelled after ${runsOf(error.result.done)}`);
    } else {
      // No chart or verdict of an earlier press stays beside the error.
      clearResult();
      // The field names a lab setting (runs, position) or an option of the settings.
      const own = { runs: "lab-runs", position: "lab-position" }[error.field];
      if (own) $(own).setAttribute("aria-invalid", "true");
      else showError(error.message, error.field, error.code);
      setState("error", error.message);
    }
  } finally {
    controller = null;
  }
}

export function cancelLab() {
  controller?.abort();
}

export function wireLab() {
  $("lab-run").addEventListener("click", runLab);
  $("lab-cancel").addEventListener("click", cancelLab);
  for (const id of ["lab-runs", "lab-position"]) $(id).addEventListener("input", () => $(id).removeAttribute("aria-invalid"));
  // The engine's limit on the runs (LIMITS, generated from its one definition), on the field
  // and its label; the engine refuses more, naming the field.
  const max = S.pkg?.LIMITS?.maxLabRuns;
  if (max) {
    $("lab-runs").max = String(max);
    $("lab-runs-range").textContent = `1–${max.toLocaleString("en")}`;
  }
  const runs = S.pkg?.LIMITS?.defaultLabRuns;
  if (runs) $("lab-runs").value = String(runs);
  setState("idle", "");
}
