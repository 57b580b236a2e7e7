// The teaching page's hostile-input table (run by run.mjs after its other tests; one browser,
// one page). Each row is something a student might type, paste or put in a link, and what
// the page must then do:
//   refused:  the error banner shows the message, the page's error code and field are the
//             row's, the field's control is marked, the status says "not running", no model
//             ran, the field keeps what was typed. Where the row gives the options the
//             package gets (`pkg`), a second instance of the package's generate() must
//             refuse them with the same code and field, and the page must show its message
//             word for word (the package checks every option; the page restates no limit);
//             where the row gives a `message`, it is the page's own (what only the page can
//             see: text typed that no number sent can carry, characters outside the alphabet
//             with their positions, the race's repeats);
//   accepted: it generates, and what is shown is what ran (the options sent, and with `keys`
//             exactly those, the outputs beside the sliders, the output text is the engine's
//             text, and where the row asks, an independent run of the package with the same
//             options gives that text);
//   notice:   (links) the page opens with the control at a value it can take and a notice
//             saying what the link asked for and what the control holds instead.
// Every row also fails on a page error, a console error, or a main-thread task over 1.5 s.
// After the table the page must still generate the greedy text it generated at the start.

const ALPHA_PROMPT = "ROMEO:\nWhat say you, my lord? Speak!\n";
/** A 100,000-character prompt of characters the models know. */
const BIG = ALPHA_PROMPT.repeat(Math.ceil(100_000 / ALPHA_PROMPT.length)).slice(0, 100_000);
/** The same with an 'é' at character 90,001. */
const BIG_BAD = `${BIG.slice(0, 90_000)}é${BIG.slice(90_001)}`;
const lineCol = (text, i) => {
  const before = text.slice(0, i);
  const line = before.split("\n").length;
  return [line, i - before.lastIndexOf("\n")];
};
const [badLine, badCol] = lineCol(BIG_BAD, 90_000);

/** The settings every control row starts from (the controls set without events, then the row's). */
const BASE = { prompt: "ROMEO:\n", method: "speculative", shape: "iid", selection: "kseq", gamma: 4, drafts: 3, tree: "2,2,1", kl: 34, temperature: 0.8, topK: 0, topP: 1, seed: "1", maxTokens: "12", dynamicGamma: false, "race-repeats": "3", speed: 6 };
/** The generate options of BASE (for the package's own verdict on a refused row). */
const BASE_OPTIONS = { prompt: "ROMEO:\n", method: "speculative", gamma: 4, temperature: 0.8, seed: 1, maxTokens: 12 };

const NOT_RUN = /^not running: fix /;
const eq = (a, b) => JSON.stringify(a) === JSON.stringify(b);
/**
 * The control an error's field is about: the control whose id is the option's name
 * (`topK`, `maxTokens`, `tree` for "tree[1]"), but for the race's own repeats field.
 */
const controlOf = (field) => (field === "repeats" ? "race-repeats" : field.replace(/\[\d+\]$/, ""));
/** The options every method sends, and each method's own. */
const COMMON = ["maxTokens", "method", "prompt", "recordDistributions", "seed", "temperature"];
const TREE = { method: "spectr", selection: "kseq", gamma: undefined, tree: undefined };
const ones = (n) => Array(n).fill(1);

