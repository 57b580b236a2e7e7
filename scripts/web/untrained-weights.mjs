// Writes a seeded untrained draft/target pair of the bundled shapes, made by the wasm
// module itself, for packaging before trained weights exist.
// Usage: node untrained-weights.mjs WASM_DIR OUT_DIR
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [wasmDir, outDir] = process.argv.slice(2);
const bindings = await import(pathToFileURL(join(wasmDir, "specula_wasm.js")).href);
bindings.initSync({ module: readFileSync(join(wasmDir, "specula_wasm_bg.wasm")) });
const parts = bindings.untrainedBundles({ seed: 0, size: "full" });
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, "draft.json"), parts.draftMeta);
writeFileSync(join(outDir, "draft.bpk"), parts.draftWeights);
writeFileSync(join(outDir, "target.json"), parts.targetMeta);
writeFileSync(join(outDir, "target.bpk"), parts.targetWeights);
