// The settings panel: reading the controls, the generate options they make (only those
// the method uses), why they will not run (the package checks every option and names it:
// checked), the outputs beside the sliders, messages, and the URL parameters. A value out
// of range is refused, never silently changed.
import { SPEEDS } from "./anim.js";
import { $, S, hook, params } from "./state.js";
import { describeMethod } from "./glossary.js";
import { bugSentence, plantedBug } from "./bugs.js";
import { chat } from "./chat.js";

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


/** Typed text as a message quotes it: at most `n` characters. */
const quoted = (text, n = 40) => {
  const chars = [...String(text)];
  return `"${chars.length > n ? `${chars.slice(0, n).join("")}…" (${chars.length} characters)` : `${chars.join("")}"`}`;
};

/** A number as typed: optional sign, digits with an optional point, an optional exponent. */
const NUMBER = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;

/**
 * The tree field's text as the branching per depth (numbers separated by commas, spaces,
 * × or ·). Only the syntax is the page's to check: the numbers go to the package, which
 * says what is wrong with them (and names the depth: field "tree[1]").
 */
export function parseTree(text) {
  // Commas (or ×, ·) separate; spaces around them, or alone between numbers, too. Two
  // separators with nothing between them leave an empty depth, which is refused, not dropped.
  // No text is no depth at all: the package says what a tree needs.
  if (String(text).trim() === "") return [];
  const parts = String(text).trim().split(/\s*[,×x*·]\s*|\s+/);
  if (parts.some((p) => p !== "" && (!NUMBER.test(p) || !/\d/.test(p)))) {
    throw new Error(`tree branching must be numbers separated by commas, e.g. 2,2,1 — got ${quoted(text)}`);
  }
  const empty = parts.indexOf("");
  if (empty >= 0) {
    throw new Error(`tree branching has no number at depth ${empty + 1} (two commas in a row, or one at an end): give one number per depth, e.g. 2,2,1 — got ${quoted(text)}`);
  }
  // Each depth as typed: "2.0000000000000001" would reach the package as 2.
  return parts.map((p, i) => {
    const value = Number(p);
    if (!sameNumber(p, String(value))) {
      throw new Error(`tree branching at depth ${i + 1} is ${quoted(p)}, which a JavaScript number cannot hold exactly: it would be read as ${value}`);
    }
    return value;
  });
}

/**
 * Each option, as the package names it in an error's `field` ("tree[1]" is the tree's),
 * with that control's name on the page. The control of a generate option has the
 * option's own id (`topK`, `maxTokens`, `dynamicGamma`); only the page's own fields and
 * load()'s options (PAGE_CONTROLS) have ids of another name.
 */
const LABELS = {
  prompt: "the prompt",
  method: "the method",
  selection: "the selection",
  gamma: "γ",
  drafts: "k",
  tree: "the tree",
  dynamicGamma: "dynamic γ",
  parallelDraft: "draft in parallel",
  kl: "D",
  epsilon: "ε",
  delta: "δ",
  ngram: "n",
  bug: "the bug",
  temperature: "temperature",
  topK: "top-k",
  topP: "top-p",
  seed: "seed",
  maxTokens: "tokens",
  repeats: "repeats",
  target: "the target model",
  "target.url": "the target model's URL",
  draft: "the draft model",
  "draft.url": "the draft model's URL",
};
/** The fields whose control is not named by the field: the race's repeats and load()'s options ("Your models", gguf.js). */
const PAGE_CONTROLS = {
  repeats: "race-repeats",
  target: "gguf-target-url",
  "target.url": "gguf-target-url",
  draft: "gguf-draft-url",
  "draft.url": "gguf-draft-url",
};
/** The control an error's `field` is about, and its name: { id, label } or null. */
export function controlOf(field) {
  const name = String(field ?? "").replace(/\[\d+\]$/, "");
  if (!Object.hasOwn(LABELS, name)) return null;
  return { id: PAGE_CONTROLS[name] ?? name, label: LABELS[name] };
}

