#!/usr/bin/env bash
# The SeaweedFS server (`weed`) the test suite uses as a real S3-compatible object store.
# Prints the binary's path. Built once from its pinned Go module and cached, like the Delta
# jars: a fresh machine needs only Go (>= the module's go directive). `go install` refuses the
# module (its go.mod has replace directives), so the module is downloaded, copied somewhere
# writable and built there. About 10 minutes on 2 cores, niced; a cache hit is instant.
#   LAKETX_CACHE      cache root (default ~/.cache/laketx); the binary is <root>/seaweedfs/<version>/weed
#   SEAWEEDFS_VERSION the module version to build (default: the pinned one below)
set -euo pipefail

MODULE=github.com/seaweedfs/seaweedfs
# SeaweedFS 4.53 (the `weed version` it reports), pinned by its module pseudo-version
VERSION=${SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}
CACHE=${LAKETX_CACHE:-$HOME/.cache/laketx}/seaweedfs/$VERSION
BIN=$CACHE/weed

if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "seaweedfs.sh: Go is needed to build SeaweedFS once (https://go.dev/dl), or put a" \
    "weed binary of module version $VERSION at $BIN" >&2
  exit 2
fi

# test workers starting at once build it once: the first takes the lock, the others wait
mkdir -p "$CACHE"
exec 9>"$CACHE.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
  if [ -x "$BIN" ]; then
    echo "$BIN"
    exit 0
  fi
fi

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
echo "seaweedfs.sh: building SeaweedFS $VERSION once (about 10 minutes), cached in $CACHE" >&2
# outside any module: GOFLAGS from the environment must not point go at one
dir=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$MODULE@$VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "seaweedfs.sh: go mod download of $MODULE@$VERSION gave no module folder" >&2
  exit 1
fi
# the module cache is read-only: build in a writable copy
cp -r "$dir" "$work/src"
chmod -R u+w "$work/src"
(cd "$work/src" && nice -n 10 go build -o "$work/weed" ./weed) >&2
# an interrupted build never leaves a half-written binary in the cache
mv "$work/weed" "$BIN.partial"
mv "$BIN.partial" "$BIN"
echo "$BIN"
