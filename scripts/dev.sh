#!/usr/bin/env bash
# YUI developer entry point, for a fresh Debian/Ubuntu machine.
#   scripts/dev.sh run    install what is missing, build, and launch the app
#   scripts/dev.sh deps   install what is missing for the tests (system packages, the MCP test
#                         servers) without running them
#   scripts/dev.sh test   install what is missing, then run every check and test
#                         (format, clippy, unit/integration tests, fuzz smoke, end-to-end
#                         under Xvfb)
# Installs system packages with apt (through sudo when not root). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n==> %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# Packages the app needs to build and run (Tauri 2 on WebKitGTK 4.1).
APP_PKGS=(libwebkit2gtk-4.1-dev build-essential pkg-config libssl-dev libayatana-appindicator3-dev
  librsvg2-dev libxdo-dev libdbus-1-dev curl)
# Packages the tests need: an X server, the WebKit WebDriver, a compositor and window manager,
# Node.js for the fake ego-browser, ImageMagick for the screenshot benchmark and screenshots,
# Chromium (with python3's http.server) for the UI-only checks in tests/ui/, jq for the example
# command tools, Xephyr for the two-monitor (Xinerama) tests of crates/yui-x11, npm and
# python3-venv for the MCP servers the MCP tests start (ensure_mcp_servers).
TEST_PKGS=(xvfb webkit2gtk-driver xcompmgr openbox x11-utils nodejs imagemagick chromium python3 jq
  xserver-xephyr npm python3-venv)

missing() {
  local out=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out+=("$p")
  done
  echo "${out[@]:-}"
}

apt_install() {
  local need
  need=$(missing "$@")
  if [ -n "$need" ]; then
    log "installing system packages: $need"
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null
  fi
}

ensure_rust() {
  if ! command -v cargo >/dev/null 2>&1; then
    [ -x "$HOME/.cargo/bin/cargo" ] || {
      log "installing Rust (rustup)"
      curl -fsSL https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt
    }
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
}

ensure_tauri_driver() {
  export PATH="$HOME/.cargo/bin:$PATH"
  if ! command -v tauri-driver >/dev/null 2>&1; then
    log "installing tauri-driver"
    cargo install tauri-driver --locked --quiet
  fi
}

# cargo-fuzz and the nightly toolchain it needs, for the fuzz smoke step (scripts/fuzz.sh).
ensure_cargo_fuzz() {
  export PATH="$HOME/.cargo/bin:$PATH"
  if ! rustup run nightly true >/dev/null 2>&1; then
    log "installing the nightly toolchain (cargo fuzz)"
    rustup toolchain install nightly --profile minimal
  fi
  if ! command -v cargo-fuzz >/dev/null 2>&1; then
    log "installing cargo-fuzz"
    cargo install cargo-fuzz --locked --quiet
  fi
}

# The real MCP servers of crates/yui-core/tests/mcp.rs, from the registries, pinned:
# @modelcontextprotocol/server-everything (npm, package-lock.json) and mcp-server-time (PyPI,
# requirements.txt, in a venv). Installed once; seconds when already there.
ensure_mcp_servers() {
  local dir=crates/yui-core/tests/fixtures/mcp
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    log "installing the npm MCP test server ($dir)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  if [ ! -x "$dir/.venv/bin/mcp-server-time" ] || [ "$dir/requirements.txt" -nt "$dir/.venv/bin/mcp-server-time" ]; then
    log "installing the PyPI MCP test server ($dir/.venv)"
    python3 -m venv "$dir/.venv"
    "$dir/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$dir/requirements.txt"
  fi
}

cmd=${1:-}
case "$cmd" in
  run)
    apt_install "${APP_PKGS[@]}"
    ensure_rust
    log "building and launching YUI"
    exec cargo run --release -p yui-app
    ;;
  deps)
    apt_install "${APP_PKGS[@]}" "${TEST_PKGS[@]}"
    ensure_mcp_servers
    ;;
  test)
    apt_install "${APP_PKGS[@]}" "${TEST_PKGS[@]}"
    ensure_mcp_servers
    ensure_rust
    ensure_tauri_driver
    ensure_cargo_fuzz
    export CARGO_TERM_COLOR=never
    # CI builds everything once from a clean clone: incremental caches only cost disk there (they
    # were as large as the build itself). A developer may set CARGO_INCREMENTAL=1.
    export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
    log "cargo fmt --check"
    cargo fmt --all -- --check
    log "cargo clippy"
    cargo clippy --workspace --all-targets --locked -- -D warnings
    log "core crate has no tauri dependency"
    if cargo tree -p yui-core --locked | grep -i tauri; then
      echo "yui-core depends on tauri" >&2
      exit 1
    fi
    log "tauri without tao's x11 feature"
    # With it, tao reads every key press on the X display on a thread of its own and leaks the
    # event data of each (Cargo.toml, docs/PERFORMANCE.md "Typed as a user types").
    if cargo tree -p yui-app --locked -e features -i tao | grep -F 'tao feature "x11"'; then
      echo "tao's x11 feature is on: keep tauri's default features off (Cargo.toml)" >&2
      exit 1
    fi
    log "unit and integration tests"
    cargo test --workspace --locked
    log "fuzz smoke in the background: every cargo-fuzz target for 30 s (scripts/fuzz.sh, docs/FUZZING.md)"
    # At nice 19 beside the UI checks and the end-to-end suite, which mostly wait on windows and
    # timers: its build and 8 x 30 s (two at a time) mostly fit in their time.
    fuzz_log=$(mktemp -t yui-fuzz-smoke-XXXXXX.log)
    SMOKE_SECS=30 nice -n 19 bash scripts/fuzz.sh smoke >"$fuzz_log" 2>&1 &
    fuzz_pid=$!
    log "UI checks in headless Chromium (tests/ui)"
    for check in tests/ui/check-*.sh; do
      printf '%s: ' "$check"
      bash "$check"
    done
    log "end-to-end tests (Xvfb + tauri-driver + WebKitWebDriver)"
    bash tests/e2e/run.sh
    log "fuzz smoke: waiting for it"
    fuzz_status=0
    wait "$fuzz_pid" || fuzz_status=$?
    cat "$fuzz_log"
    if [ "$fuzz_status" != 0 ]; then
      echo "fuzz smoke failed (exit $fuzz_status)" >&2
      exit "$fuzz_status"
    fi
    ;;
  *)
    echo "usage: scripts/dev.sh run|deps|test" >&2
    exit 2
    ;;
esac
