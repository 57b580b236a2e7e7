// The teaching page: settings → one generation in the package's worker → rounds animated
// from the engine's trace, with distributions, metrics, theory curves and a race.
// This module loads the models and wires the controls; see settings.js (inputs), run.js
// (runs and transport, with player.js), stage-model.js (what the stage shows of a round, a
// pure function of its trace), anim.js / stage-view.js / tree.js / residual-view.js (drawing
// and pacing it), view.js (output, distributions, metrics), theory.js (with math.js: the
// package's closed forms), race.js, glossary.js and lesson.js (the guided lesson); gguf.js
// loads the student's own GGUF pair, smollm2-pair.js the SmolLM2 pair in one click.
// Test hook: window.__speculaPage (see tests/www/).
import { $, S, hook, params } from "./state.js";
import { player } from "./player.js";
import { initGlossary } from "./glossary.js";
import { applyLimits, applyParams, syncOutputs, notice, showError } from "./settings.js";
import { newRun, play, step, pause, reset, settingChanged, setRunState, enqueue, handOver } from "./run.js";
import { renderMetrics, selectToken, follow, onOutputKey } from "./view.js";
import { scheduleTheory } from "./theory.js";
import { race } from "./race.js";
import { replayRace } from "./race-replay.js";
import { wireLab } from "./lab.js";
import { initLesson } from "./lesson.js";
import { loadGguf, wireModels } from "./gguf.js";
import { wirePreset } from "./smollm2-pair.js";

function showBackend(info) {
  const b = $("backend");
  b.dataset.backend = info.backend;
  const draft = info.backend === "webgpu" && info.draftBackend === "cpu" ? " · draft on the CPU" : "";
  // The target's dense layers on one worker or two (load option threads), and why one.
  const workers = info.threads === 2 ? " · 2 workers" : info.threadsReason ? " · 1 worker" : "";
  b.textContent = info.backend === "webgpu" ? `WebGPU · ${info.adapter ?? "adapter"}${info.isFallbackAdapter ? " (software, slow)" : ""}${draft}` : `CPU · WebAssembly${workers}`;
  b.title = info.backend === "webgpu" ? "" : info.threadsReason ? `One worker: ${info.threadsReason}` : "";
  if (info.backend !== "webgpu") {
    const why = !("gpu" in navigator) ? "this browser has no WebGPU" : info.reason ?? (info.requested === "cpu" ? "the CPU was asked for" : "no WebGPU adapter");
    notice("backend", `On the CPU, not WebGPU: ${why}.`);
  }
}

async function loadModels() {
  const backend = ["auto", "cpu", "webgpu"].includes(params.get("backend")) ? params.get("backend") : "auto";
  // ?draft=cpu keeps the small draft model on the CPU beside a WebGPU target (faster there).
  const draftBackend = params.get("draft") === "cpu" ? "cpu" : "same";
  const progress = $("progress");
  try {
    S.pkg ??= await import("../specula/index.js");
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
    if (S.run?.models !== "ngram" && S.run?.models !== "gguf") {
      S.alphabet = S.specula.alphabet;
      hook.alphabet = S.alphabet;
    }
    S.backend = S.specula.backend;
    hook.backend = S.backend;
    progress.textContent = "models ready";
    showBackend(S.backend);
    hook.loaded = true;
    // For the first-load benchmark (scripts/bench-first-load.mjs): navigation → models ready.
    performance.mark("specula:ready");
    $("race").disabled = false;
    if (S.run?.source === "recorded" && hook.finished) setRunState("recorded run finished — press Play or Reset to run the models live");
    else if (S.run?.source === "recorded") handOver();
    scheduleTheory();
  } catch (error) {
    progress.textContent = "";
    $("backend").textContent = "models unavailable";
    showError(`Could not load the models: ${error.message}. The recorded run still plays.`);
  }
}

/** Wires the controls; true when the address asks to load a GGUF pair (?target=…&draft=…). */
function wire() {
  // First: its listener on the Models menu may stop the others (gguf.js).
  const ggufFromAddress = wireModels();
  wirePreset();
  for (const id of ["source", "method", "shape", "selection", "gamma", "drafts", "kl", "temperature", "topK", "topP", "seed", "maxTokens", "dynamicGamma", "parallelDraft", "tree", "bug", "epsilon", "delta", "ngram"]) {
    const el = $(id);
    el.addEventListener("input", syncOutputs);
    el.addEventListener("change", settingChanged);
  }
  // While a slider moves, the theory charts are recomputed from the cached distributions
  // (no model runs); the models run again once it is released ("change").
  for (const id of ["kl", "epsilon", "delta", "drafts", "gamma", "temperature", "topK", "topP"]) $(id).addEventListener("input", scheduleTheory);
  $("prompt").addEventListener("input", syncOutputs);
  $("prompt").addEventListener("change", settingChanged);
  $("speed").addEventListener("input", () => {
    syncOutputs();
    player.pacer?.wake();
  });
  $("example").addEventListener("change", () => {
    const v = $("example").value;
    if (!v) return;
    $("prompt").value = v;
    syncOutputs();
    settingChanged();
  });
  $("play").addEventListener("click", play);
  $("step").addEventListener("click", step);
  $("pause").addEventListener("click", pause);
  $("reset").addEventListener("click", reset);
  $("race").addEventListener("click", race);
  $("race-replay").addEventListener("click", replayRace);
  wireLab();
  $("dist-follow").addEventListener("click", follow);
  $("output").addEventListener("click", (e) => {
    const span = e.target.closest(".otok");
    if (span) selectToken(Number(span.dataset.i));
  });
  $("output").addEventListener("keydown", onOutputKey);
  // Phones: the settings start folded (their summary line stays), so the stage is in view;
  // they fold too when the window narrows to a phone's width.
  const phone = window.matchMedia("(max-width: 700px)");
  if (phone.matches && !params.has("settings")) $("settings-box").open = false;
  phone.addEventListener("change", (e) => {
    if (e.matches) $("settings-box").open = false;
  });
  return ggufFromAddress;
}

async function main() {
  // The package first (its module only: no worker yet), for its limits and defaults on the
  // controls; when it cannot be imported, loadModels says so and the recorded run plays.
  try {
    S.pkg = await import("../specula/index.js");
  } catch {
    S.pkg = null;
  }
  applyLimits(S.pkg?.LIMITS, S.pkg?.BUGS);
  applyParams();
  initGlossary();
  syncOutputs();
  const ggufFromAddress = wire();
  initLesson();
  $("race").disabled = true;
  renderMetrics();
  const loading = loadModels();
  // Beside the bundled pair, which stays loaded (the recorded run plays meanwhile).
  if (ggufFromAddress) loadGguf();
  try {
    S.recorded = await (await fetch("recorded-trace.json")).json();
    S.alphabet ??= S.recorded.alphabet;
  } catch {
    S.recorded = null;
  }
  if (S.recorded && params.get("autoplay") !== "0" && !S.specula && $("source").value !== "ngram") {
    await enqueue(() => newRun({ live: false }));
    play();
  }
  // Ready once the first paint is decided (the recorded run started, or none).
  hook.ready = true;
  await loading;
  await enqueue(async () => {
    if (!S.run || (S.run.source === "recorded" && $("source").value === "ngram")) await newRun({ live: true });
  });
}

main();
