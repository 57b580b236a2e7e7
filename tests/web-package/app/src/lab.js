// The lab through the package: Specula.sample() runs the real decoder many times and
// tests the counts against the exact distribution the engine works out from the models.
// Sized for CI: a few hundred runs per case at the CPU's speed in wasm.

const PROMPT = "ROMEO:\nI";

async function refused(promise, field) {
  try {
    await promise;
    return `resolved, expected a refusal of ${field}`;
  } catch (error) {
    return error.code === "invalid_option" && error.field === field ? null : `${error.code} ${error.field}: ${error.message}`;
  }
}

export async function labChecks(specula, check) {
  const start = performance.now();
  const progress = [];
  const fair = await specula.sample(
    { prompt: PROMPT, method: "speculative", gamma: 4, seed: 100 },
    { runs: 600, onProgress: (r) => progress.push(r.done) },
  );
  const sum = fair.counts.reduce((a, b) => a + b, 0);
  check(fair.kind === "target" && fair.done === 600 && sum === 600 && fair.samples === 600, `lab: 600 speculative runs counted (${fair.kind}, ${sum})`);
  check(fair.pValue > 1e-4 && fair.tvFromTarget === 0, `lab: speculative fits the target (p ${fair.pValue.toExponential(2)}, TV ${fair.tv.toFixed(3)})`);
  check(progress.every((d, i) => i === 0 || d >= progress[i - 1]) && progress.every((d) => d <= 600), `lab: progress counts grow (${progress.length} reports)`);
  const seconds = (performance.now() - start) / 1000;

  // A planted bug follows its own closed form and, with enough runs, not the target.
  const bug = await specula.sample({ prompt: PROMPT, method: "speculative", gamma: 2, bug: "shared-uniform", seed: 7 }, { runs: 1500 });
  check(bug.kind === "shared-uniform" && bug.tvFromTarget > 0.05, `lab: shared-uniform's closed form is TV ${bug.tvFromTarget.toFixed(3)} from the target`);
  check(bug.pValue > 1e-4 && bug.targetPValue < 1e-4, `lab: shared-uniform runs fit the bug (p ${bug.pValue.toExponential(2)}) and not the target (p ${bug.targetPValue.toExponential(2)})`);

  // A prompt that leaves room for one character in the 256-position window: the runs
  // draw both characters from the target, the second after the window slid, and the
  // exact distribution follows the same slide (a wiring check of the policy; its
  // statistics are tested in crates/specula-cli/tests/sample_compare.rs).
  const full = "ROMEO:\nBut soft, what light through yonder window breaks?\n".repeat(6).slice(0, 255);
  const slid = await specula.sample({ prompt: full, method: "speculative", gamma: 2, bug: "shared-uniform", seed: 3 }, { runs: 200, position: 2 });
  check(slid.kind === "target" && slid.pValue > 1e-4, `lab: a prompt filling the window follows the target after the slide (p ${slid.pValue.toExponential(2)})`);

  // One run cannot be tested: no p-value (never p = 1 as if it fitted), and the reason.
  const one = await specula.sample({ prompt: PROMPT, method: "speculative", gamma: 2, seed: 4 }, { runs: 1 });
  check(one.pValue === null && one.targetPValue === null && /too few/.test(one.noTest), `lab: one run is no test (${one.noTest})`);

  // The same seed gives the same counts.
  const again = await specula.sample({ prompt: PROMPT, method: "speculative", gamma: 4, seed: 100 }, { runs: 50 });
  const first = await specula.sample({ prompt: PROMPT, method: "speculative", gamma: 4, seed: 100 }, { runs: 50 });
  check(JSON.stringify(again.counts) === JSON.stringify(first.counts), "lab: the same seed gives the same counts");

  // Cancellable: abort() after the first report rejects with the counts so far.
  let aborted = null;
  try {
    await specula.sample({ prompt: PROMPT, seed: 1 }, { runs: 100000, onProgress: () => specula.abort() });
  } catch (error) {
    aborted = error;
  }
  const partial = aborted?.result;
  check(
    aborted?.code === "aborted" && partial && partial.done < 100000 && partial.counts.reduce((a, b) => a + b, 0) === partial.done,
    `lab: abort() stops the runs with the counts so far (${aborted?.code}, ${partial?.done})`,
  );
  const controller = new AbortController();
  controller.abort();
  let signalled = null;
  try {
    await specula.sample({ prompt: PROMPT }, { runs: 100000, signal: controller.signal });
  } catch (error) {
    signalled = error;
  }
  check(signalled?.code === "aborted", `lab: an aborted signal stops the runs (${signalled?.code})`);

  // Bad settings are refused with their field.
  for (const [options, lab, field] of [
    [{ prompt: PROMPT, maxTokens: 5 }, {}, "maxTokens"],
    [{ prompt: PROMPT, stop: ["a"] }, {}, "stop"],
    [{ prompt: PROMPT }, { position: 3 }, "position"],
    [{ prompt: PROMPT }, { runs: 0 }, "runs"],
    [{ prompt: PROMPT }, { runs: "5" }, "runs"],
    [{ prompt: PROMPT }, { colour: 1 }, "colour"],
    [{ prompt: PROMPT, method: "spectr", bug: "shared-uniform" }, {}, "method"],
    [{ prompt: PROMPT, method: "mentored", kl: 0.5 }, { position: 2 }, "position"],
  ]) {
    const problem = await refused(specula.sample(options, lab), field);
    check(problem === null, `lab: ${JSON.stringify(options)} ${JSON.stringify(lab)} refused naming ${field}${problem ? ` (${problem})` : ""}`);
  }
  const memory = await specula.memory();
  check(memory.wasmBytes > 0, `lab: memory() reports the wasm memory (${memory.wasmBytes} bytes)`);
  // Usable after all that.
  const after = await specula.complete({ prompt: PROMPT, maxTokens: 4, temperature: 0 });
  check(after.tokens === 4, "lab: generate() works after sample() and its refusals");
  return seconds;
}
