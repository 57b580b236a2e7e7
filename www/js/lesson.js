// The guided lesson: a non-modal dialog (a bottom sheet, so the stage and the controls it
// talks about stay in view) that walks through one round of speculative decoding step by
// step. Each step sets the page's controls and drives the real transport (run.js), then
// explains what the models did in the round on the stage, with that round's numbers
// (lesson-steps.js), and marks the element it describes. Keyboard: ←/→ between steps,
// Esc closes and gives the focus back to whatever opened the lesson. The student's
// settings are kept: each step and question sets its controls over them (never over what
// another step left), and closing the lesson puts them back.
import { $, S, hook, h, params } from "./state.js";
import { player } from "./player.js";
import { pause, step, settingChanged, showRoundStatic, canRun } from "./run.js";
import { selectToken, follow } from "./view.js";
import { syncOutputs, sliderFromKl } from "./settings.js";
import { showChar } from "./anim.js";
import { STEPS } from "./lesson-steps.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let panel = null;
let opener = null;
let current = -1; // the step on screen (index into STEPS)
let wanted = -1; // the step asked for last (navigation may outrun rendering)
let rendering = false;
let spotted = null;

/** The controls a step or question may set, and the student's values of them (as the controls hold them) while the lesson is open. */
const LESSON_CONTROLS = ["method", "shape", "selection", "gamma", "drafts", "kl", "temperature", "dynamicGamma", "parallelDraft", "bug"];
let saved = null;
const valueOf = (id) => ($(id).type === "checkbox" ? $(id).checked : $(id).value);
const snapshot = () => Object.fromEntries(LESSON_CONTROLS.map((id) => [id, valueOf(id)]));

// ---------- driving the page ----------

/** Waits until no transport action or animation is under way; a playing run is paused. */
async function settle() {
  if (player.playing) pause();
  await player.pendingChange;
  for (;;) {
    // A round half animated is finished at once (as the Step button does).
    if (player.animating && player.pacer) {
      player.pacer.paused = false;
      player.pacer.skip = true;
      player.pacer.wake();
    }
    if (!player.animating && !player.looping && hook.queued === 0) return;
    await sleep(20);
  }
}

/** Gives the controls `values` (by id, as the controls hold them) and, when any changed, starts one new run. */
async function apply(values) {
  await settle();
  let changed = false;
  for (const [id, v] of Object.entries(values)) {
    const el = $(id);
    if (valueOf(id) === v) continue;
    if (el.type === "checkbox") el.checked = v;
    else el.value = v;
    changed = true;
  }
  if (!changed) return false;
  // Controls inside the folded settings (phones) show their new values in its summary.
  syncOutputs();
  settingChanged();
  await settle();
  return true;
}

/**
 * Sets controls by id as a student would ({ method: "spectr", kl: 0.1 }: kl in nats) over
 * the student's own settings: every other control the lesson sets goes back to the
 * student's value. When any changed, starts one new run. Returns whether anything changed.
 */
async function setControls(values) {
  const wanted = { ...(saved ?? snapshot()) };
  for (const [id, value] of Object.entries(values)) {
    wanted[id] = id === "kl" ? String(sliderFromKl(value)) : typeof value === "boolean" ? value : String(value);
  }
  return apply(wanted);
}

/** Waits for the bundled models (a step that needs a live run of another method). */
async function live(status) {
  if (!canRun()) {
    status("waiting for the models to load…");
    while (!canRun()) await sleep(100);
  }
  if (S.run?.source !== "live") {
    settingChanged();
    await settle();
  }
}

/** Plays one round through the transport (fast: no animation) and waits for it. */
async function stepRound({ fast = false } = {}) {
  await settle();
  if (S.picked) follow();
  if (fast && player.pacer) player.pacer.skip = true;
  await step();
  await settle();
}

/** The round on the stage ({ index, trace }), drawn whole; stepping to the first one when there is none. */
async function round() {
  await settle();
  if (!player.stage || player.stage.index >= hook.shownRounds.length) await stepRound();
  else if (player.stage.until) await showRoundStatic(player.stage.index);
  return player.stage && { index: player.stage.index, trace: hook.shownRounds[player.stage.index] ?? player.stage.trace };
}

