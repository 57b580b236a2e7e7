// The output (the prompt, then each generated character, clickable), the distributions
// panel (it follows the round on the stage unless the student picks a character) and the
// metrics panel.
import { groupedBars, columns } from "./charts.js";
import { showChar } from "./anim.js";
import { $, S, hook, fmt, h, pieces } from "./state.js";
import { rich, term } from "./glossary.js";
import { multiDraft } from "./settings.js";
import { emit } from "./events.js";
import { player } from "./player.js";
import { overlap } from "./math.js";
import { bugSentence, plantedBug } from "./bugs.js";
import { POOLED_ROW_VOCAB, probOf, shortPiece, sizeOf, topTokens } from "./pieces.js";

// ---------- output ----------
// The output's character spans in order, and the two that carry state: the one in the
// tab order (roving focus) and the selected one. Kept here so that each round touches
// only the spans that change, not all of them (a 4,096-character run stays responsive).
let spans = [];
let focused = null;
let selectedSpan = null;
// Each line of the text is a block of its own, LINES lines to a chunk that the browser
// skips drawing while it is scrolled out of view: a new character lays out its line, not
// the whole text (a run of 65,536 characters stays responsive).
const LINES = 64;
let line = null; // the block the next character goes in
let lines = 0; // the lines of the chunk being filled
let chunk = null;
let scrollPending = false;

/** Starts a new line block (in a new chunk every LINES lines). */
function newLine(out) {
  if (!chunk || lines >= LINES) {
    chunk = h("div", "ochunk");
    out.append(chunk);
    lines = 0;
  }
  line = h("div", "oline");
  chunk.append(line);
  lines += 1;
}

/** Scrolls the output to its end once per frame (not once per round: that lays it out each time). */
function scrollToEnd(out) {
  if (scrollPending) return;
  scrollPending = true;
  requestAnimationFrame(() => {
    scrollPending = false;
    if (!S.picked) out.scrollTop = out.scrollHeight;
  });
}

/** The prompt on screen ({ text, span }), until the first round says what the models read of it. */
let shownPrompt = null;

/**
 * Empties the output; with a prompt, shows it first (not generated: set apart). What the
 * models read of it is the first round's to say (cropPrompt).
 */
export function clearOutput(prompt) {
  const out = $("output");
  out.replaceChildren();
  // Token pieces (a GGUF pair): each token's span is outlined, so the pieces show.
  out.classList.toggle("pieces", pieces());
  spans = [];
  focused = null;
  selectedSpan = null;
  chunk = null;
  newLine(out);
  shownPrompt = null;
  if (prompt) {
    const p = h("span", "prompt-text", prompt);
    p.title = "the prompt (given, not generated)";
    p.setAttribute("aria-label", `prompt: ${prompt}`);
    // The generated text goes on where the prompt ends, on its line.
    line.append(p);
    shownPrompt = { text: prompt, span: p };
  }
}

/**
 * A prompt that fills the models' context is cropped by the engine before the first
 * round: the first round's trace says how many tokens the models read (`committedLen`).
 * Only those are shown, after a note of what is left out. The bundled and n-gram pairs'
 * tokens are characters; a GGUF pair's are text pieces, so its prompt is shown whole.
 */
function cropPrompt(trace) {
  const shown = shownPrompt;
  shownPrompt = null;
  if (!shown || S.run?.models === "gguf") return;
  const chars = [...shown.text];
  const kept = trace.committedLen;
  if (!(kept < chars.length)) return;
  const text = chars.slice(chars.length - kept).join("");
  const cut = h("span", "prompt-cut", `[${(chars.length - kept).toLocaleString("en")} earlier characters of the ${chars.length.toLocaleString("en")}-character prompt not shown: the models read only its last ${kept}]\n`);
  cut.dataset.omitted = String(chars.length - kept);
  shown.span.textContent = text;
  shown.span.setAttribute("aria-label", `the prompt's last ${kept} characters: ${text}`);
  shown.span.before(cut);
}

