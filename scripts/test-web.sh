#!/usr/bin/env bash
# Every test of the browser side, with its own set-up; exits non-zero on the first failure.
#   1. set-up: wasm32 target, wasm-bindgen-cli pinned to Cargo.lock, Chromium + chromedriver
#   2. wasm-bindgen tests in Node: plan(), option validation, the CPU model in wasm, every
#      key of every object the module returns camelCase (tests/casing.rs), in the
#      full module and in the CPU-only one (--no-default-features: no WebGPU stack, backend
#      "webgpu" refused with backend_unavailable, "auto" on the CPU)
#   3. wasm-bindgen tests in headless Chromium with WebGPU: WebGPU greedy == native greedy
#      == CPU-in-wasm greedy, speculative == autoregressive, lost device -> CPU, abort, busy;
#      the few-row WebGPU kernels (crates/specula-kernels) == burn's matmul
#   4. the npm package (scripts/build-web.sh: both modules), plan() == `specula plan --json`
#      in the CPU-only module (where the package's math calls run), the
#      options table (tests/options/table.json) with the CLI's verdicts, codes and fields,
#      and decode() in Node over synthetic models (tests/web-package/decode.mjs:
#      sequence-level exactness of every method, power, greedy, bad models and options)
#   5. the package as published: `npm publish --dry-run` of the staged package (offline; its
#      file list, license files, entry points, engines), every relative link of the packed
#      README inside the tarball, the worker API refusing Node with backend_unavailable,
#      and web/examples/node-decode.mjs run from a fresh `npm install` of the tarball
#   6. a fresh Vite 7 app installs the tarball, type-checks the package's declarations
#      with tsc (strict), builds, is served on 127.0.0.1 and driven by playwright-core in
#      /usr/bin/chromium: WebGPU and CPU generation, bad inputs, abort, and a synthetic
#      GGUF pair (the specula-gguf example synthetic_pair) against the native greedy text
# CARGO_TARGET_DIR defaults as in scripts/test.sh. Set SPECULA_WEB_NO_WEBGPU=1 to skip the
# WebGPU checks of step 6 (they need --enable-unsafe-webgpu to give an adapter), and
# SPECULA_WEB_CLIPPY=0 to skip linting the wasm-only code (clippy for wasm32, ~4 min cold).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh

timings=()
report() {
  echo "== web test timings"
  printf '   %s\n' "${timings[@]}"
}
trap report EXIT
step() {
  local name="$1" t
  shift
  echo "== $name"
  t=$(date +%s)
  "$@"
  timings+=("$name: $(since "$t") s")
}

setup() {
  command -v node >/dev/null || { echo "error: node is required" >&2; return 1; }
  command -v npm >/dev/null || { echo "error: npm is required" >&2; return 1; }
  ensure_wasm_target
  ensure_wasm_bindgen
  ensure_chromium
}

wasm_test() {
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
    cargo test --locked --release --target wasm32-unknown-unknown -p specula-wasm \
    $(printf -- '--test %s ' "$@")
}

# The Node tests again on the CPU-only module (the package's dist/wasm-cpu/).
wasm_test_cpu_only() {
  wasm_test node casing --no-default-features
}

browser_test() {
  CHROMEDRIVER=/usr/bin/chromedriver \
    WASM_BINDGEN_TEST_WEBDRIVER_JSON="$PWD/crates/specula-wasm/webdriver.json" \
    WASM_BINDGEN_TEST_TIMEOUT=900 \
    wasm_test browser webgpu_kernels
}

tarball=""
package() {
  tarball="$(scripts/build-web.sh | tail -n 1)"
  [ -f "$tarball" ] || { echo "error: no tarball at $tarball" >&2; return 1; }
}

plan_vs_cli() {
  local cli="$CARGO_TARGET_DIR/release/specula"
  # scripts/test.sh has built it by now; building it here only when run alone.
  [ -x "$cli" ] || cargo build --locked --release -p specula-cli
  node tests/web-package/plan-vs-cli.mjs "$CARGO_TARGET_DIR/specula-web/package/dist/wasm-cpu" "$cli"
}

stage="$CARGO_TARGET_DIR/specula-web/package"

# What `npm publish` would send, checked without the registry (see the script for why
# --offline).
publish_dry_run() {
  node tests/web-package/publish-dry-run.mjs "$stage" "$tarball"
}

# The package's own Node example, as a user runs it: installed from the tarball into an
# empty project, then run from node_modules (it imports "specula" by name).
node_example() {
  local dir="$CARGO_TARGET_DIR/specula-web/node-example" out
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "$tarball")
  out="$(cd "$dir" && node node_modules/specula/examples/node-decode.mjs "Shall I ")"
  echo "$out"
  grep -Eq '^speculative \(γ = 4\): 240 characters in [0-9]+ target calls' <<<"$out"
  grep -q '^autoregressive: 240 characters in 240 target calls' <<<"$out"
}

