#!/usr/bin/env bash
# Stages the npm package's dist/ (JS, wasm module, weights) in www/pkg/dist for the
# teaching page; Trunk runs it as the pre_build hook (Trunk.toml).
#   - SPECULA_WWW_PKG=DIR: copy an already built package dist/ (no wasm build at all);
#   - otherwise builds the package with scripts/build-web.sh into $SPECULA_WEB_OUT
#     (default $CARGO_TARGET_DIR/specula-web), but only when its inputs changed: the
#     wasm artifacts from `cargo build` (full and CPU-only; a no-op when up to date),
#     web/src, the weights and SPECULA_WASM_OPT. wasm-opt alone takes ~1.5 min, so this keeps `trunk serve` quick.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh

dest=www/pkg/dist
if [ -n "${SPECULA_WWW_PKG:-}" ]; then
  src="$SPECULA_WWW_PKG"
else
  out="${SPECULA_WEB_OUT:-$CARGO_TARGET_DIR/specula-web}"
  weights="${SPECULA_WEIGHTS_DIR:-crates/specula-model/weights}"
  ensure_wasm_target
  ensure_wasm_bindgen
  wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/specula_wasm.wasm"
  # Both modules share that path: each is hashed right after its build.
  cargo build --locked --target wasm32-unknown-unknown --release -p specula-wasm >&2
  full="$(sha256sum "$wasm")"
  cargo build --locked --target wasm32-unknown-unknown --release -p specula-wasm --no-default-features >&2
  stamp="$( {
    echo "$full"
    sha256sum "$wasm" web/package.json web/src/*
    sha256sum "$weights"/* 2>/dev/null || true
    echo "wasm-opt ${SPECULA_WASM_OPT:-O1}"
  } | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$out/package/dist/index.js" ] || [ "$(cat "$out/www-stamp" 2>/dev/null)" != "$stamp" ]; then
    SPECULA_WEB_OUT="$out" scripts/build-web.sh >&2
    echo "$stamp" >"$out/www-stamp"
  else
    echo "== www: the package in $out is up to date" >&2
  fi
  src="$out/package/dist"
fi
[ -f "$src/index.js" ] && [ -f "$src/wasm/specula_wasm_bg.wasm" ] && [ -f "$src/wasm-cpu/specula_wasm_bg.wasm" ] \
  && [ -f "$src/wasm-cpu-relaxed/specula_wasm_bg.wasm" ] || {
  echo "error: no built package dist/ at $src" >&2
  exit 1
}
rm -rf "$dest"
mkdir -p "$dest"
cp -r "$src"/. "$dest"/
echo "== www: staged the package from $src in $dest" >&2
