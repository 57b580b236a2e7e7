// The teaching page: settings → one generation in the package's worker → rounds animated
// from the engine's trace, with distributions, metrics, theory curves and a race.
// Test hook: window.__speculaPage (see tests/www/).
import { SPEEDS, Pacer, Cancelled, buildStage, showChar } from "./anim.js";
import { groupedBars, columns, lines } from "./charts.js";
import { emptyMetrics, record, summarize, expectedTokens, walltimeFactor } from "./metrics.js";
import { residualOf, topIndices, retarget, overlap as overlapOf } from "./distributions.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const fmt = (x, d = 2) => (x === null || x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(d));

// ---------- state ----------
const S = {
  pkg: null, // the imported `specula` module
  specula: null, // a loaded Specula
  alphabet: null,
  backend: null,
  recorded: null,
  run: null, // { id, source, options, rounds, arrivals, done, summary, error, finished }
  runSeq: 0,
  shown: 0, // rounds animated so far
  metrics: emptyMetrics(),
  tokens: [], // output characters: { ch, token, source, round, step }
  pacer: null,
  animating: false,
  playing: false,
  looping: false,
  selected: null,
  race: null,
  notices: new Set(),
  unsupported: new Set(), // generate options this build of the package rejects
};

const hook = {
  ready: false,
  loaded: false,
  backend: null,
  runId: 0,
  source: null,
  options: null,
  shownRounds: [],
  finished: false,
  summary: null,
  pageMetrics: null,
  error: null,
  notices: [],
  race: null,
  planCalls: 0,
  theoryIdle: true,
  modelRuns: 0,
};
window.__speculaPage = hook;

// ---------- settings ----------
const KL_MIN = -3;
const KL_MAX = Math.log10(5);
function klFromSlider(v) {
  const s = Number(v);
  if (s <= 0) return 0;
  return 10 ** (KL_MIN + ((s - 1) / 59) * (KL_MAX - KL_MIN));
}
function sliderFromKl(d) {
  if (!(d > 0)) return 0;
  return Math.round(1 + ((Math.log10(d) - KL_MIN) / (KL_MAX - KL_MIN)) * 59);
}
const roundKl = (d) => (d === 0 ? 0 : Number(d.toPrecision(2)));

function parseTree(text) {
  const parts = String(text).split(/[\s,×x*·]+/).filter(Boolean).map(Number);
  if (parts.length === 0 || parts.some((n) => !Number.isInteger(n) || n < 1 || n > 8)) {
    throw new Error(`tree branching must be whole numbers 1–8 separated by commas, e.g. 2,2,1 — got "${text}"`);
  }
  if (parts.length > 16) throw new Error("a tree may be at most 16 deep");
  const leaves = parts.reduce((a, b) => a * b, 1);
  if (leaves > 64) throw new Error(`a tree may have at most 64 leaves; ${parts.join("·")} has ${leaves}`);
  return parts;
}

function settings() {
  const method = $("method").value;
  return {
    prompt: $("prompt").value,
    method,
    gamma: Number($("gamma").value),
    drafts: Number($("drafts").value),
    tree: $("tree").value,
    kl: roundKl(klFromSlider($("kl").value)),
    temperature: Number($("temperature").value),
    topK: Number($("topk").value),
    topP: Number($("topp").value),
    seed: Math.max(0, Math.floor(Number($("seed").value) || 0)),
    maxTokens: Math.min(400, Math.max(1, Math.floor(Number($("maxtokens").value) || 60))),
    dynamicGamma: $("dynamic").checked,
  };
}

/** The generate options for settings `s` (throws an Error with a message for the page). */
function generateOptions(s) {
  const o = { prompt: s.prompt, temperature: s.temperature, seed: s.seed, maxTokens: s.maxTokens, recordDistributions: true };
  if (s.topK > 0) o.topK = s.topK;
  if (s.topP < 1) o.topP = s.topP;
  switch (s.method) {
    case "autoregressive":
      o.method = "autoregressive";
      break;
    case "speculative":
      Object.assign(o, { method: "speculative", gamma: s.gamma });
      if (s.dynamicGamma) o.dynamicGamma = true;
      break;
    case "spectr":
      Object.assign(o, { method: "spectr", gamma: s.gamma, drafts: s.drafts });
      break;
    case "spectr-tree":
      Object.assign(o, { method: "spectr", tree: parseTree(s.tree) });
      break;
    case "multiround":
      Object.assign(o, { method: "multiround", gamma: s.gamma, drafts: s.drafts });
      break;
    case "spectr-otm":
      Object.assign(o, { method: "otm", gamma: s.gamma, drafts: s.drafts });
      break;
    case "mentored":
      Object.assign(o, { method: "mentored", gamma: s.gamma, kl: s.kl });
      if (s.dynamicGamma) o.dynamicGamma = true;
      break;
    default:
      throw new Error(`unknown method ${s.method}`);
  }
  return o;
}

