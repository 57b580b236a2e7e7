// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-wasm --test
// generated` (ts-rs): do not edit. What each field means is documented on the Rust type.
// The options and the report of plan(), the token-level analysis (`specula plan --json`).
import type { Bug } from "./options";

export type PlanOptions = { 
/**
 * The scheme, by decoding's name: one of the [`PlanMethod`] names (required).
 */
method?: string, 
/**
 * SpecTr's selection rule (spectr only): `"kseq"` (the default), `"race"` (the
 * ratio race) or `"otm"` (the exact linear program, which only a plan solves).
 */
selection?: string, 
/**
 * The target's probabilities (required): the model's raw softmax, which
 * `temperature`, `topK` and `topP` process.
 */
target?: Array<number>, 
/**
 * The draft's probabilities, as many as the target's (required).
 */
draft?: Array<number>, 
/**
 * k, the i.i.d. drafts of spectr and multiround (default [`DEFAULT_DRAFTS`], at
 * most [`MAX_PLAN_DRAFTS`]).
 */
drafts?: number, 
/**
 * The KL budget D of mentored decoding, in nats (required there).
 */
kl?: number, 
/**
 * k-Seq's ρ, at least ρ* (spectr with selection kseq only; default ρ*).
 */
rho?: number, 
/**
 * Typical acceptance's ceiling ε on its threshold, in [0, 1] (typical only; default
 * [`DEFAULT_TYPICAL_EPSILON`]).
 */
epsilon?: number, 
/**
 * Typical acceptance's scale δ ≥ 0 of `exp(−H(target))` (typical only; default
 * [`DEFAULT_TYPICAL_DELTA`]).
 */
delta?: number, 
/**
 * Rescale both distributions to sum to 1 instead of refusing them.
 */
normalize?: boolean, 
/**
 * A deliberate bug to plant (speculative only), by its kebab-case name.
 */
bug?: string, 
/**
 * The temperature applied to both distributions, as decoding applies it (default 1:
 * as given); 0 is greedy verification, planned as method speculative.
 */
temperature?: number, 
/**
 * Keep the k most likely tokens of both distributions (not at temperature 0).
 */
topK?: number, 
/**
 * Keep the smallest set of tokens with at least this mass, in both distributions
 * (not at temperature 0).
 */
topP?: number, };

export type PlanMethod = "speculative" | "spectr" | "multiround" | "mentored" | "typical";

export type PlanSelection = "kseq" | "race" | "otm";

export type PlanReport = { 
/**
 * The method, by decoding's name.
 */
method: PlanMethod, 
/**
 * SpecTr's selection rule (method `spectr` only).
 */
selection: PlanSelection | null, 
/**
 * The temperature applied to both distributions (1: as given; 0: greedy
 * verification).
 */
temperature: number, 
/**
 * Top-k applied to both distributions, if any.
 */
topK: number | null, 
/**
 * Top-p applied to both distributions, if any.
 */
topP: number | null, 
/**
 * Target probabilities used (after normalising, if asked, and processed by the
 * sampling settings).
 */
target: Array<number>, 
/**
 * Draft probabilities used (after normalising, if asked, and processed by the
 * sampling settings).
 */
draft: Array<number>, 
/**
 * Vocabulary size.
 */
vocab: number, 
/**
 * Whether `normalize` was set (any positive total rescaled to 1). Without it, a sum
 * within the tolerance of 1 is rescaled too, and [`Self::notes`] says so.
 */
normalized: boolean, 
/**
 * What the plan changed in its input without being asked (a sum within the
 * tolerance of 1 rescaled, a ρ within the tolerance below ρ* raised): empty when
 * the input was used as given.
 */
notes: Array<PlanNote>, 
/**
 * Number of drafts k (multi-draft methods only).
 */
drafts: number | null, 
/**
 * Probability that a drafted token is accepted.
 */
acceptance: number | null, 
/**
 * The exact distribution of the emitted token.
 */
output: Array<number>, 
/**
 * `KL(target ‖ output)` in nats.
 */
klTargetOutput: number | null, 
/**
 * `TV(target, output)`.
 */
tvTargetOutput: number | null, 
/**
 * `KL(target ‖ draft)` in nats.
 */
klTargetDraft: number | null, 
/**
 * `TV(target, draft)`.
 */
tvTargetDraft: number | null, 
/**
 * k-Seq: the ρ in use.
 */
rho: number | null, 
/**
 * k-Seq: the smallest valid ρ.
 */
rhoStar: number | null, 
/**
 * k-Seq: `b(ρ) = Σ min(draft, target/ρ)`, the per-draft acceptance probability.
 */
overlap: number | null, 
/**
 * Mentored: the KL budget D.
 */
klBudget: number | null, 
/**
 * Mentored: lower ratio threshold α ≤ 1.
 */
alpha: number | null, 
/**
 * Mentored: upper ratio threshold β ≥ 1.
 */
beta: number | null, 
/**
 * Mentored: acceptance probability of a drafted token the target rules out (non-zero
 * only when `alpha` is 0).
 */
zeroTargetAccept: number | null, 
/**
 * Mentored: whether every draft is accepted (KL(target ‖ draft) ≤ D).
 */
acceptsAll: boolean | null, 
/**
 * Typical acceptance: the threshold τ = min(ε, δ·exp(−H(target))).
 */
threshold: number | null, 
/**
 * Typical acceptance: the target's entropy H in nats.
 */
entropy: number | null, 
/**
 * OTM and the race: Lemma 3's bound, the best acceptance any selection among i.i.d.
 * drafts reaches (attained; the race comes within its tolerance of it).
 */
upperBound: number | null, 
/**
 * Per token x: the probability that x, once drafted, is accepted (for the race: once
 * drafted and chosen, `min(1, target/r)`).
 */
acceptProbs: Array<number> | null, 
/**
 * The distribution sampled when every draft is rejected.
 */
residual: Array<number> | null, 
/**
 * Per token x: the probability that x is emitted by an accepted draft, so that
 * `acceptedMass + residualMass = output` (for standard speculative sampling,
 * `min(target, draft)`); with `residual`.
 */
acceptedMass: Array<number> | null, 
/**
 * Per token x: the probability that x is emitted by the residual after every draft
 * was rejected, `(1 − acceptance)·residual(x)`; with `residual`.
 */
residualMass: Array<number> | null, 
/**
 * The deliberate bug planted; `output` is then the buggy sampler's exact output.
 */
bug: BugReport | null, 
/**
 * With a bug: `TV(target, output)`, how far the mistake moves the output (the same
 * value as `tvTargetOutput`, under the name the bug lab uses).
 */
tv: number | null, };

export type BugReport = { 
/**
 * The bug's name (kebab case).
 */
name: Bug, 
/**
 * What the mistake is, in one line.
 */
description: string, };

export type PlanNote = { 
/**
 * The change.
 */
kind: PlanNoteKind, 
/**
 * The option it is about: `target`, `draft` or `rho`.
 */
field: string, 
/**
 * The value as given: the sum of the entries, or ρ.
 */
given: number, 
/**
 * The value used instead: 1 (the sum after rescaling), or ρ*.
 */
used: number, 
/**
 * What was changed and why, in one sentence naming the options as npm's `plan()`
 * does (`specula plan` names its flags).
 */
message: string, };

export type PlanNoteKind = "rescaled" | "rhoRaised";
