// Running the models and playing rounds: one generation in the package's worker, rounds
// played on the stage from the engine's trace (anim.js; how far: player.js), and the
// transport (play, step, pause, reset). Every
// transport action goes through one queue, so a click made while a run is being stopped
// or started (a slow WebGPU round) is carried out afterwards, never dropped.
import { SPEEDS, Pacer, Cancelled, playRound } from "./anim.js";
import { clearStage } from "./stage-view.js";
import { $, S, hook, active } from "./state.js";
import { player } from "./player.js";
import { on } from "./events.js";
import { settings, checked, showError, controlOf } from "./settings.js";
import { appendOutput, awaitDistributions, clearOutput, followRound, renderMetrics } from "./view.js";
import { scheduleTheory } from "./theory.js";
import { ngramPair, ngramRounds } from "./ngram.js";
import { OLD, RECENT, compactRound, forgetRound, shrinkRound } from "./pieces.js";
import { plantedBug } from "./bugs.js";

export const TIMING = { draft: 260, verify: 450, coin: 520, residual: 700 };

let queue = Promise.resolve();
/** Runs `action` after every action queued before it (errors are logged, not fatal). */
export function enqueue(action) {
  hook.queued += 1;
  const next = queue
    .then(action)
    .catch((error) => console.error(error))
    .finally(() => (hook.queued -= 1));
  queue = next;
  return next;
}

