// The settings panel: reading and validating the controls (a value out of range is refused
// with a message naming the field and its range, never silently changed), the generate
// options they make, the outputs beside the sliders, messages, and the URL parameters.
import { SPEEDS } from "./anim.js";
import { $, S, hook, params } from "./state.js";
import { describeMethod } from "./glossary.js";

const KL_MIN = -3;
const KL_MAX = Math.log10(5);
export function klFromSlider(v) {
  const s = Number(v);
  if (s <= 0) return 0;
  return 10 ** (KL_MIN + ((s - 1) / 59) * (KL_MAX - KL_MIN));
}
export function sliderFromKl(d) {
  if (!(d > 0)) return 0;
  return Math.round(1 + ((Math.log10(d) - KL_MIN) / (KL_MAX - KL_MIN)) * 59);
}
const roundKl = (d) => (d === 0 ? 0 : Number(d.toPrecision(2)));

export const MULTI_DRAFT = ["spectr", "spectr-otm", "multiround", "spectr-tree"];
export const SEED_MAX = Number.MAX_SAFE_INTEGER;

export function parseTree(text) {
  const parts = String(text).split(/[\s,×x*·]+/).filter(Boolean).map(Number);
  if (parts.length === 0 || parts.some((n) => !Number.isInteger(n) || n < 1 || n > 8)) {
    throw new Error(`tree branching must be whole numbers 1–8 separated by commas, e.g. 2,2,1 — got "${text}"`);
  }
  if (parts.length > 16) throw new Error("a tree may be at most 16 deep");
  const leaves = parts.reduce((a, b) => a * b, 1);
  if (leaves > 64) throw new Error(`a tree may have at most 64 leaves; ${parts.join("·")} has ${leaves}`);
  return parts;
}

/** The settings on screen, as typed (numbers are not clamped: see problems()). */
export function settings() {
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
    seed: $("seed").value.trim() === "" ? NaN : Number($("seed").value),
    maxTokens: $("maxtokens").value.trim() === "" ? NaN : Number($("maxtokens").value),
    dynamicGamma: $("dynamic").checked,
  };
}

/** The most characters a run may generate after this prompt (the models' context). */
export const maxTokensFor = (prompt) => Math.max(0, S.context - [...prompt].length);

function promptProblem(prompt) {
  if (prompt.length === 0) return "The prompt is empty: type at least one character.";
  if ([...prompt].length >= S.context) return `The prompt is ${[...prompt].length} characters; the models' context is ${S.context}, so it may have at most ${S.context - 1}.`;
  if (!S.alphabet) return null;
  const bad = [...new Set([...prompt].filter((c) => !S.alphabet.includes(c)))];
  if (bad.length === 0) return null;
  const shown = bad.slice(0, 5).map((c) => `'${c}' (U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")})`).join(", ");
  return `The prompt contains ${shown}, which the models never saw. They know only the letters a–z, A–Z, the digit 3, space, newline and ${[...S.alphabet].filter((c) => !/[a-zA-Z3 \n]/.test(c)).join(" ")}.`;
}

const shownValue = (v) => (Number.isNaN(v) ? "nothing" : String(v).replace("-", "−"));

/** The first problem with the settings: { field, message } or null. */
export function problem(s = settings()) {
  const p = promptProblem(s.prompt);
  if (p) return { field: "prompt", message: p };
  const most = maxTokensFor(s.prompt);
  if (!Number.isInteger(s.maxTokens) || s.maxTokens < 1 || s.maxTokens > most) {
    return {
      field: "maxtokens",
      message: `tokens must be a whole number from 1 to ${most} (the models' context of ${S.context} characters minus the ${[...s.prompt].length}-character prompt); got ${shownValue(s.maxTokens)}. Nothing was run.`,
    };
  }
  if (!Number.isInteger(s.seed) || s.seed < 0 || s.seed > SEED_MAX) {
    return { field: "seed", message: `seed must be a whole number from 0 to ${SEED_MAX}; got ${shownValue(s.seed)}. Nothing was run.` };
  }
  if (s.method === "spectr-tree") {
    try {
      parseTree(s.tree);
    } catch (error) {
      return { field: "tree", message: error.message };
    }
  }
  return null;
}

/** The generate options for valid settings `s`. */
export function generateOptions(s) {
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
export function adapt(options) {
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

export function notice(key, text) {
  S.notices.add(text);
  hook.notices = [...S.notices];
  const n = $("notice");
  n.textContent = [...S.notices].join(" ");
  n.title = n.textContent;
  n.hidden = false;
}

/**
 * Shows an error in the banner under the transport bar (it overlays the stage, so nothing
 * moves when it appears or goes) and marks the field it is about.
 */
export function showError(text, field = null) {
  hook.error = text || null;
  const e = $("error");
  e.textContent = text;
  e.hidden = !text;
  for (const el of document.querySelectorAll("[aria-invalid='true']")) el.removeAttribute("aria-invalid");
  if (text && field) $(field)?.setAttribute("aria-invalid", "true");
}

const ACTIVE = {
  gamma: ["speculative", "spectr", "spectr-otm", "multiround", "mentored"],
  drafts: ["spectr", "spectr-otm", "multiround"],
  tree: ["spectr-tree"],
  kl: ["mentored"],
  dynamic: ["speculative", "mentored"],
};

/** The outputs beside the sliders, the tokens limit, and which controls apply. */
export function syncOutputs() {
  const s = settings();
  $("gamma-out").textContent = String(s.gamma);
  $("drafts-out").textContent = String(s.drafts);
  $("kl-out").textContent = s.kl === 0 ? "0" : String(s.kl);
  $("temperature-out").textContent = s.temperature === 0 ? "0 (greedy)" : s.temperature.toFixed(2);
  $("topk-out").textContent = s.topK > 0 ? String(s.topK) : "off";
  $("topp-out").textContent = s.topP < 1 ? s.topP.toFixed(2) : "1 (off)";
  const speed = SPEEDS[Number($("speed").value)];
  $("speed-out").textContent = Number.isFinite(speed) ? `${speed}×` : "instant";
  const most = maxTokensFor(s.prompt);
  $("maxtokens").max = String(most);
  $("maxtokens-range").textContent = `1–${most}`;
  for (const [key, methods] of Object.entries(ACTIVE)) {
    const on = methods.includes(s.method);
    const field = document.querySelector(`[data-for="${key}"]`);
    field.classList.toggle("inactive", !on);
    // Controls that do not apply are disabled: not focusable, and they cannot start runs.
    for (const input of field.querySelectorAll("input, select, textarea")) input.disabled = !on;
  }
  $("fig-kl").hidden = s.method !== "mentored";
  $("fig-k").hidden = !MULTI_DRAFT.includes(s.method);
  if ($("method-help").dataset.method !== s.method) describeMethod(s.method);
  const bits = [$("method").selectedOptions[0]?.textContent ?? s.method];
  if (ACTIVE.gamma.includes(s.method)) bits.push(`γ ${s.gamma}`);
  if (ACTIVE.drafts.includes(s.method)) bits.push(`k ${s.drafts}`);
  if (s.method === "spectr-tree") bits.push(`tree ${s.tree}`);
  if (s.method === "mentored") bits.push(`D ${s.kl}`);
  bits.push(`T ${s.temperature}`, `seed ${$("seed").value}`, `${$("maxtokens").value} tokens`);
  $("settings-summary").textContent = bits.join(" · ");
}

export function applyParams() {
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
