// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-wasm --test
// generated` (ts-rs): do not edit. What each field means is documented on the Rust type.
// A whole generation's summary and metrics, load()'s options and where the models run, a model's stage profile, and the options and curves of theory() and retarget().
import type { FinishReason, Timing } from "./rounds";

export type Summary = { 
/**
 * The prompt.
 */
prompt: string, 
/**
 * The generated text (without the prompt).
 */
text: string, 
/**
 * Tokens generated.
 */
tokens: number, 
/**
 * Why it stopped; `None` when aborted or still running.
 */
finish: FinishReason | null, 
/**
 * Whether `abort()` stopped it.
 */
aborted: boolean, 
/**
 * Totals with vLLM's definitions.
 */
metrics: Metrics, 
/**
 * The derived rates.
 */
summary: MetricsSummary, 
/**
 * Where the models run now.
 */
backend: BackendInfo, };

export type Metrics = { 
/**
 * Rounds completed (target calls that produced tokens).
 */
rounds: number, 
/**
 * Draft tokens generated.
 */
draftedTokens: number, 
/**
 * Emitted tokens that were accepted drafts.
 */
acceptedTokens: number, 
/**
 * Emitted tokens drawn from a residual.
 */
resampledTokens: number, 
/**
 * Emitted tokens drawn directly from the target (bonus; every autoregressive token).
 */
bonusTokens: number, 
/**
 * Tokens emitted.
 */
emittedTokens: number, 
/**
 * Draft model requests.
 */
draftCalls: number, 
/**
 * Target model requests.
 */
targetCalls: number, 
/**
 * Rounds with drafts drawn while the last round's target request was outstanding
 * (parallel drafting).
 */
earlyRounds: number, 
/**
 * Draft depths drawn while the last round's target request was outstanding.
 */
earlyDrafts: number, 
/**
 * For each position i (0-based), rounds whose draft set reached depth i + 1.
 */
draftedPerPosition: Array<number>, 
/**
 * For each position i, rounds whose emitted token at depth i + 1 was an accepted draft.
 */
acceptedPerPosition: Array<number>, 
/**
 * Entry n: rounds that emitted n accepted draft tokens.
 */
acceptedLengthHistogram: Array<number>, 
/**
 * Time spent.
 */
timing: Timing, };

export type MetricsSummary = { 
/**
 * Accepted / drafted.
 */
acceptanceRate: number | null, 
/**
 * 1 + accepted / rounds.
 */
meanAcceptanceLength: number | null, 
/**
 * Accepted / drafted at each position.
 */
perPositionAcceptance: Array<number>, 
/**
 * Emitted tokens per target call.
 */
blockEfficiency: number | null, 
/**
 * Engine time per emitted token, in nanoseconds.
 */
selectionNanosPerToken: number | null, 
/**
 * Emitted tokens per second of total measured time.
 */
tokensPerSecond: number | null, 
/**
 * Accepted / tested positions (accepted + resampled): the per-position acceptance
 * α of speculative decoding's theory.
 */
testedAcceptance: number | null, 
/**
 * Mean draft call time / mean target call time: the draft's cost c in target calls.
 */
costRatio: number | null, };

export type BackendInfo = { 
/**
 * Where the target runs: `"webgpu"` or `"cpu"`.
 */
backend: string, 
/**
 * Where the draft runs: `"webgpu"` or `"cpu"`.
 */
draftBackend: string, 
/**
 * What was asked for.
 */
requested: BackendChoice, 
/**
 * The GPU adapter's name (WebGPU only).
 */
adapter: string | null, 
/**
 * Whether the adapter is a software fallback such as SwiftShader (slow).
 */
isFallbackAdapter: boolean | null, 
/**
 * Why the models are not on WebGPU when `auto` was asked, or why they left it.
 */
reason: string | null, 
/**
 * Which wasm module runs them: `"full"` (WebGPU and CPU) or `"cpu"` (CPU-only).
 */
module: ModuleKind, 
/**
 * The SIMD instructions of that module's CPU kernels (which build of the CPU-only
 * module the `cpuSimd` load option picked; the full module's is `"simd128"`).
 */
simd: SimdLevel, 
/**
 * Web Workers computing the target's dense layers: 1, or 2 when a second worker
 * holds a copy of the target (load option `threads`; the target on the CPU only).
 */
threads: 1 | 2, 
/**
 * Why one worker where `threads` asked for "auto" or 2 (the page is not
 * cross-origin isolated, one core, the target on WebGPU, the second worker
 * failed to start); null otherwise.
 */
threadsReason: string | null, };

