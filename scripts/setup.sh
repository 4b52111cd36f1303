#!/bin/sh
# Installs everything tracefs-emu needs on a fresh Debian 12 machine (as root),
# then builds. Safe to run again: each step is skipped when already done.
#
#   1. Debian packages: fuse (fusermount), libfuse2 and libfuse-dev (libfuse's
#      low-level API), plus a C toolchain and python3 for node-gyp if missing.
#   2. npm dependencies, with install scripts off (none of ours needs one).
#   3. Our FUSE session (native/fuse): built with node-gyp against the
#      system's libfuse.so.2.
#   4. The TypeScript build (dist/).
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
NATIVE="$ROOT/native/fuse"

say() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

# --- 1. Debian packages -------------------------------------------------------
have_lib() { /sbin/ldconfig -p 2>/dev/null | grep -q "libfuse\.so\.2 " || [ -e /lib/x86_64-linux-gnu/libfuse.so.2 ] || [ -e /usr/lib/x86_64-linux-gnu/libfuse.so.2 ]; }
missing=""
command -v fusermount >/dev/null 2>&1 || missing="$missing fuse"
have_lib || missing="$missing libfuse2"
[ -f /usr/include/fuse/fuse_lowlevel.h ] || missing="$missing libfuse-dev"
command -v make >/dev/null 2>&1 || missing="$missing make"
command -v cc >/dev/null 2>&1 && command -v c++ >/dev/null 2>&1 || missing="$missing gcc g++"
command -v python3 >/dev/null 2>&1 || missing="$missing python3"
command -v patch >/dev/null 2>&1 || missing="$missing patch"
# The selftests' environment (tracefs-emu exec) and their fetch: GNU awk, ping, readelf,
# lscpu/chrt/unshare, dash as /bin/sh, xz for linux-source's tarball.
command -v gawk >/dev/null 2>&1 || missing="$missing gawk"
command -v ping >/dev/null 2>&1 || missing="$missing iputils-ping"
command -v readelf >/dev/null 2>&1 || missing="$missing binutils"
command -v lscpu >/dev/null 2>&1 && command -v chrt >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1 || missing="$missing util-linux"
command -v dash >/dev/null 2>&1 || missing="$missing dash"
command -v xz >/dev/null 2>&1 || missing="$missing xz-utils"
# Real clients the tests drive through `tracefs-emu exec`: trace-cmd, perf (ftrace), perf-tools' scripts, rtla.
command -v trace-cmd >/dev/null 2>&1 || missing="$missing trace-cmd"
command -v rtla >/dev/null 2>&1 || missing="$missing rtla"
command -v perf >/dev/null 2>&1 || missing="$missing linux-perf"
command -v kprobe-perf >/dev/null 2>&1 || missing="$missing perf-tools-unstable"
# A program of the tests' own built against Debian's libtracefs (its headers and libtraceevent's).
[ -e /usr/include/tracefs/tracefs.h ] && [ -e /usr/include/traceevent/event-parse.h ] || missing="$missing libtracefs-dev libtraceevent-dev"
if [ -n "$missing" ]; then
  [ "$(id -u)" = 0 ] || die "missing packages:$missing (run this script as root, or: apt-get install$missing)"
  command -v apt-get >/dev/null 2>&1 || die "missing packages:$missing, and no apt-get to install them"
  say "installing Debian packages:$missing"
  export DEBIAN_FRONTEND=noninteractive
  # shellcheck disable=SC2086
  if ! apt-get install -y -q --no-install-recommends $missing >/dev/null; then
    apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing >/dev/null
  fi
fi
[ -e /dev/fuse ] || say "warning: /dev/fuse is missing (no FUSE in this kernel/container): mounting will fail, e2e tests will be skipped"

# --- 2. npm dependencies ------------------------------------------------------
lock_sum=$(sha256sum package.json package-lock.json | sha256sum | cut -c1-16)
deps_stamp="node_modules/.tracefs-emu-deps"
if [ ! -f "$deps_stamp" ] || [ "$(cat "$deps_stamp")" != "$lock_sum" ]; then
  say "installing npm dependencies"
  npm install --ignore-scripts --no-audit --no-fund --loglevel=error
  echo "$lock_sum" > "$deps_stamp"
fi

# --- 3. the FUSE session ------------------------------------------------------
native_sum=$(cat "$NATIVE/binding.gyp" "$NATIVE"/*.c | sha256sum | cut -c1-16)
native_stamp="$NATIVE/build/.tracefs-emu-build"
if [ ! -f "$native_stamp" ] || [ "$(cat "$native_stamp")" != "$native_sum" ] || [ ! -f "$NATIVE/build/Release/tracefs_fuse.node" ]; then
  gyp="$(npm root -g 2>/dev/null)/npm/node_modules/node-gyp/bin/node-gyp.js"
  [ -f "$gyp" ] || gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
  [ -f "$gyp" ] || die "node-gyp (bundled with npm) not found"
  # Node's own headers when the machine has them (npm's nodedir, or next to node).
  nodedir=$(npm config get nodedir 2>/dev/null || true)
  if [ -z "$nodedir" ] || [ ! -f "$nodedir/include/node/node_api.h" ]; then
    nodedir=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
    [ -f "$nodedir/include/node/node_api.h" ] || nodedir=""
  fi
  say "building the FUSE session (node-gyp${nodedir:+, headers from $nodedir})"
  (cd "$NATIVE" && node "$gyp" rebuild ${nodedir:+--nodedir="$nodedir"} --loglevel=error >build.log 2>&1) \
    || { cat "$NATIVE/build.log" >&2; die "the FUSE session's build failed"; }
  node -e "require('$NATIVE/build/Release/tracefs_fuse.node')" || die "the FUSE session's build does not load"
  echo "$native_sum" > "$native_stamp"
fi

# --- 4. TypeScript build -------------------------------------------------------------
ts_stamp="dist/.tracefs-emu-build"
if [ ! -f "$ts_stamp" ] || [ -n "$(find src selftests bench tsconfig.json package.json -newer "$ts_stamp" \( -name '*.ts' -o -name '*.json' \) 2>/dev/null | head -1)" ]; then
  say "building (tsc)"
  npm run build --silent
  touch "$ts_stamp"
fi
