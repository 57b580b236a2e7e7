# Set-up shared by scripts/demo.sh and scripts/test-www.sh (sourced after web-tools.sh):
# Trunk 0.21.14 — the newest that builds with Rust 1.95 — installed once under
# $SPECULA_TOOLS/trunk, and playwright-core for the browser tests.
TRUNK_VERSION=0.21.14
PLAYWRIGHT_VERSION=1.65.1

ensure_trunk() {
  local root="$SPECULA_TOOLS/trunk"
  if [ "$("$root/bin/trunk" --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]; then
    echo "== installing trunk $TRUNK_VERSION into $root (10–20 min on 2 cores, once)" >&2
    # Its own target dir: never waits on (or fills) the workspace's.
    CARGO_TARGET_DIR="$SPECULA_TOOLS/trunk-build" \
      cargo install trunk --version "$TRUNK_VERSION" --locked --root "$root"
    rm -rf "$SPECULA_TOOLS/trunk-build"
  fi
  export PATH="$root/bin:$PATH"
}

ensure_playwright() {
  export SPECULA_WWW_TEST_DEPS="${SPECULA_WWW_TEST_DEPS:-$SPECULA_TOOLS/www-test}"
  local dir="$SPECULA_WWW_TEST_DEPS"
  if [ ! -f "$dir/node_modules/playwright-core/package.json" ]; then
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"name":"specula-www-test","private":true}' >"$dir/package.json"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION")
  fi
}