export type StageReport = { 
/**
 * Whether the profile is timing forward passes now.
 */
enabled: boolean, 
/**
 * Forward passes timed.
 */
passes: number, 
/**
 * New positions those passes ran, over every sequence.
 */
positions: number, 
/**
 * The passes' whole time, in milliseconds.
 */
totalMs: number, 
/**
 * Each stage's milliseconds, every stage named (`embed`, `norms`, `qkv`,
 * `attention`, `attnOut`, `mlpIn`, `mlpOut`, `head`); they add up to at most
 * `totalMs`, the rest being the clock reads and joining the helper thread.
 */
stagesMs: Record<ForwardStage, number>, };

export type ForwardStage = "embed" | "norms" | "qkv" | "attention" | "attnOut" | "mlpIn" | "mlpOut" | "head";

export type BackendChoice = "auto" | "webgpu" | "cpu";

export type ModuleKind = "full" | "cpu";

export type SimdLevel = "relaxed-simd" | "simd128";

export type CpuSimd = "auto" | "relaxed-simd" | "simd128";

export type CpuThreads = "auto" | 1 | 2;

export type GpuCalls = { 
/**
 * Compute dispatches (`dispatchWorkgroups`, direct or indirect): one per kernel run.
 */
dispatches: number, 
/**
 * Queue submissions (`GPUQueue.submit`): each one a hand-over to the GPU.
 */
submits: number, 
/**
 * Read-backs (`GPUBuffer.mapAsync`): each one a round trip from the GPU to the CPU.
 */
readbacks: number, 
/**
 * Compute pipelines created (`createComputePipeline`, sync or async): a kernel
 * compiled for a new shape or a new kernel.
 */
pipelines: number, 
/**
 * Buffers created (`GPUDevice.createBuffer`).
 */
buffers: number, 
/**
 * Uploads through the queue (`GPUQueue.writeBuffer`).
 */
writes: number, };

export type ThreadCalls = { 
/**
 * Dense calls handed to the second worker since the models were loaded.
 */
posted: number, 
/**
 * Those it answered; the others (it failed, or stopped answering) ran whole in the
 * main worker.
 */
answered: number, 
/**
 * Calls too large for the exchange (a long prompt's pass through the head), run
 * whole in the main worker.
 */
tooLarge: number, };

