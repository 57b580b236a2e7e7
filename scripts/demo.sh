#!/usr/bin/env bash
# One command: builds the teaching page (www/) with the embedded models and serves it on
# http://127.0.0.1:8080 (SPECULA_PORT to change). Does its own set-up on a fresh machine,
# each step only when missing: the wasm32 target, wasm-bindgen-cli pinned to Cargo.lock,
# npm binaryen 132 (never Debian's wasm-opt, see docs/toolchain.md) and Trunk 0.21.14
# under ~/.cache/specula/web-tools. The first run compiles Trunk and the wasm module
# (~30 min on 2 cores); later runs start in seconds.
# SPECULA_WWW_PKG=DIR serves an already built npm package dist/ instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh
source scripts/www-tools.sh

command -v node >/dev/null && command -v npm >/dev/null || {
  echo "error: node and npm are required (the wasm-opt step and the package use them)" >&2
  exit 1
}
ensure_wasm_target
ensure_wasm_bindgen
ensure_binaryen
ensure_trunk
# Trunk checks its [watch] ignore paths (Trunk.toml) before the pre_build hook that
# creates www/pkg runs, so on a clean checkout the folder must exist first.
mkdir -p www/pkg
port="${SPECULA_PORT:-8080}"
echo "== serving the page on http://127.0.0.1:$port (Ctrl-C stops)" >&2
exec trunk serve --config Trunk.toml --port "$port" --address 127.0.0.1