/** Options this package build does not know are replaced by their nearest equivalent. */
function adapt(options) {
  const o = { ...options };
  if (o.tree && S.unsupported.has("tree")) {
    const tree = o.tree;
    delete o.tree;
    o.gamma = tree.length;
    o.drafts = Math.min(16, tree.reduce((a, b) => a * b, 1));
    notice("tree", `This build of the specula package has no tree drafts yet: ran ${o.drafts} i.i.d. drafts of length ${o.gamma} instead of the tree ${tree.join("·")}.`);
  }
  if (o.dynamicGamma && S.unsupported.has("dynamicGamma")) {
    delete o.dynamicGamma;
    notice("dynamicGamma", "This build of the specula package has no dynamic γ yet: ran with a fixed γ.");
  }
  return o;
}

function notice(key, text) {
  S.notices.add(text);
  hook.notices = [...S.notices];
  const n = $("notice");
  n.textContent = [...S.notices].join(" ");
  n.hidden = false;
}

function showError(text) {
  hook.error = text;
  const e = $("error");
  e.textContent = text;
  e.hidden = !text;
}

function promptProblem(prompt) {
  if (!S.alphabet) return null;
  if (prompt.length === 0) return "The prompt is empty: type at least one character.";
  const bad = [...new Set([...prompt].filter((c) => !S.alphabet.includes(c)))];
  if (bad.length === 0) return null;
  const shown = bad.slice(0, 5).map((c) => `'${c}' (U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")})`).join(", ");
  return `The prompt contains ${shown}, which the models never saw. They know only the letters a–z, A–Z, the digit 3, space, newline and ${[...S.alphabet].filter((c) => !/[a-zA-Z3 \n]/.test(c)).join(" ")}.`;
}

// ---------- outputs of the controls ----------
function syncOutputs() {
  const s = settings();
  $("gamma-out").textContent = String(s.gamma);
  $("drafts-out").textContent = String(s.drafts);
  $("kl-out").textContent = s.kl === 0 ? "0" : String(s.kl);
  $("temperature-out").textContent = s.temperature === 0 ? "0 (greedy)" : s.temperature.toFixed(2);
  $("topk-out").textContent = s.topK > 0 ? String(s.topK) : "off";
  $("topp-out").textContent = s.topP < 1 ? s.topP.toFixed(2) : "1 (off)";
  const speed = SPEEDS[Number($("speed").value)];
  $("speed-out").textContent = Number.isFinite(speed) ? `${speed}×` : "instant";
  const show = {
    gamma: ["speculative", "spectr", "spectr-otm", "multiround", "mentored"].includes(s.method),
    drafts: ["spectr", "spectr-otm", "multiround"].includes(s.method),
    tree: s.method === "spectr-tree",
    kl: s.method === "mentored",
    dynamic: ["speculative", "mentored"].includes(s.method),
  };
  for (const [key, visible] of Object.entries(show)) {
    document.querySelector(`[data-for="${key}"]`).classList.toggle("inactive", !visible);
  }
  $("fig-kl").hidden = s.method !== "mentored";
  $("fig-k").hidden = !["spectr", "spectr-otm", "multiround", "spectr-tree"].includes(s.method);
}

// ---------- runs ----------
function clearDisplay() {
  S.shown = 0;
  S.metrics = emptyMetrics();
  S.tokens = [];
  S.selected = null;
  $("output").replaceChildren();
  $("stage").replaceChildren();
  $("round-notes").replaceChildren();
  $("round-label").textContent = "";
  $("dist").replaceChildren();
  $("dist-label").textContent = "";
  hook.shownRounds = [];
  hook.finished = false;
  hook.summary = null;
  hook.pageMetrics = null;
  renderMetrics();
  scheduleTheory();
}

async function stopRun() {
  if (S.pacer) {
    S.pacer.cancelled = true;
    S.pacer.wake();
  }
  S.playing = false;
  const run = S.run;
  if (run && run.source === "live" && !run.done) {
    run.stale = true;
    S.specula?.abort();
    await run.finished;
  }
  while (S.animating || S.looping) await new Promise((r) => setTimeout(r, 10));
}

function recordedRun() {
  const r = S.recorded;
  return { id: ++S.runSeq, source: "recorded", options: r.options, rounds: r.rounds, arrivals: [], done: true, summary: r.summary, finished: Promise.resolve(), waiters: new Set() };
}

