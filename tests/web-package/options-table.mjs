// The shared table of decoding options (tests/options/table.json) through the packed wasm
// module in Node: validateGenerateOptions() must give each row's verdict, and a refusal
// the row's code and field, as `specula generate` does (crates/specula-cli/tests/
// options_table.rs) and as the package's checkOptions() does in the browser app test.
// Usage: node options-table.mjs WASM_DIR
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [wasmDir] = process.argv.slice(2);
const wasm = await import(pathToFileURL(join(wasmDir, "specula_wasm.js")).href);
wasm.initSync({ module: readFileSync(join(wasmDir, "specula_wasm_bg.wasm")) });

const table = JSON.parse(readFileSync(new URL("../options/table.json", import.meta.url), "utf8"));
const failures = [];
for (const row of table.rows) {
  const shown = JSON.stringify(row.options);
  let error = null;
  try {
    wasm.validateGenerateOptions(row.options);
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
console.log(`options table: ${table.rows.length} rows, the same verdict, code and field as the table`);
