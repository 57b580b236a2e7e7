// Writes the bad weight directories the package test serves to `Specula.load({ weightsUrl })`,
// made at test time from the package's own weights (no binary copies in the repository).
// Usage: node bad-weights.mjs WEIGHTS_DIR OUT_DIR
//   WEIGHTS_DIR: the installed package's dist/weights (draft.json, draft.bpk, target.json,
//                target.bpk); OUT_DIR: the app's public/weights-bad, one folder per case,
//                each with the five files load() fetches (manifest.json, draft.json,
//                draft.bpk, target.json, target.bpk) unless the case leaves one out.
// The cases, their expected errors and messages are in app/src/hostile.js.
import { createHash } from "node:crypto";
import { copyFileSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [from, out] = process.argv.slice(2);
if (!from || !out) {
  console.error("usage: node bad-weights.mjs WEIGHTS_DIR OUT_DIR");
  process.exit(2);
}
const FILES = ["draft.json", "draft.bpk", "target.json", "target.bpk"];
const read = (name) => readFileSync(join(from, name));
const targetMeta = JSON.parse(read("target.json").toString("utf8"));
const targetWeights = read("target.bpk");

/** A served file: the original (hard-linked, or copied where links fail), or new bytes. */
const same = (name) => ({ from: join(from, name) });
const bytes = (data) => ({ data: Buffer.from(data) });
/** target.json with one field changed and nothing resealed. */
const edited = (edit) => {
  const meta = structuredClone(targetMeta);
  edit(meta);
  return bytes(JSON.stringify(meta, null, 2) + "\n");
};

// case -> { file: source | null (left out) }; files not named are the originals.
const CASES = {
  // Half the target's weights: the SHA-256 no longer matches.
  "truncated-target": { "target.bpk": bytes(targetWeights.subarray(0, targetWeights.length >> 1)) },
  "empty-target": { "target.bpk": bytes("") },
  // What a single-page-app server answers for a missing file: its index.html.
  "html-target": { "target.bpk": bytes("<!doctype html>\n<html><body>not found</body></html>\n") },
  // Over two bytes per parameter + 1 MiB: refused before its checksum is computed.
  "oversized-target": { "target.bpk": bytes(Buffer.concat([targetWeights, Buffer.alloc((1 << 20) + 1)])) },
  // The draft's files served as the target's.
  "mislabelled-target": { "target.json": same("draft.json"), "target.bpk": same("draft.bpk") },
  // Both models' files exchanged: the draft (loaded first) is the target.
  swapped: {
    "draft.json": same("target.json"),
    "draft.bpk": same("target.bpk"),
    "target.json": same("draft.json"),
    "target.bpk": same("draft.bpk"),
  },
  "target-json-not-json": { "target.json": bytes("this is not JSON {\n") },
  // Over the 1 MiB a description may have (the worker stops reading it).
  "target-json-huge": {
    "target.json": bytes(read("target.json").toString("utf8").replace(/\n$/, "") + " ".repeat(1 << 20) + "\n"),
  },
  // Fields edited within their limits without resealing the description.
  "target-json-max-seq": { "target.json": edited((m) => (m.config.max_seq = m.config.max_seq / 2)) },
  "target-json-steps": {
    "target.json": edited((m) => {
      m.training ??= { steps: 0, tokens_seen: 0, train_loss: null, val_loss: null, seed: 0 };
      m.training.steps += 1;
    }),
  },
  // No target.bpk on the server: HTTP 404.
  "missing-target": { "target.bpk": null },
  // Every file right, the manifest wrong (sizes and checksums): it only feeds progress reports.
  "manifest-lies": {},
};

rmSync(out, { recursive: true, force: true });
for (const [name, changes] of Object.entries(CASES)) {
  const dir = join(out, name);
  mkdirSync(dir, { recursive: true });
  const files = {};
  for (const file of FILES) {
    const source = file in changes ? changes[file] : same(file);
    if (source === null) continue;
    const path = join(dir, file);
    if (source.data) {
      writeFileSync(path, source.data);
    } else {
      try {
        linkSync(source.from, path);
      } catch {
        copyFileSync(source.from, path);
      }
    }
    const data = source.data ?? readFileSync(path);
    files[file] = { bytes: data.length, sha256: createHash("sha256").update(data).digest("hex") };
  }
  if (name === "manifest-lies") {
    for (const entry of Object.values(files)) {
      entry.bytes = 10;
      entry.sha256 = "0".repeat(64);
    }
  }
  writeFileSync(join(dir, "manifest.json"), JSON.stringify({ files }, null, 2) + "\n");
}
console.log(`bad weights: ${Object.keys(CASES).length} cases in ${out}`);