app="$CARGO_TARGET_DIR/specula-web/app"
app_install() {
  rm -rf "$app"
  mkdir -p "$app"
  cp -r tests/web-package/app/. "$app/"
  cp tests/web-package/run.mjs "$app/"
  (cd "$app" && npm install --no-audit --no-fund --loglevel=error "$tarball")
  # The shared lab table, which the app's lab checks read (src/lab.js).
  mkdir -p "$app/public"
  cp tests/options/lab-table.json "$app/public/lab-table.json"
  # Bad weight sets for the hostile-input table, made from the package's own weights.
  node tests/web-package/bad-weights.mjs "$app/node_modules/specula/dist/weights" "$app/public/weights-bad"
  # The GGUF pair of the wasm tests and, from its natively recorded case, what the page
  # compares against (the logits stay behind: the page checks text and tokens).
  cargo run --locked --release -p specula-gguf --example synthetic_pair -- "$app/public/gguf"
  node -e '
const fs = require("fs"), [fixture, out] = process.argv.slice(1);
const { prompt, promptTokens, maxTokens, text, tokens } = JSON.parse(fs.readFileSync(fixture, "utf8"));
fs.writeFileSync(out, JSON.stringify({ prompt, promptTokens, maxTokens, text, tokens: tokens.length }) + "\n");
' crates/specula-wasm/tests/fixtures/gguf.json "$app/public/gguf/expected.json"
}

# The package's declarations (dist/index.d.ts and the generated dist/types.d.ts and
# dist/types/) as a strict TypeScript app with a bundler sees them: src/types-check.ts
# uses the API and the data types. Never run, only checked.
app_types() {
  (cd "$app" && npx --no-install tsc --noEmit -p tsconfig.json)
}

app_build() {
  (cd "$app" && npx --no-install vite build --logLevel warn)
}

app_run() {
  local flags=()
  [ -n "${SPECULA_WEB_NO_WEBGPU:-}" ] && flags+=(--no-webgpu)
  (cd "$app" && node run.mjs "${flags[@]}")
  # The same page served without cross-origin isolation: one worker, and it says why.
  (cd "$app" && node run.mjs --no-isolation)
}

wasm_clippy() {
  cargo clippy --locked --target wasm32-unknown-unknown -p specula-wasm -p specula-kernels -p specula-decode --all-targets -- -D warnings
  # The CPU-only module's code (no `webgpu` feature).
  cargo clippy --locked --target wasm32-unknown-unknown -p specula-wasm -p specula-kernels --all-targets --no-default-features -- -D warnings
}

step "set-up (installs)" setup
if [ "${SPECULA_WEB_CLIPPY:-1}" != 0 ]; then
  step "clippy for wasm32" wasm_clippy
fi
step "wasm-bindgen tests in Node" wasm_test node casing
step "wasm-bindgen tests in Node, CPU-only module (--no-default-features)" wasm_test_cpu_only
step "wasm-bindgen tests in Chromium + WebGPU" browser_test
step "package build (wasm, bindings, wasm-opt, npm pack)" package
step "plan() vs specula plan --json (CPU-only module)" plan_vs_cli
step "the options table in the wasm module (Node)" node tests/web-package/options-table.mjs "$CARGO_TARGET_DIR/specula-web/package/dist/wasm"
step "decode() in Node: exactness, power, refusals" node tests/web-package/decode.mjs "$CARGO_TARGET_DIR/specula-web/package/dist"
step "decode() through cachedModel(), the transformers.js adapter's pattern (Node)" node tests/web-package/decode-adapter.mjs "$CARGO_TARGET_DIR/specula-web/package/dist"
step "npm publish --dry-run of the staged package (offline)" publish_dry_run
step "every relative link of the packed README inside the tarball" node tests/web-package/packed-links.mjs "$tarball"
step "the worker API in Node: backend_unavailable" node tests/web-package/node-refusal.mjs "$stage/dist"
step "the two workers' SharedArrayBuffer exchange (Node worker threads)" node tests/web-package/dense-exchange.mjs
step "examples/node-decode.mjs from an npm install of the tarball (Node)" node_example
step "fresh Vite app: npm install" app_install
step "fresh Vite app: TypeScript check of the package's types (tsc --noEmit, strict)" app_types
step "fresh Vite app: vite build" app_build
step "fresh Vite app in Chromium (WebGPU + CPU)" app_run
echo "== all web tests passed"
