// "Your models": any Llama-family GGUF pair (a target and a draft sharing a tokenizer,
// e.g. SmolLM2-135M-Instruct as both), from a URL or from a file picked or dropped here
// (a blob: URL of this page, which the package's worker fetches like any other), loaded
// into a second Specula instance held beside the bundled pair. The Models menu's "your
// GGUF pair" then runs it with the same animation; its tokens are text pieces (pieces.js).
// ?target=URL&draft=URL fills the fields and loads them (links to share, and the tests).
import { $, S, hook, params } from "./state.js";
import { showError } from "./settings.js";
import { enqueue, settingChanged, stopRun } from "./run.js";

const ROLES = ["target", "draft"];
/** The File picked or dropped for each role (it wins over the URL field), else null. */
const picked = { target: null, draft: null };
/** Where the loaded pair came from, per role (a File or a URL): a race loads it again. */
const loadedFrom = { target: null, draft: null };
let loading = false;
// The Models menu's value before the last change: restored when "your GGUF pair" is
// chosen with nothing loaded.
let previousSource = "bundled";

hook.gguf = { state: "empty", progress: null, loads: 0, name: null };
// For the page tests: the loaded GGUF target's logits for a decode() request, to compare
// what this page's wasm computes with an independent reference.
hook.ggufTargetForward = async (request) => Array.from(await S.gguf.models.target.forward(request));

const mb = (bytes) => (bytes / 1e6).toFixed(1);

function setState(state, text) {
  hook.gguf.state = state;
  $("gguf-state").textContent = text;
  $("gguf-load").disabled = state === "loading";
}

function pick(role, file) {
  picked[role] = file ?? null;
  $(`gguf-${role}-picked`).textContent = file ? `${file.name} · ${mb(file.size)} MB (from this computer)` : "";
  $(`gguf-${role}-zone`).classList.toggle("has-file", !!file);
  if (file) $(`gguf-${role}-url`).value = "";
  $(`gguf-${role}-url`).removeAttribute("aria-invalid");
}

/** A drop zone around each file input: a dropped file is picked like a chosen one. */
function wireRole(role) {
  const zone = $(`gguf-${role}-zone`);
  const input = $(`gguf-${role}-file`);
  input.addEventListener("change", () => pick(role, input.files?.[0]));
  $(`gguf-${role}-url`).addEventListener("input", () => {
    // Typing a URL replaces a picked file.
    if (picked[role]) pick(role, null);
    input.value = "";
    $(`gguf-${role}-url`).removeAttribute("aria-invalid");
  });
  zone.addEventListener("dragover", (e) => {
    e.preventDefault();
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("dragging");
    const file = e.dataTransfer?.files?.[0];
    if (file) pick(role, file);
  });
}

/** The Models menu's entry for the GGUF pair: what is loaded, or how to load it. */
function labelOption() {
  const option = $("source").querySelector('option[value="gguf"]');
  // Short, so the menu keeps its width; the files' names in its tooltip.
  option.textContent = S.gguf ? "your GGUF pair" : "your GGUF pair (not loaded)";
  option.title = S.gguf ? hook.gguf.name : "Load a target and a draft GGUF file under “Your models”";
}

/** The progress line: each file's MB and the total (load()'s onProgress). */
function progressText(files) {
  let loaded = 0;
  let total = 0;
  const parts = [];
  for (const [file, [l, t]] of files) {
    loaded += l;
    total += t;
    parts.push(`${file} ${mb(l)} / ${t ? mb(t) : "?"} MB`);
  }
  return `downloading ${parts.join(" · ")} · total ${mb(loaded)} / ${mb(total)} MB`;
}

/** A file's name for the menu: its own, or the last segment of its URL. */
function nameOf(role, url) {
  if (picked[role]) return picked[role].name;
  try {
    return decodeURIComponent(new URL(url, location.href).pathname.split("/").pop()) || url;
  } catch {
    return url;
  }
}

