// Definitions of every symbol on the page: terms are focusable <abbr> elements described
// (aria-describedby) by the glossary at the bottom of the page, and one shared tooltip
// shows the definition on hover and on keyboard focus. Also one sentence per method.
import { $, h } from "./state.js";
import { bugSentence } from "./bugs.js";

export const GLOSSARY = {
  gamma: ["γ", "γ (gamma): how many characters the draft model proposes per round."],
  k: ["k", "k: how many draft sequences are proposed in parallel for each position."],
  epsilon: ["ε", "ε (typical acceptance; by default 0.09, Medusa's setting): the ceiling of the threshold — a guess the target gives more than min(ε, δ·e^(−H)) is kept."],
  delta: ["δ", "δ (typical acceptance; by default 0.3, Medusa's setting): the scale of the entropy term — where the target is unsure (large entropy H), δ·e^(−H) is small and more guesses pass."],
  ngram: ["n", "n (prompt lookup): the longest final stretch of the context searched for earlier in it; what followed its last occurrence becomes the guesses."],
  D: ["D", "D: the KL budget of mentored decoding — how far (in nats) the output distribution may move away from the target's at each position."],
  alpha: ["α", "α: the probability that one drafted position is accepted; the theory curves assume every position accepts with this same α."],
  c: ["c", "c: the cost of one draft-model call divided by the cost of one target-model call (measured from the engine's timing)."],
  u: ["u", "u: a uniform random number in [0, 1); a draft is accepted when u is below its acceptance probability."],
  ratio: ["min(1, target/draft)", "min(1, target/draft): the probability of keeping a draft character x — target(x)/draft(x), capped at 1. Characters the target likes at least as much as the draft are always kept."],
  residual: ["residual", "residual: the distribution a replacement is drawn from after a rejection, norm(max(0, target − draft)) — the probability the target has and the draft over-spent elsewhere. Drawing from it makes the output follow the target exactly."],
  argmax: ["argmax", "argmax: the single most likely character. At temperature 0 (greedy) both models always pick their argmax, and a draft is accepted exactly when it equals the target's argmax."],
  kseq: ["k-Seq", "k-Seq: SpecTr's acceptance test for k drafts at one position — each draft is tested with min(1, target/(ρ·draft)) in turn, and a residual corrects for the drafts' combined over-proposal so the output stays exact."],
  rhoStar: ["ρ*", "ρ* (rho star): the smallest scaling ρ for which k-Seq's test min(1, target/(ρ·draft)) stays exact with k drafts; larger k needs larger ρ*."],
  rho: ["ρ", "ρ (rho): the scaling k-Seq actually uses in min(1, target/(ρ·draft)); here ρ = ρ*."],
  race: ["w(x)/u", "w(x)/u: the ratio race — each draft x gets a fitted weight w(x) and its own uniform u; the draft with the largest key w(x)/u is chosen. Its distribution is r; the weights are fitted to make Σ min(target, r) as large as possible."],
  r: ["r", "r: the distribution with which the ratio race chooses among the drafts; the chosen draft is kept with probability min(1, target/r)."],
  otm: ["OTM", "OTM (optimal transport selection): the highest probability that the output is one of the k drafts over every exact way of choosing among them (SpecTr's optimum); the ratio race reaches it."],
  mAlpha: ["λ", "λ (mentored; the paper's α): the lower ratio threshold — a draft with target/draft ≥ λ is kept (λ ≤ 1 lets through drafts the target likes a little less). The page keeps α for the acceptance rate of the theory."],
  mBeta: ["β", "β (mentored): the upper ratio threshold ≥ 1 — replacements come from max(0, target/β − draft), so the output's distribution stays within the KL budget D of the target."],
  kl: ["KL", "KL: the Kullback–Leibler divergence between the target and the distribution actually sampled, in nats; 0 means identical."],
  tv: ["TV", "TV: total variation distance between target and draft, ½ Σ |target − draft|; 1 − TV = Σ min(target, draft)."],
  sigmaMin: ["Σ min(target, draft)", "Σ min(target, draft): the overlap of the two distributions = 1 − TV — the probability a single draft character is accepted at this position."],
  nats: ["nats", "nats: units of information using the natural logarithm (1 nat ≈ 1.44 bits)."],
  bonus: ["bonus", "bonus: when every draft is accepted, the target's pass already gives the distribution of the next position, so one extra character comes for free."],
  parallel: ["drafted in parallel", "drafted in parallel (PEARL's post-verify): while the target verifies a round, the draft model, in a worker of its own, already drafts the next one as if every draft will be accepted. If one is rejected those early drafts are thrown away; if all are accepted they are tested where the bonus would have been drawn, so the output still follows the target exactly."],
  vllm: ["acceptance rate", "acceptance rate (vLLM's definition): accepted draft characters / drafted characters. Every draft in every row counts as drafted, so with k drafts it falls as k grows even when more characters come per round."],
};

let tip = null;
let tipFor = null;

/** A focusable term with its definition (hover or focus shows it; screen readers read it). */
export function term(key, label) {
  const [symbol] = GLOSSARY[key] ?? [key];
  const a = h("abbr", "term", label ?? symbol);
  a.tabIndex = 0;
  a.dataset.term = key;
  a.setAttribute("aria-describedby", `g-${key}`);
  return a;
}

