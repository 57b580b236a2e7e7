#!/usr/bin/env bash
# The one test command (see README): formatting, lints, every test in the workspace, then
# the browser side (scripts/test-web.sh: wasm-bindgen tests in Node and in headless
# Chromium with WebGPU, the npm package in a fresh Vite app) and the teaching page
# (scripts/test-www.sh: Trunk build of www/, end-to-end in headless Chromium), and the
# README's demo command on a clean clone (scripts/test-demo.sh).
# It installs what it needs and keeps its build cache outside the clone so repeated runs
# on one machine are incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

# SPECULA_BLESS makes crates/specula-wasm/tests/native_greedy.rs rewrite its fixture
# instead of checking it, so a run with it set cannot fail there: the test command refuses
# it (bless with `SPECULA_BLESS=1 cargo test -p specula-wasm --test native_greedy`, on its
# own, and review the diff).
if [ -n "${SPECULA_BLESS+set}" ]; then
  echo "error: SPECULA_BLESS is set; the test command never rewrites fixtures (unset it)" >&2
  exit 2
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/specula/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

need_component() {
  if ! cargo "$1" --version >/dev/null 2>&1; then
    rustup component add "$2"
  fi
}
need_component fmt rustfmt
need_component clippy clippy

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo doc (library crates, warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --locked -p specula-core -p specula-engine -p specula-gguf -p specula-model -p specula-host -p specula-train -p specula-wasm

echo "== SmolLM2-135M and its Python reference (fetched and cached outside the clone)"
# The real-model tests (crates/specula-model/tests/smollm2.rs) read these; requiring them
# makes a missing fixture a failure instead of a skip.
# An assignment, so that a failing fetch stops the run here (`eval "$(…)"` would not).
real_models="$(bash scripts/smollm2-reference.sh)"
eval "$real_models"
export SPECULA_REQUIRE_REAL_MODELS=1

echo "== cargo test (release: the statistical tests draw millions of samples)"
cargo test --workspace --release --locked

echo "== web: wasm, npm package, headless Chromium (scripts/test-web.sh)"
bash scripts/test-web.sh

echo "== the teaching page: Trunk build, end-to-end in headless Chromium (scripts/test-www.sh)"
# The package test-web.sh just built and tested is the one the page serves.
SPECULA_WWW_PKG="$CARGO_TARGET_DIR/specula-web/package/dist" bash scripts/test-www.sh

echo "== the README's demo command on a clean clone (scripts/test-demo.sh)"
bash scripts/test-demo.sh
