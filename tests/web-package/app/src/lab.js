// The lab through the package: Specula.sample() runs the real decoder many times and
// tests the counts against the exact distribution the engine works out from the models.
// Sized for CI: a few hundred runs per case at the CPU's speed in wasm. At 600 runs a
// near miss of TV 0.058 from the target moves the chi-square by λ ≈ 9 (unprocessed-target
// at temperature 0.9 on this prompt), too little to reject, so the fits here are wiring
// checks: the runs are counted and a verdict is reported. The statistical claims, with
// power against named near misses at their own runs, are Rust tests:
// crates/specula-cli/tests/sample_compare.rs (this bundled pair, 3,000 runs) and
// crates/specula-engine/tests/lab.rs (the same closed forms, 20,000 runs).

const PROMPT = "ROMEO:\nI";

async function refused(promise, field) {
  try {
    await promise;
    return `resolved, expected a refusal of ${field}`;
  } catch (error) {
    return error.code === "invalid_option" && error.field === field ? null : `${error.code} ${error.field}: ${error.message}`;
  }
}

/**
 * One row of the lab table through sample(): [ok, what was checked]. A "no misfit" row is
 * tested against the row's exact kind and is not a misfit (p > 1e-4), a wiring check at
 * its few hundred runs (see the note at the top); "no test" has no p-value and says why,
 * never a fit; a row with a field is refused naming it. Every run is counted or reported
 * as unreached.
 */
async function labRow(specula, row) {
  const what = `lab table: ${row.name}`;
  if (row.field) {
    const problem = await refused(specula.sample(row.options, row.lab), row.field);
    return [problem === null, `${what}: refused naming ${row.field}${problem ? ` (${problem})` : ""}`];
  }
  const r = await specula.sample(row.options, row.lab);
  const counted = r.counts.reduce((a, b) => a + b, 0);
  const all = r.done === row.lab.runs && counted + r.unreached === r.done;
  if (row.verdict === "no misfit") {
    const ok = all && r.kind === row.exact && r.pValue > 1e-4;
    return [ok, `${what}: ${row.lab.runs} runs tested against ${r.kind}, no misfit (a wiring check; p ${r.pValue}, ${counted} counted, ${r.unreached} unreached)`];
  }
  const ok = all && r.pValue === null && r.targetPValue === null && r.degreesOfFreedom === 0 && /too few/.test(r.noTest);
  return [ok, `${what}: no test (${r.noTest}; p ${r.pValue})`];
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
  check(
    fair.pValue > 1e-4 && fair.pValue <= 1 && fair.tvFromTarget === 0,
    `lab: speculative's 600 runs are tested against the target and show no gross misfit (a wiring check; p ${fair.pValue.toExponential(2)}, TV ${fair.tv.toFixed(3)})`,
  );
  check(progress.every((d, i) => i === 0 || d >= progress[i - 1]) && progress.every((d) => d <= 600), `lab: progress counts grow (${progress.length} reports)`);
  const seconds = (performance.now() - start) / 1000;

  // A planted bug, told from the target: shared-uniform's closed form is TV 0.11 from the
  // target on this prompt, λ ≈ 190 at 1,500 runs, far over the critical value (26 at
  // p = 1e-4 for 5 degrees of freedom). Its fit to its own closed form is a wiring check.
  const bug = await specula.sample({ prompt: PROMPT, method: "speculative", gamma: 2, bug: "shared-uniform", seed: 7 }, { runs: 1500 });
  check(bug.kind === "shared-uniform" && bug.tvFromTarget > 0.05, `lab: shared-uniform's closed form is TV ${bug.tvFromTarget.toFixed(3)} from the target`);
  check(bug.pValue > 1e-4 && bug.targetPValue < 1e-4, `lab: shared-uniform's runs are told from the target (p ${bug.targetPValue.toExponential(2)}), with no gross misfit to the bug's closed form (p ${bug.pValue.toExponential(2)})`);

  // The shared lab table (tests/options/lab-table.json, served from public/ by
  // scripts/test-web.sh): the window slide, no test at 0 degrees of freedom, unreachable
  // positions refused; the CLI (crates/specula-cli/tests/lab_table.rs) and the page
  // (tests/www/lab-table.mjs) run the same rows.
  const table = await (await fetch("/lab-table.json")).json();
  for (const row of table.rows) check(...(await labRow(specula, row)));

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