/** Starts a live generation with the current settings (or the recorded run before the models load). */
async function newRun({ live = true } = {}) {
  await stopRun();
  clearDisplay();
  showError("");
  S.pacer = new Pacer(() => SPEEDS[Number($("speed").value)]);
  if (!live || !S.specula) {
    if (!S.recorded) return;
    S.run = recordedRun();
    S.alphabet ??= S.recorded.alphabet;
  } else {
    const s = settings();
    let options;
    try {
      const problem = promptProblem(s.prompt);
      if (problem) throw new Error(problem);
      options = generateOptions(s);
    } catch (error) {
      showError(error.message);
      S.run = null;
      setRunState("not running: fix the setting above");
      return;
    }
    const run = { id: ++S.runSeq, source: "live", key: JSON.stringify(s), options, rounds: [], arrivals: [], done: false, summary: null, waiters: new Set() };
    S.run = run;
    hook.runId = run.id;
    hook.source = run.source;
    hook.options = options;
    run.finished = pump(run);
  }
  hook.runId = S.run.id;
  hook.source = S.run.source;
  hook.options = S.run.sent ?? S.run.options;
  setRunState(S.run.source === "recorded" ? "playing a recorded run while the models load" : "ready");
}

function notify(run) {
  for (const w of run.waiters) w();
  run.waiters.clear();
}

async function pump(run) {
  let options = adapt(run.options);
  for (let attempt = 0; attempt < 3; attempt++) {
    run.sent = options;
    hook.options = options;
    hook.modelRuns += 1;
    const started = performance.now();
    try {
      const it = S.specula.generate(options);
      for (;;) {
        const { value, done } = await it.next();
        if (done) {
          run.summary = value;
          break;
        }
        run.rounds.push(value);
        run.arrivals.push(performance.now() - started);
        notify(run);
      }
      run.wallMs = performance.now() - started;
      break;
    } catch (error) {
      const unknown = /unknown option "(\w+)"/.exec(error.message ?? "");
      if (error.code === "invalid_option" && unknown && ["tree", "dynamicGamma"].includes(unknown[1]) && run.rounds.length === 0) {
        S.unsupported.add(unknown[1]);
        options = adapt(options);
        continue;
      }
      if (error.code !== "aborted" && !run.stale) {
        run.error = error;
        showError(`${error.code === "bad_prompt" ? "Bad prompt" : "The engine refused"}: ${error.message}`);
      }
      break;
    }
  }
  run.done = true;
  notify(run);
}

function nextRound(run) {
  return new Promise((resolve) => {
    const check = () => {
      if (S.run !== run) return resolve(null);
      if (run.rounds.length > S.shown) return resolve(run.rounds[S.shown]);
      if (run.done) return resolve(null);
      run.waiters.add(check);
    };
    check();
  });
}

const TIMING = { draft: 260, verify: 450, coin: 520, residual: 520 };

/** Animates the next round; false when the run has no more rounds. */
async function advance() {
  const run = S.run;
  if (!run) return false;
  S.animating = true;
  try {
    const round = await nextRound(run);
    if (!round || S.run !== run) return false;
    const trace = round.trace;
    $("round-label").textContent = `round ${trace.round + 1} · ${trace.method}${run.source === "recorded" ? " · recorded" : ""}`;
    const { animate } = buildStage($("stage"), $("round-notes"), trace, S.alphabet, !!(run.sent ?? run.options).dynamicGamma);
    await animate(S.pacer, TIMING);
    S.pacer.skip = false;
    S.shown += 1;
    commit(round);
    return true;
  } catch (error) {
    if (error instanceof Cancelled) return false;
    throw error;
  } finally {
    S.animating = false;
  }
}

function commit(round) {
  const trace = round.trace;
  record(S.metrics, trace);
  hook.shownRounds.push(trace);
  const out = $("output");
  trace.emitted.forEach((token, i) => {
    const ch = S.alphabet[token] ?? "?";
    const source = trace.sources[i];
    const entry = { ch, token, source, round: S.shown - 1, index: i };
    S.tokens.push(entry);
    const span = document.createElement("span");
    span.className = `otok ${source}`;
    span.textContent = ch === "\n" ? "↵\n" : ch;
    span.tabIndex = -1;
    span.setAttribute("role", "button");
    span.dataset.source = source;
    span.dataset.token = String(token);
    span.dataset.round = String(entry.round);
    span.dataset.i = String(S.tokens.length - 1);
    span.setAttribute("aria-label", `${ch === "\n" ? "newline" : ch === " " ? "space" : ch}, ${source} in round ${entry.round + 1}`);
    out.append(span);
  });
  rovingFocus();
  renderMetrics();
  // Follow the animation in the distributions panel unless the student picked an earlier
  // character: the round's residual draw if it had one, otherwise its first character.
  if (S.selected === null || S.selected >= S.tokens.length - trace.emitted.length - 1) {
    const first = S.tokens.length - trace.emitted.length;
    const resampled = trace.sources.indexOf("resampled");
    selectToken(first + (resampled >= 0 ? resampled : 0));
  }
  scheduleTheory();
}

function rovingFocus() {
  const spans = $("output").querySelectorAll(".otok");
  spans.forEach((s) => (s.tabIndex = -1));
  const i = S.selected !== null && S.selected < spans.length ? S.selected : spans.length - 1;
  if (spans[i]) spans[i].tabIndex = 0;
}