export type LoadOptions = { 
/**
 * Default "auto": WebGPU when the browser gives an adapter, otherwise the CPU inside
 * wasm.
 */
backend?: BackendChoice, 
/**
 * Default "same" (on WebGPU a draft call of one or two positions is then one fused
 * dispatch per block). "cpu" keeps the small draft model on the CPU inside wasm while
 * the target runs on WebGPU. "unfused" is "same" without the fusion, to measure it.
 * No effect when the target runs on the CPU.
 */
draftBackend?: DraftBackend, 
/**
 * Default "auto": which build of the CPU-only module runs the models on the CPU
 * (`BackendInfo.simd` says which did). "auto" loads the relaxed-SIMD build where the
 * browser compiles it and it is served (`wasmCpuRelaxedUrl`), else the `simd128`
 * one; "relaxed-simd" insists (else code "backend_unavailable"); "simd128" gives the
 * same logits on every machine. No effect on models on WebGPU.
 */
cpuSimd?: CpuSimd, 
/**
 * Default "auto": Web Workers sharing the target's dense layers on the CPU, 1 or 2
 * (`CpuThreads`; `BackendInfo.threads` says how many run, `threadsReason` why one).
 * 2 needs a cross-origin isolated page (else code "backend_unavailable"). No effect
 * on a target on WebGPU.
 */
threads?: CpuThreads, 
/**
 * Called with each file's download progress.
 */
onProgress?: (progress: Progress) => void, 
/**
 * Where draft.json, draft.bpk, target.json, target.bpk and manifest.json live
 * (default: bundled with the package).
 */
weightsUrl?: string | URL, 
/**
 * A Llama-family GGUF file as the target model (docs/real-models.md), instead of
 * the bundled pair: give `draft` with it, and not `weightsUrl`. The two must share a
 * tokenizer (else code "bad_weights"). With GGUF models `alphabet` is "",
 * generation stops at the file's end token, and `sample()` and `parallelDraft` are
 * refused ("invalid_option").
 */
target?: GgufSource, 
/**
 * The draft model's GGUF file; required with `target`.
 */
draft?: GgufSource, 
/**
 * Where the full module's specula_wasm_bg.wasm (WebGPU and CPU) lives (default:
 * bundled with the package, dist/wasm/). Given without `wasmCpuUrl`, this module
 * serves every backend and the math calls.
 */
wasmUrl?: string | URL, 
/**
 * Where the CPU-only module's specula_wasm_bg.wasm lives (default: bundled with the
 * package, dist/wasm-cpu/): loaded for backend "cpu", for "auto" when the browser
 * gives no WebGPU adapter, and for plan(), theory(), retarget() and checkOptions().
 */
wasmCpuUrl?: string | URL, 
/**
 * Where the relaxed-SIMD build of the CPU-only module lives (default: bundled with
 * the package, dist/wasm-cpu-relaxed/). Not loaded when `wasmUrl` or `wasmCpuUrl`
 * is given without it.
 */
wasmCpuRelaxedUrl?: string | URL, };

export type GgufSource = { 
/**
 * Where the file is served, resolved against the page's location like
 * `weightsUrl`; a `blob:` or `data:` URL works too. At most 2 GiB (larger files are
 * refused with code "bad_weights" before they are read whole); a failed download is
 * "download_failed".
 */
url: string | URL, };

export type Progress = { 
/**
 * The file's name.
 */
file: string, 
/**
 * Bytes so far.
 */
loaded: number, 
/**
 * Bytes expected, when known.
 */
total: number | null, };

export type DraftBackend = "same" | "cpu" | "unfused";

export type TheoryOptions = { 
/**
 * The acceptance rate α of one drafted token, in [0, 1] (required).
 */
alpha: number, 
/**
 * The draft lengths γ to evaluate, each 1 to [`MAX_GAMMA`], at most
 * [`MAX_THEORY_GAMMAS`] of them (required).
 */
gammas: Array<number>, 
/**
 * c, the cost of one draft call over one target call (a finite number ≥ 0); without
 * it no walltime factor.
 */
costRatio?: number, };

export type TheoryCurves = { 
/**
 * γ, as asked.
 */
gammas: Array<number>, 
/**
 * `(1 − α^{γ+1}) / (1 − α)`: expected tokens per round.
 */
expectedTokens: Array<number>, 
/**
 * `(1 − α^{γ+1}) / ((1 − α)(γc + 1))`: the walltime factor, when a cost ratio c was
 * given.
 */
walltimeFactor: Array<number> | null, };

export type RetargetOptions = { 
/**
 * A distribution as recorded (e.g. a step's `targetProbs`), with no top-k or top-p
 * applied: at most [`MAX_RETARGET_PROBS`] entries (required).
 */
probs: Array<number> | Float64Array | Float32Array, 
/**
 * The temperature it was recorded at, a finite number > 0 (required).
 */
from: number, 
/**
 * The new temperature (default 1; 0 is greedy: one-hot on the argmax).
 */
temperature?: number, 
/**
 * Keep the k most likely tokens.
 */
topK?: number, 
/**
 * Keep the smallest set of tokens with this much probability.
 */
topP?: number, };
