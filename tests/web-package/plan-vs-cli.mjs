// `plan()` of the packed wasm module (in Node) must equal `specula plan --json` of the
// native CLI for every method: one report, the same keys.
// Usage: node plan-vs-cli.mjs WASM_DIR SPECULA_BINARY
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { deepStrictEqual } from "node:assert/strict";

// k-Seq's root finding uses randomised selection: sums may differ in the last bit.
function close(a, b, path) {
  if (typeof a === "number" && typeof b === "number") {
    if (Math.abs(a - b) > 1e-12 * Math.max(1, Math.abs(a), Math.abs(b))) throw new Error(`${path}: ${a} != ${b}`);
  } else if (a && b && typeof a === "object" && typeof b === "object") {
    deepStrictEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${path}: keys`);
    for (const k of Object.keys(a)) close(a[k], b[k], `${path}.${k}`);
  } else {
    deepStrictEqual(a, b, path);
  }
}

const [wasmDir, cli] = process.argv.slice(2);
const wasm = await import(pathToFileURL(join(wasmDir, "specula_wasm.js")).href);
wasm.initSync({ module: readFileSync(join(wasmDir, "specula_wasm_bg.wasm")) });

const target = [0.1, 0.2, 0.3, 0.4];
const draft = [0.5, 0.3, 0.15, 0.05];
const cases = [
  [{ method: "speculative" }, []],
  [{ method: "speculative", temperature: 0 }, ["--temperature", "0"]],
  [{ method: "spectr", drafts: 3 }, ["--drafts", "3"]],
  [{ method: "spectr", selection: "kseq", drafts: 2, rho: 2 }, ["--selection", "kseq", "--drafts", "2", "--rho", "2"]],
  [{ method: "multiround", drafts: 4 }, ["--drafts", "4"]],
  [{ method: "multiround", drafts: 2, temperature: 0.5, topK: 3 }, ["--drafts", "2", "--temperature", "0.5", "--top-k", "3"]],
  [{ method: "spectr", selection: "otm", drafts: 2 }, ["--selection", "otm", "--drafts", "2"]],
  [{ method: "spectr", selection: "race", drafts: 3 }, ["--selection", "race", "--drafts", "3"]],
  [{ method: "mentored", kl: 0.05 }, ["--kl", "0.05"]],
  [{ method: "typical" }, []],
  [{ method: "typical", epsilon: 0.2, delta: 0.5 }, ["--epsilon", "0.2", "--delta", "0.5"]],
  [{ method: "speculative", normalize: true, target: [1, 2, 3, 4], draft: [4, 3, 2, 1] }, ["--normalize"]],
  // The bug lab: every token-level bug, with processing where the bug needs it.
  [{ method: "speculative", bug: "resample-from-target" }, ["--bug", "resample-from-target"]],
  [{ method: "speculative", bug: "argmax-draft", temperature: 0.7 }, ["--bug", "argmax-draft", "--temperature", "0.7"]],
  [{ method: "speculative", bug: "shared-uniform", topP: 0.9 }, ["--bug", "shared-uniform", "--top-p", "0.9"]],
  [{ method: "speculative", bug: "unprocessed-target", temperature: 0.5 }, ["--bug", "unprocessed-target", "--temperature", "0.5"]],
  [{ method: "speculative", bug: "filtered-draft", topK: 2 }, ["--bug", "filtered-draft", "--top-k", "2"]],
];
for (const [options, flags] of cases) {
  const t = options.target ?? target;
  const d = options.draft ?? draft;
  const args = ["plan", "--json", "--method", options.method, "--target", t.join(","), "--draft", d.join(","), ...flags];
  const fromCli = JSON.parse(execFileSync(cli, args, { encoding: "utf8" }));
  const fromWasm = wasm.plan({ target: t, draft: d, ...options });
  close(fromWasm, fromCli, `plan ${JSON.stringify(options)}`);
}
console.log(`plan() == specula plan --json for ${cases.length} cases`);
