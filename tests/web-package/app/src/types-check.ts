// Compiled, never run: scripts/test-web.sh type-checks this file against the installed
// package (`tsc --noEmit`, strict) so that a broken dist/index.d.ts or dist/types.d.ts,
// or a type that no longer fits what the package hands out, fails the build. Each
// `@ts-expect-error` line must stay an error: it checks that a mistake is caught.
import {
  LIMITS,
  Specula,
  SpeculaError,
  cachedModel,
  checkOptions,
  decode,
  plan,
  retarget,
  theory,
  type BackendInfo,
  type CpuSimd,
  type CpuThreads,
  type ThreadCalls,
  type SimdLevel,
  type CheckedOptions,
  type DecodeConfig,
  type DecodeModel,
  type DecodeOptions,
  type DecodeRound,
  type DecodeSummary,
  type DepthStep,
  type ErrorCode,
  type FinishReason,
  type GenerateOptions,
  type GgufSource,
  type Limits,
  type Method,
  type MethodConfig,
  type PlanReport,
  type PlanSelection,
  type SampleResult,
  type SampleSettings,
  type Round,
  type RoundReport,
  type RoundTrace,
  type Selection,
  type StepPlan,
  type Summary,
  type TheoryCurves,
  type TokenOutcome,
  type TokenSource,
} from "specula";

/** Compile-time equality of two types. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <T extends true>(): T => true as T;
same<Equal<Round, RoundReport>>();
same<Equal<Method, "autoregressive" | "speculative" | "spectr" | "multiround" | "mentored" | "typical" | "lookup">>();
same<Equal<Selection, "kseq" | "race">>();
same<Equal<StepPlan["kind"], "kseq" | "race" | "mentored" | "typical">>();
same<Equal<CheckedOptions["config"], DecodeConfig>>();

function describeFinish(finish: FinishReason | null): string {
  if (finish === null) return "running";
  switch (finish.kind) {
    case "max_new_tokens":
      return "length";
    case "stop_token":
      return `token ${finish.token}`;
    case "stop_string":
      return `stop string #${finish.index}`;
  }
}

/** The selection rule's parameters, narrowed by `kind`. */
function describePlan(plan: StepPlan | undefined): string {
  if (plan === undefined) return "";
  switch (plan.kind) {
    case "kseq":
      return ` rho ${plan.rho} >= ${plan.rhoStar}, k ${plan.k}, acceptance ${plan.acceptance}`;
    case "race":
      return ` race ${plan.acceptance}/${plan.optimum} over ${plan.selection.length} tokens, k ${plan.k}`;
    case "mentored":
      return ` alpha ${plan.alpha} beta ${plan.beta} kl ${plan.kl} <= ${plan.klBudget}`;
    case "typical":
      return ` threshold ${plan.threshold} = min(${plan.epsilon}, ${plan.delta}·exp(-${plan.entropy}))`;
  }
}

function describeStep(step: DepthStep): string {
  const outcome: TokenOutcome = step.outcome;
  const tests = outcome.tests.map((t) => `${t.token}:${t.acceptProb.toFixed(3)}:${t.accepted}`).join(" ");
  const residual = outcome.residual?.residual.kind ?? "none";
  const residualProbs: number[] | undefined = step.residualProbs;
  return `depth ${step.depth} ${tests} residual ${residual} ${residualProbs?.length ?? 0}${describePlan(step.plan)}`;
}

