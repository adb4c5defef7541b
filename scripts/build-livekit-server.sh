#!/usr/bin/env bash
# Builds livekit-server from its Go module at a pinned version, once, into .cache/bin.
# `go install` fails on the module's replace directives, so the module folder is copied
# out of the module cache and built in place.
set -euo pipefail
version="${LIVEKIT_SERVER_VERSION:-v1.11.0}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.cache/bin/livekit-server-$version"
if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
printf 'module fetch\n\ngo 1.23\n' > go.mod
dir="$(GOFLAGS=-mod=mod go mod download -json "github.com/livekit/livekit-server@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -n "$dir" ] || { echo "build-livekit-server: module download failed" >&2; exit 1; }
cp -r "$dir" src
chmod -R u+w src
cd src
echo "build-livekit-server: building livekit-server $version (first run only, a few minutes)" >&2
CGO_ENABLED=0 go build -trimpath -o "$out.tmp" ./cmd/server
mv "$out.tmp" "$out"
echo "$out"
