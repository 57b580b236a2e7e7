// Parallel drafting through the package: with `parallelDraft: true` the draft model and
// the decoder run in a second worker (the CPU-only module) while the instance's worker
// answers the target's requests. A seed gives the tokens of the same schedule run one
// call at a time (decode() over the bundled pair), the runs fit the target, and abort,
// bad options behave as without it.

import { decode } from "specula";

const PROMPT = "ROMEO:\nBut soft";

async function failure(promise) {
  try {
    await promise;
    return null;
  } catch (error) {
    return error;
  }
}

export async function parallelChecks(specula, check) {
  const before = await specula.memory();
  const options = { prompt: PROMPT, method: "speculative", gamma: 4, parallelDraft: true, maxTokens: 60 };
  const prompt = await specula.tokenize(PROMPT);
  for (const seed of [1, 2]) {
    const rounds = [];
    for await (const round of specula.generate({ ...options, seed })) rounds.push(round);
    const text = rounds.map((r) => r.text).join("");
    const tokens = [];
    for await (const round of decode({ ...specula.models, ...options, prompt, seed })) tokens.push(...round.tokens);
    const sequential = await specula.detokenize(tokens);
    check(text.length === 60 && text === sequential, `parallel: two workers == one call at a time for seed ${seed} (${JSON.stringify(text.slice(0, 24))}…)`);
    // A round whose drafts were drawn early follows a fully accepted round that took no
    // bonus token (its last position is where the early drafts are tested).
    const after = rounds.slice(1).filter((r) => r.trace.earlyDrafts > 0);
    const before = rounds.filter((_, i) => rounds[i + 1]?.trace.earlyDrafts > 0);
    check(after.length > 0 && before.every((r) => r.counts.bonus === 0 && r.counts.resampled === 0), `parallel: ${after.length} rounds tested drafts drawn early, after rounds with no bonus token`);
  }
  const after = await specula.memory();
  check(after.wasmBytes > before.wasmBytes, `parallel: a draft worker holds its own module (${before.wasmBytes} -> ${after.wasmBytes} bytes)`);

  // The same settings, greedy: greedy decoding of the target.
  const greedy = { prompt: PROMPT, maxTokens: 24, temperature: 0 };
  const reference = await specula.complete({ ...greedy, method: "autoregressive" });
  const parallel = await specula.complete({ ...greedy, method: "speculative", gamma: 3, parallelDraft: true });
  check(parallel.text === reference.text, `parallel: greedy == autoregressive greedy (${JSON.stringify(parallel.text)})`);
  check(parallel.backend.draftBackend === "cpu" && parallel.backend.backend === specula.backend.backend, `parallel: the summary says where each model ran ${JSON.stringify(parallel.backend)}`);

  // The runs of the lab, under parallel drafting, fit the target at the second character
  // (γ = 1: an accepted draft is followed by a draft drawn early, tested in round 1).
  const lab = await specula.sample({ prompt: "ROMEO:\nI", method: "speculative", gamma: 1, parallelDraft: true, seed: 5 }, { runs: 400, position: 2 });
  check(lab.kind === "target" && lab.pValue > 1e-4, `parallel: the second character fits the target (p ${lab.pValue.toExponential(2)}, TV ${lab.tv.toFixed(3)})`);

  // Refusals name the option, as without parallel drafting.
  const refused = await failure(specula.complete({ prompt: PROMPT, method: "spectr", parallelDraft: true }));
  check(refused?.code === "invalid_option" && refused.field === "parallelDraft", `parallel: spectr refuses parallelDraft (${refused?.code} ${refused?.field})`);
  const badPrompt = await failure(specula.complete({ prompt: "ROMEO\u{1F600}", parallelDraft: true }));
  check(badPrompt?.code === "bad_prompt", `parallel: a bad prompt is refused in the draft worker too (${badPrompt?.code})`);

  // Abort mid-run keeps the text so far and leaves the instance usable.
  const iterator = specula.generate({ ...options, seed: 3, maxTokens: 200 });
  const first = await iterator.next();
  specula.abort();
  const error = await failure((async () => {
    for (let r = await iterator.next(); !r.done; r = await iterator.next());
  })());
  check(!first.done && error?.code === "aborted" && error.summary.text.startsWith(first.value.text), `parallel: abort keeps the text so far (${error?.code})`);
  const again = await specula.complete({ ...greedy, method: "speculative", gamma: 3, parallelDraft: true });
  check(again.text === reference.text, "parallel: usable after abort");
}
