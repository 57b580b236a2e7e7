#!/usr/bin/env bash
# The real-model fixtures the Rust tests compare against: SmolLM2-135M (fetched and
# SHA-256 checked by fetch-smollm2.sh) and the outputs of the independent Python
# reference (scripts/reference/) over it, cached outside the clone under a key of the
# scripts and pins, so a second run costs nothing. Prints the variables the tests
# read, as `export` lines for `eval`.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${SPECULA_CACHE:-$HOME/.cache/specula}"
MODEL="$(bash scripts/fetch-smollm2.sh | tail -n 1)"
PY="$CACHE/pyref/bin/python"
KEY="$(cat scripts/fetch-smollm2.sh scripts/reference/*.py scripts/smollm2-reference.sh \
  crates/specula-gguf/examples/synthetic_qwen2.rs crates/specula-gguf/src/synthetic/*.rs \
  | sha256sum | cut -c1-16)"
OUT="$CACHE/smollm2-ref/$KEY"

if [[ ! -f "$OUT/done" ]]; then
  tmp="$(mktemp -d "$CACHE/smollm2-ref.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  "$PY" scripts/reference/bpe_reference.py --model "$MODEL" --out "$tmp/bpe_cases.json" >&2
  # Three short prompts (plain text, a story, the chat form) and a paragraph long
  # enough that a wrong rotary pairing shows in every logit.
  "$PY" scripts/reference/bpe_reference.py --model "$MODEL" --out "$tmp/prompts.json" \
    --encode "The capital of France is" \
    --encode "Once upon a time, there was a little" \
    --encode $'<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n' \
    --encode "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is named after the engineer Gustave Eiffel, whose company designed and built the tower from 1887 to 1889." >&2
  "$PY" scripts/reference/llama_forward.py --model "$MODEL" --prompts "$tmp/prompts.json" --out "$tmp" >&2
  # Qwen2 has no real file here: a synthetic one (random weights, q/k/v biases, rotary
  # halves) scored by the same reference, so that path is checked against it too.
  mkdir -p "$tmp/qwen2"
  cargo run --locked --release -q -p specula-gguf --example synthetic_qwen2 -- "$tmp/qwen2/model.gguf" >&2
  echo '{"prompts": [[5, 17, 30, 99, 4, 8, 200, 3], [250, 1, 64, 64, 64, 12]]}' > "$tmp/qwen2/prompts.json"
  "$PY" scripts/reference/llama_forward.py --model "$tmp/qwen2/model.gguf" \
    --prompts "$tmp/qwen2/prompts.json" --out "$tmp/qwen2" --steps 12 >&2
  touch "$tmp/done"
  mkdir -p "$CACHE/smollm2-ref"
  rm -rf "$OUT"
  mv "$tmp" "$OUT"
  trap - EXIT
fi

echo "export SPECULA_SMOLLM2_GGUF='$MODEL'"
echo "export SPECULA_SMOLLM2_REF='$OUT'"
echo "export SPECULA_QWEN2_REF='$OUT/qwen2'"
