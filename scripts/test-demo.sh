#!/usr/bin/env bash
# Tests the README's demo command exactly as written, on a clean clone of the committed
# tree: `SPECULA_PORT=PORT bash scripts/demo.sh` must build and serve the page, which
# headless Chromium then loads until the models are ready and uses to generate a few
# characters (tests/www/demo.mjs); the server is stopped at the end.
# The clone lives at a fixed path under ~/.cache/specula so that a second run on the same
# machine reuses its compiled crates. SPECULA_DEMO_TIMEOUT (seconds, default 2400) bounds
# the wait for the first build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh
source scripts/www-tools.sh
ensure_chromium
ensure_playwright

repo="$PWD"
clone="$HOME/.cache/specula/demo-clone"
port="${SPECULA_DEMO_PORT:-18080}"
timeout="${SPECULA_DEMO_TIMEOUT:-2400}"
log="$CARGO_TARGET_DIR/demo-test.log"
mkdir -p "$CARGO_TARGET_DIR"

rm -rf "$clone"
git clone --quiet --no-hardlinks "$repo" "$clone"
echo "== demo: clean clone of $(git -C "$clone" rev-parse --short HEAD) in $clone"

t=$(date +%s)
# The README's command, in its own process group so that stopping it stops Trunk too.
(cd "$clone" && SPECULA_PORT="$port" exec setsid bash scripts/demo.sh) >"$log" 2>&1 &
demo=$!
stop() {
  kill -- -"$demo" 2>/dev/null || kill "$demo" 2>/dev/null || true
  wait "$demo" 2>/dev/null || true
}
trap stop EXIT

url="http://127.0.0.1:$port/"
until curl -fsS -o /dev/null "$url" && curl -fsS -o /dev/null "${url}specula/index.js"; do
  if ! kill -0 "$demo" 2>/dev/null; then
    echo "error: scripts/demo.sh exited before serving the page; its output:" >&2
    tail -40 "$log" >&2
    exit 1
  fi
  if [ "$(since "$t")" -gt "$timeout" ]; then
    echo "error: the page was not served within $timeout s; the demo's output:" >&2
    tail -40 "$log" >&2
    exit 1
  fi
  sleep 2
done
echo "== demo: serving $url after $(since "$t") s"

node tests/www/demo.mjs "$url"
stop
trap - EXIT
if curl -fsS -o /dev/null "$url" 2>/dev/null; then
  echo "error: the demo server still answers after being stopped" >&2
  exit 1
fi
echo "== demo: the README's demo command works from a clean clone"
