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
/** The package's limit on maxTokens: past the models' context the window slides, so it holds whatever the prompt. */
export const MAX_TOKENS = 4096;

/** Typed text as a message quotes it: at most `n` characters. */
const quoted = (text, n = 40) => {
  const chars = [...String(text)];
  return `"${chars.length > n ? `${chars.slice(0, n).join("")}…" (${chars.length} characters)` : `${chars.join("")}"`}`;
};

export function parseTree(text) {
  const parts = String(text).split(/[\s,×x*·]+/).filter(Boolean).map(Number);
  if (parts.length === 0 || parts.some((n) => !Number.isInteger(n) || n < 1 || n > 8)) {
    throw new Error(`tree branching must be whole numbers 1–8 separated by commas, e.g. 2,2,1 — got ${quoted(text)}`);
  }
  if (parts.length > 16) throw new Error(`a tree may be at most 16 deep; ${quoted(text)} has ${parts.length} levels`);
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
    seed: whole("seed"),
    maxTokens: whole("maxtokens"),
    dynamicGamma: $("dynamic").checked,
  };
}

/**
 * A typed whole number: the number field's text read exactly (so "4503599627370496.5" is
 * not taken for 4503599627370496, as Number() would round it), NaN when the text is not a
 * whole number, ±Infinity when it is one beyond ±2^53.
 */
export function whole(id) {
  const raw = $(id).value.trim();
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(raw);
  if (!m || (m[2] + (m[3] ?? "")) === "") return NaN;
  const [, sign, int, frac = ""] = m;
  const exp = Number(m[4] ?? 0) - frac.length;
  let digits = (int + frac).replace(/^0+/, "");
  if (digits === "") return 0; // "-0" too
  if (exp < 0) {
    if (!/^0+$/.test(digits.slice(exp))) return NaN; // a fraction
    digits = digits.slice(0, exp).replace(/^0+/, "");
    if (digits === "") return 0;
  } else if (digits.length + exp > 17) return sign === "-" ? -Infinity : Infinity;
  else digits += "0".repeat(exp);
  const n = BigInt(digits);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) return sign === "-" ? -Infinity : Infinity;
  return sign === "-" ? -Number(n) : Number(n);
}

/** What a number field holds, as a message quotes it. */
function typed(id) {
  const el = $(id);
  // A number field whose text is not a number reads as "" (validity.badInput says so).
  if (el.validity?.badInput) return "text the browser cannot read as a number";
  const raw = el.value.trim();
  if (raw === "") return "nothing";
  const chars = [...raw.replace(/^-/, "−")];
  return chars.length > 40 ? `${chars.slice(0, 40).join("")}… (${chars.length} characters)` : chars.join("");
}

