#!/usr/bin/env bash
# End-to-end tests of the teaching page (www/), with their own set-up:
#   1. set-up: wasm32 target, wasm-bindgen-cli, npm binaryen, Chromium, Trunk 0.21.14,
#      playwright-core (npm, in ~/.cache/specula/web-tools/www-test; never
#      `npx playwright install`, which cannot download browsers here),
#   2. `trunk build` into $CARGO_TARGET_DIR/www-dist: its pre_build hook builds the npm
#      package (scripts/www-pkg.sh; skipped when its inputs are unchanged; with
#      SPECULA_WWW_PKG=DIR it copies an already built package dist/ instead),
#   3. tests/www/stage-model.mjs in Node (run before the build: it needs none): the
#      stage's pure model over recorded traces,
#   4. tests/www/run.mjs in headless Chromium (/usr/bin/chromium, playwright-core): first
#      paint with the recorded run, a speculative run against the engine's trace and
#      summary, γ / k / D sliders, tree drafts, dynamic γ, bad input, CPU fallback without
#      WebGPU, race mode, phone width, the guided lesson, the lab (many runs against the exact
#      distribution, bug switches, lossy curves, a short soak: SPECULA_SOAK_RUNS=10000 for the
#      full one), GGUF pairs and the SmolLM2 pair's preset (with SPECULA_SMOLLM2_GGUF and
#      models/smollm2-draft.gguf), one short WebGPU run (SwiftShader; skip with
#      SPECULA_WEB_NO_WEBGPU=1), and a screenshot per method in $CARGO_TARGET_DIR/www-artifacts.
# SPECULA_WWW_SCREENSHOTS=1 also copies the method screenshots into docs/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh
source scripts/www-tools.sh

command -v node >/dev/null && command -v npm >/dev/null || {
  echo "error: node and npm are required" >&2
  exit 1
}
t=$(date +%s)
ensure_wasm_target
ensure_wasm_bindgen
ensure_binaryen
ensure_chromium
ensure_trunk
ensure_playwright
echo "== www set-up: $(since "$t") s"

# The stage's model over recorded traces, in Node (no browser): what each step shows agrees
# with the trace (tests/www/stage-model.mjs).
t=$(date +%s)
node tests/www/stage-model.mjs
echo "== stage model in Node: $(since "$t") s"

dist="$CARGO_TARGET_DIR/www-dist"
artifacts="$CARGO_TARGET_DIR/www-artifacts"
t=$(date +%s)
trunk build --config Trunk.toml --dist "$dist"
echo "== trunk build: $(since "$t") s"

flags=(--artifacts "$artifacts")
[ -n "${SPECULA_WEB_NO_WEBGPU:-}" ] && flags+=(--no-webgpu)
t=$(date +%s)
node tests/www/run.mjs "$dist" "${flags[@]}"
echo "== page tests in Chromium: $(since "$t") s; screenshots in $artifacts"

if [ -n "${SPECULA_WWW_SCREENSHOTS:-}" ]; then
  mkdir -p docs/screenshots
  for name in autoregressive speculative spectr-iid spectr-tree spectr-race multiround mentored typical lookup race phone ngram lesson lab; do
    cp "$artifacts/$name.png" "docs/screenshots/$name.png"
  done
  echo "== copied the screenshots into docs/screenshots/"
fi
echo "== all page tests passed"
