#!/usr/bin/env bash
# Installs the Debian packages the persona worker builds and tests against: libopus,
# libsoxr and libvpx (cgo codecs), espeak-ng and flite (text to speech; flite is also the
# sim caller's voice), pocketsphinx with its US English model (speech recognition in
# tests), ffmpeg and pkg-config; redis-server (infra's TURN test runs livekit-server's
# fleet config against a Redis requiring AUTH).
set -euo pipefail
pkgs=(libopus-dev libsoxr-dev libvpx-dev espeak-ng libespeak-ng-dev flite pocketsphinx pocketsphinx-en-us ffmpeg pkg-config redis-server)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
