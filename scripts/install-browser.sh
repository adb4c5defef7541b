#!/usr/bin/env bash
# Installs what the browser examples and browser tests use, and prints the node_modules
# folder:
#   - Debian's chromium (and fonts-liberation for legible screenshots), with apt, only
#     when missing. No other browser is ever downloaded.
#   - playwright-core (drives that chromium in tests) and livekit-client (the browser SDK
#     the pages load), at the exact versions pinned in examples/internal/browser's
#     package.json and package-lock.json, into .cache/node. npm ci checks every package
#     against the lock's integrity hash; install scripts are not run.
# With --page, only what the local stack's pages serve (livekit-client for the /sim/ page
# and the hosted join page's bundle; node and npm to install it): no Chromium, which only
# the tests drive (`make run` and scripts/build-join-page.sh use --page).
# With --firefox, what the Firefox tests use instead, and nothing of the above:
#   - Debian's stock firefox-esr (ESR 128 or later: WebDriver BiDi as puppeteer-core
#     speaks it; no browser build of its own is ever downloaded) and pulseaudio (each
#     test's Firefox plays into a null sink of its own, browser.SoundServer: Firefox's
#     Web Audio runs only with a sound card), with apt, only when missing.
#   - puppeteer-core (drives that Firefox over WebDriver BiDi), at the exact version
#     pinned in examples/internal/browser/firefox's package files, into
#     .cache/node-firefox, as above (its install script, which would download a browser,
#     is not run).
# Idempotent and quick when everything is there; test packages may call it in parallel.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/examples/internal/browser"
dest="$root/.cache/node"
pkgs=(chromium fonts-liberation)
check=(node_modules/playwright-core/package.json node_modules/livekit-client/dist/livekit-client.umd.js)
case "${1:-}" in
  --page) pkgs=() ;;
  --firefox)
    src="$src/firefox"
    dest="$dest-firefox"
    pkgs=(firefox-esr pulseaudio)
    check=(node_modules/puppeteer-core/package.json)
    ;;
esac
missing=()
for p in "${pkgs[@]+"${pkgs[@]}"}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install-browser: installing ${missing[*]}" >&2
  $sudo apt-get update >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi
if [ "${1:-}" = "--firefox" ]; then
  major="$(dpkg-query -W -f='${Version}' firefox-esr | cut -d. -f1)"
  if [ "$major" -lt 128 ]; then
    echo "install-browser: firefox-esr $major is too old for WebDriver BiDi; 128 or later is needed" >&2
    exit 1
  fi
fi

mkdir -p "$dest"
exec 9>"$dest.lock"
flock 9
want="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$want" ] && [ -d "$dest/node_modules" ]; then
  echo "$dest/node_modules"
  exit 0
fi
echo "install-browser: npm ci into .cache/$(basename "$dest")" >&2
rm -f "$dest/.installed"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
for f in "${check[@]}"; do
  [ -f "$dest/$f" ] || { echo "install-browser: $f missing after npm ci" >&2; exit 1; }
done
echo "$want" >"$dest/.installed"
echo "$dest/node_modules"