const backendParam = () => (["auto", "cpu", "webgpu"].includes(params.get("backend")) ? params.get("backend") : "auto");

/**
 * Loads the pair in the fields; on success the Models menu switches to it and the result
 * is true. `chat`: prompts go through SmolLM2's chat form (the SmolLM2 pair's preset);
 * `configure`: sets the controls for the pair once it has loaded, before it runs.
 */
export async function loadGguf({ chat = false, configure = null } = {}) {
  if (loading) return false;
  if (!S.pkg) {
    setState("error", "The package did not load, so neither can your models.");
    return false;
  }
  const urls = {};
  for (const role of ROLES) {
    const typed = $(`gguf-${role}-url`).value.trim();
    if (!picked[role] && !typed) {
      $(`gguf-${role}-url`).setAttribute("aria-invalid", "true");
      $(`gguf-${role}-url`).focus();
      setState("error", `Give the ${role} model: a URL, or a .gguf file picked or dropped here. The same file may be both.`);
      return false;
    }
    urls[role] = typed;
  }
  loading = true;
  const objectUrls = [];
  // One file picked for both roles is one object URL: the worker reads it twice.
  const urlOf = new Map();
  for (const role of ROLES) {
    const file = picked[role];
    if (!file) continue;
    if (!urlOf.has(file)) {
      urlOf.set(file, URL.createObjectURL(file));
      objectUrls.push(urlOf.get(file));
    }
    urls[role] = urlOf.get(file);
  }
  const names = { target: nameOf("target", urls.target), draft: nameOf("draft", urls.draft) };
  setState("loading", "loading…");
  showError("");
  try {
    // One GGUF pair at a time (SmolLM2 alone is about 540 MB of weights in wasm): the pair
    // loaded before goes first, and with it a run of it on the stage.
    if (S.gguf) {
      await enqueue(async () => {
        if (S.run?.instance === S.gguf) await stopRun();
      });
      S.gguf.terminate();
      S.gguf = null;
      labelOption();
    }
    const files = new Map();
    S.gguf = await S.pkg.Specula.load({
      backend: backendParam(),
      target: { url: urls.target },
      draft: { url: urls.draft },
      onProgress: ({ file, loaded, total }) => {
        files.set(file, [loaded, total ?? loaded]);
        hook.gguf.progress = Object.fromEntries(files);
        $("gguf-progress").textContent = progressText(files);
      },
    });
    hook.gguf.loads += 1;
    for (const role of ROLES) loadedFrom[role] = picked[role] ?? urls[role];
    S.chat = chat;
    hook.gguf.chat = chat;
    $("gguf-progress").textContent = progressText(files).replace(/^downloading/, "downloaded");
    hook.gguf.name = names.target === names.draft ? names.target : `${names.target} + ${names.draft}`;
    hook.gguf.vocab = S.gguf.tokenTexts.length;
    const where = S.gguf.backend?.backend === "webgpu" ? "WebGPU" : "the CPU";
    setState("loaded", `Loaded: target ${names.target}, draft ${names.draft} · ${S.gguf.tokenTexts.length.toLocaleString("en")} tokens · on ${where}. Models: “your GGUF pair” runs them.`);
    labelOption();
    if ($("source").value !== "gguf") {
      $("source").value = "gguf";
      previousSource = "gguf";
    }
    configure?.();
    await settingChanged();
    return true;
  } catch (error) {
    // The package's typed error: { code, field, message } ("download_failed", "bad_weights", …).
    const code = error.code ?? "internal";
    $("gguf-progress").textContent = "";
    // Back to the trained pair when the pair replaced was on screen (before the message:
    // a new run clears the banner).
    if ($("source").value === "gguf") {
      $("source").value = "bundled";
      previousSource = "bundled";
      await settingChanged();
    }
    S.chat = false;
    hook.gguf.chat = false;
    showError(`Could not load your models: ${error.message}`, error.field ?? null, code);
    setState("error", `Not loaded (${code}): see the message above.${S.specula ? " The trained pair still runs." : ""}`);
    return false;
  } finally {
    loading = false;
    // The worker has read the files (or given up): the object URLs are no longer needed.
    for (const u of objectUrls) URL.revokeObjectURL(u);
    if (hook.gguf.state === "loading") setState("error", "Not loaded.");
  }
}

