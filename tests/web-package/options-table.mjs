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
if (failures.length) {
  console.error(failures.join("\n"));
  process.exit(1);
}
console.log(`options tables: ${table.rows.length} decoding and ${planTable.rows.length} plan rows, the same verdict, code and field as the tables`);
