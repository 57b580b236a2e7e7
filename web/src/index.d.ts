// Hand-written types for the `specula` package. Notation: the **target** is the model whose
// distribution the output follows; the **draft** is the small model that proposes tokens.

/** Where the models run. */
export type Backend = "auto" | "webgpu" | "cpu";
/** Where the draft model runs: "same" as the target, or "cpu" (inside wasm) beside a WebGPU target. */
export type DraftBackend = "same" | "cpu";

/** A decoding method. `spectr` drafts `drafts` i.i.d. sequences of length `gamma`. */
/**
 * `otm`: SpecTr's draft sets with its optimal selection (OTM) at every depth instead of
 * k-Seq, realised by the ratio race (specula-core `race_sample`).
 */
export type Method = "autoregressive" | "speculative" | "spectr" | "multiround" | "otm" | "mentored";

/** Error codes of {@link SpeculaError}. */
export type ErrorCode =
  | "invalid_option"
  | "invalid_plan"
  | "not_loaded"
  | "not_started"
  | "busy"
  | "aborted"
  | "bad_weights"
  | "bad_prompt"
  | "backend_unavailable"
  | "download_failed"
  | "engine"
  | "model_failed"
  | "crashed"
  | "terminated"
  | "internal";

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
  /** With code "aborted": the generation up to the abort. */
  readonly summary?: Summary;
}

/** Download progress of one file (the wasm module, then the four weight files). */
export interface Progress {
  file: string;
  loaded: number;
  /** Bytes expected, when known. */
  total: number | null;
}

export interface LoadOptions {
  /** Default "auto": WebGPU when the browser gives an adapter, otherwise the CPU inside wasm. */
  backend?: Backend;
  /**
   * Default "same". "cpu" keeps the small draft model on the CPU inside wasm while the target
   * runs on WebGPU: a draft pass is a few dozen GPU dispatches for very little arithmetic, and
   * on the CPU it costs far less (on Chromium's software adapter speculative decoding went
   * from ~1.3x to ~1.6x over autoregressive). No effect when the target runs on the CPU.
   */
  draftBackend?: DraftBackend;
  onProgress?: (progress: Progress) => void;
  /** Where draft.json, draft.bpk, target.json, target.bpk and manifest.json live (default: bundled with the package). */
  weightsUrl?: string | URL;
  /** Where specula_wasm_bg.wasm lives (default: bundled with the package). */
  wasmUrl?: string | URL;
}

export interface BackendInfo {
  /** Where the target runs. */
  backend: "webgpu" | "cpu";
  /** Where the draft runs. */
  draftBackend: "webgpu" | "cpu";
  requested: Backend;
  /** The GPU adapter's name (WebGPU only). */
  adapter: string | null;
  /** True for software adapters such as SwiftShader (slow). */
  isFallbackAdapter: boolean | null;
  /** Why the models are not (or no longer) on WebGPU. */
  reason: string | null;
}

/**
 * Every default and limit of the generate() options, as the engine checks them (the same
 * numbers on the CLI, in this package and on the teaching page).
 */
export interface Limits {
  /** Largest `gamma`, and the most depths of a `tree`: 64. */
  readonly maxGamma: number;
  /** `gamma` when left out: 4. */
  readonly defaultGamma: number;
  /** Largest `drafts`, the most leaves of a `tree` and its largest entry: 1024. */
  readonly maxDrafts: number;
  /** `drafts` when left out: 4. */
  readonly defaultDrafts: number;
  /** The most draft nodes per round: `drafts × gamma`, or a tree's level widths summed: 1024. */
  readonly maxRoundNodes: number;
  /** Largest `maxTokens`: 65536. */
  readonly maxTokens: number;
  /** `maxTokens` when left out: 64. */
  readonly defaultMaxTokens: number;
  /** Largest `temperature`: 1e6. */
  readonly maxTemperature: number;
  /** `temperature` when left out: 1. */
  readonly defaultTemperature: number;
  /** Largest `topK`: 2^20. */
  readonly maxTopK: number;
  /** Largest `kl`: 1e6 nats. */
  readonly maxKl: number;
  /** Largest `seed`: 2^53 − 1. */
  readonly maxSeed: number;
  /** `seed` when left out: 0. */
  readonly defaultSeed: number;
  /** The most `stop` strings: 64. */
  readonly maxStopStrings: number;
  /** The longest `stop` string, in characters: 1024. */
  readonly maxStopChars: number;
}

/** The limits and defaults, generated from the engine's (a frozen object). */
export const LIMITS: Limits;

/** The bugs generate() can plant (`bug`) for the lossless drafting methods. */
export type BugName = PlanBugName | "cache-reset";

/**
 * Options of {@link Specula.generate}. Every value is checked, never clamped: a value out
 * of range, of the wrong type or an unknown option is refused with a SpeculaError of code
 * "invalid_option" whose `field` names it. `null` means "left out". **An option the
 * method does not use is refused too, rather than ignored** (`field` names it): `gamma`
 * with "autoregressive"; `drafts` and `tree` except with spectr/multiround/otm; `kl`
 * except with mentored; `dynamicGamma`, even `false`, except with speculative/mentored;
 * `bug` with autoregressive/mentored. The limits are in {@link LIMITS}.
 */
