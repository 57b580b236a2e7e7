// Generated from specula_engine::options::limits (crates/specula-engine/src/options/limits.rs),
// METHOD_OPTIONS (crates/specula-engine/src/options/method_options.rs) and the names of
// the options of load() and sample() (crates/specula-engine/src/options/load.rs, sample.rs)
// by `SPECULA_BLESS=1 cargo test -p specula-wasm --test generated`: do not edit.

/** Every default and limit of the generate() options, as the engine checks them. */
export const LIMITS = Object.freeze({
  "maxGamma": 64,
  "defaultGamma": 4,
  "defaultParallelDraft": false,
  "maxDrafts": 1024,
  "defaultDrafts": 4,
  "maxPlanDrafts": 1000000,
  "maxRoundNodes": 1024,
  "defaultTypicalEpsilon": 0.09,
  "defaultTypicalDelta": 0.3,
  "maxTypicalDelta": 1000000.0,
  "maxLabRuns": 1000000,
  "defaultLabRuns": 1000,
  "defaultNgram": 3,
  "maxNgram": 16,
  "maxTokens": 65536,
  "defaultMaxTokens": 64,
  "maxTemperature": 1000000.0,
  "defaultTemperature": 1.0,
  "maxTopK": 1048576,
  "maxKl": 1000000.0,
  "maxSeed": 9007199254740991,
  "defaultSeed": 0,
  "maxStopStrings": 64,
  "maxStopChars": 1024,
  "maxVocab": 2147483648,
  "maxTheoryGammas": 1024,
  "maxRetargetProbs": 1048576
});

/** The deliberate bugs `bug` plants, with what each gets wrong (specula_core::Bug). */
export const BUGS = Object.freeze([
  {
    "description": "on a rejection, draw from the target instead of the residual",
    "name": "resample-from-target"
  },
  {
    "description": "propose the draft's most likely token, tested as if sampled",
    "name": "argmax-draft"
  },
  {
    "description": "one uniform both draws the draft token and decides its acceptance",
    "name": "shared-uniform"
  },
  {
    "description": "test against the target's raw softmax (no temperature, top-k or top-p)",
    "name": "unprocessed-target"
  },
  {
    "description": "draw drafts after top-k/top-p but test them with the unfiltered draft",
    "name": "filtered-draft"
  },
  {
    "description": "after a rejection, reset the K/V caches instead of rolling them back",
    "name": "cache-reset"
  }
]);

/** The options each method takes besides the common ones; the others are refused. */
export const METHOD_OPTIONS = Object.freeze(Object.fromEntries(Object.entries({
  "autoregressive": [],
  "speculative": ["gamma","dynamicGamma","parallelDraft","bug"],
  "spectr": ["gamma","selection","drafts","tree","bug"],
  "multiround": ["gamma","drafts","tree","bug"],
  "mentored": ["gamma","dynamicGamma","kl"],
  "typical": ["gamma","dynamicGamma","epsilon","delta"],
  "lookup": ["gamma","ngram"]
}).map(([method, options]) => [method, Object.freeze(options)])));

/** The names of load()'s options and of a GGUF file's, and the choices of backend, draftBackend, cpuSimd and threads (specula_engine::options::LoadOptions). */
export const LOAD_OPTION_NAMES = Object.freeze(["backend","draftBackend","cpuSimd","threads","onProgress","weightsUrl","target","draft","wasmUrl","wasmCpuUrl","wasmCpuRelaxedUrl"]);
export const GGUF_SOURCE_NAMES = Object.freeze(["url"]);
export const BACKENDS = Object.freeze(["auto","webgpu","cpu"]);
export const DRAFT_BACKENDS = Object.freeze(["same","cpu","unfused"]);
export const CPU_SIMDS = Object.freeze(["auto","relaxed-simd","simd128"]);
export const THREADS = Object.freeze(["auto",1,2]);

/** The names of sample()'s settings (specula_engine::options::SampleSettings), and those the package keeps on the calling side. */
export const SAMPLE_SETTING_NAMES = Object.freeze(["runs","position","signal","onProgress"]);
export const CALLER_SIDE_SAMPLE_SETTINGS = Object.freeze(["signal","onProgress"]);

/** The most bytes of a model description, of a weight file (two bytes a parameter of the largest model plus slack) and of a GGUF file: the worker refuses a larger one before downloading it (specula_model::MAX_META_BYTES, MAX_PARAMS, WEIGHTS_SLACK_BYTES; specula_wasm::MAX_GGUF_FILE_BYTES). */
export const FILE_LIMITS = Object.freeze({ descriptionBytes: 1048576, weightsBytes: 129048576, ggufBytes: 2147483648 });
