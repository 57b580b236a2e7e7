#!/usr/bin/env bash
# Copies the f16 exports of runs/draft and runs/target into crates/specula-model/weights/
# and writes SHA256SUMS for them (check with `cd crates/specula-model/weights && sha256sum -c SHA256SUMS`).
set -euo pipefail
cd "$(dirname "$0")/.."

dest=crates/specula-model/weights
mkdir -p "$dest"
for role in draft target; do
  cp "runs/$role/export/$role.json" "runs/$role/export/$role.bpk" "$dest/"
done
cp runs/draft/loss.csv "$dest/draft-loss.csv"
cp runs/target/loss.csv "$dest/target-loss.csv"
cp runs/draft/loss.svg "$dest/draft-loss.svg"
cp runs/target/loss.svg "$dest/target-loss.svg"
(cd "$dest" && sha256sum draft.json draft.bpk target.json target.bpk > SHA256SUMS)
du -ch "$dest"/*.bpk | tail -1
