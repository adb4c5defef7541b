#!/usr/bin/env bash
# Builds the hosted join page's bundle (shared/joinpage): livekit-client's browser build,
# at the version pinned in examples/internal/browser's package files and installed from
# npm by scripts/install-browser.sh (npm ci against the lock's integrity hashes), copied
# to shared/joinpage/assets/livekit-client.js, where the page's Go package embeds it
# (git ignores the copy). The local stack and the join-page function serve it; make run
# (deps-run), make test and make build run this first. Idempotent; prints the bundle's path.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
modules="$(bash "$root/scripts/install-browser.sh" --page)"
pkg="$modules/livekit-client"
want="$(node -e 'console.log(require(process.argv[1]).dependencies["livekit-client"])' "$root/examples/internal/browser/package.json")"
got="$(node -e 'console.log(require(process.argv[1]).version)' "$pkg/package.json")"
if [ "$got" != "$want" ]; then
  echo "build-join-page: livekit-client $got is installed, $want is pinned" >&2
  exit 1
fi
out="$root/shared/joinpage/assets/livekit-client.js"
src="$pkg/dist/livekit-client.umd.js"
sum="$(sha256sum "$src" | cut -d' ' -f1)"
if [ -f "$out" ] && head -c 300 "$out" | grep -q "sha256 $sum"; then
  echo "$out"
  exit 0
fi
tmp="$(mktemp "$out.XXXXXX")"
chmod 644 "$tmp"
{
  printf '/* livekit-client %s (Apache-2.0), dist/livekit-client.umd.js, sha256 %s: built by scripts/build-join-page.sh */\n' "$got" "$sum"
  # The bundle's source map is not shipped: drop its reference.
  sed '/^\/\/# sourceMappingURL=/d' "$src"
} >"$tmp"
mv "$tmp" "$out"
echo "$out"
