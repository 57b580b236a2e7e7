// Types of the `specula` package. The data the wasm module hands to JavaScript (options,
// rounds and their traces, metrics, the summary, the checked settings, the limits) is
// declared in `./types.d.ts` and `./types/`, generated from the Rust types (ts-rs), and
// re-exported here; this file declares only the JavaScript API around it. (`./types.js`
// names `./types.d.ts`: Node's ESM resolution wants the extension, and `import type`
// leaves nothing to load at run time.) Notation: the **target** is the model whose
// distribution the output follows; the **draft** is the small model that proposes tokens.

import type {
  BackendChoice,
  BackendInfo,
  Bug,
  CheckedOptions,
  DecodeConfig,
  DecodeOptions as EngineDecodeOptions,
  DraftBackend,
  ErrorCode,
  GpuCalls,
  ThreadCalls,
  Limits,
  LoadOptions,
  MethodName,
  MethodOption,
  PlanMethod,
  PlanOptions as EnginePlanOptions,
  PlanReport,
  PlanSelection,
  RetargetOptions,
  RoundReport,
  SampleResult,
  SampleSettings,
  Selection,
  StageReport,
  Summary,
  TheoryCurves,
  TheoryOptions,
} from "./types.js";

export type {
  ApiError,
  BackendChoice,
  BackendInfo,
  BonusStep,
  BugReport,
  Bug,
  CheckedOptions,
  CpuSimd,
  CpuThreads,
  DecodeConfig,
  DecodeOptions as EngineDecodeOptions,
  DepthStep,
  DraftBackend,
  DraftNode,
  DraftShape,
  DraftTest,
  ErrorCode,
  Exact,
  FinishReason,
  Fit,
  ForwardStage,
  GammaPolicy,
  GgufSource,
  GpuCalls,
  ThreadCalls,
  KSeqPlan,
  LabExact,
  Limits,
  LoadOptions,
  MentoredPlan,
  MethodName,
  MethodOption,
  Metrics,
  MetricsSummary,
  ModuleKind,
  OptionError,
  PlanMethod,
  PlanNote,
  PlanNoteKind,
  PlanReport,
  PlanSelection,
  Problem,
  Progress,
  RacePlan,
  Residual,
  ResidualDraw,
  RetargetOptions,
  RoundReport,
  RoundTrace,
  SampleResult,
  SampleSettings,
  SamplingConfig,
  Selection,
  SimdLevel,
  StageReport,
  StepPlan,
  Summary,
  TestRule,
  TheoryCurves,
  TheoryOptions,
  Timing,
  TokenCounts,
  TokenOutcome,
  TokenSource,
} from "./types.js";
import type { DecodeRound, DecodeSummary } from "./types/decode.js";
export type { DecodeRound, DecodeSummary } from "./types/decode.js";

/**
 * The method and its settings in a {@link DecodeConfig} (`Method` in types.d.ts, the Rust
 * type; `Method` here is the method's name), e.g. `{ kind: "speculative", gamma: 4,
 * policy: { kind: "fixed" } }` or `{ kind: "spectr", drafts: { kind: "iid", k: 4,
 * length: 4 }, selection: "race" }`. `kind` is the method's name.
 */
export type MethodConfig = DecodeConfig["method"];

/** Where the models run. */
export type Backend = BackendChoice;
/**
 * A decoding method (the options' `method`). `spectr` drafts `drafts` i.i.d. sequences of
 * length `gamma` (or the prefix tree `tree`) and selects among them at every depth by its
 * `selection` rule ({@link Selection}); `multiround` tests the same draft sets one after
 * another (SpecInfer).
 */
export type Method = MethodName;

/** Every failure is thrown (or rejected) as a SpeculaError. */
export class SpeculaError extends Error {
  readonly name: "SpeculaError";
  readonly code: ErrorCode;
  /**
   * With code "invalid_option" (and "invalid_option" errors of plan()): the option the
   * error is about, spelt as in the options object: "topK", "maxTokens", an item of a list
   * ("tree[1]", "stop[0]"), an unknown option's own name ("temprature"), or "options" for
   * the options object itself. Meant for a form that marks the control at fault; the
   * message says what was wrong. Undefined for other codes.
   */
  readonly field?: string;
  /** With code "aborted": the generation up to the abort ({@link DecodeSummary} for decode()). */
  readonly summary?: Summary | DecodeSummary;
  /** With code "model_failed" from decode(): what the model's call threw or rejected with. */
  readonly cause?: unknown;
}

