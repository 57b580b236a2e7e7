#!/usr/bin/env bash
# decode() alone, without building burn or the bundled models: builds the engine-only
# module (scripts/build-decode.sh), stages it beside the package's JS sources as the
# packed package lays them out, and runs tests/web-package/decode.mjs in Node (about a
# minute), the worker API's refusal in Node (node-refusal.mjs) and the package's Node
# example (examples/node-decode.mjs, importing "specula" by the package's own name).
# scripts/test-web.sh runs the same tests against the packed package.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh

stage="$CARGO_TARGET_DIR/specula-decode-stage"
rm -rf "$stage"
mkdir -p "$stage/dist"
cp web/package.json "$stage/"
cp web/src/*.js "$stage/dist/"
cp -r web/examples "$stage/"
bash scripts/build-decode.sh "$stage/dist/decode-wasm"
node tests/web-package/decode.mjs "$stage/dist"
node tests/web-package/decode-adapter.mjs "$stage/dist"
node tests/web-package/node-refusal.mjs "$stage/dist"
node "$stage/examples/node-decode.mjs" >/dev/null