async function playLoop() {
  if (S.looping) return;
  S.looping = true;
  try {
    while (S.playing) {
      const more = await advance();
      if (!more) break;
    }
  } finally {
    S.looping = false;
  }
  if (S.run && S.run.done && S.shown >= S.run.rounds.length) finished();
}

function finished() {
  S.playing = false;
  const run = S.run;
  const sum = summarize(S.metrics);
  hook.pageMetrics = { ...S.metrics, summary: sum };
  hook.summary = run.summary ?? null;
  hook.finished = true;
  hook.wallMs = run.wallMs ?? null;
  setRunState(run.error ? "stopped by an error" : run.source === "recorded"
    ? (S.specula ? "recorded run finished — press Play or Reset to run the models live" : "recorded run finished; the models are still loading")
    : `finished: ${S.metrics.emittedTokens} characters in ${S.metrics.rounds} rounds${run.wallMs ? `, ${(run.wallMs / 1000).toFixed(2)} s wall-clock` : ""}`);
  renderMetrics();
}

function setRunState(text) {
  $("run-state").textContent = text;
}

// ---------- transport ----------
/** True when the settings on screen are not the ones the current run uses. */
function stale() {
  if (!S.specula) return false;
  return !S.run || S.run.source !== "live" || S.run.key !== JSON.stringify(settings());
}

async function play() {
  await S.pendingChange;
  if (stale() || (S.run.done && S.shown >= S.run.rounds.length && hook.finished)) await newRun({ live: !!S.specula });
  if (!S.run) return;
  S.pacer.paused = false;
  S.pacer.wake();
  S.playing = true;
  setRunState(S.run.source === "recorded" ? "playing a recorded run" : "playing");
  playLoop();
}

async function step() {
  await S.pendingChange;
  if (S.animating) {
    // Finish the round on screen at once.
    S.pacer.skip = true;
    S.pacer.wake();
    return;
  }
  if (stale() || !S.run || (S.run.done && S.shown >= S.run.rounds.length)) await newRun({ live: !!S.specula });
  if (!S.run) return;
  S.playing = false;
  S.pacer.paused = false;
  setRunState("stepping");
  const more = await advance();
  if (!more || (S.run.done && S.shown >= S.run.rounds.length)) finished();
  else setRunState(`paused after round ${S.shown}`);
}

function pause() {
  S.playing = false;
  if (S.pacer) {
    S.pacer.paused = true;
  }
  setRunState("paused");
}

async function reset() {
  const wasPlaying = S.playing;
  await newRun({ live: !!S.specula });
  if (wasPlaying) play();
}

// ---------- distributions ----------
/** Draws a finished round on the stage at once (for a character picked in the output). */
async function showRoundStatic(roundIndex) {
  const trace = hook.shownRounds[roundIndex];
  if (!trace || S.animating) return;
  const run = S.run;
  $("round-label").textContent = `round ${trace.round + 1} · ${trace.method}${run?.source === "recorded" ? " · recorded" : ""}`;
  const { animate } = buildStage($("stage"), $("round-notes"), trace, S.alphabet, !!(run?.sent ?? run?.options)?.dynamicGamma);
  const instant = new Pacer(() => Infinity);
  instant.skip = true;
  await animate(instant, TIMING);
}

function selectToken(i, { fromUser = false } = {}) {
  if (i < 0 || i >= S.tokens.length) return;
  S.selected = i;
  if (fromUser) showRoundStatic(S.tokens[i].round);
  const spans = $("output").querySelectorAll(".otok");
  spans.forEach((s, j) => s.classList.toggle("selected", j === i));
  rovingFocus();
  renderDistributions();
}