/**
 * The limits and defaults of the generate() options, generated from the engine's
 * (crates/specula-engine/src/options/limits.rs; the same numbers on the CLI and on the
 * teaching page), as a frozen object: e.g. `LIMITS.maxGamma` (64), `LIMITS.maxDrafts`
 * (1024), `LIMITS.maxRoundNodes` (1024), `LIMITS.maxTokens` (65536), `LIMITS.defaultGamma` (4).
 */
export const LIMITS: Readonly<Limits>;

/** The bugs generate() can plant (`bug`) for the lossless drafting methods. */
export type BugName = Bug;

/** Every bug `bug` can plant, in documentation order, with one line on what it gets wrong (generated from the engine). */
export const BUGS: ReadonlyArray<{ readonly name: Bug; readonly description: string }>;

/**
 * The options each method takes besides the common ones (prompt, method, temperature, topK,
 * topP, seed, maxTokens, stop, recordDistributions), generated from the engine's one table:
 * e.g. `METHOD_OPTIONS.speculative` is `["gamma", "dynamicGamma", "parallelDraft", "bug"]`.
 * generate() refuses any other, naming it.
 */
export const METHOD_OPTIONS: Readonly<Record<MethodName, ReadonlyArray<MethodOption>>>;

/**
 * Options of {@link Specula.generate}: the engine's {@link EngineDecodeOptions} with `prompt`
 * required, `method` and `bug` as their names, and `signal`.
 *
 * Every value is checked, never clamped: a value out of range, of the wrong type or an
 * unknown option is refused with a SpeculaError of code "invalid_option" whose `field`
 * names it. `null` means "left out". **An option the method does not use is refused too,
 * rather than ignored** (`field` names it): `gamma` with "autoregressive"; `drafts` and
 * `tree` except with spectr/multiround; `selection` except with spectr; `kl` except with
 * mentored (and required there); `epsilon` and `delta` except with typical; `ngram`
 * except with lookup; `dynamicGamma`, even `false`, except with
 * speculative/mentored/typical; `bug` except with speculative/spectr/multiround.
 *
 * Methods: "autoregressive", "speculative" (the default), "spectr", "multiround",
 * "mentored" (lossy, KL ≤ D per position), "typical" (Medusa's typical acceptance,
 * lossy: a drafted token is accepted when target(x) > min(ε, δ·exp(−H(target))), else the
 * position's token is drawn from the target) and "lookup" (prompt lookup: up to `gamma`
 * tokens copied from the context after the latest earlier occurrence of its last
 * `ngram` tokens, no draft model, lossless).
 *
 * The ranges, with their ends in {@link LIMITS}: `gamma` 1–64 (default 4; the draft length
 * L for spectr/multiround); `drafts` 1–1024 (default 4) and `drafts × gamma` at most
 * 1024 draft nodes per round; `tree` (children per node at each depth, e.g. [2, 2, 1])
 * 1–64 depths, entries 1–1024, at most 1024 leaves and 1024 nodes, and `gamma`/`drafts`,
 * if given too, equal to its depth and leaf count; `kl` 0–1e6 nats; `epsilon` 0–1
 * (default 0.09); `delta` 0–1e6 (default 0.3); `ngram` 1–16 (default 3); `temperature` 0–1e6
 * (default 1; 0 is greedy); `topK` 1–2^20; `topP` in (0, 1]; `seed` 0 to 2^53 − 1
 * (default 0); `maxTokens` 1–65536 (default 64; past the models' context the window
 * slides); `stop` at most 64 strings of 1–1024 characters.
 */
