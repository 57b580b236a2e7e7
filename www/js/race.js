// The race: autoregressive and speculative decoding of the same prompt with the same
// settings, each in a fresh worker with its own copy of the models. The lanes run one after
// the other, never at once: two lanes at once share this computer's cores, and the one left
// alone at the end runs faster, so neither clock would be its lane's own. "Replay side by
// side" then plays both at their own measured times. Races add up: the page reports the
// mean speed-up over repeats, and the theory with the per-call costs the races measured
// (race-costs.js). It races a GGUF pair when Models names one (tokens are text pieces;
// each lane shows its decoded text), whose loaded copy makes way for the two lanes' and is
// replaced by one of them afterwards; the trained pair when Models names it (its tokens are
// characters). It refuses the n-gram pair, which has no worker (see runRace).
import { $, S, hook } from "./state.js";
import { settings, checked, showError, readNumber } from "./settings.js";
import { stopRun, newRun, enqueue } from "./run.js";
import { scheduleTheory } from "./theory.js";
import { adoptGguf, freshGguf, releaseGguf } from "./gguf.js";
import { cancelLab } from "./lab.js";
import { addLanes, costsOf, costsSentence, emptyTotals, outsideShare, walltimeWith } from "./race-costs.js";
import { stopReplay } from "./race-replay.js";

/**
 * A fresh copy of the models in its own worker, for one lane of one race. Fresh each time:
 * a worker that already generated the same text reuses its earlier work (an identical
 * autoregressive run takes almost no time the second time), which would flatter that lane.
 */
function freshWorker() {
  const b = S.specula.backend;
  return S.pkg.Specula.load({ backend: b.backend, draftBackend: b.backend === "webgpu" && b.draftBackend === "cpu" ? "cpu" : "same" });
}

/** The repeats field: a whole number from 1 to 10 (the page's own limit: races take time). */
function repeatsRefusal() {
  const { value, problem } = readNumber("race-repeats", "repeats");
  const bad = problem ? `${problem}.` : !Number.isInteger(value) || value < 1 || value > 10 ? `repeats must be a whole number from 1 to 10; got ${value}.` : null;
  return bad && { field: "repeats", code: "invalid_option", message: `${bad} The race did not run.` };
}

/** The options both lanes share: the settings on screen, without the method's own. */
function laneOptions(s) {
  const base = { prompt: s.prompt, temperature: s.temperature, seed: s.seed, maxTokens: s.maxTokens };
  if (s.topK > 0) base.topK = s.topK;
  if (s.topP < 1) base.topP = s.topP;
  return base;
}

/**
 * One lane: its text as it comes (each round's decoded text) and its clock; the rate is
 * in tokens, which `unit` names ("chars" for the trained pair, whose tokens are characters).
 */
async function lane(worker, key, options, unit) {
  const text = $(`race-${key}`);
  const clock = $(`race-${key}-time`);
  text.textContent = "";
  clock.textContent = "running…";
  const t0 = performance.now();
  const startedAt = t0;
  const it = worker.generate(options);
  let tokens = 0;
  let summary;
  const timeline = [];
  for (;;) {
    const { value, done } = await it.next();
    if (done) {
      summary = value;
      break;
    }
    text.textContent += value.text;
    tokens += value.tokens.length;
    timeline.push([performance.now() - t0, value.text]);
    clock.textContent = `${((performance.now() - t0) / 1000).toFixed(2)} s · ${tokens} ${unit}`;
  }
  const seconds = (performance.now() - t0) / 1000;
  clock.textContent = `${seconds.toFixed(2)} s · ${(tokens / seconds).toFixed(1)} ${unit}/s · ${summary.metrics.targetCalls} target calls`;
  return { seconds, tokens, tps: tokens / seconds, targetCalls: summary.metrics.targetCalls, text: summary.text, timeline, startedAt, endedAt: performance.now(), summary };
}

