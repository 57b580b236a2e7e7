// Shared page state, the test hook and tiny helpers used by every module of the page.

export const $ = (id) => document.getElementById(id);
export const params = new URLSearchParams(location.search);
export const fmt = (x, d = 2) => (x === null || x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(d));

/** Everything the page knows about the models and the run on screen (how far it has played: player.js). */
export const S = {
  pkg: null, // the imported `specula` module
  specula: null, // a loaded Specula: the bundled pair
  gguf: null, // a loaded Specula over the student's GGUF pair (gguf.js), held beside it
  chat: false, // whether its prompts go through SmolLM2's chat form (the SmolLM2 pair's preset)
  alphabet: null,
  backend: null,
  recorded: null,
  run: null, // { id, source, options, rounds, arrivals, done, summary, error, finished }
  runSeq: 0,
  metrics: null, // the engine's metrics of the run up to the last round shown (its round report's)
  summary: null, // and their rates
  tokens: [], // output characters: { ch, token, source, round, index }
  selected: null, // index into tokens of the character whose distributions are shown
  picked: false, // true when the student picked that character (then the panel stops following)
  distRound: null, // the round shown in the distributions panel
  races: [],
  notices: new Set(),
};

/** The Specula instance the Models menu names (the bundled pair or the GGUF pair), or null (the n-gram pair runs in the page; a GGUF pair not loaded yet). */
export function active() {
  const source = document.getElementById("source")?.value;
  return source === "gguf" ? S.gguf : source === "bundled" ? S.specula : null;
}

/** Whether the run on screen (or the Models menu, before one) is over a GGUF pair: tokens are text pieces. */
export const pieces = () => (S.run ? S.run.models === "gguf" : document.getElementById("source")?.value === "gguf");

/** The test hook: window.__speculaPage (see tests/www/). */
export const hook = {
  ready: false,
  loaded: false,
  backend: null,
  runId: 0,
  source: null,
  options: null,
  shownRounds: [],
  finished: false,
  summary: null,
  pageMetrics: null,
  error: null,
  errorField: null, // the option the error is about, as the package names it ("maxTokens", "tree[1]")
  errorControl: null, // the id of that option's control, marked aria-invalid
  errorCode: null, // the package's error code for it ("bad_prompt", "invalid_option", …)
  notices: [],
  race: null,
  planCalls: 0,
  theoryIdle: true,
  modelRuns: 0,
  generating: false, // a live generation is running in the worker
  playClicks: 0,
  queued: 0, // transport actions queued or running (run.js enqueue)
  lab: null, // the lab panel: { state, result, reports } (lab.js)
  lossy: null, // the lossy rules' curves { mentored, typical, medusa, here } (theory.js)
  walltime: null, // the walltime chart's theory { gammas, values, alpha, measured, costs } (theory.js)
};
window.__speculaPage = hook;

/** Creates an element with a class and text. */
export function h(tag, cls, text) {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined) n.textContent = text;
  return n;
}