function renderDistributions() {
  const entry = S.tokens[S.selected];
  if (!entry) return;
  const trace = S.run?.rounds[entry.round]?.trace ?? hook.shownRounds[entry.round];
  if (!trace) return;
  const label = $("dist-label");
  const chName = (t) => showChar(S.alphabet[t] ?? "?");
  let target = null;
  let draft = null;
  let residual = null;
  let draftToken = null;
  const step = trace.steps[entry.index];
  if (step) {
    target = step.targetProbs ?? null;
    draft = step.draftProbs ?? null;
    residual = residualOf(step);
    draftToken = step.outcome.tests[0]?.token ?? null;
  } else if (trace.bonus && entry.index === trace.steps.length) {
    target = trace.bonus.targetProbs ?? null;
  }
  label.textContent = `· '${chName(entry.token)}' (${entry.source}, round ${entry.round + 1}, position ${entry.index + 1})`;
  const box = $("dist");
  if (!target) {
    box.textContent = "No distributions recorded for this character.";
    return;
  }
  const vectors = [target, draft, entry.source === "resampled" ? residual : null];
  const idx = topIndices(vectors, 10, [entry.token, draftToken ?? -1]);
  const series = [{ name: "target", cls: "s-target" }];
  if (draft) series.push({ name: "draft", cls: "s-draft" });
  if (entry.source === "resampled" && residual) series.push({ name: "residual", cls: "s-residual" });
  const rows = idx.map((t) => ({
    label: chName(t),
    values: [target[t], ...(draft ? [draft[t]] : []), ...(entry.source === "resampled" && residual ? [residual[t]] : [])],
    mark: t === entry.token ? "▶" : t === draftToken ? "✗" : "",
  }));
  groupedBars(box, { rows, series, label: `target, draft and residual probabilities at position ${entry.index + 1} of round ${entry.round + 1}` });
  const extra = document.createElement("p");
  extra.className = "muted";
  if (draft) {
    const overlap = target.reduce((s, x, i) => s + Math.min(x, draft[i]), 0);
    extra.textContent = `▶ emitted, ✗ rejected draft. Σ min(target, draft) = ${fmt(overlap, 3)} = 1 − TV: the chance a single draft token is accepted here.`;
    if (step?.otm) {
      const k = step.otm.k;
      extra.textContent += ` With ${k} draft${k > 1 ? "s" : ""} here the optimal selection (the ratio race) accepts with Σ min(target, r) = ${fmt(step.otm.acceptance, 3)}, the best possible being ${fmt(step.otm.optimum, 3)}.`;
    }
  } else {
    extra.textContent = "▶ emitted. This character came straight from the target (no draft to test).";
  }
  box.append(extra);
}

function onOutputKey(event) {
  const spans = [...$("output").querySelectorAll(".otok")];
  const i = spans.indexOf(document.activeElement);
  if (i < 0) return;
  let j = null;
  if (event.key === "ArrowRight" || event.key === "ArrowDown") j = Math.min(spans.length - 1, i + 1);
  else if (event.key === "ArrowLeft" || event.key === "ArrowUp") j = Math.max(0, i - 1);
  else if (event.key === "Home") j = 0;
  else if (event.key === "End") j = spans.length - 1;
  else if (event.key === "Enter" || event.key === " ") j = i;
  if (j === null) return;
  event.preventDefault();
  selectToken(j, { fromUser: true });
  spans[j].focus();
}

// ---------- metrics ----------
function renderMetrics() {
  const m = S.metrics;
  const sum = summarize(m);
  const wall = S.run?.source === "live" && S.run.arrivals.length && S.shown > 0 ? S.run.arrivals[S.shown - 1] : null;
  const items = [
    ["acceptance-rate", "acceptance rate", fmt(sum.acceptanceRate, 3), "accepted drafts / drafted tokens"],
    ["mean-acceptance-length", "mean acceptance length", fmt(sum.meanAcceptanceLength, 2), "1 + accepted per round"],
    ["emitted", "characters", String(m.emittedTokens), "accepted + resampled + bonus"],
    ["rounds", "rounds", String(m.rounds), ""],
    ["target-calls", "target calls", String(m.targetCalls), "forward passes of the target"],
    ["draft-calls", "draft calls", String(m.draftCalls), ""],
    ["block-efficiency", "tokens per target call", fmt(sum.blockEfficiency, 2), ""],
    ["tokens-per-second", "tokens/s (model time)", fmt(sum.tokensPerSecond, 1), "from the engine's timing"],
    ["wall", "wall-clock", wall !== null ? `${(wall / 1000).toFixed(2)} s` : "–", "real time in this browser, live runs"],
    ["cost-ratio", "c = draft / target cost", fmt(sum.costRatio, 3), "per call, measured"],
  ];
  const dl = $("metrics");
  dl.replaceChildren();
  for (const [key, name, value, help] of items) {
    const div = document.createElement("div");
    div.className = "metric";
    const dt = document.createElement("dt");
    dt.textContent = name;
    if (help) dt.title = help;
    const dd = document.createElement("dd");
    dd.textContent = value;
    dd.dataset.metric = key;
    div.append(dt, dd);
    dl.append(div);
  }
  columns($("chart-position"), { values: sum.perPositionAcceptance, start: 1, max: 1, label: "per-position acceptance" });
  columns($("chart-hist"), { values: m.acceptedLengthHistogram, start: 0, label: "histogram of accepted drafts per round", fmtValue: (v) => String(v) });
  hook.liveMetrics = { ...m, summary: sum };
}