/**
 * The package's limits and defaults on the controls (`LIMITS` of the package): the number
 * fields take the package's whole range, the sliders keep their teaching range within it,
 * and γ and k start at the package's defaults. Temperature, seed and tokens start where
 * the recorded run was made (www/recorded-trace.json), which plays before the models load.
 */
export function applyLimits(L, bugs) {
  // The bugs the engine can plant, each with what it gets wrong (the package's BUGS).
  for (const bug of bugs ?? []) {
    const option = new Option(bug.name, bug.name);
    option.title = bug.description;
    $("bug").append(option);
  }
  if (!L) return;
  const cap = (id, max) => {
    const el = $(id);
    el.max = String(Math.min(Number(el.max), max));
  };
  cap("gamma", L.maxGamma);
  cap("drafts", L.maxDrafts);
  cap("temperature", L.maxTemperature);
  cap("topK", L.maxTopK);
  cap("ngram", L.maxNgram);
  cap("delta", L.maxTypicalDelta);
  $("epsilon").value = String(L.defaultTypicalEpsilon);
  $("delta").value = String(L.defaultTypicalDelta);
  $("ngram").value = String(L.defaultNgram);
  $("gamma").value = String(L.defaultGamma);
  $("drafts").value = String(L.defaultDrafts);
  $("maxTokens").max = String(L.maxTokens);
  $("maxTokens-range").textContent = `1–${L.maxTokens}`;
  $("seed").max = String(L.maxSeed);
  const bits = Math.log2(L.maxSeed + 1);
  const sup = document.createElement("sup");
  sup.textContent = String(bits);
  if (Number.isInteger(bits)) $("seed-range").replaceChildren("0–2", sup, "−1");
  else $("seed-range").textContent = `0–${L.maxSeed}`;
}

/** Whether the prompt is sent through SmolLM2's chat form: the SmolLM2 pair's preset runs. */
export const chatOn = () => S.chat && $("source").value === "gguf";

/**
 * The settings on screen, as typed (nothing clamped: see checked()); under the chat form
 * the prompt is the conversation the typed instruction makes, which every run sends.
 */
export function settings() {
  return {
    prompt: chatOn() ? chat($("prompt").value) : $("prompt").value,
    method: $("method").value,
    shape: $("shape").value,
    selection: $("selection").value,
    gamma: Number($("gamma").value),
    drafts: Number($("drafts").value),
    tree: $("tree").value,
    kl: roundKl(klFromSlider($("kl").value)),
    temperature: Number($("temperature").value),
    topK: Number($("topK").value),
    topP: Number($("topP").value),
    seed: readNumber("seed").value ?? NaN,
    maxTokens: readNumber("maxTokens").value ?? NaN,
    dynamicGamma: $("dynamicGamma").checked,
    parallelDraft: $("parallelDraft").checked,
    bug: $("bug").value,
    epsilon: Number($("epsilon").value),
    delta: Number($("delta").value),
    ngram: Number($("ngram").value),
    source: $("source").value,
  };
}

/** A decimal as typed (NUMBER), canonical: "0", or its sign, significant digits and exponent. */
function canonical(m) {
  const frac = m[3] ?? "";
  const digits = (m[2] + frac).replace(/^0+/, "");
  const significant = digits.replace(/0+$/, "");
  if (significant === "") return "0";
  // Exponents as numbers: a long run of zeros or digits cannot make them inexact.
  const exp = Number(m[4] ?? 0) - frac.length + (digits.length - significant.length);
  return `${m[1] === "-" ? "-" : ""}${significant}e${exp}`;
}

/** Whether two texts are the same decimal exactly ("2.50" and "2.5e0"; not "4.0000000000000001" and "4"). */
function sameNumber(a, b) {
  const [x, y] = [NUMBER.exec(String(a).trim()), NUMBER.exec(String(b).trim().replace("e+", "e"))];
  return !!x && !!y && /\d/.test(x[2] + (x[3] ?? "")) && canonical(x) === canonical(y);
}