/**
 * A round for which `pred(trace)` holds: the one on the stage, else the latest shown
 * (put back on the stage), else the next ones of the run, stepped through quickly.
 * Null when the run ends without one.
 */
async function findRound(pred, status, max = 60) {
  const on = await round();
  if (on && pred(on.trace)) return on;
  for (let i = hook.shownRounds.length - 1; i >= 0; i--) {
    if (pred(hook.shownRounds[i])) {
      await showRoundStatic(i);
      return { index: i, trace: hook.shownRounds[i] };
    }
  }
  for (let n = 0; n < max && !hook.finished; n++) {
    status(`stepping through round ${hook.shownRounds.length + 1}…`);
    await stepRound({ fast: true });
    const r = player.stage;
    if (r && pred(hook.shownRounds[r.index])) return { index: r.index, trace: hook.shownRounds[r.index] };
  }
  return null;
}

/** Puts character `position` (1-based) of round `index` in the distributions panel. */
function pick(index, position) {
  const i = S.tokens.findIndex((t) => t.round === index && t.index === position - 1);
  if (i >= 0) selectToken(i);
}

/** Marks the element a step describes and scrolls it into the space the sheet leaves. */
function spot(el) {
  if (spotted) spotted.classList.remove("lesson-spot");
  spotted = el ?? null;
  if (!el) return;
  // A control inside the folded settings (phones): unfold them, so it can be seen.
  const box = el.closest("details");
  if (box && !box.open) box.open = true;
  el.classList.add("lesson-spot");
  const bar = document.querySelector(".transport").getBoundingClientRect();
  const top = bar.height + 8; // under the sticky transport bar
  const bottom = panel.getBoundingClientRect().top - 8;
  const r = el.getBoundingClientRect();
  const seen = Math.min(r.height, bottom - top);
  if (r.top >= top && r.top + seen <= bottom) return;
  // The element's panel from its heading when that still shows the element, else the element.
  const p = el.closest(".panel")?.getBoundingClientRect();
  const from = p && r.top + seen - p.top <= bottom - top ? p.top : r.top;
  window.scrollBy({ top: from - top, behavior: "instant" });
}

/** What a step's show() gets: the page, driven as a student would drive it. */
function context(status) {
  return {
    setControls,
    live: () => live(status),
    round,
    findRound: (pred, max) => findRound(pred, status, max),
    // The student's own value of a control the lesson sets (as the control holds it).
    own: (id) => (saved ?? snapshot())[id],
    // Round `index` on the stage up to a phase ("drafts", "verify"), as the step tells it.
    upTo: (index, until) => showRoundStatic(index, until),
    stepRound,
    pick,
    spot,
    ch: (t) => showChar(S.alphabet?.[t] ?? "?"),
    status,
  };
}

// ---------- the panel ----------

function build() {
  panel = h("section", "lesson");
  panel.id = "lesson";
  panel.hidden = true;
  panel.setAttribute("role", "dialog");
  panel.setAttribute("aria-modal", "false");
  panel.setAttribute("aria-labelledby", "lesson-title");
  const head = h("div", "lesson-head");
  const count = h("span", "lesson-count");
  count.id = "lesson-count";
  const close = h("button", "lesson-close", "Close");
  close.type = "button";
  close.id = "lesson-close";
  close.setAttribute("aria-label", "Close the lesson (Esc)");
  head.append(count, close);
  const title = h("h2", "lesson-title");
  title.id = "lesson-title";
  title.tabIndex = -1;
  const body = h("div", "lesson-body");
  body.id = "lesson-body";
  body.setAttribute("aria-live", "polite");
  const nav = h("div", "lesson-nav");
  const back = h("button", "", "← Back");
  back.type = "button";
  back.id = "lesson-back";
  const next = h("button", "primary", "Next →");
  next.type = "button";
  next.id = "lesson-next";
  const hint = h("small", "muted lesson-keys", "← → move, Esc closes");
  nav.append(back, hint, next);
  panel.append(head, title, body, nav);
  document.body.append(panel);
  close.addEventListener("click", closeLesson);
  back.addEventListener("click", () => go(wanted - 1));
  next.addEventListener("click", () => go(wanted + 1));
  panel.addEventListener("keydown", onKey);
}