export function appendOutput(trace, roundIndex) {
  const out = $("output");
  if (roundIndex === 0) cropPrompt(trace);
  // For the first-load benchmark: the first character the models generated on this page.
  if (S.run?.source === "live" && trace.emitted.length && !performance.getEntriesByName("specula:first-char").length) {
    performance.mark("specula:first-char");
  }
  trace.emitted.forEach((token, i) => {
    const ch = S.alphabet[token] ?? "?";
    const source = trace.sources[i];
    const entry = { ch, token, source, round: roundIndex, index: i };
    S.tokens.push(entry);
    // Newlines marked and kept; a token piece's other control characters (a carriage
    // return, a lone byte) drawn as pieces.js draws them.
    const span = h("span", `otok ${source}`, ch === "\n" ? "↵\n" : ch.replace(/\n/g, "↵\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, showChar));
    span.tabIndex = -1;
    span.setAttribute("role", "button");
    span.dataset.source = source;
    span.dataset.token = String(token);
    span.dataset.round = String(roundIndex);
    span.dataset.i = String(S.tokens.length - 1);
    span.setAttribute("aria-label", `${ch === "\n" ? "newline" : ch === " " ? "space" : ch.length > 1 ? showChar(ch) : ch}, ${source} in round ${roundIndex + 1}`);
    line.append(span);
    spans.push(span);
    if (ch.includes("\n")) newLine(out);
  });
  if (!S.picked) scrollToEnd(out);
  // Following the animation: mark the character the distributions panel shows.
  if (!S.picked && S.distRound === roundIndex) markSelected(S.tokens.length - trace.emitted.length + keyPosition(trace));
  rovingFocus();
}

/** One span in the tab order: the selected character's, else the last one's. */
function rovingFocus() {
  const i = S.selected !== null && S.selected < spans.length ? S.selected : spans.length - 1;
  const next = spans[i] ?? null;
  if (focused && focused !== next) focused.tabIndex = -1;
  if (next) next.tabIndex = 0;
  focused = next;
}

function markSelected(i) {
  S.selected = i;
  const next = spans[i] ?? null;
  if (selectedSpan && selectedSpan !== next) selectedSpan.classList.remove("selected");
  if (next) next.classList.add("selected");
  selectedSpan = next;
  rovingFocus();
}

// ---------- distributions ----------
/** The position of a round worth showing: its residual draw if it had one, else the first. */
const keyPosition = (trace) => Math.max(0, trace.sources.indexOf("resampled"));

/**
 * While round `roundIndex` is drawn on the stage (its tests not yet shown), the panel says
 * its distributions come once it is: they would tell the result first. A picked character stays.
 */
export function awaitDistributions(roundIndex) {
  if (S.picked) return;
  S.distRound = null;
  const label = $("dist-label");
  label.textContent = `· round ${roundIndex + 1}: shown once the stage has drawn its tests`;
  label.dataset.round = String(roundIndex + 1);
  label.dataset.position = "";
  $("dist-follow").hidden = true;
  $("dist").replaceChildren(h("p", "muted", `The distributions of round ${roundIndex + 1} show here once the stage has drawn its tests.`));
}

/** Shows the round drawn on the stage, unless the student picked a character. */
export function followRound(roundIndex, trace) {
  if (S.picked) return;
  S.distRound = roundIndex;
  renderDistributions(trace, roundIndex, keyPosition(trace), false);
}

/** The student picked output character i: its round goes on the stage, its bars here. */
export function selectToken(i) {
  if (i < 0 || i >= S.tokens.length) return;
  const entry = S.tokens[i];
  S.picked = true;
  S.distRound = entry.round;
  markSelected(i);
  // The transport puts that round on the stage (run.js answers).
  emit("show-round", entry.round);
  const trace = S.run?.rounds[entry.round]?.trace ?? hook.shownRounds[entry.round];
  if (trace) renderDistributions(trace, entry.round, entry.index, true);
}

/** Back to following the animation: the round on the stage. */
export function follow() {
  S.picked = false;
  $("dist-follow").hidden = true;
  if (player.stage && (player.animating || player.stage.until)) {
    awaitDistributions(player.stage.index);
  } else if (player.stage) {
    followRound(player.stage.index, player.stage.trace);
    if (player.stage.index < hook.shownRounds.length) {
      const first = S.tokens.findIndex((t) => t.round === player.stage.index);
      if (first >= 0) markSelected(first + keyPosition(player.stage.trace));
    }
  }
}

function renderDistributions(trace, roundIndex, index, picked) {
  $("dist-follow").hidden = !picked;
  const chName = (t) => showChar(S.alphabet[t] ?? "?");
  // A label for a bar: a long token piece cut short.
  const barName = (t) => (pieces() ? shortPiece(S.alphabet[t] ?? "?", 10) : chName(t));
  const token = trace.emitted[index];
  const source = trace.sources[index];
  let target = null;
  let draft = null;
  let residual = null;
  let draftToken = null;
  const step = trace.steps[index];
  if (step) {
    target = step.targetProbs ?? null;
    draft = step.draftProbs ?? null;
    residual = step.residualProbs ?? null;
    draftToken = step.outcome.tests[0]?.token ?? null;
  } else if (trace.bonus && index === trace.steps.length) {
    target = trace.bonus.targetProbs ?? null;
  }
  const label = $("dist-label");
  label.textContent = `· round ${roundIndex + 1}, position ${index + 1}: '${chName(token)}' (${source})${picked ? " — picked" : " — following the stage"}`;
  label.dataset.round = String(roundIndex + 1);
  label.dataset.position = String(index + 1);
  const box = $("dist");
  if (!target) {
    box.textContent = "No distributions recorded for this character.";
    return;
  }
  const withResidual = source === "resampled" && residual;
  const vectors = [target, draft, withResidual ? residual : null];
  const idx = topTokens(vectors, 8, [token, draftToken ?? -1]);
  const series = [{ name: "target", cls: "s-target" }];
  if (draft) series.push({ name: "draft", cls: "s-draft" });
  if (withResidual) series.push({ name: "residual", cls: "s-residual" });
  const shown = [target, ...(draft ? [draft] : []), ...(withResidual ? [residual] : [])];
  const rows = idx.map((t) => ({
    label: barName(t),
    values: shown.map((v) => probOf(v, t)),
    mark: t === token ? "▶" : t === draftToken ? "✗" : "",
  }));
  // A large vocabulary: the tokens not drawn, pooled into one row (what each series has left).
  const vocab = sizeOf(target);
  if (vocab > POOLED_ROW_VOCAB) {
    const others = vocab - idx.length;
    rows.push({ label: `other ${others.toLocaleString("en")}`, values: shown.map((v) => Math.max(0, 1 - idx.reduce((a, t) => a + probOf(v, t), 0))), mark: "", pooled: true });
  }
  groupedBars(box, { rows, series, label: `target, draft and residual probabilities at position ${index + 1} of round ${roundIndex + 1}`, fitLabels: vocab > POOLED_ROW_VOCAB });
  const extra = h("p", "muted");
  if (draft) {
    // The package computes Σ min (plan()): the number fills in when it comes.
    const value = h("span", "overlap", "…");
    overlap(target, draft).then((x) => (value.textContent = fmt(x, 3)), () => (value.textContent = "–"));
    extra.append(`▶ emitted, ✗ rejected draft. `, term("sigmaMin"), " = ", value, " = 1 − ", term("tv"),
      `: the chance a single draft character is accepted here.`);
    const race = step?.plan?.kind === "race" ? step.plan : null;
    if (race) {
      const k = race.k;
      extra.append(rich(` With ${k} draft${k > 1 ? "s" : ""} the ratio race {race} accepts with Σ min(target, {r}) = ${fmt(race.acceptance, 3)}; the best possible ({otm}) is ${fmt(race.optimum, 3)}.`));
    }
  } else {
    extra.textContent = "▶ emitted. This character came straight from the target (no draft to test).";
  }
  box.append(extra);
  const bug = plantedBug(S.run?.options?.bug);
  if (bug) {
    const note = h("p", "bug-help", `${bugSentence(bug)} This step ran with it: what it emitted need not follow the target's bars.`);
    note.dataset.bug = bug.name;
    box.append(note);
  }
}

export function onOutputKey(event) {
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
  selectToken(j);
  spans[j].focus();
}

// ---------- metrics ----------
/** What "position 1 accepted" counts: the rounds that drafted a first position (prompt lookup may draft none). */
function positionHelp(m) {
  const drafted = m?.draftedPerPosition?.[0];
  return drafted !== undefined && drafted < m.rounds
    ? `share of the ${drafted} rounds that drafted (of ${m.rounds}) whose first position kept a draft`
    : "share of rounds whose first position kept a draft";
}

/** The metrics panel: the engine's metrics and rates of the run so far, as the last round shown reported them. */
export function renderMetrics() {
  const m = S.metrics;
  const sum = S.summary;
  const wall = S.run?.source === "live" && S.run.arrivals.length && player.shown > 0 ? S.run.arrivals[player.shown - 1] : null;
  const multi = multiDraft(S.run?.options?.method);
  const perRound = m?.rounds > 0 ? m.emittedTokens / m.rounds : null;
  const c = sum?.costRatio ?? null;
  // A GGUF pair's tokens are text pieces, not characters.
  const u = S.run?.models === "gguf" ? "tokens" : "characters";
  const items = [
    ["tokens-per-round", `${u} per round`, fmt(perRound, 2), "accepted + resampled + bonus, per target pass"],
    ["position-1", "position 1 accepted", fmt(sum?.perPositionAcceptance[0] ?? null, 3), positionHelp(m)],
    ["acceptance-rate", term("vllm"), fmt(sum?.acceptanceRate ?? null, 3), ""],
    ["mean-acceptance-length", "mean acceptance length", fmt(sum?.meanAcceptanceLength ?? null, 2), "1 + accepted per round"],
    ["emitted", u, String(m?.emittedTokens ?? 0), "accepted + resampled + bonus"],
    ["rounds", "rounds", String(m?.rounds ?? 0), ""],
    ["target-calls", "target calls", String(m?.targetCalls ?? 0), "forward passes of the target"],
    ["draft-calls", "draft calls", String(m?.draftCalls ?? 0), ""],
    ["block-efficiency", "tokens per target call", fmt(sum?.blockEfficiency ?? null, 2), ""],
    ["tokens-per-second", "tokens/s (model time)", fmt(sum?.tokensPerSecond ?? null, 1), "from the engine's timing"],
    ["wall", "wall-clock", wall !== null ? `${(wall / 1000).toFixed(2)} s` : "–", "real time in this browser, live runs"],
    ["cost-ratio", term("c", "c = draft / target cost"), fmt(c, 3), "per call, measured"],
  ];
  const dl = $("metrics");
  dl.replaceChildren();
  for (const [key, name, value, help] of items) {
    const div = h("div", "metric");
    const dt = h("dt");
    dt.append(name);
    if (help) {
      dt.append(h("br"), h("small", "help", help));
    }
    const dd = h("dd", "", value);
    dd.dataset.metric = key;
    div.append(dt, dd);
    dl.append(div);
  }
  const note = $("metrics-note");
  note.replaceChildren(rich(multi
    ? `With several drafts per position the {vllm} (accepted ÷ drafted) counts every draft of every row as drafted, though at most one per position can be kept — so it looks low (${fmt(sum?.acceptanceRate ?? null, 3)}) while each round emits ${fmt(perRound, 2)} ${u}. Read ${u} per round and the per-position acceptance (the share of rounds in which position i kept one of its drafts) instead.`
    : `The {vllm} is vLLM's: accepted draft ${u} ÷ drafted ${u} (${m?.acceptedTokens ?? 0} ÷ ${m?.draftedTokens ?? 0}). ${u === "tokens" ? "Tokens" : "Characters"} per round also counts the replacement or bonus each round adds.`));
  note.dataset.multi = String(multi);
  columns($("chart-position"), { values: sum?.perPositionAcceptance ?? [], start: 1, max: 1, label: "per-position acceptance", integerX: true });
  columns($("chart-hist"), { values: m?.acceptedLengthHistogram ?? [], start: 0, label: "histogram of accepted drafts per round", fmtValue: (v) => String(v), integerX: true });
  hook.liveMetrics = m && { ...m, summary: sum };
}