// ---------- theory, recomputed from cached distributions ----------
let theoryTimer = null;
let theoryBusy = false;
let theoryScheduled = false;
function scheduleTheory() {
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
    // α per token: accepted positions / tested positions (the vLLM acceptance rate also
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
    const gammas = Array.from({ length: 16 }, (_, i) => i + 1);
    const runGamma = S.run?.sent?.gamma ?? S.run?.options?.gamma ?? s.gamma;
    const note = $("theory-note");
    if (alpha === null) {
      note.textContent = "Run a method with drafts to measure α and c.";
      lines($("chart-tokens"), { curves: [], label: "expected tokens per round" });
      lines($("chart-walltime"), { curves: [], label: "walltime factor" });
    } else {
      note.textContent = `α = ${fmt(alpha, 3)} (accepted / tested positions, measured${overlap !== null ? `; Σ min(target, draft) on the cached distributions gives ${fmt(overlap, 3)}` : ""}), c = ${fmt(c, 3)}${sum.costRatio === null ? " (assumed)" : " (measured)"}. Curves: E[tokens] = (1 − α^{γ+1})/(1 − α), factor = E/(γc + 1).`;
      const curves = [{ points: gammas.map((g) => [g, expectedTokens(alpha, g)]), cls: "c-theory", name: "theory, measured α" }];
      if (overlap !== null && measuredAlpha !== null) curves.push({ points: gammas.map((g) => [g, expectedTokens(overlap, g)]), cls: "c-alt", name: "theory, cached Σmin" });
      // Sampling settings moved since the run: re-target the cached distributions
      // (exact for a run without top-k/top-p at a temperature above 0) — no model runs.
      const ran = S.run?.sent ?? S.run?.options;
      const changed = ran && (s.temperature !== ran.temperature || (s.topK || undefined) !== ran.topK || (s.topP < 1 ? s.topP : undefined) !== ran.topP);
      hook.preview = null;
      if (changed && pairs.length) {
        if (ran.temperature > 0 && ran.topK === undefined && ran.topP === undefined) {
          const to = { temperature: s.temperature, topK: s.topK || undefined, topP: s.topP < 1 ? s.topP : undefined };
          const previewAlpha = pairs.reduce((a, { target, draft }) => a + overlapOf(retarget(target, ran.temperature, to), retarget(draft, ran.temperature, to)), 0) / pairs.length;
          hook.preview = { alpha: previewAlpha, settings: to, positions: pairs.length };
          curves.push({ points: gammas.map((g) => [g, expectedTokens(previewAlpha, g)]), cls: "c-preview", name: `preview T=${s.temperature}${to.topK ? ` k=${to.topK}` : ""}${to.topP ? ` p=${to.topP}` : ""}` });
          note.textContent += ` Preview for the new sampling settings from the ${pairs.length} cached positions (no model run): Σ min(target, draft) = ${fmt(previewAlpha, 3)}; release the slider to run the models.`;
        } else {
          note.textContent += " (The run used top-k/top-p or greedy decoding, so the cached distributions cannot be re-targeted: release the slider to run the models.)";
        }
      }
      const measured = sum.blockEfficiency;
      lines($("chart-tokens"), {
        curves,
        marks: measured !== null && S.metrics.draftedTokens > 0 ? [{ x: runGamma, y: measured, cls: "m-measured", name: "measured" }] : [],
        label: "expected tokens per round vs gamma", xLabel: "γ", yLabel: "tokens",
      });
      const race = S.race;
      let measuredFactor = null;
      if (race?.arTps && S.run?.wallMs && S.metrics.emittedTokens) measuredFactor = (S.metrics.emittedTokens / (S.run.wallMs / 1000)) / race.arTps;
      lines($("chart-walltime"), {
        curves: [{ points: gammas.map((g) => [g, walltimeFactor(alpha, g, c)]), cls: "c-theory", name: "theory" }],
        marks: [
          ...(S.metrics.draftedTokens ? [{ x: runGamma, y: walltimeFactor(alpha, runGamma, c), cls: "m-theory", name: "this γ" }] : []),
          ...(measuredFactor !== null ? [{ x: runGamma, y: measuredFactor, cls: "m-measured", name: "race, measured" }] : []),
        ],
        label: "walltime factor vs gamma", xLabel: "γ", yLabel: "× faster",
      });
    }
    if (!S.pkg || pairs.length === 0) return;
    if (s.method === "mentored") {
      const ds = [0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3];
      const pts = [];
      for (const d of ds) pts.push([d === 0 ? 0.0005 : d, await mean(pairs, { method: "mentored", kl: d })]);
      const here = s.kl > 0 ? s.kl : 0.0005;
      lines($("chart-kl"), {
        curves: [{ points: pts, cls: "c-theory", name: "acceptance (cached)" }],
        marks: [
          { x: here, y: await mean(pairs, { method: "mentored", kl: s.kl }), cls: "m-theory", name: `D = ${s.kl}` },
          ...(sum.acceptanceRate !== null && S.run?.options?.method === "mentored" ? [{ x: S.run.options.kl || 0.0005, y: sum.acceptanceRate, cls: "m-measured", name: "measured" }] : []),
        ],
        xLog: true, yMin: 0, yMax: 1, label: "acceptance vs KL budget D", xLabel: "D (nats, log)", yLabel: "P(accept)",
      });
    }
    if (["spectr", "spectr-otm", "multiround", "spectr-tree"].includes(s.method)) {
      const ks = [1, 2, 3, 4, 5, 6, 7, 8];
      const kseq = [];
      const multi = [];
      let best = [];
      for (const k of ks) {
        kseq.push([k, await mean(pairs, { method: "kseq", drafts: k })]);
        multi.push([k, await mean(pairs, { method: "multiround", drafts: k })]);
      }
      try {
        for (const k of ks) best.push([k, await mean(pairs, { method: "race", drafts: k })]);
      } catch {
        best = []; // an older package without the race
      }
      lines($("chart-k"), {
        curves: [
          { points: kseq, cls: "c-theory", name: "k-Seq (SpecTr)" },
          { points: multi, cls: "c-alt", name: "multi-round" },
          ...(best.length === ks.length ? [{ points: best, cls: "c-best", name: "optimal selection (OTM)" }] : []),
        ],
        marks: [{ x: s.drafts, y: kseq[s.drafts - 1][1], cls: "m-theory", name: `k = ${s.drafts}` }],
        yMin: 0, yMax: 1, label: "acceptance vs number of drafts k", xLabel: "k", yLabel: "P(accept)",
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

// ---------- race ----------
async function race() {
  if (!S.specula) {
    showError("The race needs the models: wait until they have loaded.");
    return;
  }
  const s = settings();
  const problem = promptProblem(s.prompt);
  if (problem) {
    showError(problem);
    return;
  }
  await stopRun();
  const button = $("race");
  button.disabled = true;
  showError("");
  const base = { prompt: s.prompt, temperature: s.temperature, seed: s.seed, maxTokens: s.maxTokens };
  if (s.topK > 0) base.topK = s.topK;
  if (s.topP < 1) base.topP = s.topP;
  const gamma = s.gamma;
  $("race-spec-label").textContent = `(γ = ${gamma})`;
  const lanes = [
    { key: "ar", options: { ...base, method: "autoregressive" } },
    { key: "spec", options: { ...base, method: "speculative", gamma } },
  ];
  const result = {};
  try {
    for (const lane of lanes) {
      const text = $(`race-${lane.key}`);
      const clock = $(`race-${lane.key}-time`);
      text.textContent = "";
      clock.textContent = "running…";
      const t0 = performance.now();
      const it = S.specula.generate(lane.options);
      let chars = 0;
      let summary;
      const timeline = [];
      for (;;) {
        const { value, done } = await it.next();
        if (done) {
          summary = value;
          break;
        }
        text.textContent += value.text;
        chars += value.text.length;
        timeline.push([performance.now() - t0, value.text]);
        clock.textContent = `${((performance.now() - t0) / 1000).toFixed(2)} s`;
      }
      const seconds = (performance.now() - t0) / 1000;
      result[lane.key] = { seconds, chars, tps: chars / seconds, targetCalls: summary.metrics.targetCalls, text: summary.text, timeline };
      clock.textContent = `${seconds.toFixed(2)} s · ${(chars / seconds).toFixed(1)} chars/s · ${summary.metrics.targetCalls} target calls`;
    }
    S.race = { arTps: result.ar.tps, specTps: result.spec.tps, ...result };
    hook.race = S.race;
    const speedup = result.ar.seconds / result.spec.seconds;
    $("race-spec-time").textContent += ` · ${speedup.toFixed(2)}× ${speedup >= 1 ? "faster" : "slower"}`;
    S.raceSummary = { ar: $("race-ar-time").textContent, spec: $("race-spec-time").textContent };
    $("race-replay").disabled = false;
  } catch (error) {
    showError(`race: ${error.message}`);
  } finally {
    button.disabled = false;
  }
  await newRun({ live: true });
}

/** Replays both lanes at once, each at its own recorded wall-clock times. */
let replayTimers = [];
function replayRace() {
  const race = S.race;
  if (!race) return;
  for (const t of replayTimers) clearTimeout(t);
  replayTimers = [];
  const started = performance.now();
  for (const key of ["ar", "spec"]) {
    const text = $(`race-${key}`);
    const clock = $(`race-${key}-time`);
    text.textContent = "";
    clock.textContent = "0.00 s";
    for (const [at, chunk] of race[key].timeline) {
      replayTimers.push(setTimeout(() => {
        text.textContent += chunk;
        clock.textContent = `${((performance.now() - started) / 1000).toFixed(2)} s`;
      }, at));
    }
    replayTimers.push(setTimeout(() => (clock.textContent = S.raceSummary[key]), race[key].seconds * 1000 + 30));
  }
}

// ---------- loading ----------
function showBackend(info) {
  const b = $("backend");
  b.dataset.backend = info.backend;
  const draft = info.backend === "webgpu" && info.draftBackend === "cpu" ? " · draft on the CPU" : "";
  b.textContent = info.backend === "webgpu" ? `WebGPU · ${info.adapter ?? "adapter"}${info.isFallbackAdapter ? " (software, slow)" : ""}${draft}` : "CPU · WebAssembly";
  if (info.backend !== "webgpu") {
    const why = !("gpu" in navigator) ? "this browser has no WebGPU" : info.reason ?? (info.requested === "cpu" ? "the CPU was asked for" : "no WebGPU adapter");
    notice("backend", `Running on the CPU inside WebAssembly: ${why}.`);
  }
}

async function loadModels() {
  const backend = ["auto", "cpu", "webgpu"].includes(params.get("backend")) ? params.get("backend") : "auto";
  // ?draft=cpu keeps the small draft model on the CPU beside a WebGPU target (faster there).
  const draftBackend = params.get("draft") === "cpu" ? "cpu" : "same";
  const progress = $("progress");
  try {
    S.pkg = await import("../specula/index.js");
    const files = new Map();
    S.specula = await S.pkg.Specula.load({
      backend,
      draftBackend,
      onProgress: ({ file, loaded, total }) => {
        files.set(file, [loaded, total ?? loaded]);
        let l = 0;
        let t = 0;
        for (const [a, b] of files.values()) {
          l += a;
          t += b;
        }
        progress.textContent = `downloading ${file} · ${(l / 1e6).toFixed(1)} / ${(t / 1e6).toFixed(1)} MB`;
      },
    });
    S.alphabet = S.specula.alphabet;
    S.backend = S.specula.backend;
    hook.backend = S.backend;
    progress.textContent = "models ready";
    showBackend(S.backend);
    hook.loaded = true;
    $("race").disabled = false;
    if (S.run?.source === "recorded" && hook.finished) setRunState("recorded run finished — press Play or Reset to run the models live");
    scheduleTheory();
  } catch (error) {
    progress.textContent = "";
    $("backend").textContent = "models unavailable";
    showError(`Could not load the models: ${error.message}. The recorded run still plays.`);
  }
}

// ---------- wiring ----------
function applyParams() {
  const set = (id, key) => {
    if (params.has(key)) $(id).value = params.get(key);
  };
  set("method", "method");
  set("gamma", "gamma");
  set("drafts", "k");
  set("tree", "tree");
  if (params.has("D")) $("kl").value = String(sliderFromKl(Number(params.get("D"))));
  set("temperature", "temperature");
  set("topk", "topk");
  set("topp", "topp");
  set("seed", "seed");
  set("maxtokens", "tokens");
  set("prompt", "prompt");
  if (params.has("speed")) {
    const sp = params.get("speed");
    const i = sp === "instant" ? SPEEDS.length - 1 : SPEEDS.indexOf(Number(sp));
    if (i >= 0) $("speed").value = String(i);
  }
  if (params.get("dynamic") === "1") $("dynamic").checked = true;
}

function onSettingChanged() {
  S.pendingChange = settingChanged();
  return S.pendingChange;
}

async function settingChanged() {
  await S.pendingChange;
  syncOutputs();
  scheduleTheory();
  if (!S.specula) return;
  const wasPlaying = S.playing;
  await newRun({ live: true });
  if (wasPlaying) play();
}

function wire() {
  for (const id of ["method", "gamma", "drafts", "kl", "temperature", "topk", "topp", "seed", "maxtokens", "dynamic", "tree"]) {
    const el = $(id);
    el.addEventListener("input", syncOutputs);
    el.addEventListener("change", onSettingChanged);
  }
  // While a slider moves, the theory charts are recomputed from the cached distributions
  // (no model runs); the models run again once it is released ("change").
  for (const id of ["kl", "drafts", "gamma", "temperature", "topk", "topp"]) $(id).addEventListener("input", scheduleTheory);
  $("prompt").addEventListener("change", onSettingChanged);
  $("speed").addEventListener("input", () => {
    syncOutputs();
    S.pacer?.wake();
  });
  $("example").addEventListener("change", () => {
    const v = $("example").value;
    if (!v) return;
    $("prompt").value = v;
    onSettingChanged();
  });
  $("play").addEventListener("click", play);
  $("step").addEventListener("click", step);
  $("pause").addEventListener("click", pause);
  $("reset").addEventListener("click", reset);
  $("race").addEventListener("click", race);
  $("race-replay").addEventListener("click", replayRace);
  $("output").addEventListener("click", (e) => {
    const span = e.target.closest(".otok");
    if (span) selectToken(Number(span.dataset.i), { fromUser: true });
  });
  $("output").addEventListener("keydown", onOutputKey);
}

async function main() {
  applyParams();
  syncOutputs();
  wire();
  $("race").disabled = true;
  renderMetrics();
  hook.ready = true;
  const loading = loadModels();
  try {
    S.recorded = await (await fetch("recorded-trace.json")).json();
    S.alphabet ??= S.recorded.alphabet;
  } catch {
    S.recorded = null;
  }
  if (S.recorded && params.get("autoplay") !== "0" && !S.specula) {
    await newRun({ live: false });
    play();
  }
  await loading;
  if (!S.run) await newRun({ live: true });
}

main();