export type GenerateOptions = Omit<EngineDecodeOptions, "prompt" | "stop" | "method" | "selection" | "bug"> & {
  /** Text to continue; every character must be in {@link Specula.alphabet}. */
  prompt: string;
  /** Stop once the generated text contains any of these (at most 64, 1–1024 characters each). */
  stop?: string[];
  /** Default "speculative". */
  method?: Method;
  /**
   * SpecTr's rule at each depth (method "spectr" only): "kseq" (k-Seq, the default) or
   * "race" (the ratio race, which reaches the optimal selection's acceptance; what earlier
   * versions called method "otm"). "otm", the exact linear program, is {@link plan}'s
   * only, and refused here.
   */
  selection?: Selection;
  /**
   * Plant a deliberate mistake in the decoder (a bug lab): the output then no longer
   * follows the target. For speculative/spectr/multiround only.
   */
  bug?: BugName;
  /** Aborting it has the effect of `abort()`. */
  signal?: AbortSignal;
};

/** One round of {@link Specula.generate}: the text it emitted and how (the same as {@link RoundReport}). */
export type Round = RoundReport;

/**
 * The bundled draft/target pair (or two GGUF files) in a Web Worker: browsers only. Where
 * there is no global `Worker` (Node), the constructor throws and `load()` rejects with a
 * {@link SpeculaError} of code "backend_unavailable"; use {@link decode} there.
 */
export class Specula {
  /** Starts the worker; call `load()` before generating. Throws "backend_unavailable" without a Web Worker. */
  constructor();
  /** Creates an instance and loads the models. Rejects with "backend_unavailable" without a Web Worker (Node). */
  static load(options?: LoadOptions): Promise<Specula>;
  /**
   * Downloads the wasm module and the weights (with progress), checks checksums, builds the
   * models: the bundled pair, weightsUrl's, or two GGUF files (`target`, `draft`). A failed
   * load leaves the models loaded before it in place.
   */
  load(options?: LoadOptions): Promise<BackendInfo>;
  /** Where the models run; null before load(). */
  readonly backend: BackendInfo | null;
  /** The characters the models know; "" for GGUF models (byte-level BPE tokens); null before load(). */
  readonly alphabet: string | null;
  /**
   * Every token's text, in id order: the bundled pair's characters, or a GGUF model's
   * byte-level BPE pieces as text (" the", "\n"; U+FFFD for a byte that is not UTF-8
   * alone). Null before load().
   */
  readonly tokenTexts: readonly string[] | null;
  /**
   * The loaded pair as {@link decode} models: each answers decode()'s requests (`forward`)
   * with one batched pass in this instance's worker, so `decode({ ...s.models, prompt:
   * await s.tokenize(text), ...options })` gives the tokens `generate()` gives for the same
   * seed and options. Null before `load()`.
   */
  readonly models: { draft: BundledModel; target: BundledModel } | null;
  /**
   * The token ids of `text`: one per character of {@link alphabet} (`bad_prompt`, field
   * "prompt", for any other), or a GGUF model's byte-level BPE tokens.
   */
  tokenize(text: string): Promise<Int32Array>;
  /** The text of token ids, as decode()'s rounds give them. */
  detokenize(tokens: ArrayLike<number>): Promise<string>;
  /** {@link plan} in this instance's worker (no second copy of the wasm module). */
  plan(options: PlanOptions): Promise<PlanReport>;
  /** {@link theory} in this instance's worker. */
  theory(options: TheoryOptions): Promise<TheoryCurves>;
  /** {@link retarget} in this instance's worker. */
  retarget(options: RetargetOptions): Promise<number[]>;
  /**
   * Generates round by round; the iterator's return value is the summary. With
   * `parallelDraft: true` the draft model and the decoder run in a second worker (the
   * CPU-only module, started on first use) that sends the target's requests to this
   * instance's worker, so the next round is drafted while this one is verified (GGUF
   * models too: the draft worker downloads both files again and builds the draft).
   */
  generate(options: GenerateOptions): AsyncGenerator<Round, Summary, undefined>;
  /** Runs a whole generation. */
  complete(options: GenerateOptions): Promise<Summary>;
  /**
   * The lab: `lab.runs` generations of `options` (seeds `seed`, `seed + 1`, …; each run
   * generates two characters, so `maxTokens` and `stop` are refused) counting character
   * `lab.position`, tested against that character's exact distribution worked out from
   * the models (the target's for a lossless method, the closed form of mentored decoding
   * or of a planted bug). Rejects with code "aborted" (the counts so far as `result`)
   * after `abort()` or `lab.signal`. With GGUF models the tokens are BPE tokens and the
   * second position reads one target row per token the target can emit first: without a
   * `topK` small enough for those rows to fit it rejects with code "invalid_option",
   * field "topK".
   */
  sample(options: GenerateOptions, lab?: SampleSettings): Promise<SampleResult>;
  /**
   * The worker's memory in bytes: the wasm module's (plus the draft worker's, once parallel
   * drafting has started one), and the JS heap where the browser reports it (else null).
   */
  memory(): Promise<{ wasmBytes: number; jsHeapBytes: number | null }>;
  /**
   * The WebGPU calls the main worker has made since it started, counted where they reach
   * the browser (all zero on the CPU): take two and subtract to count a generation's.
   */
  gpuCalls(): Promise<GpuCalls>;
  /**
   * The dense calls the main worker handed the target's second worker since the models
   * were loaded (load option `threads`; all zero with one worker).
   */
  threadCalls(): Promise<ThreadCalls>;
  /** Stops the running generation; its iterator throws a SpeculaError with code "aborted". */
  abort(): void;
  /** Stops the worker. */
  terminate(): void;
}