/** The table. `prompt` pastes, `controls` sets (input + change), `typed` types into number fields. */
export const ROWS = [
  // ---------- the prompt ----------
  {
    name: "a pasted 100 KB prompt",
    prompt: BIG,
    accepted: {
      ref: true,
      check: ({ h, out }) => [
        h.options.prompt.length === 100_000 && out.cut === String(100_000 - 128) && out.promptText === BIG.slice(-128) && /^\[99,872 earlier characters of the 100,000-character prompt not shown: the models read only its last 128\]/.test(out.cutText),
        `the output shows the prompt's last 128 characters after "${out.cutText?.trim()}"`,
      ],
    },
  },
  {
    name: "a 100 KB prompt with an 'é' at character 90,001",
    prompt: BIG_BAD,
    refused: { code: "bad_prompt", field: "prompt", message: new RegExp(`^The prompt contains 'é' \\(U\\+00E9\\) at character 90001 \\(line ${badLine}, column ${badCol}\\), which the models never saw`), pkg: { prompt: BIG_BAD } },
  },
  { name: "naïve", prompt: "naïve", refused: { code: "bad_prompt", field: "prompt", message: /^The prompt contains 'ï' \(U\+00EF\) at character 3, which/, pkg: { prompt: "naïve" } } },
  { name: "naïve with a combining diaeresis", prompt: "nai\u0308ve", refused: { code: "bad_prompt", field: "prompt", message: /'◌̈' \(U\+0308, a combining mark\) at character 4,/, pkg: { prompt: "nai\u0308ve" } } },
  { name: "an emoji", prompt: "ROMEO 😀:", refused: { code: "bad_prompt", field: "prompt", message: /'😀' \(U\+1F600\) at character 7,/, pkg: { prompt: "ROMEO 😀:" } } },
  { name: "a tab", prompt: "ROMEO:\tO", refused: { code: "bad_prompt", field: "prompt", message: /a tab \(U\+0009\) at character 7,/, pkg: { prompt: "ROMEO:\tO" } } },
  { name: "a NUL", prompt: "RO\0MEO", refused: { code: "bad_prompt", field: "prompt", message: /a NUL \(U\+0000\) at character 3,/, pkg: { prompt: "RO\0MEO" } } },
  {
    name: "several strangers, one repeated, on line 2",
    prompt: "ROMEO:\nnaïve ïdea «x»",
    refused: { code: "bad_prompt", field: "prompt", message: /^The prompt contains 'ï' \(U\+00EF\) at character 10 \(line 2, column 3\) \(and 1 more time\), '«' \(U\+00AB\) at character 19 \(line 2, column 12\), '»' \(U\+00BB\) at character 21 \(line 2, column 14\), which/ },
  },
  { name: "an empty prompt", prompt: "", refused: { code: "invalid_option", field: "prompt", pkg: { prompt: "" } } },
  { name: "a prompt of one newline", prompt: "\n", accepted: { options: { prompt: "\n" } } },
  // ---------- tokens (a number field; the package's range) ----------
  { name: "tokens 1", typed: { maxTokens: "1" }, accepted: { options: { maxTokens: 1 } } },
  {
    name: "tokens 300 (the context window slides)",
    typed: { maxTokens: "300" },
    controls: { temperature: 0 },
    accepted: {
      ref: { method: "autoregressive", gamma: undefined },
      options: { maxTokens: 300 },
      check: ({ h, out }) => [out.roundLabel.startsWith(`round ${h.shownRounds.length} · `) && h.pageMetrics.emittedTokens === 300, `the stage's last round is labelled "${out.roundLabel}" of ${h.shownRounds.length} over the slide, 300 characters counted`],
    },
  },
  // At 8×, so that the row's Pause click lands while the run is still paced.
  { name: "tokens 65536 (the package's limit)", typed: { maxTokens: "65536" }, controls: { speed: 5 }, accepted: { partial: true, options: { maxTokens: 65536 } } },
  { name: "tokens 65537", typed: { maxTokens: "65537" }, refused: { code: "invalid_option", field: "maxTokens", pkg: { maxTokens: 65537 } } },
  { name: "tokens 0", typed: { maxTokens: "0" }, refused: { code: "invalid_option", field: "maxTokens", pkg: { maxTokens: 0 } } },
  { name: "tokens -0", typed: { maxTokens: "-0" }, refused: { code: "invalid_option", field: "maxTokens", pkg: { maxTokens: -0 } } },
  { name: "tokens empty", typed: { maxTokens: "" }, refused: { code: "invalid_option", field: "maxTokens", message: /^The tokens field is empty: type a number\.$/ } },
  { name: "tokens abc", typed: { maxTokens: "abc" }, refused: { code: "invalid_option", field: "maxTokens", message: /^The tokens field is empty: type a number\.$/ } },
  { name: "tokens 1e309", typed: { maxTokens: "1e309" }, refused: { code: "invalid_option", field: "maxTokens", message: /^The tokens field holds text the browser cannot read as a number\.$/ } },
  { name: "tokens --1", typed: { maxTokens: "--1" }, refused: { code: "invalid_option", field: "maxTokens", message: /^The tokens field holds text the browser cannot read as a number\.$/ } },
  { name: "tokens 2.5", typed: { maxTokens: "2.5" }, refused: { code: "invalid_option", field: "maxTokens", pkg: { maxTokens: 2.5 } } },
  { name: "tokens 1e1", typed: { maxTokens: "1e1" }, accepted: { options: { maxTokens: 10 } } },
  // ---------- seed (a number field) ----------
  { name: "seed 0", typed: { seed: "0" }, accepted: { options: { seed: 0 }, keep: "seed0" } },
  { name: "seed -0", typed: { seed: "-0" }, accepted: { options: { seed: 0 }, check: ({ h, kept }) => [h.summary.text === kept.seed0, "the same text as seed 0"] } },
  { name: "seed 2^53-1", typed: { seed: "9007199254740991" }, accepted: { options: { seed: 9007199254740991 } } },
  { name: "seed 2^53", typed: { seed: "9007199254740992" }, refused: { code: "invalid_option", field: "seed", pkg: { seed: 9007199254740992 } } },
  { name: "seed 2^53+1 (Number() reads 2^53)", typed: { seed: "9007199254740993" }, refused: { code: "invalid_option", field: "seed", message: /^The seed field holds "9007199254740993", which a JavaScript number cannot hold exactly: it would be read as 9007199254740992\.$/ } },
  { name: "seed 2^52+0.5 (Number() reads 2^52)", typed: { seed: "4503599627370496.5" }, refused: { code: "invalid_option", field: "seed", message: /"4503599627370496\.5", which a JavaScript number cannot hold exactly: it would be read as 4503599627370496\.$/ } },
  { name: "seed -1", typed: { seed: "-1" }, refused: { code: "invalid_option", field: "seed", pkg: { seed: -1 } } },
  { name: "seed 1e309", typed: { seed: "1e309" }, refused: { code: "invalid_option", field: "seed", message: /^The seed field holds text the browser cannot read as a number\.$/ } },
  { name: "seed empty", typed: { seed: "" }, refused: { code: "invalid_option", field: "seed", message: /^The seed field is empty/ } },
  // ---------- sliders, at both ends (a slider cannot hold a value beyond them: see the links) ----------
  { name: "γ 1", controls: { gamma: 1 }, accepted: { options: { gamma: 1 }, shown: { "gamma-out": "1" }, check: ({ h }) => [h.shownRounds[0].branching.length === 1, "1 draft in the first round"] } },
  { name: "γ 16", controls: { gamma: 16 }, typed: { maxTokens: "40" }, accepted: { options: { gamma: 16 }, shown: { "gamma-out": "16" }, check: ({ h }) => [h.shownRounds[0].branching.length === 16, "16 drafts in the first round"] } },
  { name: "γ 17 set on the slider", controls: { gamma: 17 }, accepted: { options: { gamma: 16 }, shown: { "gamma-out": "16" } } },
  { name: "k 1 (SpecTr)", controls: { method: "spectr", drafts: 1 }, accepted: { options: { method: "spectr", drafts: 1 }, shown: { "drafts-out": "1" } } },
  { name: "k 8 (SpecTr)", controls: { method: "spectr", drafts: 8 }, accepted: { options: { method: "spectr", drafts: 8 }, shown: { "drafts-out": "8" } } },
  { name: "D 0 (mentored)", controls: { method: "mentored", kl: 0 }, accepted: { options: { method: "mentored", kl: 0 }, shown: { "kl-out": "0" }, keys: [...COMMON, "gamma", "kl"] } },
  { name: "D 5 (mentored)", controls: { method: "mentored", kl: 60 }, accepted: { options: { method: "mentored", kl: 5 }, shown: { "kl-out": "5" } } },
  { name: "temperature 0", controls: { temperature: 0 }, accepted: { ref: true, options: { temperature: 0 }, shown: { "temperature-out": "0 (greedy)" } } },
  { name: "temperature 2", controls: { temperature: 2 }, accepted: { options: { temperature: 2 }, shown: { "temperature-out": "2.00" } } },
  { name: "top-k off (0)", controls: { topK: 0 }, accepted: { options: { topK: undefined }, shown: { "topK-out": "off" } } },
  { name: "top-k 65", controls: { topK: 65 }, accepted: { options: { topK: 65 }, shown: { "topK-out": "65" } } },
  { name: "top-p 0.05", controls: { topP: 0.05 }, accepted: { ref: true, options: { topP: 0.05 }, shown: { "topP-out": "0.05" } } },
  { name: "top-p 1 (off)", controls: { topP: 1 }, accepted: { options: { topP: undefined }, shown: { "topP-out": "1 (off)" } } },
  { name: "dynamic γ", controls: { dynamicGamma: true }, accepted: { options: { dynamicGamma: true }, keys: [...COMMON, "dynamicGamma", "gamma"] } },
  // ---------- only the options the method uses (the package refuses the others) ----------
  { name: "autoregressive with dynamic γ ticked", controls: { dynamicGamma: true, method: "autoregressive" }, accepted: { keys: COMMON } },
  { name: "SpecTr with dynamic γ ticked", controls: { dynamicGamma: true, method: "spectr" }, accepted: { keys: [...COMMON, "drafts", "gamma", "selection"] } },
  // ---------- SpecTr's selection and the draft shape (one option each) ----------
  {
    name: "SpecTr with the ratio race",
    controls: { method: "spectr", selection: "race", drafts: 3 },
    accepted: {
      ref: true,
      options: { method: "spectr", selection: "race", drafts: 3 },
      keys: [...COMMON, "drafts", "gamma", "selection"],
      check: ({ h }) => [h.shownRounds.every((t) => t.method === "spectr" && t.steps.every((s) => s.plan?.kind === "race" && s.plan.k === s.candidates.length)), "every depth has the race's plan over its live drafts"],
    },
  },
  { name: "multi-round with the race selected (not sent)", controls: { selection: "race", method: "multiround" }, accepted: { options: { method: "multiround", selection: undefined }, keys: [...COMMON, "drafts", "gamma"] } },
  { name: "multi-round drafting a tree", controls: { method: "multiround", shape: "tree", tree: "2,2" }, accepted: { options: { method: "multiround", tree: [2, 2] }, keys: [...COMMON, "tree"] } },
  // ---------- the draft tree (a text field: the page reads numbers, the package checks them) ----------
  { name: "tree 2,a", controls: { method: "spectr", shape: "tree", tree: "2,a" }, refused: { code: "invalid_option", field: "tree", message: /^tree branching must be numbers separated by commas, e\.g\. 2,2,1 — got "2,a"$/ } },
  { name: "tree empty", controls: { method: "spectr", shape: "tree", tree: "" }, refused: { code: "invalid_option", field: "tree", pkg: { ...TREE, tree: [] } } },
  { name: "tree 2,0,1 (a zero width)", controls: { method: "spectr", shape: "tree", tree: "2,0,1" }, refused: { code: "invalid_option", field: "tree[1]", pkg: { ...TREE, tree: [2, 0, 1] } } },
  { name: "tree 0", controls: { method: "spectr", shape: "tree", tree: "0" }, refused: { code: "invalid_option", field: "tree[0]", pkg: { ...TREE, tree: [0] } } },
  { name: "tree 2,1.5", controls: { method: "spectr", shape: "tree", tree: "2,1.5" }, refused: { code: "invalid_option", field: "tree[1]", pkg: { ...TREE, tree: [2, 1.5] } } },
  { name: "tree 2048 (one level too wide)", controls: { method: "spectr", shape: "tree", tree: "2048" }, refused: { code: "invalid_option", field: "tree[0]", pkg: { ...TREE, tree: [2048] } } },
  { name: "tree of 65 levels", controls: { method: "spectr", shape: "tree", tree: ones(65).join(",") }, refused: { code: "invalid_option", field: "tree", pkg: { ...TREE, tree: ones(65) } } },
  { name: "tree of 300 levels", controls: { method: "spectr", shape: "tree", tree: ones(300).join(",") }, refused: { code: "invalid_option", field: "tree", pkg: { ...TREE, tree: ones(300) } } },
  { name: "tree of 100 KB garbage", controls: { method: "spectr", shape: "tree", tree: "x#".repeat(50_000) }, refused: { code: "invalid_option", field: "tree", message: /got "x#x#.{36}…" \(100000 characters\)$/ } },
  { name: "tree 64,32 (2,048 leaves)", controls: { method: "spectr", shape: "tree", tree: "64,32" }, refused: { code: "invalid_option", field: "tree", pkg: { ...TREE, tree: [64, 32] } } },
  { name: "tree 32,32 (1,056 nodes)", controls: { method: "spectr", shape: "tree", tree: "32,32" }, refused: { code: "invalid_option", field: "tree", pkg: { ...TREE, tree: [32, 32] } } },
  // ---------- the race (its repeats field, the page's own; the race checks its options as Play does) ----------
  { name: "race repeats 0", button: "#race", typed: { "race-repeats": "0" }, refused: { code: "invalid_option", field: "repeats", message: /^repeats must be a whole number from 1 to 10; got 0\. The race did not run\.$/ } },
  { name: "race repeats 11", button: "#race", typed: { "race-repeats": "11" }, refused: { code: "invalid_option", field: "repeats", message: /got 11\./ } },
  { name: "race repeats 1e309", button: "#race", typed: { "race-repeats": "1e309" }, refused: { code: "invalid_option", field: "repeats", message: /^The repeats field holds text the browser cannot read as a number\. The race did not run\.$/ } },
  { name: "race repeats 2.5", button: "#race", typed: { "race-repeats": "2.5" }, refused: { code: "invalid_option", field: "repeats", message: /got 2\.5\./ } },
  { name: "race with an emoji in the prompt", button: "#race", prompt: "ROMEO 😀:", refused: { code: "bad_prompt", field: "prompt", message: /'😀' \(U\+1F600\) at character 7,/ } },
  { name: "race with tokens 65537", button: "#race", typed: { maxTokens: "65537" }, refused: { code: "invalid_option", field: "maxTokens", pkg: { maxTokens: 65537 } } },
  { name: "tree 8,8 (64 leaves)", controls: { method: "spectr", shape: "tree", tree: "8,8" }, accepted: { options: { method: "spectr", tree: [8, 8] } } },
  { name: "tree ' 1 × 1 · 1 '", controls: { method: "spectr", shape: "tree", tree: " 1 × 1 · 1 " }, accepted: { ref: true, options: { method: "spectr", tree: [1, 1, 1] }, keys: [...COMMON, "selection", "tree"] } },
  { name: "tree 2,2.0000000000000001 (read as 2,2)", controls: { method: "spectr", shape: "tree", tree: "2,2.0000000000000001" }, refused: { code: "invalid_option", field: "tree", message: /^tree branching at depth 2 is "2\.0000000000000001", which a JavaScript number cannot hold exactly: it would be read as 2$/ } },
  { name: "tree of 64 levels", controls: { method: "spectr", shape: "tree", tree: ones(64).join(",") }, accepted: { options: { tree: ones(64) } } },
];

