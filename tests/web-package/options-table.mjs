// The shared tables of options through the packed wasm module in Node: for the decoding
// options (tests/options/table.json) validateGenerateOptions() must give each row's
// verdict, and a refusal the row's code and field, as `specula generate` does
// (crates/specula-cli/tests/options_table.rs) and as the package's checkOptions() does in
// the browser app test; for the plan options (tests/options/plan-table.json) plan() must,
// as `specula plan` does (crates/specula-cli/tests/plan_table.rs).
// Usage: node options-table.mjs WASM_DIR
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [wasmDir] = process.argv.slice(2);
const wasm = await import(pathToFileURL(join(wasmDir, "specula_wasm.js")).href);
wasm.initSync({ module: readFileSync(join(wasmDir, "specula_wasm_bg.wasm")) });

const read = (name) => JSON.parse(readFileSync(new URL(`../options/${name}`, import.meta.url), "utf8"));
const table = read("table.json");
const planTable = read("plan-table.json");
const rows = [
  ...table.rows.map((row) => ({ ...row, run: () => wasm.validateGenerateOptions(row.options) })),
  ...planTable.rows.map((row) => ({ ...row, run: () => wasm.plan({ ...planTable.base, ...row.options }) })),
];
const failures = [];
for (const row of rows) {
  const shown = JSON.stringify(row.options);
  let error = null;
  try {
    row.run();
  } catch (e) {
    error = e;
  }
  if (row.ok) {
    if (error) failures.push(`${shown}: refused (${error.code} ${error.field}: ${error.message}), the table accepts it`);
  } else if (!error) {
    failures.push(`${shown}: accepted, the table refuses it (${row.code} ${row.field})`);
  } else if (error.name !== "SpeculaError" || error.code !== row.code || error.field !== row.field) {
    failures.push(`${shown}: ${error.name} ${error.code} ${error.field} (${error.message}), want ${row.code} ${row.field}`);
  }
}
// Values JSON cannot carry, as a JavaScript caller gives them: each refusal names the
// field and quotes the value as given (a BigInt by its digits, 1e309 as the Infinity it
// is, a string as a string), never a number it was turned into.
const QUOTED = [
  [{ gamma: 9007199254740993n }, "gamma", "gamma must be a number, got the BigInt 9007199254740993n"],
  [{ seed: 2n ** 64n }, "seed", "seed must be a number, got the BigInt 18446744073709551616n"],
  [{ seed: "9007199254740993" }, "seed", 'seed must be a number, got the string "9007199254740993"'],
  [{ temperature: 1e309 }, "temperature", "got Infinity"],
  [{ temperature: -Infinity }, "temperature", "got -Infinity"],
  [{ topP: NaN }, "topP", "got NaN"],
  [{ gamma: 4.5 }, "gamma", "got 4.5"],
  [{ seed: 2 ** 53 + 2 }, "seed", "got 9007199254740994"],
  [{ maxTokens: 1e21 }, "maxTokens", "got 1e+21"],
  [{ method: "typical", epsilon: 1 + 2 ** -52 }, "epsilon", "got 1.0000000000000002"],
  [{ tree: [2, 2n], method: "spectr" }, "tree[1]", "got the BigInt 2n"],
];
for (const [options, field, fragment] of QUOTED) {
  const shown = Object.entries(options).map(([k, v]) => `${k}: ${typeof v === "bigint" ? `${v}n` : String(v)}`).join(", ");
  try {
    wasm.validateGenerateOptions({ prompt: "ROMEO:", ...options });
    failures.push(`{ ${shown} }: accepted, want a refusal of ${field}`);
  } catch (e) {
    if (e.code !== "invalid_option" || e.field !== field || !e.message.includes(fragment)) {
      failures.push(`{ ${shown} }: ${e.code} ${e.field} (${e.message}), want ${field} with "${fragment}"`);
    }
  }
}
if (failures.length) {
  console.error(failures.join("\n"));
  process.exit(1);
}
console.log(`options tables: ${table.rows.length} decoding and ${planTable.rows.length} plan rows, the same verdict, code and field as the tables; ${QUOTED.length} values quoted as given`);
