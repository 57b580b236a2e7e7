#!/usr/bin/env bash
# Builds the npm package `specula` and packs it with `npm pack`:
#   1. the wasm crate for wasm32 three times (release profile, or $SPECULA_WEB_PROFILE): the
#      full module (WebGPU and CPU) into dist/wasm/ and, with --no-default-features, the
#      CPU-only module into dist/wasm-cpu/ (the worker loads it for backend "cpu", for "auto"
#      without a WebGPU adapter, and for the math calls), and once more with the
#      `relaxed-simd` feature into dist/wasm-cpu-relaxed/ (loaded instead where the browser
#      compiles relaxed SIMD: load option cpuSimd),
#   2. JS bindings of each with the wasm-bindgen CLI pinned to Cargo.lock (target "web": no
#      bundler plugin needed),
#   3. wasm-opt from npm binaryen 132 with explicit feature flags, never Debian's binaryen:
#      SPECULA_WASM_OPT = O1 (default) | O2 | Os | Oz | off. -O1 takes ~1.5 min on the 24 MB
#      full module (~20 s on the CPU-only one) and gives the smallest gzip; -Oz takes ~5 min
#      and only shrinks the raw size,
#   4. the weights: crates/specula-model/weights/ (or $SPECULA_WEIGHTS_DIR); when no trained
#      pair exists yet, a seeded untrained pair of the bundled shapes, made by the module
#      itself in Node,
#   5. the small engine-only module behind decode() (scripts/build-decode.sh) in
#      dist/decode-wasm/,
#   6. package.json, README.md, the license files and web/examples/ beside dist/, and
#      `npm pack` into $SPECULA_WEB_OUT (default $CARGO_TARGET_DIR/specula-web): the
#      tarball specula-<version>.tgz there, the unpacked package in its package/ folder.
# Prints the tarball's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh

profile="${SPECULA_WEB_PROFILE:-release}"
out="${SPECULA_WEB_OUT:-$CARGO_TARGET_DIR/specula-web}"
weights="${SPECULA_WEIGHTS_DIR:-crates/specula-model/weights}"
stage="$out/package"

ensure_wasm_target
ensure_wasm_bindgen

dir="$profile"
[ "$profile" = dev ] && dir=debug
wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/$dir/specula_wasm.wasm"
level="${SPECULA_WASM_OPT:-O1}"
if [ "$level" != off ]; then ensure_binaryen; fi

rm -rf "$stage"
mkdir -p "$stage/dist/weights"

# One module: `cargo build` with the given flags, then bindings and wasm-opt into
# $stage/dist/<name>. The builds share $wasm's path, so each is bound before the next.
# $opt_features: wasm-opt's feature flags beyond the common ones (relaxed SIMD's build).
module() {
  local name="$1" t bg
  shift
  t=$(date +%s)
  cargo build --locked --target wasm32-unknown-unknown --profile "$profile" -p specula-wasm "$@"
  echo "== wasm build ($name): $(since "$t") s" >&2
  t=$(date +%s)
  mkdir -p "$stage/dist/$name"
  wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section \
    --out-dir "$stage/dist/$name" "$wasm"
  bg="$stage/dist/$name/specula_wasm_bg.wasm"
  if [ "$level" != off ]; then
    # The features rustc enables for wasm32-unknown-unknown, plus the SIMD that some
    # dependencies use; --all-features would let binaryen emit encodings (compact imports)
    # that browsers reject.
    wasm-opt "-$level" --enable-bulk-memory --enable-mutable-globals --enable-nontrapping-float-to-int \
      --enable-sign-ext --enable-reference-types --enable-multivalue --enable-simd ${opt_features:-} \
      -o "$bg.opt" "$bg"
    mv "$bg.opt" "$bg"
  fi
  echo "== bindings and wasm-opt ($name): $(since "$t") s" >&2
}

module wasm
module wasm-cpu --no-default-features
opt_features=--enable-relaxed-simd module wasm-cpu-relaxed --no-default-features --features relaxed-simd

cp web/package.json web/README.md LICENSE-MIT LICENSE-APACHE "$stage/"
cp -r web/examples "$stage/"
cp web/src/index.js web/src/errors.js web/src/decode.js web/src/cached-model.js web/src/load-options.js web/src/limits.js web/src/worker.js web/src/weights.js web/src/dense-helper.js web/src/simd-probe.js web/src/threads.js \
  web/src/index.d.ts web/src/types.d.ts "$stage/dist/"
cp -r web/src/types "$stage/dist/"

if [ -f "$weights/draft.json" ] && [ -f "$weights/target.bpk" ]; then
  cp "$weights"/draft.json "$weights"/draft.bpk "$weights"/target.json "$weights"/target.bpk "$stage/dist/weights/"
  echo "== weights: trained pair from $weights" >&2
else
  node scripts/web/untrained-weights.mjs "$stage/dist/wasm" "$stage/dist/weights"
  echo "== weights: no trained pair in $weights; packed a seeded UNTRAINED pair" >&2
fi
# Sizes let the worker report download progress even when responses are compressed.
node -e '
const fs = require("fs"), crypto = require("crypto"), dir = process.argv[1];
const files = {};
for (const f of ["draft.json", "draft.bpk", "target.json", "target.bpk"]) {
  const b = fs.readFileSync(dir + "/" + f);
  files[f] = { bytes: b.length, sha256: crypto.createHash("sha256").update(b).digest("hex") };
}
fs.writeFileSync(dir + "/manifest.json", JSON.stringify({ files }, null, 2) + "\n");
' "$stage/dist/weights"

bash scripts/build-decode.sh "$stage/dist/decode-wasm"

(cd "$stage" && npm pack --silent --pack-destination "$out" >/dev/null)
tarball="$out/specula-$(node -p 'require("./web/package.json").version').tgz"
for name in wasm wasm-cpu wasm-cpu-relaxed; do
  bg="$stage/dist/$name/specula_wasm_bg.wasm"
  echo "== sizes: $name/ $(stat -c %s "$bg") bytes, gzip -9 $(gzip -9 -c "$bg" | wc -c) bytes" >&2
done
echo "== sizes: weights $(cat "$stage"/dist/weights/*.bpk | wc -c) bytes" >&2
echo "$tarball"
