#!/usr/bin/env bash
# Trains the bundled pair (target on two CPU threads, draft on one), target first (the
# draft's last stage learns from it), and copies the f16 exports into
# crates/specula-model/weights/ with their checksums. Resumes a run whose checkpoint
# exists. The exact commands and the figures they produced are in MODELS.md.
#
# Usage: scripts/train-models.sh [DRAFT_STAGES] [TARGET_STAGES]
# A stage list such as 2000,4500 trains to 2000 steps, then resumes with a new
# total of 4500 (the cosine schedule is recomputed over the new total). A stage
# written N+distill resumes to N steps distilling from the trained target (its
# export/): the loss is the cross-entropy against the target's whole distribution.
# The default trains the draft in the stages the bundled one went through up to its
# 9000th step, distilling from the 384-wide target this script trains; the bundled draft
# learnt those stages from an earlier 320-wide target and was then distilled from the
# 384-wide one in a run of its own (--init-from bundled; MODELS.md has the commands).
# Stages already reached are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

draft_stages="${1:-2000,4500,6500+distill,9000+distill}"
target_stages="${2:-2000}"
scripts/fetch-corpus.sh
cargo build --release -p specula-cli
# A private copy: rebuilding the workspace during a long run must not swap the binary.
mkdir -p runs
cp "${CARGO_TARGET_DIR:-target}/release/specula" runs/specula-train
bin=runs/specula-train

# The step a run's checkpoint has reached (0 without one).
reached() {
  local state="runs/$1/checkpoint/state.json"
  if [ -f "$state" ]; then
    sed -n 's/^  "step": \([0-9]*\),$/\1/p' "$state"
  else
    echo 0
  fi
}

train() {
  local role="$1" stages="$2" threads="$3" steps stage total resume distill
  IFS=, read -ra steps <<<"$stages"
  for stage in "${steps[@]}"; do
    total="${stage%+distill}"
    distill=()
    if [ "$total" != "$stage" ]; then distill=(--distill-from runs/target/export); fi
    if [ "$(reached "$role")" -ge "$total" ]; then continue; fi
    resume=()
    if [ -f "runs/$role/checkpoint/state.json" ]; then resume=(--resume); fi
    "$bin" train --role "$role" --out "runs/$role" "${resume[@]}" --steps "$total" \
      --threads "$threads" --quiet "${distill[@]}"
  done
}

train target "$target_stages" 2
train draft "$draft_stages" 1
scripts/bundle-weights.sh