export async function generateLoop(signal: AbortSignal): Promise<Summary> {
  const specula = await Specula.load({ backend: "auto", draftBackend: "cpu", onProgress: (p) => p.loaded / (p.total ?? 1) });
  const info: BackendInfo | null = specula.backend;
  const simd: SimdLevel | undefined = info?.simd;
  const choice: CpuSimd = simd === "relaxed-simd" ? "relaxed-simd" : "auto";
  void Specula.load({ backend: "cpu", cpuSimd: choice, wasmCpuRelaxedUrl: new URL("https://example.org/specula_wasm_bg.wasm") });
  const threads: CpuThreads = info?.threads === 2 ? 2 : "auto";
  const why: string | null | undefined = info?.threadsReason;
  const handed: ThreadCalls = await specula.threadCalls();
  void Specula.load({ backend: "cpu", threads, onProgress: () => void [why, handed.posted, handed.answered, handed.tooLarge] });
  const where: string = info ? `${info.backend}/${info.draftBackend} ${info.adapter ?? ""} ${info.reason ?? ""}` : "";
  const options: GenerateOptions = {
    prompt: specula.alphabet?.slice(0, 4) ?? "ROMEO",
    method: "spectr",
    gamma: LIMITS.defaultGamma,
    drafts: 2,
    temperature: 0.8,
    topK: 20,
    seed: 1,
    maxTokens: 16,
    stop: ["\n\n"],
    recordDistributions: true,
    bug: "shared-uniform",
    signal,
  };
  const iterator = specula.generate(options);
  let text = where;
  for (;;) {
    const next = await iterator.next();
    if (next.done) {
      const summary: Summary = next.value;
      const rate: number | null = summary.summary.acceptanceRate;
      const calls = `${summary.metrics.targetCalls} calls, ${summary.metrics.timing.draftNanos} ns drafting`;
      text += `${summary.text} ${rate ?? "-"} ${calls} ${describeFinish(summary.finish)} ${summary.backend.backend}`;
      return summary;
    }
    const round: Round = next.value;
    const trace: RoundTrace = round.trace;
    // The run's metrics so far, as each round reports them.
    text += `${round.metrics.emittedTokens} ${round.metrics.acceptedPerPosition.join()} ${round.summary.acceptanceRate ?? "-"}`;
    const sources: TokenSource[] = trace.sources;
    text += round.text + round.tokens.length + round.counts.accepted + round.counts.resampled + round.counts.bonus;
    text += `${round.backend} ${round.fallback ?? ""} ${describeFinish(round.finish)} ${sources.join()}`;
    text += `${trace.committedLen} ${trace.nextGamma ?? "-"} ${trace.timing.selectionNanos} ${trace.bonus?.uniform ?? "-"}`;
    for (const node of trace.drafts) text += `${node.id}<-${node.parent ?? "root"}:${node.draftProb}:${node.draftProbs?.length ?? 0}`;
    for (const step of trace.steps) text += describeStep(step);
  }
}

export async function completeAndAbort(specula: Specula): Promise<string> {
  const summary = await specula.complete({ prompt: "ROMEO", method: "mentored", kl: 0.1, dynamicGamma: true });
  void specula.complete({ prompt: "ROMEO", method: "typical", epsilon: 0.2, delta: 0.5, gamma: 3 });
  void specula.complete({ prompt: "ROMEO", method: "lookup", ngram: 3, gamma: 4 });
  specula.abort();
  specula.terminate();
  return summary.text;
}

export async function checked(): Promise<string> {
  const { prompt, config }: CheckedOptions = await checkOptions({ prompt: "To be", method: "spectr", selection: "race", tree: [2, 2, 1] });
  const method: MethodConfig = config.method;
  let shape = "";
  switch (method.kind) {
    case "autoregressive":
      break;
    case "speculative":
    case "mentored":
      shape = `gamma ${method.gamma} ${method.policy.kind}`;
      break;
    case "spectr": {
      const selection: Selection = method.selection;
      shape = `${selection} ${method.drafts.kind === "tree" ? method.drafts.branching.join("x") : `${method.drafts.k}x${method.drafts.length}`}`;
      break;
    }
    case "multiround":
      shape = method.drafts.kind === "tree" ? method.drafts.branching.join("x") : `${method.drafts.k}x${method.drafts.length}`;
      break;
  }
  const sampling = `${config.sampling.temperature} ${config.sampling.topK ?? "all"} ${config.sampling.topP ?? 1}`;
  return `${prompt} ${shape} ${sampling} ${config.maxNewTokens} ${config.seed} ${config.stopStrings.join()} ${config.bug ?? ""}`;
}

export function limits(): number {
  const limits: Readonly<Limits> = LIMITS;
  // @ts-expect-error LIMITS is frozen.
  LIMITS.maxGamma = 1;
  return limits.maxGamma + limits.maxDrafts + limits.maxRoundNodes + limits.maxTokens + limits.maxTopK + limits.maxSeed;
}

