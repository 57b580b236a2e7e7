// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-wasm --test
// generated` (ts-rs): do not edit. What each field means is documented on the Rust type.
// The lab: many runs' first or second character against its exact distribution (Engine.exact, fit, Specula.sample).

export type SampleSettings = { 
/**
 * How many runs (default [`DEFAULT_LAB_RUNS`], at most [`MAX_LAB_RUNS`]).
 */
runs?: number, 
/**
 * The generated token counted: 1 (default) or 2.
 */
position?: number, 
/**
 * Stops the runs, like `abort()` (the package's, on the calling side).
 */
signal?: AbortSignal, 
/**
 * Called with the running result as the counts grow, about ten times a second (the
 * package's, on the calling side).
 */
onProgress?: (result: SampleResult) => void, };

export type SampleResult = { 
/**
 * How often each token (by id: `tokenTexts`) came at `position`.
 */
counts: Array<number>, 
/**
 * The runs made so far.
 */
done: number, 
/**
 * Runs that ended at the model's end token before `position` (a GGUF model's end of
 * turn): not in `counts`; the exact distribution is conditioned on the same.
 */
unreached: number, 
/**
 * The runs to make.
 */
runs: number, 
/**
 * The first run's seed; run `i` uses `firstSeed + i`.
 */
firstSeed: number, 
/**
 * The tokens each run generates (the `maxTokens` of every run).
 */
runTokens: number, 
/**
 * The generated position, 1 or 2.
 */
position: number, 
/**
 * Where the distribution comes from: `target`, `mentored`, `typical` or a bug's name.
 */
kind: string, 
/**
 * The exact distribution, one entry per token.
 */
expected: Array<number>, 
/**
 * The target's own distribution at that position (processed; at the second position
 * its mixture over the first), which a lossless method reproduces.
 */
target: Array<number>, 
/**
 * Total variation between `expected` and `target`.
 */
tvFromTarget: number, 
/**
 * The runs counted.
 */
samples: number, 
/**
 * Total variation between the empirical and the exact distribution.
 */
tv: number, 
/**
 * Pearson's chi-square of the counts against the exact distribution.
 */
chiSquare: number, 
/**
 * Its degrees of freedom (bins expecting fewer than 5 counts pooled into one).
 */
degreesOfFreedom: number, 
/**
 * Its p-value: small when the counts do not follow the exact distribution; `None`
 * when no test is possible (`noTest` says why).
 */
pValue: number | null, 
/**
 * The same test against the target's distribution: for a lossless method the same
 * question; for a lossy rule or a bug, small once there are enough runs; `None`
 * when no test is possible.
 */
targetPValue: number | null, 
/**
 * Why there is no p-value: fewer than two bins to compare (too few runs, or an
 * exact distribution on one token). `None` when both tests were made.
 */
noTest: string | null, };

export type LabExact = { 
/**
 * The runs to make.
 */
runs: number, 
/**
 * The first run's seed; run `i` uses `firstSeed + i`.
 */
firstSeed: number, 
/**
 * The tokens each run generates (the `maxTokens` of every run).
 */
runTokens: number, 
/**
 * The generated position, 1 or 2.
 */
position: number, 
/**
 * Where the distribution comes from: `target`, `mentored`, `typical` or a bug's name.
 */
kind: string, 
/**
 * The exact distribution, one entry per token.
 */
expected: Array<number>, 
/**
 * The target's own distribution at that position (processed; at the second position
 * its mixture over the first), which a lossless method reproduces.
 */
target: Array<number>, 
/**
 * Total variation between `expected` and `target`.
 */
tvFromTarget: number, };

export type Exact = { 
/**
 * The generated position, 1 or 2.
 */
position: number, 
/**
 * Where the distribution comes from: `target`, `mentored`, `typical` or a bug's name.
 */
kind: string, 
/**
 * The exact distribution, one entry per token.
 */
expected: Array<number>, 
/**
 * The target's own distribution at that position (processed; at the second position
 * its mixture over the first), which a lossless method reproduces.
 */
target: Array<number>, 
/**
 * Total variation between `expected` and `target`.
 */
tvFromTarget: number, };

export type Fit = { 
/**
 * The runs counted.
 */
samples: number, 
/**
 * Total variation between the empirical and the exact distribution.
 */
tv: number, 
/**
 * Pearson's chi-square of the counts against the exact distribution.
 */
chiSquare: number, 
/**
 * Its degrees of freedom (bins expecting fewer than 5 counts pooled into one).
 */
degreesOfFreedom: number, 
/**
 * Its p-value: small when the counts do not follow the exact distribution; `None`
 * when no test is possible (`noTest` says why).
 */
pValue: number | null, 
/**
 * The same test against the target's distribution: for a lossless method the same
 * question; for a lossy rule or a bug, small once there are enough runs; `None`
 * when no test is possible.
 */
targetPValue: number | null, 
/**
 * Why there is no p-value: fewer than two bins to compare (too few runs, or an
 * exact distribution on one token). `None` when both tests were made.
 */
noTest: string | null, };
