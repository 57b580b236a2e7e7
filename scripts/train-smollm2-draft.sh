#!/usr/bin/env bash
# Trains SmolLM2-135M-Instruct's draft (models/smollm2-draft.gguf) from a seed, on this
# CPU: fetches the target, writes its on-policy data (its answers to the 500 training and
# 100 held-out instructions of specula_train::onpolicy::prompts, 32 answers side by side,
# which gives the same records as one at a time; resumable; about 11 and 4 minutes on one
# thread here) unless the cache holds it, trains with the recipe of
# DraftTrainConfig::smollm2() (setting overrides as name=value arguments), and copies the
# draft, its record and the slice of data its first steps trained on into models/.
# MODELS.md has the figures this produced.
#
# Usage: scripts/train-smollm2-draft.sh [name=value ...]
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${SPECULA_CACHE:-$HOME/.cache/specula}"
data="$CACHE/onpolicy"
run="$CACHE/smollm2-draft-run"
target="$(bash scripts/fetch-smollm2.sh --model-only | tail -n 1)"
cargo build --locked --release -p specula-train --example onpolicy_data --example train_draft
bin="${CARGO_TARGET_DIR:-target}/release/examples"
mkdir -p "$data" "$run"
"$bin/onpolicy_data" "$target" "$data/smollm2-train.bin" train 32 1
"$bin/onpolicy_data" "$target" "$data/smollm2-held-out.bin" held-out 32 1
sha256sum "$data/smollm2-train.bin" "$data/smollm2-held-out.bin"
"$bin/train_draft" "$target" "$data/smollm2-train.bin" "$data/smollm2-held-out.bin" "$run" "$@"
cp "$run/draft.gguf" models/smollm2-draft.gguf
cp "$run/record.json" models/smollm2-draft.json
cp "$run/first-steps.spod" models/smollm2-draft-first-steps.spod
echo "models/smollm2-draft.gguf: $(sha256sum models/smollm2-draft.gguf | cut -d' ' -f1)"