export interface GenerateOptions {
  /** Text to continue; every character must be in `alphabet`. */
  prompt: string;
  /** Default "speculative". */
  method?: Method;
  /**
   * Draft tokens per round (γ), or the draft length L for spectr/multiround/otm: 1–64,
   * default 4. Not for autoregressive.
   */
  gamma?: number;
  /**
   * Draft sequences K for spectr/multiround/otm only: 1–1024, default 4, and
   * `drafts × gamma` at most 1024 draft nodes per round.
   */
  drafts?: number;
  /**
   * spectr/multiround/otm only: draft a prefix tree instead of `drafts` i.i.d. sequences —
   * the children per node at each depth, e.g. [2, 2, 1] (depth 3, 4 leaves): 1–64 depths,
   * entries 1–1024, at most 1024 leaves and 1024 nodes (the level widths summed).
   * `gamma` and `drafts`, if given too, must equal its depth and leaf count.
   */
  tree?: number[];
  /**
   * speculative/mentored only: adapt γ between rounds (Hugging Face's heuristic: +2 after
   * a round that accepted every draft, −1 otherwise; never below 1 or above 64). Default
   * false.
   */
  dynamicGamma?: boolean;
  /** KL budget D (nats per position) for mentored decoding only, 0–1e6; required there. */
  kl?: number;
  /** 0–1e6, default 1; 0 is greedy. Applied to both models. */
  temperature?: number;
  /** Keep the k most likely tokens (both models): 1–2^20. */
  topK?: number;
  /** Keep the smallest set with this much probability, in (0, 1]. */
  topP?: number;
  /** Seed of the random generator, 0 to 2^53 − 1; default 0. */
  seed?: number;
  /** Tokens (characters) to generate: 1–65536, default 64; past the models' context the window slides (both models go on from the last half of it). */
  maxTokens?: number;
  /** Stop once the generated text contains any of these: at most 64 strings of 1–1024 characters. */
  stop?: string[];
  /** Put full draft/target distributions in each round's trace (large). */
  recordDistributions?: boolean;
  /**
   * Plant a deliberate mistake in the decoder (a bug lab): the output then no longer
   * follows the target. For speculative/spectr/multiround/otm only.
   */
  bug?: BugName;
  /** Aborting it has the effect of `abort()`. */
  signal?: AbortSignal;
}

/**
 * What {@link checkOptions} resolves to: the prompt and the engine's configuration with
 * every default filled in (keys in camelCase; see specula-engine's `DecodeConfig`).
 */
export interface CheckedOptions {
  prompt: string;
  config: {
    /**
     * The method and its settings, e.g. `{ kind: "speculative", gamma: 4, policy: { kind: "fixed" } }`
     * or `{ kind: "otm", drafts: { kind: "iid", k: 4, length: 4 } }`.
     */
    method: { kind: string; [key: string]: unknown };
    sampling: { temperature: number; topK: number | null; topP: number | null };
    maxNewTokens: number;
    stopTokens: number[];
    stopStrings: string[];
    tokenText: null;
    seed: number;
    recordDistributions: boolean;
    /** Only when a bug is planted. */
    bug?: BugName;
    [key: string]: unknown;
  };
}

export type TokenSource = "accepted" | "resampled" | "bonus";

export interface TokenCounts {
  accepted: number;
  resampled: number;
  bonus: number;
}

export type FinishReason =
  | { kind: "max_new_tokens" }
  | { kind: "stop_token"; token: number }
  | { kind: "stop_string"; index: number };

/** The engine's record of one round (see the specula-engine docs for every field). */
export interface RoundTrace {
  round: number;
  method: string;
  committedLen: number;
  branching: number[];
  drafts: Array<{
    id: number;
    parent: number | null;
    depth: number;
    token: number;
    draftProb: number;
    draftProbs?: number[];
  }>;
  steps: Array<{
    depth: number;
    candidates: number[];
    survivors: number[];
    outcome: unknown;
    token: number;
    source: TokenSource;
    kseq?: unknown;
    mentored?: unknown;
    /** Method "otm": the fitted race (weights, selection r, acceptance, optimum, steps). */
    otm?: {
      k: number;
      weights: number[];
      selection: number[];
      acceptance: number;
      optimum: number;
      steps: number;
    };
    targetProbs?: number[];
    draftProbs?: number[];
  }>;
  bonus: { token: number; uniform: number | null; targetProbs?: number[] } | null;
  emitted: number[];
  sources: TokenSource[];
  truncated: number;
  counts: TokenCounts;
  draftCalls: number;
  targetCalls: number;
  timing: { draftNanos: number; targetNanos: number; selectionNanos: number };
  nextGamma: number | null;
  finish: FinishReason | null;
}

/** One round: the text it emitted and how. */
export interface Round {
  round: number;
  text: string;
  tokens: number[];
  counts: TokenCounts;
  backend: "webgpu" | "cpu";
  /** Set on the round during which the models moved from WebGPU to the CPU: why. */
  fallback: string | null;
  finish: FinishReason | null;
  trace: RoundTrace;
}

