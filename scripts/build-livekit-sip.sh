#!/usr/bin/env bash
# Builds livekit-sip (LiveKit's SIP bridge) from its Go module at a pinned version, once,
# into .cache/bin. Like scripts/build-livekit-server.sh: `go install` refuses the module
# (replace directives; the proxy serves no version list for it), so the module folder is
# copied out of the module cache and built in place, with cgo: it links libopus,
# libopusfile and libsoxr (scripts/install-media-deps.sh installs their -dev packages).
# The module's go.sum pins every dependency; the module itself is checked against the
# checksum database by `go mod download`.
#
# scripts/livekit-sip.patch, our one change to it, is applied before the build: without
# it a loaded bridge loses answers to its REFERs (the patch says how). The
# binary's name carries the patch's hash, so a changed patch builds a new binary.
set -euo pipefail
version="${LIVEKIT_SIP_VERSION:-v1.8.0}"
root="$(cd "$(dirname "$0")/.." && pwd)"
patch="$root/scripts/livekit-sip.patch"
out="$root/.cache/bin/livekit-sip-$version-$(sha256sum "$patch" | cut -c1-12)"
if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$(dirname "$out")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
printf 'module fetch\n\ngo 1.23\n' > go.mod
dir="$(GOFLAGS=-mod=mod go mod download -json "github.com/livekit/sip@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -n "$dir" ] || { echo "build-livekit-sip: module download failed" >&2; exit 1; }
cp -r "$dir" src
chmod -R u+w src
cd src
git apply -p1 "$patch"
echo "build-livekit-sip: building livekit-sip $version (first run only: about 10 minutes cold)" >&2
# A temporary name per build, renamed into place: two builds at once never leave half a
# binary at $out.
CGO_ENABLED=1 go build -trimpath -o "$out.$$.tmp" ./cmd/livekit-sip
mv "$out.$$.tmp" "$out"
echo "$out"