/** Links: the page opened with these parameters. `notice` null: no notice about the address. */
export const LINKS = [
  { name: "valid settings", query: "gamma=5&drafts=2&temperature=0.5&topK=10&topP=0.9&seed=3&maxTokens=20&kl=0.049", notice: null, values: { gamma: "5", drafts: "2", temperature: "0.5", topK: "10", topP: "0.9", seed: "3", maxTokens: "20" } },
  { name: "γ 17", query: "gamma=17", notice: /gamma=17 is not on the slider \(1–16 in steps of 1\); γ is 16/, values: { gamma: "16" } },
  { name: "γ 0", query: "gamma=0", notice: /gamma=0 is not on the slider \(1–16 in steps of 1\); γ is 1/, values: { gamma: "1" } },
  { name: "γ abc", query: "gamma=abc", notice: /gamma=abc is not a finite number \(the slider goes 1–16 in steps of 1\); γ is (\d+)/, values: { gamma: (v, m) => !!m && v === m[1] } },
  // A value read as typed: Number() reads this as 4, which the slider holds, but the link asks for more.
  { name: "γ 4.0000000000000001", query: "gamma=4.0000000000000001", notice: /gamma=4\.0000000000000001 is not on the slider \(1–16 in steps of 1\); γ is 4\b/, values: { gamma: "4" } },
  { name: "γ 4.0 (the same number)", query: "gamma=4.0", notice: null, values: { gamma: "4" } },
  { name: "temperature 1.00000000000000001", query: "temperature=1.00000000000000001", notice: /temperature=1\.00000000000000001 is not on the slider .*; temperature is 1\b/ },
  { name: "γ 2.5", query: "gamma=2.5", notice: /gamma=2\.5 is not on the slider .*; γ is [23]\b/ },
  { name: "k 9", query: "drafts=9", notice: /drafts=9 is not on the slider \(1–8 in steps of 1\); k is 8/, values: { drafts: "8" } },
  { name: "temperature 2.05", query: "temperature=2.05", notice: /temperature=2\.05 is not on the slider \(0–2 in steps of 0\.05\); temperature is 2/, values: { temperature: "2" } },
  { name: "temperature 1e309", query: "temperature=1e309", notice: /temperature=1e309 is not a finite number/ },
  { name: "temperature -0", query: "temperature=-0", notice: null, values: { temperature: (v) => Number(v) === 0 } },
  { name: "top-k 66", query: "topK=66", notice: /topK=66 is not on the slider \(0–65 in steps of 1\); top-k is 65/, values: { topK: "65" } },
  { name: "top-p 0", query: "topP=0", notice: /topP=0 is not on the slider \(0\.05–1 in steps of 0\.05\); top-p is 0\.05/, values: { topP: "0.05" } },
  { name: "D 10", query: "kl=10", notice: /kl=10 is not on the slider \(0, then 0\.001 to 5 on a log scale\); D is 5/ },
  { name: "D -1", query: "kl=-1", notice: /kl=-1 is not on the slider .*; D is 0\b/ },
  { name: "D abc", query: "kl=abc", notice: /kl=abc is not a finite number; D is 0\b/ },
  { name: "D 0.05 (off the log grid)", query: "kl=0.05", notice: /kl=0\.05 is not on the slider .*; D is 0\.049/ },
  { name: "tokens abc", query: "maxTokens=abc", notice: /maxTokens=abc is not a finite number; tokens is empty/, values: { maxTokens: "" } },
  { name: "method bogus", query: "method=bogus", notice: /method=bogus is not one of autoregressive, speculative, spectr, multiround, mentored, typical, lookup; method is speculative/, values: { method: "speculative" } },
  // Former method names (of the page and of the package): SpecTr with that shape or selection, said in a notice.
  { name: "former method spectr-tree", query: "method=spectr-tree&tree=2,2,1", notice: /method=spectr-tree, the former name of SpecTr drafting a tree: it is now method=spectr&shape=tree/, values: { method: "spectr", shape: "tree", selection: "kseq", tree: "2,2,1" } },
  { name: "former method spectr-otm", query: "method=spectr-otm&drafts=3", notice: /method=spectr-otm, the former name of SpecTr with the ratio race \(the optimal selection\): it is now method=spectr&selection=race/, values: { method: "spectr", shape: "iid", selection: "race", drafts: "3" } },
  { name: "former short names", query: "k=2&D=0.049&tokens=20&topk=10&drafts=3", notice: /former names of settings: k=2 is the former name of drafts \(now drafts=3\); D=0\.049 is the former name of kl \(now kl=0\.049\); topk=10 is the former name of topK \(now topK=10\); tokens=20 is the former name of maxTokens \(now maxTokens=20\)/, values: { drafts: "3", topK: "10", maxTokens: "20" } },
  { name: "former method otm", query: "method=otm", notice: /method=otm, the former name of SpecTr with the ratio race/, values: { method: "spectr", selection: "race" } },
  { name: "shape and selection", query: "method=spectr&shape=tree&selection=race&tree=4,2", notice: null, values: { method: "spectr", shape: "tree", selection: "race", tree: "4,2" } },
  { name: "selection otm", query: "method=spectr&selection=otm", notice: /selection=otm is not one of kseq, race; selection is kseq/, values: { selection: "kseq" } },
  { name: "shape bogus", query: "method=multiround&shape=dag", notice: /shape=dag is not one of iid, tree; drafts as is iid/, values: { method: "multiround", shape: "iid" } },
  { name: "speed 3", query: "speed=3", notice: /speed=3 is not one of 0\.25, 0\.5, 1, 2, 4, 8, instant; speed is 1×/ },
  { name: "a 300-character link value", query: `gamma=${"9".repeat(300)}`, notice: /gamma=9{20}… is not on the slider/ },
];