/** Totals with vLLM's definitions. */
export interface Metrics {
  rounds: number;
  draftedTokens: number;
  acceptedTokens: number;
  resampledTokens: number;
  bonusTokens: number;
  emittedTokens: number;
  draftCalls: number;
  targetCalls: number;
  draftedPerPosition: number[];
  acceptedPerPosition: number[];
  acceptedLengthHistogram: number[];
  timing: { draftNanos: number; targetNanos: number; selectionNanos: number };
}

export interface Summary {
  prompt: string;
  text: string;
  tokens: number;
  finish: FinishReason | null;
  aborted: boolean;
  metrics: Metrics;
  summary: {
    acceptanceRate: number | null;
    meanAcceptanceLength: number | null;
    perPositionAcceptance: number[];
    blockEfficiency: number | null;
    selectionNanosPerToken: number | null;
    tokensPerSecond: number | null;
  };
  backend: BackendInfo;
}

export class Specula {
  /** Starts the worker; call `load()` before generating. */
  constructor();
  /** Creates an instance and loads the models. */
  static load(options?: LoadOptions): Promise<Specula>;
  /** Downloads the wasm module and the weights (with progress), checks checksums, builds the models. */
  load(options?: LoadOptions): Promise<BackendInfo>;
  /** Where the models run; null before load(). */
  readonly backend: BackendInfo | null;
  /** The characters the models know; null before load(). */
  readonly alphabet: string | null;
  /** {@link plan} in this instance's worker (no second copy of the wasm module). */
  plan(options: PlanOptions): Promise<PlanReport>;
  /** Generates round by round; the iterator's return value is the summary. */
  generate(options: GenerateOptions): AsyncGenerator<Round, Summary, undefined>;
  /** Runs a whole generation. */
  complete(options: GenerateOptions): Promise<Summary>;
  /** Stops the running generation; its iterator throws a SpeculaError with code "aborted". */
  abort(): void;
  /** Stops the worker. */
  terminate(): void;
}

export type PlanMethod = "speculative" | "greedy" | "kseq" | "multiround" | "otm" | "race" | "mentored";

export interface PlanOptions {
  method: PlanMethod;
  /** Target probabilities (sum to 1 unless `normalize`). */
  target: number[] | Float64Array;
  /** Draft probabilities, same length. */
  draft: number[] | Float64Array;
  /** k for kseq, multiround, otm, race (default 2). */
  drafts?: number;
  /** KL budget D ≥ 0, required for mentored. */
  kl?: number;
  /** ρ ≥ ρ* for kseq (default ρ*). */
  rho?: number;
  /** Rescale target and draft to sum to 1. */
  normalize?: boolean;
  /**
   * Plant a deliberate mistake (method "speculative" only): the report's `output` is the
   * buggy sampler's exact output distribution and `tv` its total variation from the target.
   * target and draft are then the models' raw softmax, processed by temperature/topK/topP.
   */
  bug?: PlanBugName;
  /** With `bug`: temperature applied to both distributions (default 1). */
  temperature?: number;
  /** With `bug`: keep the k most likely tokens of both. */
  topK?: number;
  /** With `bug`: keep the smallest set of tokens with this much probability in both. */
  topP?: number;
}

/** The token-level bugs `plan()` can plant (cache-reset acts only over a sequence). */
export type PlanBugName =
  | "resample-from-target"
  | "argmax-draft"
  | "shared-uniform"
  | "unprocessed-target"
  | "filtered-draft";

/** The report of `specula plan --json`, keys in camelCase. Non-finite numbers are null. */
export interface PlanReport {
  method: PlanMethod;
  target: number[];
  draft: number[];
  vocab: number;
  normalized: boolean;
  drafts?: number;
  acceptance: number | null;
  output: number[];
  klTargetOutput: number | null;
  tvTargetOutput: number | null;
  klTargetDraft: number | null;
  tvTargetDraft: number | null;
  rho?: number;
  rhoStar?: number;
  overlap?: number;
  klBudget?: number;
  alpha?: number;
  beta?: number;
  zeroTargetAccept?: number;
  acceptsAll?: boolean;
  upperBound?: number;
  acceptProbs?: number[];
  residual?: number[];
  /** With `bug`: the bug and the sampling settings applied to both distributions. */
  bug?: { name: PlanBugName; description: string; temperature: number; topK?: number; topP?: number };
  /** With `bug`: TV(target, output), the same as `tvTargetOutput`. */
  tv?: number;
}

/** The closed-form analysis of one token-level scheme (no models needed). */
export function plan(options: PlanOptions): Promise<PlanReport>;

/**
 * Checks generate() options without the models (in the worker plan() uses): resolves to
 * the checked settings, or rejects with the SpeculaError generate() would throw for the
 * same options (code "invalid_option" and its `field`). The prompt's characters are left
 * to generate(), which knows the models' alphabet (code "bad_prompt").
 */
export function checkOptions(options: GenerateOptions): Promise<CheckedOptions>;