/** Text with {key} or {key|label} placeholders turned into terms: a DocumentFragment. */
export function rich(template) {
  const frag = document.createDocumentFragment();
  const re = /\{(\w+)(?:\|([^}]*))?\}/g;
  let last = 0;
  for (let m; (m = re.exec(template)); ) {
    if (m.index > last) frag.append(template.slice(last, m.index));
    frag.append(GLOSSARY[m[1]] ? term(m[1], m[2]) : m[0]);
    last = re.lastIndex;
  }
  if (last < template.length) frag.append(template.slice(last));
  return frag;
}

/** Fills the glossary list and wires the shared tooltip. */
export function initGlossary() {
  const dl = $("glossary");
  for (const [key, [symbol, text]] of Object.entries(GLOSSARY)) {
    const dt = h("dt", "", symbol);
    const dd = h("dd", "", text);
    dd.id = `g-${key}`;
    dl.append(dt, dd);
  }
  // Static terms written in index.html as <abbr class="term" data-term="…">.
  for (const a of document.querySelectorAll("abbr.term[data-term]")) {
    a.tabIndex = 0;
    a.setAttribute("aria-describedby", `g-${a.dataset.term}`);
  }
  tip = $("tip");
  const show = (e) => {
    const a = e.target.closest?.("abbr.term");
    if (a) showTip(a);
  };
  const hide = (e) => {
    const a = e.target.closest?.("abbr.term");
    if (a && a === tipFor && !(e.type === "mouseout" && a === document.activeElement)) hideTip();
  };
  document.addEventListener("mouseover", show);
  document.addEventListener("focusin", show);
  document.addEventListener("mouseout", hide);
  document.addEventListener("focusout", hide);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") hideTip();
  });
}

function showTip(a) {
  const def = GLOSSARY[a.dataset.term];
  if (!def) return;
  tipFor = a;
  tip.textContent = def[1];
  tip.hidden = false;
  const r = a.getBoundingClientRect();
  const w = Math.min(320, window.innerWidth - 16);
  tip.style.width = `${w}px`;
  tip.style.left = `${Math.max(8, Math.min(r.left, window.innerWidth - w - 8))}px`;
  const below = r.bottom + 6;
  const height = tip.offsetHeight;
  tip.style.top = `${below + height > window.innerHeight && r.top > height + 6 ? r.top - height - 6 : below}px`;
}

function hideTip() {
  tipFor = null;
  if (tip) tip.hidden = true;
}

/** What the drafts are (SpecTr and multi-round draft either shape). */
const DRAFTS = {
  iid: "Adds {k} independent draft sequences",
  tree: "Adds a draft tree: the branching per depth shares prefixes, so many candidates cost few draft calls",
};
/** How SpecTr selects among the drafts at each position. */
const SELECTION = {
  kseq: "; {kseq} tests them together at each position, so one of several guesses can survive.",
  race: "; at each position a ratio race {race} picks one of them: the highest acceptance any selection can reach ({otm}).",
};

/** One sentence per method (given its draft shape and selection): what it adds, and whether the output follows the target exactly. */
export const METHODS = {
  autoregressive: { lossless: true, text: () => "The baseline: the target model alone, one forward pass per character." },
  speculative: { lossless: true, text: () => "Adds a small draft model: it proposes {gamma} characters, the target scores them in one pass and keeps each with probability {ratio}; a rejected one is replaced from the {residual}." },
  spectr: { lossless: true, text: (s) => DRAFTS[s.shape] + SELECTION[s.selection] },
  multiround: { lossless: true, text: (s) => `${DRAFTS[s.shape]}; at each position they are tested one after another, each against the {residual} the previous rejections left (SpecInfer).` },
  mentored: { lossless: false, text: () => "Adds a KL budget {D}: more drafts are accepted because the output may drift from the target by at most D {nats} per character." },
  typical: { lossless: false, text: () => "Medusa's rule: a guess is kept whenever the target gives it more than min({epsilon}, {delta}·e^(−H)), H the target's entropy, and replaced by a draw from the target otherwise. Plausible guesses pass even where the target would rarely pick them." },
  lookup: { lossless: true, text: () => "No draft model: the guesses copy what followed the last earlier occurrence of the context's final {ngram} characters (then shorter ones). A copied guess x is a sure bet of the draft, so it is kept with probability target(x), and a rejection draws from the target without x." },
};

/**
 * The sentence of settings `s` (method, shape, selection) and its exactness, for the
 * settings panel. With a bug planted (`bug`, bugs.js) the method is not what runs: the
 * badge and the sentence say so, and what the bug does.
 */
export function describeMethod(s, bug = null) {
  const m = METHODS[s.method];
  const box = $("method-help");
  const key = `${s.method} ${s.shape} ${s.selection} ${bug?.name ?? ""}`;
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.replaceChildren();
  if (!m) return;
  const exact = m.lossless && !bug;
  const badge = h("span", exact ? "lossless yes" : "lossless no", bug ? "bug planted" : m.lossless ? "lossless" : "not lossless");
  box.append(badge, " ", rich(m.text(s)), " ",
    bug
      ? `${bugSentence(bug)} The method above is not what runs: the text need not follow the target's distribution, and the lab below measures how far it moves.`
      : m.lossless ? "The text follows the target's distribution exactly." : s.method === "mentored" ? "The text does not follow the target exactly: it is within D of it." : "The text does not follow the target exactly, and nothing bounds how far it moves: the lab and the KL chart measure it.");
  box.dataset.lossless = String(exact);
  box.dataset.method = s.method;
  box.dataset.bug = bug?.name ?? "";
}