/**
 * A new instance of the loaded pair, with its own worker and empty caches: a lane of a
 * race. Files picked in this browser are read again through new object URLs.
 */
export async function freshGguf(backend) {
  const urls = {};
  const made = [];
  for (const role of ROLES) {
    const from = loadedFrom[role];
    urls[role] = typeof from === "string" ? from : URL.createObjectURL(from);
    if (urls[role] !== from) made.push(urls[role]);
  }
  try {
    return await S.pkg.Specula.load({ backend, target: { url: urls.target }, draft: { url: urls.draft } });
  } finally {
    for (const u of made) URL.revokeObjectURL(u);
  }
}

/**
 * Frees the loaded pair's instance while a race holds two fresh ones (a SmolLM2 pair takes
 * over a gigabyte of wasm memory: three copies at once are too many for one tab); returns
 * the backend it ran on, for the race's copies.
 */
export function releaseGguf() {
  const backend = S.gguf.backend?.backend ?? backendParam();
  S.gguf.terminate();
  S.gguf = null;
  return backend;
}

/**
 * After a race: `instance` (a lane's copy, same files) becomes the loaded pair, or, when
 * the race left none, the pair loads again; if that fails the trained pair takes over.
 */
export async function adoptGguf(instance, backend) {
  try {
    S.gguf = instance ?? (await freshGguf(backend));
  } catch (error) {
    labelOption();
    setState("error", `Not loaded again after the race (${error.code ?? "internal"}): ${error.message}`);
    if ($("source").value === "gguf") {
      $("source").value = "bundled";
      previousSource = "bundled";
    }
  }
}

/** Opens the panel and puts the cursor where a URL goes. */
function openPanel() {
  const box = $("gguf-box");
  box.open = true;
  box.scrollIntoView({ block: "nearest" });
  $("gguf-target-url").focus();
}

/**
 * Wires the panel. Called before the Models menu's other listeners: choosing "your GGUF
 * pair" with nothing loaded starts no run, opens the panel and says what to do.
 */
export function wireModels() {
  for (const role of ROLES) wireRole(role);
  $("gguf-load").addEventListener("click", loadGguf);
  previousSource = $("source").value;
  $("source").addEventListener("change", (event) => {
    if ($("source").value === "gguf" && !S.gguf) {
      event.stopImmediatePropagation();
      $("source").value = previousSource === "gguf" ? "bundled" : previousSource;
      openPanel();
      if (!loading) setState("empty", "Your GGUF pair is not loaded yet: give a target and a draft (a URL, or a .gguf file picked or dropped here), press Load, and it runs once loaded.");
      return;
    }
    previousSource = $("source").value;
  });
  labelOption();
  setState("empty", "");
  // ?target=…&draft=… : fill the fields and load.
  const target = params.get("target");
  const draft = params.get("draft");
  if (target !== null || draft !== null) {
    $("gguf-target-url").value = target ?? "";
    $("gguf-draft-url").value = draft ?? "";
    $("gguf-box").open = true;
    if ($("source").value === "gguf") $("source").value = "bundled";
    previousSource = $("source").value;
    return true;
  }
  // ?models=gguf with nothing to load: the trained pair, and the panel says why.
  if ($("source").value === "gguf") {
    $("source").value = "bundled";
    previousSource = "bundled";
    $("gguf-box").open = true;
    setState("empty", "This link asks for your GGUF pair: give a target and a draft here and press Load.");
  }
  return false;
}
