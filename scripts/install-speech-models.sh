#!/usr/bin/env bash
# Installs what the persona worker's listening needs, pinned by checksum, into .cache/:
#   .cache/models/silero_vad_v5.onnx, silero_vad_v6.onnx  Silero VAD, from the npm package
#       @ricky0123/vad-web (taken with `npm pack`: its install scripts never run);
#   .cache/lib/libonnxruntime.so  ONNX Runtime, from the Go module
#       github.com/k2-fsa/sherpa-onnx-go-linux (its lib folder), which mediafleet/vad
#       drives through github.com/yalue/onnxruntime_go.
# Idempotent: files already there with the right checksum are kept.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
models="$root/.cache/models"
lib="$root/.cache/lib"
vad_pkg="@ricky0123/vad-web@0.0.31"
vad_tgz_sha="d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940"
v5_sha="2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
v6_sha="1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3"
ort_mod="github.com/k2-fsa/sherpa-onnx-go-linux@v1.13.8"
ort_sha="4b3607aebd1784b26b6f9b20e4bd974c7ab8287043e4d095cb7d2cb40b5e566e"

ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
check() {
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  [ "$got" = "$2" ] || { echo "install-speech-models: $1: sha256 $got, want $2" >&2; exit 1; }
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if ! ok "$models/silero_vad_v5.onnx" "$v5_sha" || ! ok "$models/silero_vad_v6.onnx" "$v6_sha"; then
  mkdir -p "$models"
  (cd "$work" && npm pack --silent --ignore-scripts "$vad_pkg" >/dev/null)
  tgz="$(ls "$work"/*.tgz)"
  check "$tgz" "$vad_tgz_sha"
  tar -xzf "$tgz" -C "$work" package/dist/silero_vad_v5.onnx package/dist/silero_vad_v6.onnx
  check "$work/package/dist/silero_vad_v5.onnx" "$v5_sha"
  check "$work/package/dist/silero_vad_v6.onnx" "$v6_sha"
  for v in v5 v6; do
    # Copied then renamed, so a concurrent run never reads half a model.
    cp "$work/package/dist/silero_vad_$v.onnx" "$models/.silero_vad_$v.onnx.tmp"
    mv "$models/.silero_vad_$v.onnx.tmp" "$models/silero_vad_$v.onnx"
  done
fi

case "$(uname -m)" in
  x86_64) triple=x86_64-unknown-linux-gnu ;;
  aarch64) triple=aarch64-unknown-linux-gnu; ort_sha="" ;;
  *) echo "install-speech-models: no ONNX Runtime for $(uname -m)" >&2; exit 1 ;;
esac
if [ -z "$ort_sha" ] || ! ok "$lib/libonnxruntime.so" "$ort_sha"; then
  mkdir -p "$lib"
  printf 'module fetch\n\ngo 1.23\n' > "$work/go.mod"
  dir="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$ort_mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -n "$dir" ] || { echo "install-speech-models: module download of $ort_mod failed" >&2; exit 1; }
  src="$dir/lib/$triple/libonnxruntime.so"
  # go mod download verifies the module against go.sum's checksum database; the file's
  # own checksum is pinned for x86_64, the platform CI and the image build on.
  [ -z "$ort_sha" ] || check "$src" "$ort_sha"
  cp "$src" "$lib/libonnxruntime.so.tmp"
  chmod 0644 "$lib/libonnxruntime.so.tmp"
  mv "$lib/libonnxruntime.so.tmp" "$lib/libonnxruntime.so"
fi
echo "$models $lib"