/**
 * Options of {@link plan}: the engine's plan options with `method`, `target` and `draft`
 * required and typed arrays accepted. The names are generate()'s: `method` is one of its
 * methods with a token-level scheme, SpecTr's rule is `selection` ("kseq", the default,
 * "race", or "otm", the exact linear program, which only plan() solves), and greedy
 * verification is method "speculative" with `temperature: 0`. `temperature`, `topK` and
 * `topP` process both distributions as generate() processes the models' logits, for every
 * method. An option the scheme does not use is refused (code "invalid_option", `field`
 * naming it), as for generate(), and so are the former names ("kseq", "race", "otm",
 * "greedy" as a method), with the new spelling in the message; so is whatever the math
 * refuses (a sum that is not 1 without `normalize`, ρ below ρ*, an LP too large), naming
 * the option at fault. `drafts` defaults to {@link LIMITS}.defaultDrafts, as in generate().
 */
export type PlanOptions = Omit<EnginePlanOptions, "method" | "selection" | "target" | "draft" | "bug"> & {
  method: PlanMethod;
  /** SpecTr's selection rule (method "spectr" only; default "kseq"). */
  selection?: PlanSelection;
  /** Target probabilities (sum to 1 unless `normalize`). */
  target: number[] | Float64Array | Float32Array;
  /** Draft probabilities, as many as the target's. */
  draft: number[] | Float64Array | Float32Array;
  /**
   * Plant a deliberate mistake (method "speculative" only, not at temperature 0): the
   * report's `output` is the buggy sampler's exact output distribution and `tv` its total
   * variation from the processed target.
   */
  bug?: PlanBugName;
};

/** The token-level bugs `plan()` can plant (cache-reset acts only over a sequence). */
export type PlanBugName = Exclude<Bug, "cache-reset">;

/**
 * The closed-form analysis of one token-level scheme (no models needed), in a Web Worker:
 * rejects with code "backend_unavailable" where there is none (Node), as do
 * {@link checkOptions}, {@link theory} and {@link retarget}.
 */
export function plan(options: PlanOptions): Promise<PlanReport>;

/**
 * Checks generate() options without the models (in the worker plan() uses): resolves to
 * the checked settings, or rejects with the SpeculaError generate() would throw for the
 * same options (code "invalid_option" and its `field`). The prompt's characters are left
 * to generate(), which knows the models' alphabet (code "bad_prompt").
 */
export function checkOptions(options: GenerateOptions): Promise<CheckedOptions>;