/** Loads `n` copies at once; if one fails, those loaded are let go before the error goes on. */
async function loadCopies(load, n) {
  const settled = await Promise.allSettled(Array.from({ length: n }, load));
  const failed = settled.find((r) => r.status === "rejected");
  if (!failed) return settled.map((r) => r.value);
  for (const r of settled) if (r.status === "fulfilled") r.value.terminate();
  throw failed.reason;
}

export function race() {
  return enqueue(runRace);
}

async function runRace() {
  if (!S.specula) {
    showError("The race needs the models: wait until they have loaded.");
    return;
  }
  const s = settings();
  // The n-gram pair is built in this page and runs here, not in a worker that a lane could
  // load fresh; racing the trained pair in its place would time models not on screen.
  if (s.source === "ngram") {
    const message = "The race runs the pair Models names, a fresh copy in a worker of its own per lane: the trained pair or your GGUF pair. The n-gram pair is built in this page and runs here through decode(), with no worker to race, and racing the trained pair in its place would time other models than the ones on screen. Choose the trained pair under Models to race it.";
    showError(message, null, "invalid_option");
    $("race-verdict").textContent = `Not raced: ${message}`;
    return;
  }
  const gguf = s.source === "gguf";
  if (gguf && !S.gguf) {
    const message = "Your GGUF pair is not loaded: load it under Your models, then race.";
    showError(message, null, "invalid_option");
    $("race-verdict").textContent = `Not raced: ${message}`;
    return;
  }
  // A token of the trained pair is a character; of a GGUF pair, a piece of text.
  const unit = gguf ? "tokens" : "chars";
  // The speculative lane's options, checked as Play checks its own (the autoregressive
  // lane's are the same without gamma), then the repeats.
  const base = laneOptions(s);
  const gamma = s.gamma;
  const refused = (await checked(s, () => ({ ...base, method: "speculative", gamma }), ["maxTokens", "seed"])).refused ?? repeatsRefusal();
  if (refused) {
    showError(refused.message, refused.field, refused.code);
    $("race-verdict").textContent = `Not raced: ${refused.message}`;
    return;
  }
  const repeats = Number($("race-repeats").value);
  await stopRun();
  stopReplay();
  const button = $("race");
  button.disabled = true;
  showError("");
  $("race-spec-label").textContent = `(γ = ${gamma})`;
  // A GGUF pair's loaded copy makes way (the lab, if it runs on it, stops first); the
  // speculative lane's copy of the last race takes its place.
  let backend = null;
  let keep = null;
  if (gguf) {
    cancelLab();
    backend = releaseGguf();
  }
  const load = gguf ? () => freshGguf(backend) : freshWorker;
  try {
    // Repeats add up only for the same pair and settings.
    const models = gguf ? `gguf ${hook.gguf.name}` : "bundled";
    const key = JSON.stringify({ ...base, gamma, models });
    const stats = S.raceStats?.key === key ? S.raceStats : { key, speedups: [], totals: emptyTotals() };
    S.raceStats = stats;
    let ar;
    let spec;
    const lanes = { ar: ["autoregressive", { ...base, method: "autoregressive" }], spec: ["speculative", { ...base, method: "speculative", gamma }] };
    for (let r = 1; r <= repeats; r++) {
      $("race-verdict").textContent = `Race ${r} of ${repeats}: loading two fresh copies of the models, one per lane…`;
      const workers = await loadCopies(load, 2);
      try {
        // One lane at a time, the first lane alternating between repeats so that a load
        // on this computer that drifts favours neither.
        const order = r % 2 ? ["ar", "spec"] : ["spec", "ar"];
        for (const key of order) {
          $(`race-${key}`).textContent = "";
          $(`race-${key}-time`).textContent = "waits its turn";
        }
        const done = {};
        for (const key of order) {
          $("race-verdict").textContent = `Race ${r} of ${repeats}: the ${lanes[key][0]} lane runs alone, in its own worker.`;
          done[key] = await lane(workers[key === "ar" ? 0 : 1], key, lanes[key][1], unit);
        }
        [ar, spec] = [done.ar, done.spec];
        stats.speedups.push(ar.seconds / spec.seconds);
        addLanes(stats.totals, ar.summary, spec.summary);
        if (gguf && r === repeats) keep = workers[1];
      } finally {
        for (const w of workers) if (w !== keep) w.terminate();
      }
    }
    const speedup = ar.seconds / spec.seconds;
    const n = stats.speedups.length;
    const meanSpeedup = stats.speedups.reduce((a, b) => a + b, 0) / n;
    const same = ar.text === spec.text;
    const costs = costsOf(stats.totals, gamma);
    const theory = (await walltimeWith(costs, costs.alpha, [gamma]))?.[0] ?? null;
    const outside = { ar: outsideShare(ar), spec: outsideShare(spec) };
    // The hook keeps each lane's metrics (the engine's timings), not its summary's text twice.
    const bare = ({ summary, ...rest }) => ({ ...rest, metrics: summary.metrics });
    S.race = { arTps: ar.tps, specTps: spec.tps, ar: bare(ar), spec: bare(spec), unit, speedup, meanSpeedup, count: n, same, sequential: true, temperature: s.temperature, speedups: stats.speedups.slice(), costs, theory, outside, gamma };
    S.races.push({ gamma, meanSpeedup, count: n, models, costs });
    $("race-spec-time").textContent += ` · ${speedup.toFixed(2)}× ${speedup >= 1 ? "faster" : "slower"}`;
    S.raceSummary = { ar: $("race-ar-time").textContent, spec: $("race-spec-time").textContent };
    const lo = Math.min(...stats.speedups);
    const hi = Math.max(...stats.speedups);
    const [units, one] = gguf ? ["tokens", "token"] : ["characters", "character"];
    $("race-result").textContent = n > 1
      ? `${n} races of ${s.maxTokens} ${units} with these settings: speculative is ${meanSpeedup.toFixed(2)}× as fast on average (from ${lo.toFixed(2)}× to ${hi.toFixed(2)}×); the clocks show the last race.`
      : `One race of ${s.maxTokens} ${units}: ${speedup.toFixed(2)}×. One short run is noisy — raise the repeats (or the tokens) to average.`;
    $("race-theory").textContent = theory === null
      ? ""
      : `This computer's costs, measured by the engine's clock around each model call in ${n === 1 ? "this race" : `these ${n} races`}: ${costsSentence(costs)}. With these costs and α = ${costs.alpha.toFixed(3)} (measured), the theory expects ${theory.toFixed(2)}× at γ = ${gamma}; measured ${meanSpeedup.toFixed(2)}×. The theory leaves out the time outside the model calls (worker messages, the page): ${Math.round(100 * outside.ar)}% of the autoregressive lane's clock, ${Math.round(100 * outside.spec)}% of the speculative lane's${n > 1 ? " in the last race" : ""}.`;
    const verdict = $("race-verdict");
    verdict.dataset.same = String(same);
    verdict.textContent = same
      ? `The two texts are identical${s.temperature === 0 ? `: at temperature 0 both methods take the target's most likely ${one} every time.` : "."}`
      : `The texts differ, and that is expected: both lanes follow the same distribution (speculative decoding is lossless), but they use the random numbers differently, so they draw different samples. At temperature 0 there is no randomness and the two texts agree ${one} for ${one}.`;
    hook.race = S.race;
    $("race-replay").disabled = false;
  } catch (error) {
    showError(`race: ${error.message}`, null, error.code ?? "internal");
    $("race-verdict").textContent = `Not raced to the end: ${error.message}`;
  } finally {
    if (gguf) await adoptGguf(keep, backend);
    button.disabled = false;
  }
  scheduleTheory();
  await newRun({ live: true });
}