export async function errors(): Promise<string> {
  try {
    await checkOptions({ prompt: "x", gamma: 0 });
    return "accepted";
  } catch (error) {
    if (error instanceof SpeculaError) {
      const code: ErrorCode = error.code;
      const field: string | undefined = error.field;
      // generate()'s summary has the text; decode()'s has only token ids.
      const partial: Summary | DecodeSummary | undefined = error.summary;
      const text = partial && "text" in partial ? partial.text : "";
      return `${error.name} ${code} ${field ?? "-"} ${text} ${error.message}`;
    }
    throw error;
  }
}

export async function closedForms(specula: Specula): Promise<string> {
  const curves: TheoryCurves = await theory({ alpha: 0.7, gammas: [1, 2, 4], costRatio: 0.05 });
  const own: TheoryCurves = await specula.theory({ alpha: 0.7, gammas: [3] });
  const probs: number[] = await retarget({ probs: new Float64Array([0.5, 0.3, 0.2]), from: 0.8, temperature: 0.5, topK: 2 });
  const again: number[] = await specula.retarget({ probs, from: 0.5, topP: 0.9 });
  return `${curves.expectedTokens.join()} ${curves.walltimeFactor?.join() ?? "-"} ${own.gammas.join()} ${probs.join()} ${again.join()}`;
}

export async function planned(): Promise<string> {
  const report: PlanReport = await plan({ method: "spectr", target: [0.5, 0.3, 0.2], draft: new Float64Array([0.2, 0.3, 0.5]), drafts: 3 });
  const race = await plan({ method: "spectr", selection: "race", target: [0.5, 0.5], draft: [0.2, 0.8] });
  const greedy = await plan({ method: "speculative", temperature: 0, target: [0.5, 0.5], draft: [0.2, 0.8] });
  const buggy = await plan({ method: "speculative", target: [0.6, 0.4], draft: [0.4, 0.6], bug: "argmax-draft", temperature: 0.5 });
  const selection: PlanSelection | null = report.selection;
  return `${report.acceptance ?? "-"} ${report.rhoStar ?? "-"} ${selection ?? "-"} ${report.output.join()} ${race.upperBound ?? "-"} ${greedy.temperature} ${buggy.tv ?? "-"} ${buggy.bug?.name ?? ""}`;
}

/** A step's plan is one field, tagged by kind: the three former fields are gone. */
export function formerPlanFields(step: DepthStep): void {
  // @ts-expect-error no step.kseq: step.plan with kind "kseq".
  void step.kseq;
  // @ts-expect-error no step.otm: step.plan with kind "race".
  void step.otm;
  // @ts-expect-error no step.mentored: step.plan with kind "mentored".
  void step.mentored;
}

// Mistakes the declarations must catch.
export function mistakes(specula: Specula): void {
  // @ts-expect-error the prompt is required.
  void specula.complete({ method: "speculative" });
  // @ts-expect-error not a method.
  void specula.complete({ prompt: "x", method: "beam" });
  // @ts-expect-error "otm" is no longer a method: it is method "spectr" with selection "race".
  void specula.complete({ prompt: "x", method: "otm" });
  // @ts-expect-error not a selection rule of generate(): the exact LP is plan()'s only.
  void specula.complete({ prompt: "x", method: "spectr", selection: "otm" });
  // @ts-expect-error "kseq" is no longer a plan() method: it is method "spectr" (selection "kseq").
  void plan({ method: "kseq", target: [1], draft: [1] });
  // @ts-expect-error "greedy" is no longer a plan() method: it is method "speculative" at temperature 0.
  void plan({ method: "greedy", target: [1], draft: [1] });
  // @ts-expect-error not a selection rule.
  void plan({ method: "spectr", selection: "best", target: [1], draft: [1] });
  // @ts-expect-error theory() needs the gammas.
  void theory({ alpha: 0.5 });
  // @ts-expect-error an unknown option (a typo of temperature).
  void specula.complete({ prompt: "x", temprature: 0 });
  // @ts-expect-error gamma is a number.
  void specula.complete({ prompt: "x", gamma: "4" });
  // @ts-expect-error cache-reset acts only over a sequence: not a plan() bug.
  void plan({ method: "speculative", target: [1], draft: [1], bug: "cache-reset" });
  // @ts-expect-error not a backend.
  void Specula.load({ backend: "webgl" });
  // @ts-expect-error not a build of the CPU module.
  void Specula.load({ backend: "cpu", cpuSimd: "avx2" });
  // @ts-expect-error one or two workers.
  void Specula.load({ backend: "cpu", threads: 4 });
  // @ts-expect-error a GGUF file is { url }, not the URL itself.
  void Specula.load({ target: "/target.gguf", draft: { url: "/draft.gguf" } });
}