function clearDisplay() {
  player.shown = 0;
  S.metrics = null;
  S.summary = null;
  S.tokens = [];
  S.selected = null;
  S.picked = false;
  S.distRound = null;
  player.stage = null;
  clearOutput();
  $("stage").replaceChildren();
  clearStage();
  $("stage-focus").replaceChildren();
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

export async function stopRun() {
  if (player.pacer) {
    player.pacer.cancelled = true;
    player.pacer.wake();
  }
  player.playing = false;
  const run = S.run;
  if (run && run.source === "live" && !run.done) {
    run.stale = true;
    if (run.controller) run.controller.abort();
    else run.instance?.abort();
    setRunState("stopping the running generation…");
    await run.finished;
  }
  // Tests set this to stand for a slow round (software WebGPU) finishing after the abort.
  if (hook.stopDelayMs) await new Promise((r) => setTimeout(r, hook.stopDelayMs));
  while (player.animating || player.looping) await new Promise((r) => setTimeout(r, 10));
}

function recordedRun() {
  const r = S.recorded;
  return { id: ++S.runSeq, source: "recorded", options: r.options, rounds: r.rounds, arrivals: [], done: true, summary: r.summary, finished: Promise.resolve(), waiters: new Set() };
}

/** Starts a live generation with the current settings (or the recorded run before the models load). */
export async function newRun({ live = true } = {}) {
  await stopRun();
  clearDisplay();
  showError("");
  player.pacer = new Pacer(() => SPEEDS[Number($("speed").value)]);
  if (!live || !canRun()) {
    if (!S.recorded) return;
    S.run = recordedRun();
    // The recorded run is the bundled pair's, whatever pair ran before it.
    S.alphabet = S.recorded.alphabet;
  } else {
    S.run = null;
    const s = settings();
    // Models that are not ours (www/js/ngram.js) run through decode() on this page, over
    // their own alphabet; the bundled pair and a GGUF pair run in the package's workers,
    // a GGUF pair's tokens named by their text pieces.
    const pair = s.source === "ngram" ? ngramPair(s.prompt) : null;
    const instance = pair ? null : active();
    S.alphabet = pair ? pair.alphabet : s.source === "gguf" ? instance.tokenTexts : instance?.alphabet ?? S.alphabet;
    hook.alphabet = S.alphabet;
    const { options, refused: bad } = await checked(s);
    if (bad) {
      showError(bad.message, bad.field, bad.code);
      setRunState(`not running: fix ${controlOf(bad.field)?.label ?? "the settings"} (see the message below)`);
      return;
    }
    const run = { id: ++S.runSeq, source: "live", models: s.source, pair, instance, key: JSON.stringify(s), options, rounds: [], arrivals: [], done: false, summary: null, waiters: new Set() };
    if (pair) run.controller = new AbortController();
    S.run = run;
    run.finished = pump(run);
  }
  hook.runId = S.run.id;
  hook.source = S.run.source;
  hook.models = S.run.models ?? null;
  hook.options = S.run.options;
  clearOutput(S.run.options.prompt);
  setRunState(S.run.source === "recorded" ? "playing a recorded run while the models load" : "ready: press Play or Step");
}

/** A round's outcome, to compare a live run with the recording: its characters and their sources. */
const outcomeOf = (round) => JSON.stringify([round.trace.emitted, round.trace.sources]);
const sameOptions = (a, b) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/**
 * The models are ready while the recorded run plays: a live run of the settings on screen
 * takes over. When they are the recording's, it goes on from the round on screen (its
 * first rounds are the recording's, checked as they arrive: any difference starts it
 * over from its first round); otherwise it starts over, playing if the recording was.
 */
export function handOver() {
  return enqueue(async () => {
    const recorded = S.run;
    if (recorded?.source !== "recorded" || hook.finished || !canRun() || $("source").value !== "bundled") return;
    const s = settings();
    const { options, refused } = await checked(s);
    if (refused || !sameOptions(options, recorded.options)) {
      settingChanged();
      return;
    }
    const run = { id: ++S.runSeq, source: "live", models: s.source, pair: null, instance: active(), key: JSON.stringify(s), options, rounds: [], arrivals: [], done: false, summary: null, waiters: new Set(), recording: recorded.rounds };
    S.run = run;
    run.finished = pump(run);
    hook.runId = run.id;
    hook.source = run.source;
    hook.models = run.models;
    hook.options = run.options;
    setRunState(player.playing ? "playing · the models are ready and go on from the recording, live" : "the models are ready: press Play to go on live");
  });
}

function notify(run) {
  // Cleared first: a waiter still short of its round adds itself again, for the next one.
  const waiters = [...run.waiters];
  run.waiters.clear();
  for (const w of waiters) w();
}

async function pump(run) {
  hook.generating = true;
  hook.modelRuns += 1;
  const started = performance.now();
  try {
    const it = run.pair ? ngramRounds(S.pkg, run.pair, run.options, run.controller.signal) : run.instance.generate(run.options);
    // A large vocabulary's distributions are compacted as they arrive (pieces.js).
    const vocab = run.instance?.tokenTexts?.length ?? 0;
    for (;;) {
      const { value, done } = await it.next();
      if (done) {
        run.summary = value;
        break;
      }
      run.rounds.push(compactRound(value, vocab));
      // Taking over from the recording: a round already shown from it must be the same.
      const i = run.rounds.length - 1;
      if (run.recording && i < player.shown && S.run === run && (!run.recording[i] || outcomeOf(run.recording[i]) !== outcomeOf(value))) {
        run.recording = null;
        settingChanged();
      }
      if (run.rounds.length > RECENT) shrinkRound(run.rounds[run.rounds.length - RECENT - 1], vocab);
      if (!(vocab > hook.largeVocab) && run.rounds.length > OLD) forgetRound(run.rounds[run.rounds.length - OLD - 1]);
      run.arrivals.push(performance.now() - started);
      notify(run);
    }
    run.wallMs = performance.now() - started;
  } catch (error) {
    if (error.code !== "aborted" && !run.stale) {
      run.error = error;
      const bad = error.code === "bad_prompt";
      showError(`${bad ? "Bad prompt" : "The engine refused"}: ${error.message}`, bad ? "prompt" : error.field ?? null, error.code ?? "internal");
      if (S.run === run) setRunState("stopped by an error (see the message below)");
    }
  }
  run.done = true;
  if (S.run === run || run.stale) hook.generating = false;
  notify(run);
}

function nextRound(run) {
  return new Promise((resolve) => {
    const check = () => {
      if (S.run !== run) return resolve(null);
      if (run.rounds.length > player.shown) return resolve(run.rounds[player.shown]);
      if (run.done) return resolve(null);
      run.waiters.add(check);
    };
    check();
  });
}

// Numbered by the page (index in the run): past a slide of the context window the trace's
// own round number starts again from 0 with the new stretch.
const roundLabel = (trace, run, index) => `round ${index + 1} · ${trace.method}${run?.source === "recorded" ? " · recorded" : ""}`;

/** Animates the next round; false when the run has no more rounds. */
async function advance() {
  const run = S.run;
  if (!run) return false;
  player.animating = true;
  try {
    if (run.source === "live" && run.rounds.length <= player.shown && !run.done) setRunState(player.playing ? "playing · the models are computing the next round…" : "the models are computing the next round…");
    const round = await nextRound(run);
    if (!round || S.run !== run) return false;
    if (player.playing) setRunState(run.source === "recorded" ? "playing a recorded run" : "playing");
    const trace = round.trace;
    $("round-label").textContent = roundLabel(trace, run, player.shown);
    player.stage = { index: player.shown, trace, until: null };
    // The distributions give the round's result away: they follow once it is drawn.
    awaitDistributions(player.shown);
    player.stage.step = await playRound(stageBoxes(), trace, stageOptions(run), player.pacer, TIMING);
    followRound(player.shown, trace);
    player.pacer.skip = false;
    player.shown += 1;
    commit(round);
    return true;
  } catch (error) {
    if (error instanceof Cancelled) return false;
    throw error;
  } finally {
    player.animating = false;
  }
}

/** The stage's boxes: the tree, the sentences and residual under it, the round's log. */
const stageBoxes = () => ({ stage: $("stage"), focus: $("stage-focus"), notes: $("round-notes") });

/** What the stage model needs of a run beside its trace (stage-model.js): how to name tokens, and the options it names. */
export function stageOptions(run) {
  const o = run?.options ?? {};
  const gguf = run?.models === "gguf";
  return { alphabet: S.alphabet ?? [], dynamicGamma: !!o.dynamicGamma, parallelDraft: !!o.parallelDraft, pieces: gguf, unit: gguf ? "token" : "character", bug: plantedBug(o.bug) };
}

/**
 * Draws a finished round on the stage at once (for a character picked in the output, or
 * the lesson); `until` stops it after a phase ("drafts", "verify": anim.js), and the
 * distributions, which would give the result away, wait until the round is drawn whole.
 */
export async function showRoundStatic(roundIndex, until = null) {
  const trace = hook.shownRounds[roundIndex];
  if (!trace || player.animating) return;
  player.stage = { index: roundIndex, trace, until };
  $("round-label").textContent = roundLabel(trace, S.run, roundIndex);
  const instant = new Pacer(() => Infinity);
  instant.skip = true;
  // Drawn afresh: the round on the stage may be another.
  clearStage();
  player.stage.step = await playRound(stageBoxes(), trace, stageOptions(S.run), instant, TIMING, until);
  if (until) awaitDistributions(roundIndex);
  else followRound(roundIndex, trace);
}

// The output asks for the round of a picked character (view.js).
on("show-round", (index) => showRoundStatic(index));

function commit(round) {
  const trace = round.trace;
  // Each round's report carries the run's metrics so far: the page shows them as they are.
  S.metrics = round.metrics ?? null;
  S.summary = round.summary ?? null;
  hook.shownRounds.push(trace);
  appendOutput(trace, player.shown - 1);
  renderMetrics();
  scheduleTheory();
}

/**
 * Gives the browser its turn (input, drawing) when the rounds have run for a frame without
 * one: at "instant" the pacer never waits, and rounds that arrive faster than they are
 * drawn would otherwise hold the page for the whole run.
 */
let lastBreath = 0;
async function breathe() {
  if (performance.now() - lastBreath < 12) return;
  await new Promise((r) => setTimeout(r, 0));
  lastBreath = performance.now();
}

async function playLoop() {
  if (player.looping) return;
  player.looping = true;
  try {
    while (player.animating) await new Promise((r) => setTimeout(r, 10));
    while (player.playing) {
      const more = await advance();
      if (!more) break;
      await breathe();
    }
  } finally {
    player.looping = false;
  }
  if (over()) finished();
  else if (player.stepStop && S.run && !player.pacer?.cancelled) setRunState(`paused after round ${player.shown}`);
  player.stepStop = false;
}

function finished() {
  player.playing = false;
  const run = S.run;
  hook.pageMetrics = S.metrics && { ...S.metrics, summary: S.summary };
  hook.summary = run.summary ?? null;
  hook.finished = true;
  hook.wallMs = run.wallMs ?? null;
  setRunState(run.error ? "stopped by an error (see the message below)" : run.source === "recorded"
    ? (S.specula ? "recorded run finished — press Play or Reset to run the models live" : "recorded run finished; the models are still loading")
    : `finished: ${S.metrics?.emittedTokens ?? 0} ${run.models === "gguf" ? "tokens" : "characters"} in ${S.metrics?.rounds ?? 0} rounds${run.wallMs ? `, ${(run.wallMs / 1000).toFixed(2)} s wall-clock` : ""}`);
  $("play").textContent = "Play";
  renderMetrics();
}

export function setRunState(text) {
  $("run-state").textContent = text;
}

/** Whether a live run can start: the models the Models menu names are loaded, or are the page's own. */
export const canRun = () => !!active() || (!!S.pkg && $("source").value === "ngram");

/** True when the settings on screen are not the ones the current run uses. */
function stale() {
  if (!canRun()) return false;
  return !S.run || S.run.source !== "live" || S.run.key !== JSON.stringify(settings());
}

const over = () => S.run && S.run.done && player.shown >= S.run.rounds.length;

/** Play: always starts (or resumes) playback — a new run when the settings changed or the run ended. */
export function play() {
  hook.playClicks += 1;
  setRunState("starting…");
  return enqueue(async () => {
    if (stale() || (over() && hook.finished)) await newRun({ live: canRun() });
    if (!S.run) return;
    player.pacer.paused = false;
    player.pacer.wake();
    player.playing = true;
    setRunState(S.run.source === "recorded" ? "playing a recorded run" : "playing");
    playLoop();
  });
}

export function step() {
  if (player.animating) {
    // Finish the round on screen at once; playback stops after it.
    player.stepStop = player.playing;
    player.playing = false;
    player.pacer.paused = false;
    player.pacer.skip = true;
    player.pacer.wake();
    return Promise.resolve();
  }
  let run = null;
  const ready = enqueue(async () => {
    if (stale() || !S.run || over()) await newRun({ live: canRun() });
    if (!S.run) return;
    player.pacer.paused = false;
    setRunState("stepping");
    run = S.run;
  });
  // The round itself plays outside the queue, so Pause / Reset stay immediate.
  return ready.then(async () => {
    if (!run || S.run !== run || player.animating || player.looping) return;
    const more = await advance();
    if (S.run !== run || player.playing) return;
    if (!more || over()) finished();
    else setRunState(`paused after round ${player.shown}`);
  });
}

export function pause() {
  player.playing = false;
  if (player.pacer) player.pacer.paused = true;
  setRunState("paused");
}

export function reset() {
  const wasPlaying = player.playing;
  setRunState("resetting…");
  return enqueue(async () => {
    await newRun({ live: canRun() });
    if (wasPlaying && S.run) {
      player.playing = true;
      setRunState("playing");
      playLoop();
    }
  });
}

/** A setting changed (on "change"): a new run with the new settings, playing if one was. */
export function settingChanged() {
  const wasPlaying = player.playing;
  player.pendingChange = enqueue(async () => {
    scheduleTheory();
    if (!canRun()) return;
    await newRun({ live: true });
    if (wasPlaying && S.run) {
      player.playing = true;
      setRunState("playing");
      playLoop();
    }
  });
  return player.pendingChange;
}
