#!/usr/bin/env bash
# Trains the bundled pair (draft on one CPU thread, target on two), draft first, then
# target, and copies the f16 exports into crates/specula-model/weights/ with their
# checksums. Resumes a run whose checkpoint exists. The exact commands and the figures
# they produced are in MODELS.md.
# Usage: scripts/train-models.sh [DRAFT_STEPS] [TARGET_STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."

draft_steps="${1:-2000}"
target_steps="${2:-2000}"
scripts/fetch-corpus.sh
cargo build --release -p specula-cli
# A private copy: rebuilding the workspace during a long run must not swap the binary.
mkdir -p runs
cp target/release/specula runs/specula-train
bin=runs/specula-train

train() {
  local role="$1" steps="$2" threads="$3" resume=()
  if [ -f "runs/$role/checkpoint/state.json" ]; then resume=(--resume); fi
  "$bin" train --role "$role" --out "runs/$role" "${resume[@]}" --steps "$steps" --threads "$threads" --quiet
}

train draft "$draft_steps" 1
train target "$target_steps" 2
scripts/bundle-weights.sh