function onKey(e) {
  if (e.key === "Escape") {
    e.preventDefault();
    closeLesson();
    return;
  }
  // Arrows keep their meaning inside form controls (sliders, menus) and the answers.
  if (e.target.closest("input, select, textarea") || e.altKey || e.ctrlKey || e.metaKey) return;
  if (e.key === "ArrowRight") go(wanted + 1);
  else if (e.key === "ArrowLeft") go(wanted - 1);
  else return;
  e.preventDefault();
}

/** Shows step i: its heading at once (focused), its body once the page has been driven. */
function go(i) {
  if (i < 0 || i >= STEPS.length || !panel || panel.hidden) return;
  wanted = i;
  const s = STEPS[i];
  panel.dataset.step = String(i + 1);
  panel.dataset.stepId = s.id;
  panel.dataset.state = "busy";
  $("lesson-count").textContent = `${i + 1} / ${STEPS.length}`;
  $("lesson-title").textContent = s.title;
  $("lesson-back").disabled = i === 0;
  $("lesson-next").disabled = i === STEPS.length - 1;
  $("lesson-title").focus();
  render();
}

/** Renders the step asked for last; a step asked for meanwhile is rendered after it. */
async function render() {
  if (rendering) return;
  rendering = true;
  try {
    while (current !== wanted && panel && !panel.hidden) {
      const i = wanted;
      const body = $("lesson-body");
      const line = h("p", "lesson-status muted", "…");
      body.replaceChildren(line);
      const status = (text) => (line.textContent = text);
      let out = null;
      try {
        out = await STEPS[i].show(context(status));
      } catch (error) {
        console.error(error);
        out = { body: h("p", "error", `This step could not be shown: ${error.message}`) };
      }
      if (wanted !== i || panel.hidden) continue;
      current = i;
      body.replaceChildren(out.body);
      spot(out.spot ?? null);
      panel.dataset.state = "ready";
    }
  } finally {
    rendering = false;
  }
}

/** Opens the lesson at step `i` (0-based); the focus comes back to `from` on close. */
export function openLesson(i = 0, from = document.activeElement) {
  opener = from && from !== document.body ? from : $("lesson-open");
  saved = snapshot();
  panel.hidden = false;
  document.documentElement.classList.add("lesson-open");
  $("lesson-open").setAttribute("aria-expanded", "true");
  current = -1;
  go(Math.max(0, Math.min(STEPS.length - 1, i)));
}

export function closeLesson() {
  if (!panel || panel.hidden) return;
  panel.hidden = true;
  wanted = -1;
  current = -1;
  spot(null);
  document.documentElement.classList.remove("lesson-open");
  $("lesson-open").setAttribute("aria-expanded", "false");
  (opener?.isConnected ? opener : $("lesson-open")).focus();
  // The student's settings back, as they were before the lesson (or as they set them since).
  const back = saved;
  saved = null;
  if (back) restoring = apply(back);
}

/** The restore of the student's settings after the lesson closed (tests wait on it). */
let restoring = Promise.resolve();
hook.lessonRestored = () => restoring.then(() => true);

/** Wires the Lesson button; ?lesson=1 (or ?lesson=N, a step) opens the lesson once the page is ready. */
export function initLesson() {
  const button = $("lesson-open");
  build();
  button.setAttribute("aria-controls", "lesson");
  // A control the student changes while the lesson is open is theirs: it stays so on close.
  document.addEventListener("change", (e) => {
    const id = e.target?.id;
    if (saved && e.isTrusted && LESSON_CONTROLS.includes(id)) saved[id] = valueOf(id);
  });
  button.setAttribute("aria-expanded", "false");
  button.addEventListener("click", () => (panel && !panel.hidden ? closeLesson() : openLesson(0, button)));
  const n = Number(params.get("lesson"));
  if (!Number.isInteger(n) || n < 1) return;
  // After the first paint is decided (main.js), so the lesson drives the run that plays.
  (async () => {
    while (!hook.ready) await sleep(50);
    openLesson(n - 1, button);
  })();
}
