# Shared set-up of the web build and tests; sourced by build-web.sh and test-web.sh.
# Every step checks first and installs only what is missing, so repeated runs are quick.
# Facts behind each choice: docs/toolchain.md (wasm-bindgen-cli pinning, the Debian
# wasm-opt trap, headless Chromium with WebGPU).

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/specula/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
SPECULA_TOOLS="${SPECULA_TOOLS:-$HOME/.cache/specula/web-tools}"
# npm's binaryen (a JS build of wasm-opt 132). Never Debian's binaryen 108: its output
# cannot be loaded by wasm-bindgen's JS.
BINARYEN_VERSION=132.0.0

# Prints elapsed seconds since the given start (from `date +%s`).
since() { echo $(($(date +%s) - $1)); }

ensure_wasm_target() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
  fi
}

# The wasm-bindgen version locked in Cargo.lock: the CLI must match it exactly.
locked_wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

ensure_wasm_bindgen() {
  local want have
  want="$(locked_wasm_bindgen_version)"
  if [ -z "$want" ]; then
    echo "error: no wasm-bindgen in Cargo.lock" >&2
    return 1
  fi
  have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" || true
  if [ "$have" != "$want" ]; then
    # Without --locked: a locked transitive crate of the CLI is not in the registry.
    cargo install wasm-bindgen-cli --version "$want"
  fi
}

ensure_chromium() {
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    local sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y chromium chromium-driver
  fi
}

# Puts npm binaryen's wasm-opt first on PATH (installing it once under $SPECULA_TOOLS).
ensure_binaryen() {
  local dir="$SPECULA_TOOLS/binaryen-$BINARYEN_VERSION"
  if [ ! -x "$dir/node_modules/.bin/wasm-opt" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "binaryen@$BINARYEN_VERSION")
  fi
  export PATH="$dir/node_modules/.bin:$PATH"
}
