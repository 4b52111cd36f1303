#!/bin/sh
# Installs everything tracefs-emu needs on a fresh Debian machine, then builds.
# Safe to run again: each step is skipped when already done.
set -e
cd "$(dirname "$0")/.."
if [ ! -d node_modules ]; then
  npm install --no-audit --no-fund
fi
npm run build --silent