/**
 * Speculative decoding's closed forms at each γ, computed by the engine's core (no models
 * needed): the expected tokens per round `(1 − α^{γ+1})/(1 − α)` and, with `costRatio`,
 * the walltime factor over autoregressive decoding. Rejects with code "invalid_option"
 * naming `alpha`, `gammas[i]` or `costRatio`.
 */
export function theory(options: TheoryOptions): Promise<TheoryCurves>;

/**
 * The distribution `probs`, recorded at temperature `from`, as the engine would process it
 * with other sampling settings (exact up to the rounding of `probs`): a preview of new
 * settings without running the models. Rejects with code "invalid_option" naming the option.
 */
export function retarget(options: RetargetOptions): Promise<number[]>;

/**
 * What {@link decode} asks a model that has `forward`: the engine's request. Every
 * sequence starts with the same `committedLen` tokens (final: a K/V cache may keep them
 * and drop anything beyond); `queries[i]` wants the next-token logits after the first
 * `prefixLen` tokens of `sequences[sequence]`.
 */
export interface DecodeRequest {
  role: "draft" | "target";
  committedLen: number;
  sequences: Int32Array[];
  queries: { sequence: number; prefixLen: number }[];
}

/** Logits as a model returns them: a Float32Array (best), a Float64Array or an array of numbers. */
export type Logits = Float32Array | Float64Array | number[];

/**
 * A model {@link decode} runs: the caller's own (a transformer on WebGPU, a server, a
 * table). It returns raw logits; decode() applies temperature, top-k and top-p to both
 * models' logits alike, as the engine does for the bundled pair. Any method may return a
 * Promise; decode() awaits only those that do.
 */
export interface DecodeModel {
  /** Entries per row of logits: a whole number from 1 to 2^31, the same for draft and target. */
  readonly vocabSize: number;
  /**
   * Logits for the last `count` positions of `tokens`: row i (vocabSize entries,
   * row-major) is the next-token logits given tokens[0 .. tokens.length - count + i],
   * inclusive. Every logit must be finite (mask with a large negative number, not
   * -Infinity). Called once per sequence of a request, so several times per call for
   * SpecTr's drafts and trees. Optional when the model has `forward`.
   */
  logits?(tokens: Int32Array, count: number): Logits | Promise<Logits>;
  /**
   * Several sequences in one call: when a model has `forward`, decode() sends it every
   * request of that model (and never calls `logits`), so a batched model scores a whole
   * SpecTr draft set or tree in one pass. Returns `queries.length × vocabSize` logits,
   * row i for `queries[i]`.
   */
  forward?(request: DecodeRequest): Logits | Promise<Logits>;
  /**
   * Told the committed prefix length after each round (prompt and every emitted token):
   * a K/V cache keeps that many positions and drops the rejected drafts beyond them.
   * Never called while a call of the same model runs, and no call of the model starts
   * before a returned Promise settles: under `parallelDraft` the draft model may still
   * be drafting the next round when a round ends; it is told once that call returns,
   * before its answer is used.
   */
  rollback?(committedLen: number): void | Promise<void>;
}

/**
 * One of the loaded pair as a {@link decode} model (`s.models.draft`, `s.models.target`),
 * with the stage profile of its host forward pass: where a forward pass spends its time
 * inside wasm, stage by stage (docs/host-forward-pass.md). Only a model on the CPU has a
 * host pass: on WebGPU both methods reject with code "invalid_option", field "role".
 * Both reject with "busy" while a call of the models runs.
 */
export interface BundledModel extends DecodeModel {
  /**
   * Turns the profile on (`true`; the totals start from zero) or off (`false`; they stay
   * readable). On, every later forward pass adds the time of each stage, read with
   * `performance.now()` (coarse where the page is not cross-origin isolated: time many
   * calls). Rejects with "invalid_option", field "on", for anything but a boolean.
   */
  profileStages(on: boolean): Promise<void>;
  /**
   * The totals since the profile was turned on or reset: passes, positions, their whole
   * time and each stage's, in milliseconds. `{ reset: true }` sets them back to zero after
   * reading.
   */
  stageTimes(options?: { reset?: boolean }): Promise<StageReport>;
}