/**
 * A number field's text as the number it denotes: `{ value }`, or `{ problem }` when it
 * cannot be sent as typed: the field is empty or unreadable, or reading it as a JavaScript
 * number changes it ("9007199254740993" is read as 9007199254740992, and
 * "4503599627370496.5" as 4503599627370496), so that the number the package checks, and
 * quotes, is the one typed. A fraction stays a fraction; ranges are the package's to check.
 */
export function readNumber(id, label = id) {
  const el = $(id);
  const name = `The ${label} field`;
  // A number field whose text is not a number reads as "" (validity.badInput says so).
  if (el.validity?.badInput) return { problem: `${name} holds text the browser cannot read as a number` };
  const raw = el.value.trim();
  if (raw === "") return { problem: `${name} is empty: type a number` };
  const m = NUMBER.exec(raw);
  if (!m || m[2] + (m[3] ?? "") === "") return { problem: `${name} holds ${quoted(raw)}, which is not a number` };
  const value = Number(raw);
  if (!Number.isFinite(value)) return { problem: `${name} holds ${quoted(raw)}, beyond the largest number JavaScript holds` };
  // String(value) is the shortest decimal that reads back as `value`: the typed text means
  // the same number exactly when the two are the same decimal.
  const same = canonical(m) === canonical(NUMBER.exec(String(value).replace("e+", "e")));
  return same ? { value } : { problem: `${name} holds ${quoted(raw)}, which a JavaScript number cannot hold exactly: it would be read as ${value}` };
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
 * What is wrong with the settings that only the page can see, since the package sees only
 * the numbers sent, never the text typed: a number field of `fields` empty, unreadable or
 * changed by reading it, or (with "tree" in `fields`, when a tree is drafted) tree text
 * that is not numbers. { field, code, message } or null.
 */
function readProblem(s, fields) {
  for (const field of fields) {
    if (field === "tree") {
      if (!applies("tree", s)) continue;
      try {
        parseTree(s.tree);
      } catch (error) {
        return { field, code: "invalid_option", message: error.message };
      }
      continue;
    }
    const { id, label } = controlOf(field);
    const { problem } = readNumber(id, label);
    if (problem) return { field, code: "invalid_option", message: `${problem}.` };
  }
  return null;
}

/**
 * The generate options of settings `s` (made by `build`), checked: `{ options }`, or
 * `{ refused: { field, code, message } }` saying why the page will not run them. First what
 * only the page can see (readProblem, over `fields`), then the package's own verdict
 * (checkOptions: the code, field and message of the SpeculaError generate() would throw),
 * then the prompt's characters outside the models' alphabet, named with their positions
 * (generate() refuses them too, code "bad_prompt", but without positions). A GGUF pair's
 * byte-level tokenizer reads any text; the engine checks what else it needs.
 */
export async function checked(s, build = generateOptions, fields = ["maxTokens", "seed", "tree"]) {
  const read = readProblem(s, fields);
  if (read) return { refused: read };
  const options = build(s);
  try {
    await S.pkg.checkOptions(options);
  } catch (error) {
    return { refused: { field: error.field ?? null, code: error.code ?? "internal", message: error.message } };
  }
  const p = s.source === "gguf" ? null : promptProblem(s.prompt);
  return p ? { refused: { field: "prompt", ...p } } : { options };
}

/**
 * The generate options of settings `s`: each control is one option of the package, and
 * only the options that apply (APPLIES) are sent, since the package refuses any other
 * (gamma for autoregressive, drafts or a tree for one draft, selection but for SpecTr, kl
 * but for mentored, dynamicGamma, even false, but for speculative and mentored).
 */
export function generateOptions(s) {
  const uses = (key) => applies(key, s);
  const o = { prompt: s.prompt, method: s.method, temperature: s.temperature, seed: s.seed, maxTokens: s.maxTokens, recordDistributions: true };
  if (s.topK > 0) o.topK = s.topK;
  if (s.topP < 1) o.topP = s.topP;
  if (uses("selection")) o.selection = s.selection;
  if (uses("gamma")) o.gamma = s.gamma;
  if (uses("drafts")) o.drafts = s.drafts;
  if (uses("tree")) o.tree = parseTree(s.tree);
  if (uses("kl")) o.kl = s.kl;
  if (uses("dynamicGamma") && s.dynamicGamma) o.dynamicGamma = true;
  if (uses("parallelDraft") && s.parallelDraft) o.parallelDraft = true;
  if (uses("bug") && s.bug) o.bug = s.bug;
  if (uses("epsilon")) o.epsilon = s.epsilon;
  if (uses("delta")) o.delta = s.delta;
  if (uses("ngram")) o.ngram = s.ngram;
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
 * Shows an error in the banner at the foot of the transport bar (in the page's flow, so
 * it covers nothing; the buttons above it stay put) and marks the control of the option
 * it is about (`field` as the package names it: "maxTokens", "tree[1]").
 */
export function showError(text, field = null, code = null) {
  const control = (text && controlOf(field)?.id) || null;
  hook.error = text || null;
  hook.errorField = (text && field) || null;
  hook.errorControl = control;
  hook.errorCode = (text && code) || null;
  const e = $("error");
  e.textContent = text;
  e.hidden = !text;
  for (const el of document.querySelectorAll("[aria-invalid='true']")) el.removeAttribute("aria-invalid");
  if (control) $(control).setAttribute("aria-invalid", "true");
}

/**
 * Whether the method of settings `s` takes the option `name`, by the package's
 * METHOD_OPTIONS (generated from the engine's one table of which options each method
 * takes). Without the package nothing runs live, so no method option applies.
 */
const takes = (s, name) => (S.pkg?.METHOD_OPTIONS?.[s.method] ?? []).includes(name);
/** Whether `method` drafts several sequences (i.i.d. or a tree): it takes `drafts`. */
export const multiDraft = (method) => takes({ method }, "drafts");
const multi = (s) => multiDraft(s.method);

/**
 * Which settings each control applies to, by its id (the others disable it, and its option
 * is not sent): the method's options, and a tree fixes both the draft length and the number
 * of drafts.
 */
const APPLIES = {
  gamma: (s) => takes(s, "gamma") && !(multi(s) && s.shape === "tree"),
  drafts: (s) => multi(s) && s.shape !== "tree",
  shape: multi,
  tree: (s) => multi(s) && s.shape === "tree",
  selection: (s) => takes(s, "selection"),
  kl: (s) => takes(s, "kl"),
  dynamicGamma: (s) => takes(s, "dynamicGamma"),
  // The package refuses parallel drafting with a dynamic γ, naming parallelDraft.
  parallelDraft: (s) => takes(s, "parallelDraft"),
  epsilon: (s) => takes(s, "epsilon"),
  delta: (s) => takes(s, "delta"),
  ngram: (s) => takes(s, "ngram"),
  bug: (s) => takes(s, "bug"),
};
/** Whether the control `id` applies to settings `s`. */
export const applies = (id, s) => APPLIES[id](s);

/** The outputs beside the sliders, the tokens limit, and which controls apply. */
export function syncOutputs() {
  const s = settings();
  $("gamma-out").textContent = String(s.gamma);
  $("drafts-out").textContent = String(s.drafts);
  $("kl-out").textContent = s.kl === 0 ? "0" : String(s.kl);
  $("temperature-out").textContent = s.temperature === 0 ? "0 (greedy)" : s.temperature.toFixed(2);
  $("topK-out").textContent = s.topK > 0 ? String(s.topK) : "off";
  $("topP-out").textContent = s.topP < 1 ? s.topP.toFixed(2) : "1 (off)";
  const speed = SPEEDS[Number($("speed").value)];
  $("speed-out").textContent = Number.isFinite(speed) ? `${speed}×` : "instant";
  // Controls that do not apply are disabled: not focusable, and they cannot start runs.
  for (const [id, on] of Object.entries(APPLIES)) $(id).disabled = !on(s);
  // The settings of one method only are left out for the others, so the panel keeps its
  // height and the stage stays in view.
  for (const id of ["epsilon", "delta", "ngram"]) document.querySelector(`[data-for="${id}"]`).hidden = !APPLIES[id](s);
  for (const box of document.querySelectorAll("[data-for]")) {
    box.classList.toggle("inactive", [...box.querySelectorAll("input, select")].every((el) => el.disabled));
  }
  $("fig-kl").hidden = s.method !== "mentored";
  $("fig-lossy").hidden = s.method !== "mentored" && s.method !== "typical";
  $("epsilon-out").textContent = s.epsilon.toFixed(2);
  $("delta-out").textContent = s.delta.toFixed(2);
  $("ngram-out").textContent = String(s.ngram);
  $("fig-k").hidden = !multi(s);
  const bug = applies("bug", s) ? plantedBug(s.bug) : null;
  describeMethod(s, bug);
  // The lab's bug menu, explained in words beside it (not only in its options' tooltips).
  const help = $("bug-help");
  help.textContent = bug
    ? `${bugSentence(bug)} The animation above runs with it too.`
    : s.bug
      ? `The bug ${s.bug} is planted only in the lossless drafting methods (speculative, SpecTr, multi-round): ${$("method").selectedOptions[0]?.textContent ?? s.method} runs without it.`
      : "No bug: the decoder is the correct algorithm.";
  help.dataset.bug = bug?.name ?? "";
  // The summary names every setting that changes the run (it is all a phone shows folded).
  const bits = [$("method").selectedOptions[0]?.textContent ?? s.method];
  if (s.source !== "bundled") bits.push($("source").selectedOptions[0]?.textContent ?? s.source);
  $("chat-note").hidden = !chatOn();
  if (chatOn()) bits.push("chat form");
  if (applies("selection", s)) bits.push($("selection").selectedOptions[0]?.textContent ?? s.selection);
  if (applies("gamma", s)) bits.push(`γ ${s.gamma}${applies("dynamicGamma", s) && s.dynamicGamma ? " (dynamic)" : ""}`);
  if (applies("parallelDraft", s) && s.parallelDraft) bits.push("draft in parallel");
  if (applies("drafts", s)) bits.push(`k ${s.drafts}`);
  if (applies("tree", s)) bits.push(`tree ${s.tree}`);
  if (applies("kl", s)) bits.push(`D ${s.kl}`);
  if (applies("bug", s) && s.bug) bits.push(`bug ${s.bug}`);
  if (applies("epsilon", s)) bits.push(`ε ${s.epsilon}`, `δ ${s.delta}`);
  if (applies("ngram", s)) bits.push(`n ${s.ngram}`);
  bits.push(`T ${s.temperature}`);
  if (s.topK > 0) bits.push(`top-k ${s.topK}`);
  if (s.topP < 1) bits.push(`top-p ${s.topP}`);
  bits.push(`seed ${$("seed").value}`, `${$("maxTokens").value} tokens`);
  $("settings-summary").textContent = bits.join(" · ");
}

/**
 * Method names of earlier versions of the page (and the package's former "otm"), which
 * links still carry: the settings they stand for now.
 */
const FORMER_METHODS = {
  "spectr-tree": { shape: "tree" },
  "spectr-otm": { selection: "race" },
  otm: { selection: "race" },
};

/** A former method name in the address: SpecTr with that shape or selection, and a notice. */
function formerMethod(given) {
  const [[id, value]] = Object.entries(FORMER_METHODS[given]);
  $("method").value = "spectr";
  $(id).value = value;
  const what = id === "shape" ? "SpecTr drafting a tree" : "SpecTr with the ratio race (the optimal selection)";
  notice("former", `This link names method=${given}, the former name of ${what}: it is now method=spectr&${id}=${value}, and the controls are set so.`);
}

/**
 * Short names earlier versions of the page gave settings in its address, which links still
 * carry: the option each is now named by, as the package and the CLI name it.
 */
const FORMER_PARAMS = { k: "drafts", D: "kl", topk: "topK", topp: "topP", tokens: "maxTokens", dynamic: "dynamicGamma", parallel: "parallelDraft" };

/**
 * The address's parameters with former short names read as the options they stand for
 * (the option's own name wins when a link gives both), and a notice naming each.
 */
function currentParams() {
  const p = new URLSearchParams(params);
  const renamed = [];
  for (const [former, name] of Object.entries(FORMER_PARAMS)) {
    if (!p.has(former)) continue;
    if (!p.has(name)) p.set(name, p.get(former));
    renamed.push(`${former}=${p.get(former)} is the former name of ${name} (now ${name}=${p.get(name)})`);
    p.delete(former);
  }
  if (renamed.length) notice("former-params", `This link uses former names of settings: ${renamed.join("; ")}; the controls are set so.`);
  return p;
}

/**
 * The settings in the page's address (?method=…&gamma=…), named as the options are
 * (`drafts`, `kl`, `topK`, `topP`, `maxTokens`, `dynamicGamma`, `parallelDraft`). A value a
 * control cannot take (out of its range, off its steps, not a number, not a method) is
 * never changed silently: a notice says what the link asked for and what the control holds
 * instead.
 */
export function applyParams() {
  const params = currentParams();
  const changed = [];
  const LABELS = { gamma: "γ", drafts: "k", kl: "D", temperature: "temperature", topK: "top-k", topP: "top-p", seed: "seed", maxTokens: "tokens", method: "method", shape: "drafts as", selection: "selection", speed: "speed", models: "models", bug: "bug", epsilon: "ε", delta: "δ", ngram: "n" };
  const tell = (key, given, why, now) => changed.push(`${key}=${[...given].length > 20 ? `${[...given].slice(0, 20).join("")}…` : given} ${why}; ${LABELS[key]} is ${now}`);
  // Each option's control has the option's id; the models menu is `source`.
  const set = (key, id = key) => {
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
      // As typed: "4.0000000000000001" is not the slider's 4, though Number() reads it so.
      if (given.trim() === "" || !sameNumber(given, el.value)) {
        const range = `${el.min}–${el.max} in steps of ${el.step}`;
        tell(key, given, Number.isFinite(Number(given)) && given.trim() !== "" ? `is not on the slider (${range})` : `is not a finite number (the slider goes ${range})`, el.value);
      }
    } else if (el.type === "number" && el.value !== given) {
      tell(key, given, "is not a finite number", "empty");
    }
  };
  if (Object.hasOwn(FORMER_METHODS, params.get("method") ?? "")) formerMethod(params.get("method"));
  else set("method");
  set("shape");
  set("models", "source");
  set("selection");
  set("gamma");
  set("drafts");
  set("tree");
  if (params.has("kl")) {
    const given = params.get("kl");
    const d = given.trim() === "" ? NaN : Number(given);
    $("kl").value = String(sliderFromKl(d));
    const now = roundKl(klFromSlider($("kl").value));
    if (!sameNumber(given, String(now))) tell("kl", given, !Number.isFinite(d) ? "is not a finite number" : "is not on the slider (0, then 0.001 to 5 on a log scale)", now);
  }
  set("temperature");
  set("topK");
  set("topP");
  set("seed");
  set("maxTokens");
  set("prompt");
  set("bug");
  set("epsilon");
  set("delta");
  set("ngram");
  if (params.has("speed")) {
    const sp = params.get("speed");
    const i = sp === "instant" ? SPEEDS.length - 1 : SPEEDS.indexOf(Number(sp));
    if (i >= 0) $("speed").value = String(i);
    else tell("speed", sp, `is not one of ${SPEEDS.map((v) => (Number.isFinite(v) ? v : "instant")).join(", ")}`, `${SPEEDS[Number($("speed").value)]}×`);
  }
  if (params.get("dynamicGamma") === "1") $("dynamicGamma").checked = true;
  if (params.get("parallelDraft") === "1") $("parallelDraft").checked = true;
  if (changed.length) notice("params", `This page's address asks for settings the controls cannot take: ${changed.join("; ")}.`);
}
