// `npm publish --dry-run` on the staged package (argument 1: the folder `npm pack` packed,
// $CARGO_TARGET_DIR/specula-web/package) and checks of what it would publish, against the
// tarball scripts/build-web.sh packed from it (argument 2):
//   - the dry run succeeds for specula@<web/package.json's version>;
//   - its file list is the tarball's, and holds what the package needs: the entry points of
//     package.json (main, module, types, exports), the worker, the wasm modules, the
//     weights, the examples, README.md and both license files (the repository's texts);
//   - package.json has what a published package should: license, engines.node, files.
// --offline: the dry run checks the package locally (manifest, file list, tarball), but
// npm otherwise also fetches the package's registry document to compare versions, and
// retries that for over a minute where the registry cannot be reached. Nothing is
// published either way.
// Usage: node tests/web-package/publish-dry-run.mjs <staged package folder> <tarball>

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { readTarball } from "./tarball.mjs";

const [stage, tarball] = process.argv.slice(2);
if (!stage || !tarball) {
  console.error("usage: node tests/web-package/publish-dry-run.mjs <staged package folder> <tarball>");
  process.exit(2);
}

const pkg = JSON.parse(readFileSync(join(stage, "package.json"), "utf8"));
const source = JSON.parse(readFileSync(new URL("../../web/package.json", import.meta.url), "utf8"));
assert.deepEqual(pkg, source, "the staged package.json is web/package.json");

const stdout = execFileSync("npm", ["publish", "--dry-run", "--offline", "--json", "--loglevel=error"], {
  cwd: stage,
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
});
const report = JSON.parse(stdout)[pkg.name] ?? JSON.parse(stdout);
assert.equal(report.id, `${pkg.name}@${pkg.version}`, "the dry run's package");
const published = report.files.map((f) => f.path).sort();

// The dry run publishes what the tarball holds.
const packed = readTarball(readFileSync(tarball));
assert.deepEqual(published, [...packed.keys()].sort(), "the dry run's files are the tarball's");

// The manifest.
assert.equal(pkg.name, "specula");
assert.equal(pkg.license, "MIT OR Apache-2.0");
assert.equal(pkg.engines?.node, ">=20", "engines.node: decode() is tested on Node 20");
assert.equal(pkg.type, "module");
for (const field of ["repository", "homepage", "bugs"]) {
  // The repository has no public address to point to; web/README.md names it instead.
  assert.equal(pkg[field], undefined, `${field} points somewhere this repository does not name`);
}

// What the package needs, by path.
const entryPoints = [pkg.main, pkg.module, pkg.types, pkg.exports["."].types, pkg.exports["."].default].map((p) =>
  p.replace(/^\.\//, ""),
);
const required = [
  ...entryPoints,
  "package.json",
  "README.md",
  "LICENSE-MIT",
  "LICENSE-APACHE",
  "examples/node-decode.mjs",
  "examples/transformers-js.js",
  "dist/worker.js",
  "dist/dense-helper.js",
  "dist/simd-probe.js",
  "dist/threads.js",
  "dist/types.d.ts",
  "dist/decode.js",
  "dist/decode-wasm/specula_decode.js",
  "dist/decode-wasm/specula_decode_bg.wasm",
  "dist/wasm/specula_wasm.js",
  "dist/wasm/specula_wasm_bg.wasm",
  "dist/wasm-cpu/specula_wasm.js",
  "dist/wasm-cpu/specula_wasm_bg.wasm",
  "dist/wasm-cpu-relaxed/specula_wasm.js",
  "dist/wasm-cpu-relaxed/specula_wasm_bg.wasm",
  "dist/weights/manifest.json",
  "dist/weights/draft.json",
  "dist/weights/draft.bpk",
  "dist/weights/target.json",
  "dist/weights/target.bpk",
];
const missing = required.filter((path) => !published.includes(path));
assert.deepEqual(missing, [], "files the package needs are missing from the dry run");

// Nothing outside package.json's "files" (and what npm always adds).
const allowed = new Set([...pkg.files, "package.json"]);
const stray = published.filter((path) => !allowed.has(path.split("/")[0]));
assert.deepEqual(stray, [], "files outside package.json's \"files\"");

// The license texts are the repository's.
for (const name of ["LICENSE-MIT", "LICENSE-APACHE"]) {
  const text = readFileSync(new URL(`../../${name}`, import.meta.url));
  assert.ok(packed.get(name).equals(text), `the packed ${name} is the repository's`);
}
assert.match(packed.get("LICENSE-MIT").toString(), /Copyright \(c\) the Specula authors/);
assert.match(packed.get("LICENSE-APACHE").toString(), /Apache License\s+Version 2\.0, January 2004/);

console.log(
  `npm publish --dry-run: ${report.id}, ${published.length} files, ${report.size} bytes packed, ` +
    `${report.unpackedSize} unpacked; license files, examples and entry points present`,
);
