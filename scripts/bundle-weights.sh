#!/usr/bin/env bash
# Copies the f16 exports of runs/draft and runs/target into crates/specula-model/weights/
# and writes SHA256SUMS for them (check with `cd crates/specula-model/weights && sha256sum -c SHA256SUMS`).
#
# Usage: scripts/bundle-weights.sh [ROLE=RUN_DIR]...
# By default both roles come from runs/<role>; `target=runs/target384` takes the target
# from another run, and naming only one role keeps the other's committed files.
set -euo pipefail
cd "$(dirname "$0")/.."

dest=crates/specula-model/weights
mkdir -p "$dest"
pairs=("$@")
if [ ${#pairs[@]} -eq 0 ]; then pairs=(draft=runs/draft target=runs/target); fi
for pair in "${pairs[@]}"; do
  role="${pair%%=*}"
  run="${pair#*=}"
  case "$role" in
    draft | target) ;;
    *) echo "bundle-weights.sh: unknown role '$role' (draft or target)" >&2; exit 2 ;;
  esac
  for f in "$run/export/$role.json" "$run/export/$role.bpk" "$run/loss.csv" "$run/loss.svg"; do
    [ -f "$f" ] || { echo "bundle-weights.sh: missing $f" >&2; exit 1; }
  done
  cp "$run/export/$role.json" "$run/export/$role.bpk" "$dest/"
  cp "$run/loss.csv" "$dest/$role-loss.csv"
  cp "$run/loss.svg" "$dest/$role-loss.svg"
done
(cd "$dest" && sha256sum draft.json draft.bpk target.json target.bpk > SHA256SUMS)
du -ch "$dest"/*.bpk | tail -1