export function addHostileTests(tests, { browser, open, loaded, hook, check }) {
  tests.hostile = async () => {
    const b = await browser();
    const consoleErrors = [];
    try {
      const started = Date.now();
      // ---------- links ----------
      for (const link of LINKS) {
        try {
        const page = await open(b.context, `backend=cpu&autoplay=0&${link.query}`);
        const seen = await page.evaluate(() => ({
          notice: document.getElementById("notice").hidden ? "" : document.getElementById("notice").textContent,
          values: Object.fromEntries(["method", "shape", "selection", "tree", "gamma", "drafts", "kl", "temperature", "topK", "topP", "seed", "maxTokens"].map((id) => [id, document.getElementById(id).value])),
          shown: Object.fromEntries(["gamma-out", "drafts-out", "kl-out", "temperature-out", "topK-out", "topP-out"].map((id) => [id, document.getElementById(id).textContent])),
        }));
        const m = link.notice ? link.notice.exec(seen.notice) : null;
        const noticeOk = link.notice ? !!m : !/address asks for/.test(seen.notice);
        const valuesOk = Object.entries(link.values ?? {}).every(([id, want]) => (typeof want === "function" ? want(seen.values[id], m) : seen.values[id] === want));
        // What the notice says the control holds is what it holds and what its output shows.
        const said = /γ is (\d+)/.exec(seen.notice);
        const consistent = !said || (said[1] === seen.values.gamma && said[1] === seen.shown["gamma-out"]);
        check(noticeOk && valuesOk && consistent, `link ${link.name} (?${link.query.slice(0, 60)}): ${link.notice ? `notice "${m?.[0] ?? "—"}"` : "no notice about the address"}`, JSON.stringify(seen));
        } catch (error) {
          check(false, `link ${link.name} threw`, error.stack ?? String(error));
        }
      }
      const linksDone = Date.now();

      // ---------- the page, live ----------
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=40&seed=1&temperature=0");
      page.on("console", (msg) => {
        if (msg.type() === "error" && !/favicon|404 \(Not Found\)/.test(msg.text())) consoleErrors.push(msg.text());
      });
      await loaded(page);
      await page.evaluate(async () => {
        window.__hostileLong = 0;
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) window.__hostileLong = Math.max(window.__hostileLong, e.duration);
        }).observe({ type: "longtask" });
        // What a click does to the output, counted (not timed): nodes added anywhere in it,
        // and resets (its children removed; each starts a fresh chunk and line, 2 nodes).
        window.__hostileOutput = { added: 0, resets: 0 };
        new MutationObserver((records) => {
          for (const r of records) {
            window.__hostileOutput.added += r.addedNodes.length;
            if (r.target.id === "output" && r.removedNodes.length) window.__hostileOutput.resets += 1;
          }
        }).observe(document.getElementById("output"), { childList: true, subtree: true });
        // A second instance of the package: the reference runs and the package's own verdicts.
        const { Specula } = await import("./specula/index.js");
        window.__hostileRef = await Specula.load({ backend: "cpu" });
      });
      // Keys set to undefined are left out (JSON), as the page leaves them out.
      const plain = (options) => JSON.parse(JSON.stringify(options, (k, v) => (v === Infinity ? "__inf" : v)), (k, v) => (v === "__inf" ? Infinity : v));
      /** The package's generate() on `options` in the reference instance: its text or its error. */
      const viaPackage = (options) =>
        page.evaluate(async (options) => {
          const s = window.__hostileRef;
          try {
            const it = s.generate({ ...options, recordDistributions: false });
            let r = await it.next();
            while (!r.done) r = await it.next();
            return { accepted: true, text: r.value.text };
          } catch (error) {
            return { code: error.code, field: error.field, message: error.message };
          }
        }, plain(options));
      /** The package's verdict on each of `list` (its error, or accepted: its first round, then aborted), in one call. */
      const viaPackageAll = (list) =>
        page.evaluate(
          async (list) => {
            const s = window.__hostileRef;
            const out = [];
            for (let options of list) {
              options = { ...options, recordDistributions: false };
              try {
                const it = s.generate(options);
                await it.next();
                s.abort();
                try {
                  while (!(await it.next()).done);
                } catch {}
                out.push({ accepted: true });
              } catch (error) {
                out.push({ code: error.code, field: error.field, message: error.message });
              }
            }
            return out;
          },
          list.map(plain),
        );
      const outputText = () => page.$$eval("#output .otok", (s) => s.map((x) => x.textContent.replace("↵\n", "\n")).join(""));
      const idle = () => page.waitForFunction(() => window.__speculaPage.queued === 0, null, { timeout: 60_000, polling: 50 });

      // The start: a greedy run, its text the package's autoregressive greedy text.
      const t0 = Date.now();
      await page.click("#play");
      await page.waitForFunction(() => window.__speculaPage.finished && window.__speculaPage.source === "live", null, { timeout: 60_000, polling: 100 });
      const first = await hook(page);
      const greedyRef = await viaPackage({ ...first.options, method: "autoregressive", gamma: undefined, recordDistributions: false });
      check(!first.error && first.summary.text.length === 40 && first.summary.text === greedyRef.text && (await outputText()) === first.summary.text,
        `start: the greedy run shows "${first.summary.text.replace(/\n/g, "↵")}", the package's autoregressive greedy text`, JSON.stringify({ page: first.summary?.text, ref: greedyRef }));

      // The package's own verdict on each refused row's options: one call for all of them
      // (each distinct option set once), before the table.
      const pkgKey = (options) => JSON.stringify(options, (k, v) => (v === Infinity ? "__inf" : v));
      const pkgOptions = [...new Map(ROWS.filter((r) => r.refused?.pkg).map((r) => [pkgKey({ ...BASE_OPTIONS, ...r.refused.pkg }), { ...BASE_OPTIONS, ...r.refused.pkg }])).values()];
      const pkgVerdicts = new Map(
        (await viaPackageAll(pkgOptions)).map((verdict, i) => [pkgKey(pkgOptions[i]), verdict]),
      );

      const kept = {};
      let rowsRun = 0;
      for (const row of ROWS) {
        const t = Date.now();
        const label = `hostile: ${row.name}`;
        const before = await hook(page);
        // The base settings, without events (nothing runs), then the row's, as a user sets them.
        await page.evaluate((base) => {
          for (const [id, v] of Object.entries(base)) {
            const el = document.getElementById(id);
            if (el.type === "checkbox") el.checked = v;
            else el.value = String(v);
          }
          document.getElementById("method").dispatchEvent(new Event("input", { bubbles: true }));
          window.__hostileLong = 0;
        }, BASE);
        if (row.prompt !== undefined) {
          // A paste: the text arrives at once (one input event).
          await page.evaluate((text) => {
            const el = document.getElementById("prompt");
            el.value = text;
            el.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertFromPaste" }));
          }, row.prompt);
        }
        for (const [id, v] of Object.entries(row.controls ?? {})) {
          await page.evaluate(({ id, v }) => {
            const el = document.getElementById(id);
            if (el.type === "checkbox") el.checked = v;
            else el.value = String(v);
            el.dispatchEvent(new Event("input", { bubbles: true }));
            el.dispatchEvent(new Event("change", { bubbles: true }));
          }, { id, v });
        }
        for (const [id, text] of Object.entries(row.typed ?? {})) {
          await page.focus(`#${id}`);
          await page.keyboard.press("Control+A");
          await page.keyboard.press("Backspace");
          if (text) await page.keyboard.type(text);
        }
        await idle();
        const runsBefore = (await hook(page)).modelRuns;
        const typedShows = await page.evaluate((ids) => Object.fromEntries(ids.map((id) => [id, document.getElementById(id).value])), Object.keys(row.typed ?? {}));
        const clickedAt = Date.now();
        const button = row.button ?? "#play";
        const errorsBefore = b.problems.length + consoleErrors.length;
        await page.evaluate(() => (window.__hostileOutput = { added: 0, resets: 0 }));
        await page.click(button);
        await idle();
        if (row.refused) {
          const r = row.refused;
          await page.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 10_000, polling: 50 }).catch(() => {});
          const control = controlOf(r.field);
          // What the page shows and holds, in one call.
          const { seen, h, stillShows, long, output } = await page.evaluate(({ control, ids }) => ({
            seen: {
              error: document.getElementById("error").hidden ? null : document.getElementById("error").textContent,
              state: document.getElementById("run-state").textContent,
              invalid: document.getElementById(control)?.getAttribute("aria-invalid") ?? null,
              marked: [...document.querySelectorAll("[aria-invalid='true']")].map((e) => e.id),
              verdict: document.getElementById("race-verdict").textContent,
            },
            h: { errorCode: window.__speculaPage.errorCode, errorField: window.__speculaPage.errorField, errorControl: window.__speculaPage.errorControl, modelRuns: window.__speculaPage.modelRuns },
            stillShows: Object.fromEntries(ids.map((id) => [id, document.getElementById(id).value])),
            long: window.__hostileLong,
            output: window.__hostileOutput,
          }), { control, ids: Object.keys(row.typed ?? {}) });
          const problems = [];
          const verdict = r.pkg ? pkgVerdicts.get(pkgKey({ ...BASE_OPTIONS, ...r.pkg })) : null;
          // The page's own message, or else the package's, word for word.
          if (r.message ? !r.message.test(seen.error ?? "") : seen.error !== verdict?.message) {
            problems.push(`message ${JSON.stringify(seen.error?.slice(0, 300))} is not ${r.message ?? `the package's ${JSON.stringify(verdict?.message)}`}`);
          }
          if (h.errorCode !== r.code) problems.push(`code ${h.errorCode}, expected ${r.code}`);
          if (h.errorField !== r.field || h.errorControl !== control || seen.invalid !== "true" || seen.marked.length !== 1) {
            problems.push(`field ${h.errorField}, control ${h.errorControl} (marked: ${seen.marked.join(", ")}), expected ${r.field} on #${control}`);
          }
          if (button === "#play" && !NOT_RUN.test(seen.state)) problems.push(`status "${seen.state}"`);
          if (button === "#race" && !/^Not raced: /.test(seen.verdict)) problems.push(`race verdict "${seen.verdict}"`);
          if (h.modelRuns !== runsBefore) problems.push(`Play ran the models ${h.modelRuns - runsBefore} times`);
          if (!eq(stillShows, typedShows)) problems.push(`the field changed: ${JSON.stringify(typedShows)} → ${JSON.stringify(stillShows)}`);
          let pkgSays = "";
          if (verdict) {
            pkgSays = `; the package: ${verdict.code ?? "accepted"}${verdict.field ? ` on ${verdict.field}` : ""}`;
            if (verdict.code !== r.code || (r.code === "invalid_option" && verdict.field !== r.field)) problems.push(`the package gives ${JSON.stringify(verdict)} for the same options`);
          }
          // Refused before anything runs: nothing drawn beyond the resets' fresh chunks and
          // lines (two resets where a paused run is cancelled first).
          if (output.resets > 2 || output.added > 2 * output.resets) problems.push(`the output was drawn: ${output.added} nodes added, ${output.resets} resets`);
          if (b.problems.length + consoleErrors.length > errorsBefore) problems.push(`errors: ${[...b.problems, ...consoleErrors].slice(-3).join("; ")}`);
          check(problems.length === 0, `${label}: refused, ${r.code} on ${r.field}${pkgSays}: "${(seen.error ?? "").slice(0, 110)}${(seen.error ?? "").length > 110 ? "…" : ""}" (nothing drawn; ${Date.now() - t} ms, longest main-thread task ${long.toFixed(0)} ms)`, problems.join("; "));
        } else {
          const a = row.accepted;
          const done = a.partial
            ? (h) => h.shownRounds.length >= 1 || h.finished
            : (h) => h.finished && h.source === "live";
          // The reference run starts as soon as the page has sent its options (the package's
          // second instance generates beside the page's); its text counts only if the page's
          // run ends with those options (otherwise it runs again with them, below).
          let early = null;
          let refRun = null;
          if (a.ref) {
            early = await page
              .waitForFunction((id) => {
                const h = window.__speculaPage;
                return h.error ? {} : h.runId > id && h.source === "live" && h.options;
              }, before.runId, { timeout: 60_000, polling: 20 })
              .then((handle) => handle.jsonValue())
              .catch(() => ({}));
            refRun = viaPackage({ ...early, ...(a.ref === true ? {} : a.ref) });
            refRun.catch(() => {});
          }
          let timedOut = false;
          await page
            .waitForFunction(
              ({ id, partial }) => {
                const h = window.__speculaPage;
                if (h.error) return true;
                return h.runId > id && h.source === "live" && (partial ? h.shownRounds.length >= 1 || h.finished : h.finished);
              },
              { id: before.runId, partial: !!a.partial },
              { timeout: 60_000, polling: 50 },
            )
            .catch(() => (timedOut = true));
          const took = Date.now() - clickedAt;
          if (a.partial) await page.click("#pause");
          // The theory charts redrawn from the run's distributions (plan() in the worker), awaited after the checks.
          const theoryDrawn = page.waitForFunction(() => window.__speculaPage.theoryIdle === true, null, { timeout: 20_000, polling: 50 }).then(() => true, () => false);
          const h = await hook(page);
          const problems = [];
          if (timedOut) problems.push("no result within 60 s");
          if (h.error) problems.push(`error "${h.error}"`);
          if (!done(h) || h.runId <= before.runId) problems.push("did not run");
          for (const [k, v] of Object.entries(a.options ?? {})) if (!eq(h.options?.[k], v)) problems.push(`options.${k} = ${JSON.stringify(h.options?.[k])}, expected ${JSON.stringify(v)}`);
          const sent = Object.keys(h.options ?? {}).filter((k) => h.options[k] !== undefined).sort();
          if (a.keys && !eq(sent, [...a.keys].sort())) problems.push(`options sent: ${sent.join(", ")}; expected exactly ${[...a.keys].sort().join(", ")}`);
          const shown = await page.evaluate((ids) => Object.fromEntries(ids.map((id) => [id, document.getElementById(id).textContent])), Object.keys(a.shown ?? {}));
          for (const [id, v] of Object.entries(a.shown ?? {})) if (shown[id] !== v) problems.push(`#${id} shows "${shown[id]}", expected "${v}"`);
          const out = await page.evaluate(() => ({
            cut: document.querySelector("#output .prompt-cut")?.dataset.omitted ?? null,
            cutText: document.querySelector("#output .prompt-cut")?.textContent ?? null,
            promptText: document.querySelector("#output .prompt-text")?.textContent ?? null,
            roundLabel: document.getElementById("round-label").textContent,
          }));
          const text = await outputText();
          if (!a.partial && !problems.length) {
            if (text !== h.summary.text) problems.push(`the output shows ${JSON.stringify(text.slice(0, 80))}, the engine's text is ${JSON.stringify(h.summary.text.slice(0, 80))}`);
            if (h.summary.tokens !== h.options.maxTokens || h.summary.text.length !== h.options.maxTokens) problems.push(`${h.summary.tokens} tokens for maxTokens ${h.options.maxTokens}`);
            if (h.pageMetrics.emittedTokens !== h.summary.metrics.emittedTokens) problems.push("the page's metrics differ from the engine's");
            if (!row.prompt || row.prompt.length < 256) if (out.promptText !== h.options.prompt || out.cut !== null) problems.push(`the prompt shown is ${JSON.stringify(out.promptText)}`);
            if (a.ref) {
              const ref = eq(early, h.options) ? await refRun : await viaPackage({ ...h.options, ...(a.ref === true ? {} : a.ref) });
              if (ref.text !== h.summary.text) problems.push(`the package alone gives ${JSON.stringify(ref)}`);
            }
            if (a.keep) kept[a.keep] = h.summary.text;
          }
          let extra = "";
          if (a.check && !problems.length) {
            const [ok, what] = a.check({ h, out, kept });
            extra = `; ${what}`;
            if (!ok) problems.push(`not so: ${what}`);
          }
          const theory = await theoryDrawn;
          if (!theory) problems.push("the theory charts were not drawn within 20 s");
          const { long, output, nodes } = await page.evaluate(() => ({
            long: window.__hostileLong,
            output: window.__hostileOutput,
            nodes: document.getElementById("output").querySelectorAll("*").length,
          }));
          // The page's work per run, counted instead of timed: at most two resets (the click's
          // and the run's), and beyond each reset's fresh chunk and line every node added is
          // still there: the output keeps its spans. Re-drawing it every round, which once
          // made the 4096-token row's main-thread tasks long, adds them again and again.
          if (output.resets > 2 || output.added > nodes + 2 * output.resets) problems.push(`the output was re-drawn: ${output.added} nodes added for the ${nodes} it holds, ${output.resets} resets`);
          if (b.problems.length + consoleErrors.length > errorsBefore) problems.push(`errors: ${[...b.problems, ...consoleErrors].slice(-3).join("; ")}`);
          const what = a.partial ? `generates (round 1 of maxTokens ${h.options?.maxTokens} in ${took} ms, then paused)` : `generates ${JSON.stringify(h.summary?.text.slice(0, 24))}… in ${took} ms${a.ref ? ", the package's text" : ""}${a.keys ? `, sending only ${a.keys.filter((k) => !COMMON.includes(k)).join(", ") || "the common options"}` : ""}`;
          check(problems.length === 0, `${label}: accepted, ${what}${extra}; ${output.added} output nodes added for ${nodes}, ${output.resets} reset; longest main-thread task ${long.toFixed(0)} ms`, problems.join("; "));
        }
        rowsRun += 1;
      }

      // ---------- the end: the greedy run of the start, again ----------
      const id = (await hook(page)).runId; // (the change below starts a run; Play plays it)
      await page.evaluate((base) => {
        for (const [id, v] of Object.entries(base)) {
          const el = document.getElementById(id);
          if (el.type === "checkbox") el.checked = v;
          else el.value = String(v);
        }
        const el = document.getElementById("temperature");
        el.dispatchEvent(new Event("input", { bubbles: true }));
        el.dispatchEvent(new Event("change", { bubbles: true }));
      }, { ...BASE, temperature: 0, maxTokens: "40", seed: "1" });
      await idle();
      await page.click("#play");
      let endTimedOut = false;
      await page.waitForFunction((id) => window.__speculaPage.runId > id && window.__speculaPage.finished && window.__speculaPage.source === "live", id, { timeout: 60_000, polling: 50 }).catch(() => (endTimedOut = true));
      const last = await hook(page);
      check(!endTimedOut && !last.error && last.summary?.text === first.summary.text && (await outputText()) === first.summary.text && eq(last.options, first.options),
        `after the table the page generates the start's greedy text again, with the same options`, JSON.stringify({ timedOut: endTimedOut, start: first.summary.text, end: last.summary?.text, error: last.error }));
      check(b.problems.length === 0 && consoleErrors.length === 0, `hostile: no page errors, console errors, CSP violations or off-origin requests`, [...b.problems, ...consoleErrors].join("; "));
      console.log(`   hostile: ${LINKS.length} links in ${((linksDone - started) / 1000).toFixed(1)} s, ${rowsRun} rows and the two greedy runs in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      await page.evaluate(() => window.__hostileRef?.terminate());
    } finally {
      await b.close();
    }
  };
}