/** A GGUF pair, one file picked by the user (a blob: URL). */
export async function ggufLoad(picked: Blob): Promise<string> {
  const draft: GgufSource = { url: new URL("/models/draft.gguf", location.href) };
  const specula = await Specula.load({ backend: "cpu", target: { url: URL.createObjectURL(picked) }, draft });
  return (await specula.complete({ prompt: "Once upon a time", temperature: 0, maxTokens: 8 })).text;
}

/** decode() over models of the caller's: a synchronous one and a batched async one. */
export async function decodeUse(): Promise<DecodeSummary> {
  const draft: DecodeModel = {
    vocabSize: 8,
    logits: (tokens: Int32Array, count: number) => new Float32Array(count * 8 + tokens.length * 0),
    rollback: (committed: number) => void committed,
  };
  const target: DecodeModel = {
    vocabSize: 8,
    forward: async (request) => new Float32Array(request.queries.length * 8 + request.committedLen * 0),
  };
  const options: DecodeOptions = { draft, target, prompt: [1, 2, 3], method: "spectr", tree: [2, 2], stop: [0], seed: 7 };
  const iterator = decode(options);
  for (;;) {
    const step = await iterator.next();
    if (step.done) return step.value;
    const round: DecodeRound = step.value;
    const tokens: number[] = round.tokens;
    void [tokens, round.counts.accepted, round.trace.steps, round.metrics.rounds, round.summary.acceptanceRate];
  }
}

/** A runtime with a key/value cache, as a decode() model. */
export function cachedUse(): DecodeModel {
  const model = cachedModel<number[]>({
    vocabSize: 8,
    step: async (cache, tokens) => ({ logits: new Float32Array(tokens.length * 8), cache: [...(cache ?? []), ...tokens] }),
    truncate: (cache, length) => cache.slice(0, length),
  });
  const positions: number = model.stats.positions;
  void positions;
  // @ts-expect-error truncate gets the runtime's own cache type.
  void cachedModel<number[]>({ vocabSize: 8, step: () => ({ logits: [], cache: [] }), truncate: (cache: string) => cache });
  return model;
}

export function decodeMistakes(model: DecodeModel): void {
  // Prompt lookup needs no draft model.
  void decode({ target: model, prompt: [1, 2, 1], method: "lookup", ngram: 2 });
  // @ts-expect-error decode() takes token ids, not text.
  void decode({ target: model, prompt: "To be" });
  // @ts-expect-error stop tokens are token ids.
  void decode({ target: model, prompt: [1], stop: ["\n"] });
  // @ts-expect-error a model needs its vocabSize.
  void decode({ target: { logits: () => new Float32Array(1) }, prompt: [1] });
}

/** The lab: sample()'s settings and result. */
export async function sampleLoop(specula: Specula, signal: AbortSignal): Promise<string> {
  const seen: number[] = [];
  const settings: SampleSettings = { runs: 100, position: 2, signal, onProgress: (r) => seen.push(r.done) };
  const result: SampleResult = await specula.sample({ prompt: "ROMEO:", method: "speculative", bug: "cache-reset" }, settings);
  const kind: string = result.kind;
  const fit = `${result.tv} ${result.chiSquare} ${result.degreesOfFreedom} ${result.pValue} ${result.targetPValue}`;
  const exact = `${result.expected.length} ${result.target.length} ${result.tvFromTarget} ${result.firstSeed} ${result.runTokens}`;
  const memory = await specula.memory();
  // @ts-expect-error: the run length is fixed, so sample() takes no settings it would ignore
  await specula.sample({ prompt: "ROMEO:" }, { maxTokens: 4 });
  return `${kind} ${fit} ${exact} ${result.counts.join()} ${result.done} ${seen.length} ${memory.wasmBytes} ${memory.jsHeapBytes ?? "-"}`;
}