/** A character as a message names it: visible ones quoted, the others by name; always its code point. */
export function charName(c) {
  const code = `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
  const names = { "\t": "a tab", "\r": "a carriage return", "\0": "a NUL", "\u00a0": "a no-break space", "\u200b": "a zero-width space", "\ufeff": "a byte-order mark" };
  if (names[c]) return `${names[c]} (${code})`;
  if (/\p{M}/u.test(c)) return `'◌${c}' (${code}, a combining mark)`;
  if (/[\p{C}\p{Z}]/u.test(c)) return `an invisible character (${code})`;
  return `'${c}' (${code})`;
}

function promptProblem(prompt) {
  if (prompt.length === 0) return { code: "invalid_option", message: "The prompt is empty: type at least one character." };
  if (!S.alphabet) return null;
  // Each character outside the alphabet: where it first is (1-based, in characters; line
  // and column too) and how often.
  const seen = new Map();
  let line = 1;
  let column = 0;
  let position = 0;
  for (const c of prompt) {
    position += 1;
    column += 1;
    if (!S.alphabet.includes(c)) {
      const at = seen.get(c);
      if (at) at.times += 1;
      else seen.set(c, { position, line, column, times: 1 });
    }
    if (c === "\n") {
      line += 1;
      column = 0;
    }
  }
  if (seen.size === 0) return null;
  const where = ({ position, line, column, times }) =>
    `at character ${position}${line === 1 ? "" : ` (line ${line}, column ${column})`}${times > 1 ? ` (and ${times - 1} more time${times === 2 ? "" : "s"})` : ""}`;
  const listed = [...seen].slice(0, 5);
  const shown = listed.map(([c, at]) => `${charName(c)} ${where(at)}`).join(", ");
  const others = [...seen].slice(5).reduce((n, [, at]) => n + at.times, 0);
  const more = others > 0 ? ` and ${others} more character${others === 1 ? "" : "s"} outside the alphabet` : "";
  return {
    code: "bad_prompt",
    message: `The prompt contains ${shown}${more}, which the models never saw. They know only the letters a–z, A–Z, the digit 3, space, newline and ${[...S.alphabet].filter((c) => !/[a-zA-Z3 \n]/.test(c)).join(" ")}.`,
  };
}

/**
 * The first problem with the settings on screen: { field, code, message } or null. `code` is
 * the one the package's generate() gives the same input ("bad_prompt", "invalid_option").
 */
export function problem(s = settings()) {
  const p = promptProblem(s.prompt);
  if (p) return { field: "prompt", ...p };
  if (!Number.isInteger(s.maxTokens) || s.maxTokens < 1 || s.maxTokens > MAX_TOKENS) {
    return {
      field: "maxtokens",
      code: "invalid_option",
      message: `tokens must be a whole number from 1 to ${MAX_TOKENS}; got ${typed("maxtokens")}. Nothing was run.`,
    };
  }
  if (!Number.isInteger(s.seed) || s.seed < 0 || s.seed > SEED_MAX) {
    return { field: "seed", code: "invalid_option", message: `seed must be a whole number from 0 to ${SEED_MAX}; got ${typed("seed")}. Nothing was run.` };
  }
  if (s.method === "spectr-tree") {
    try {
      parseTree(s.tree);
    } catch (error) {
      return { field: "tree", code: "invalid_option", message: error.message };
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
export function showError(text, field = null, code = null) {
  hook.error = text || null;
  hook.errorField = (text && field) || null;
  hook.errorCode = (text && code) || null;
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

/**
 * The settings in the page's address (?method=…&gamma=…). A value a control cannot take (out
 * of its range, off its steps, not a number, not a method) is never changed silently: a
 * notice says what the link asked for and what the control holds instead.
 */
export function applyParams() {
  const changed = [];
  const LABELS = { gamma: "γ", k: "k", D: "D", temperature: "temperature", topk: "top-k", topp: "top-p", seed: "seed", tokens: "tokens", method: "method", speed: "speed" };
  const tell = (key, given, why, now) => changed.push(`${key}=${[...given].length > 20 ? `${[...given].slice(0, 20).join("")}…` : given} ${why}; ${LABELS[key]} is ${now}`);
  const set = (id, key) => {
    if (!params.has(key)) return;
    const given = params.get(key);
    const el = $(id);
    const before = el.value;
    el.value = given;
    if (el.tagName === "SELECT") {
      if (el.value !== given) {
        el.value = before;
        tell(key, given, `is not one of ${[...el.options].map((o) => o.value).join(", ")}`, before);
      }
    } else if (el.type === "range") {
      if (given.trim() === "" || Number(el.value) !== Number(given)) {
        const range = `${el.min}–${el.max} in steps of ${el.step}`;
        tell(key, given, Number.isFinite(Number(given)) && given.trim() !== "" ? `is not on the slider (${range})` : `is not a finite number (the slider goes ${range})`, el.value);
      }
    } else if (el.type === "number" && el.value !== given) {
      tell(key, given, "is not a finite number", "empty");
    }
  };
  set("method", "method");
  set("gamma", "gamma");
  set("drafts", "k");
  set("tree", "tree");
  if (params.has("D")) {
    const given = params.get("D");
    const d = given.trim() === "" ? NaN : Number(given);
    $("kl").value = String(sliderFromKl(d));
    const now = roundKl(klFromSlider($("kl").value));
    if (now !== d) tell("D", given, !Number.isFinite(d) ? "is not a finite number" : "is not on the slider (0, then 0.001 to 5 on a log scale)", now);
  }
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
    else tell("speed", sp, `is not one of ${SPEEDS.map((v) => (Number.isFinite(v) ? v : "instant")).join(", ")}`, `${SPEEDS[Number($("speed").value)]}×`);
  }
  if (params.get("dynamic") === "1") $("dynamic").checked = true;
  if (changed.length) notice("params", `This page's address asks for settings the controls cannot take: ${changed.join("; ")}.`);
}
