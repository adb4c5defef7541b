#!/usr/bin/env bash
# Installs the Debian packages the persona worker builds and tests against: libopus,
# libsoxr and libvpx (cgo codecs), flite with its headers (text to speech through
# libflite; also the sim caller's voice) and espeak-ng (text to speech, a subprocess),
# pocketsphinx with its headers and US English model (speech recognition through
# libpocketsphinx), libspeexdsp (the caller's noise suppression), ffmpeg and pkg-config;
# libopusfile-dev (with libopus and libsoxr, what livekit-sip links:
# scripts/build-livekit-sip.sh); redis-server (the Redis that livekit-server and
# livekit-sip share in `make run` and the SIP tests; infra's TURN test
# runs livekit-server's fleet config against a Redis requiring AUTH); baresip-core (the
# SIP phone the SIP tests call with, e2e/sipphone); curl and jq (the docs' shell blocks,
# which cmd/bridgeline's TestDocs runs).
set -euo pipefail
pkgs=(curl jq libopus-dev libsoxr-dev libvpx-dev flite flite1-dev espeak-ng libespeak-ng-dev pocketsphinx libpocketsphinx-dev libsphinxbase-dev pocketsphinx-en-us libspeexdsp-dev ffmpeg pkg-config libopusfile-dev redis-server baresip-core)
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