/**
 * Options of {@link decode}: every decoding option of {@link GenerateOptions} (method,
 * selection, gamma, drafts, tree, dynamicGamma, parallelDraft, kl, epsilon, delta, ngram,
 * temperature, topK, topP, seed, maxTokens, recordDistributions, bug, signal; the same
 * ranges, defaults and refusals, from the engine's one options type), with token ids for
 * the prompt and the stop list, and the two models.
 */
export type DecodeOptions = Omit<GenerateOptions, "prompt" | "stop"> & {
  /** The target model: the output follows its distribution. */
  target: DecodeModel;
  /**
   * The draft model (same vocabSize); required for every method but "autoregressive" and
   * "lookup" (prompt lookup drafts from the context and never calls it).
   */
  draft?: DecodeModel;
  /** Token ids to continue (at least one, each below vocabSize). */
  prompt: number[] | Int32Array | Uint32Array;
  /** Stop right after emitting any of these token ids (at most 64). */
  stop?: number[];
};

/**
 * Exact speculative decoding over any pair of models sharing a vocabulary, on the
 * calling thread (Node ≥ 20 and browsers; the engine is a small wasm module of its own,
 * loaded on the first call, not the bundled models' module):
 * `for await (const round of decode({ draft, target, prompt: [1, 2, 3], gamma: 4 }))`.
 * Each round is a {@link DecodeRound} (its tokens, counts, trace, metrics and summary, as
 * generate()'s rounds); the iterator's return value is the {@link DecodeSummary}. Every
 * failure is a SpeculaError, thrown by the iterator: "invalid_option" (with `field`),
 * "bad_model" (a vocabSize that is wrong or differs, no logits function, logits of the
 * wrong type or length, NaN or ±Infinity; `field` "draft" or "target"), "model_failed"
 * (a model call threw or rejected; its error is `cause`), "aborted" (through `signal`;
 * `summary` holds the run so far).
 *
 * With `parallelDraft: true` (speculative, fixed γ; docs/parallel-draft.md) the draft
 * model drafts the next round while the target verifies this one: decode() starts every
 * request whose model is idle and takes the answers as they arrive, so models that
 * return Promises (a worker each, a server, WebGPU) run at the same time. A model never
 * has two calls at once, nor a call during its `rollback`. A seed gives the same tokens
 * whatever the models' timing, and the same as synchronous models, which run one call
 * at a time (the schedule's output, not its speed); a model that answered its last call
 * with a Promise is started first. A draft call no longer needed when the run ends is
 * awaited (its answer dropped), so decode() returns with both models idle. On an abort,
 * an error or leaving the loop early, a call still running is not awaited: decode()
 * ends at once, drops its answer and calls nothing more (a model that cannot take two
 * calls at once should let it finish before its next run).
 */
export function decode(options: DecodeOptions): AsyncGenerator<DecodeRound, DecodeSummary, undefined>;

/** What {@link cachedModel} asks of a runtime that keeps a key/value cache. */
export interface CachedRuntime<Cache> {
  /** Entries per row of logits. */
  vocabSize: number;
  /**
   * Runs `tokens` after the cache's positions (`cache` null: from the start). `logits`
   * has one row of vocabSize per token of `tokens`; the returned cache covers them all.
   */
  step(cache: Cache | null, tokens: Int32Array): { logits: Logits; cache: Cache } | Promise<{ logits: Logits; cache: Cache }>;
  /** A cache of the first `length` positions (length ≥ 1). */
  truncate(cache: Cache, length: number): Cache | Promise<Cache>;
}

/**
 * A {@link DecodeModel} over a runtime with a key/value cache (a transformer): each call
 * runs only the tokens past the longest prefix the cache shares with it, and `rollback`
 * cuts the cache back to the committed tokens, so rejected drafts never stay in it. The
 * tokens decode() produces are the same with or without it. `stats` counts the calls,
 * the positions run and the truncations. See web/examples/transformers-js.js.
 */
export function cachedModel<Cache>(runtime: CachedRuntime<Cache>): DecodeModel & {
  readonly stats: { calls: number; positions: number; truncations: number };
};
