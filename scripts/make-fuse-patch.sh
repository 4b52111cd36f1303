#!/bin/sh
# Regenerates patches/fuse-native+2.2.6.patch from node_modules/fuse-native
# (edited in place) against a pristine fuse-native 2.2.6 from npm's cache.
# The patch's leading description (everything before the first "diff") is kept.
set -eu
cd "$(dirname "$0")/.."
PATCH=patches/fuse-native+2.2.6.patch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack fuse-native@2.2.6 --silent >/dev/null && tar xzf fuse-native-2.2.6.tgz && mv package a)
mkdir "$tmp/b"
(cd node_modules/fuse-native && tar cf - --exclude=build --exclude=build.log --exclude=.tracefs-emu-patch .) | (cd "$tmp/b" && tar xf -)
{
  sed '/^diff /,$d' "$PATCH"
  (cd "$tmp" && diff -ruN a b || true) | sed -E 's/^((\+\+\+|---) [^\t]+)\t.*$/\1/'
} > "$tmp/new.patch"
mv "$tmp/new.patch" "$PATCH"
echo "wrote $PATCH ($(grep -c '^diff ' "$PATCH") files)"
