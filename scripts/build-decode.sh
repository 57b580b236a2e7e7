#!/usr/bin/env bash
# Builds the small wasm module behind npm decode() (crates/specula-decode: the engine and
# its math, no burn, no models) into $1 (default $CARGO_TARGET_DIR/specula-decode-wasm):
#   1. the crate for wasm32 with the release profile (or $SPECULA_DECODE_PROFILE),
#   2. JS bindings with the wasm-bindgen CLI pinned to Cargo.lock (target "web"),
#   3. wasm-opt -O3 from npm binaryen 132 ($SPECULA_DECODE_WASM_OPT: another level, or
#      off). Speed over size here: release + -O3 is 135 KB gzip and a quarter faster per
#      token at V = 32,000 than web-release + -Oz at 108 KB (BENCHMARKS.md).
# scripts/build-web.sh calls it to put the module in the package's dist/decode-wasm/.
# Prints the raw and gzip sizes (BENCHMARKS.md records them).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh

out="${1:-$CARGO_TARGET_DIR/specula-decode-wasm}"
ensure_wasm_target
ensure_wasm_bindgen

t=$(date +%s)
profile="${SPECULA_DECODE_PROFILE:-release}"
cargo build --locked --target wasm32-unknown-unknown --profile "$profile" -p specula-decode
echo "== decode wasm build: $(since "$t") s" >&2
dir="$profile"
[ "$profile" = dev ] && dir=debug
wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/$dir/specula_decode.wasm"

rm -rf "$out"
mkdir -p "$out"
wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section \
  --out-dir "$out" "$wasm"
bg="$out/specula_decode_bg.wasm"
if [ "${SPECULA_DECODE_WASM_OPT:-O3}" != off ]; then
  ensure_binaryen
  # The same feature flags as the main module (scripts/build-web.sh says why).
  wasm-opt "-${SPECULA_DECODE_WASM_OPT:-O3}" --enable-bulk-memory --enable-mutable-globals \
    --enable-nontrapping-float-to-int --enable-sign-ext --enable-reference-types \
    --enable-multivalue --enable-simd -o "$bg.opt" "$bg"
  mv "$bg.opt" "$bg"
fi
echo "== decode wasm: $(stat -c %s "$bg") bytes, gzip -9 $(gzip -9 -c "$bg" | wc -c) bytes" >&2
